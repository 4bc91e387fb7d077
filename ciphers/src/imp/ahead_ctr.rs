//! A counter-mode cipher whose keystream a helper thread computes ahead ([`super::ahead`]).
//!
//! The helper owns the ordinary `Crypt` (either backend) and applies it to zeros, which
//! yields the keystream in order; the sealing thread only XORs. The stream continues across
//! packets exactly as the single-thread cipher's counter does.

use super::ahead::{xor, Ahead, Chunk};
use super::Crypt;
use crate::error::{Error, Result};

/// Keystream per chunk: big enough that the channel hand-off is rare next to the AES work.
const CHUNK: usize = 64 * 1024;

pub(crate) struct AheadCtr {
    ahead: Ahead,
    current: Option<Chunk>,
    pos: usize,
}

impl AheadCtr {
    pub(crate) fn new(mut inner: Box<dyn Crypt>) -> Self {
        let ahead = Ahead::spawn(CHUNK, 0, move |_, buf| {
            buf.fill(0);
            // CTR over whole blocks cannot fail once keyed; a failure would show as a MAC
            // error on the other side rather than pass silently.
            if inner.apply(buf).is_err() {
                buf.fill(0xff);
            }
        });
        AheadCtr {
            ahead,
            current: None,
            pos: CHUNK,
        }
    }
}

impl Crypt for AheadCtr {
    fn apply(&mut self, mut buf: &mut [u8]) -> Result<()> {
        while !buf.is_empty() {
            if self.pos == CHUNK {
                if let Some(c) = self.current.take() {
                    self.ahead.recycle(c);
                }
                self.current = Some(self.ahead.next().ok_or(Error::Backend {
                    backend: "ahead",
                    context: "keystream helper",
                    detail: "the helper thread stopped".into(),
                })?);
                self.pos = 0;
            }
            let c = self.current.as_ref().map_or(&[][..], |c| &c.bytes[..]);
            let n = buf.len().min(CHUNK - self.pos);
            let (now, rest) = buf.split_at_mut(n);
            xor(now, &c[self.pos..self.pos + n]);
            self.pos += n;
            buf = rest;
        }
        Ok(())
    }

    fn helper_cpu_seconds(&self) -> f64 {
        self.ahead.helper_cpu_seconds()
    }
}
