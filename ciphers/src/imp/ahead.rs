//! A helper thread that computes keystream ahead of the sealing thread (HPN-SSH's idea).
//!
//! Why: AES-CTR and ChaCha20 produce keystream that does not depend on the data, so a second
//! core can generate it while the first XORs the previous chunk in and computes the MAC. The
//! helper fills fixed-size chunks and hands them over through a bounded channel; used chunks
//! come back through a second channel, so after start-up nothing is allocated per packet and
//! the helper can run at most `DEPTH` chunks ahead.
//!
//! What it buys, measured on the project's 2-core machine while other builds kept it loaded
//! (`cargo bench -p ciphers --bench ahead`, three runs, 32 KiB packets, MiB per CPU-second):
//! for chacha20-poly1305 the sealing thread's own cost fell from 3200–3320 to 4420–4620, but
//! the process's total rose (3170–3310 down to 1850–2070: the helper's copy through another
//! core's cache and the hand-off are not free), and wall-clock throughput fell by 30–40%,
//! because no core was free for the helper. The helper alone runs at about 3700, so even with
//! a free core the ceiling is near 1.1× the single thread. AES-CTR with UMAC gained less.
//! Hence opt-in only.
//!
//! Dropping the consumer closes both channels, which wakes the helper wherever it waits; the
//! drop then joins it, so no thread outlives its key.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Chunks in flight: enough to keep the helper busy while the sealer works on one.
pub(crate) const DEPTH: usize = 4;

/// One chunk of keystream and what the producer says it covers.
pub(crate) struct Chunk {
    pub(crate) tag: u64,
    pub(crate) bytes: Vec<u8>,
}

/// The consuming end: receives filled chunks, returns used ones.
pub(crate) struct Ahead {
    filled: Option<Receiver<Chunk>>,
    used: Option<SyncSender<Vec<u8>>>,
    helper: Option<JoinHandle<()>>,
    /// The helper's CPU time so far in nanoseconds, updated after every chunk: a caller that
    /// reports its CPU per byte must count the helper's core too, or the helper would look free.
    cpu_ns: Arc<AtomicU64>,
}

/// CPU time of the calling thread, in nanoseconds (0 if the clock is unavailable).
fn thread_cpu_ns() -> u64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

impl Ahead {
    /// Starts the helper. `produce(tag, buf)` fills `buf` (`chunk_len` bytes) with the keystream
    /// for chunk `tag`; tags count up from `first_tag`.
    pub(crate) fn spawn<P>(chunk_len: usize, first_tag: u64, mut produce: P) -> Self
    where
        P: FnMut(u64, &mut [u8]) + Send + 'static,
    {
        let (filled_tx, filled_rx) = mpsc::sync_channel::<Chunk>(DEPTH);
        let (used_tx, used_rx) = mpsc::sync_channel::<Vec<u8>>(DEPTH + 1);
        let cpu_ns = Arc::new(AtomicU64::new(0));
        let cpu = Arc::clone(&cpu_ns);
        let helper = std::thread::Builder::new()
            .name("keystream-ahead".into())
            .spawn(move || {
                let mut tag = first_tag;
                let mut allocated = 0;
                loop {
                    let mut bytes = if allocated < DEPTH {
                        allocated += 1;
                        vec![0u8; chunk_len]
                    } else {
                        match used_rx.recv() {
                            Ok(b) => b,
                            Err(_) => return,
                        }
                    };
                    produce(tag, &mut bytes);
                    cpu.store(thread_cpu_ns(), Ordering::Relaxed);
                    if filled_tx.send(Chunk { tag, bytes }).is_err() {
                        return;
                    }
                    tag = tag.wrapping_add(1);
                }
            })
            .ok();
        Ahead {
            filled: Some(filled_rx),
            used: Some(used_tx),
            helper,
            cpu_ns,
        }
    }

    /// CPU seconds the helper thread has used so far.
    pub(crate) fn helper_cpu_seconds(&self) -> f64 {
        self.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// The next chunk, or `None` if the helper could not be started or has stopped.
    pub(crate) fn next(&mut self) -> Option<Chunk> {
        self.filled.as_ref()?.recv().ok()
    }

    /// Hands a used chunk back for refilling.
    pub(crate) fn recycle(&mut self, c: Chunk) {
        if let Some(tx) = &self.used {
            let _ = tx.try_send(c.bytes);
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.filled = None;
        self.used = None;
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

/// `data ^= key`, over the length of `data` (`key` is at least as long).
pub(crate) fn xor(data: &mut [u8], key: &[u8]) {
    for (d, k) in data.iter_mut().zip(key) {
        *d ^= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_arrive_in_order_and_the_helper_stops_on_drop() {
        let mut a = Ahead::spawn(16, 7, |tag, buf| buf.fill(tag as u8));
        for want in 7..40u64 {
            let c = a.next().unwrap();
            assert_eq!(c.tag, want);
            assert!(c.bytes.iter().all(|&b| b == want as u8));
            a.recycle(c);
        }
        assert!(a.helper_cpu_seconds() >= 0.0);
        drop(a); // joins; a hang here would fail the test by timeout
    }
}
