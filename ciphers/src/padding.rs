//! Random padding bytes (RFC 4253 §6) for [`SealingKey::frame`](crate::SealingKey::frame),
//! drawn from libcrypto's RNG in batches.
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

/// Fills `out` with random bytes, refilling the batch from libcrypto when it runs short.
pub(crate) fn fill(out: &mut [u8]) -> Result<()> {
    if out.len() > BATCH / 4 {
        // Larger than any padding; not worth draining the batch for.
        return openssl::rand::rand_bytes(out).map_err(|e| Error::openssl("random padding", e));
    }
    POOL.with_borrow_mut(|p| {
        if BATCH - p.used < out.len() {
            openssl::rand::rand_bytes(&mut p.bytes)
                .map_err(|e| Error::openssl("random padding", e))?;
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
