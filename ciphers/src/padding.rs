//! Random padding bytes (RFC 4253 §6) for [`SealingKey::frame`](crate::SealingKey::frame),
//! drawn in batches from libcrypto's RNG, or from the operating system through ring in a build
//! without the `openssl` feature.
//!
//! Why batches: a packet needs 4 to 19 bytes of padding, and one `RAND_bytes` call costs
//! about as much as sealing 2 KiB with chacha20-poly1305 (a lock, a fork check with a
//! `getpid` system call, a DRBG step): on 32 KiB packets it was half of the per-packet cost
//! outside the cipher itself. One call per 4 KiB spreads that over hundreds of packets.
//! OpenSSH buffers its padding randomness the same way (`arc4random`).
//!
//! The batch is per thread, so `frame` keeps taking `&self`. After a `fork` both processes
//! hold the same unused bytes; that is harmless here because padding is never a secret or a
//! nonce: every framing but `none` encrypts it, and `none` protects nothing.

use crate::error::{Error, Result};
use std::cell::RefCell;

const BATCH: usize = 4096;

struct Pool {
    bytes: [u8; BATCH],
    used: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { bytes: [0; BATCH], used: BATCH }) };
}

/// Random bytes straight from the source: libcrypto's DRBG, as OpenSSH's padding.
#[cfg(feature = "openssl")]
fn random(out: &mut [u8]) -> Result<()> {
    openssl::rand::rand_bytes(out).map_err(|e| Error::openssl("random padding", e))
}

/// Random bytes straight from the source: the kernel's (`getrandom`), through ring.
#[cfg(not(feature = "openssl"))]
fn random(out: &mut [u8]) -> Result<()> {
    use ring::rand::{SecureRandom, SystemRandom};
    SystemRandom::new().fill(out).map_err(|_| Error::Backend {
        backend: "rust",
        context: "random padding",
        detail: "the system random source failed".into(),
    })
}

/// Fills `out` with random bytes, refilling the batch when it runs short.
pub(crate) fn fill(out: &mut [u8]) -> Result<()> {
    if out.len() > BATCH / 4 {
        // Larger than any padding; not worth draining the batch for.
        return random(out);
    }
    POOL.with_borrow_mut(|p| {
        if BATCH - p.used < out.len() {
            random(&mut p.bytes)?;
            p.used = 0;
        }
        out.copy_from_slice(&p.bytes[p.used..p.used + out.len()]);
        // Used bytes are not handed out twice.
        p.bytes[p.used..p.used + out.len()].fill(0);
        p.used += out.len();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_paddings_differ_and_span_refills() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..(3 * BATCH / 16) {
            let mut p = [0u8; 16];
            fill(&mut p).unwrap();
            assert!(seen.insert(p), "padding repeated");
        }
    }
}
