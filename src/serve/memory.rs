//! Keeps a long-running `sshtune serve` from growing with the number of sessions it has served.
//!
//! Each connection has its own thread and a few buffers of 256 KiB to 1 MiB (the packet reader
//! and writer, `source`'s block). glibc serves such sizes with mmap and gives them back on free,
//! but the first such free raises its mmap threshold to the freed size ("dynamic threshold"),
//! after which they come from the per-thread arenas and stay resident, fragmented. Measured with
//! `scripts/serve-load` (300 + 50 logins per round): RSS 9.9 → 14.0 → 14.9 MB with the dynamic
//! threshold, 9.9 → 11.2 → 11.3 MB with it fixed at glibc's default of 128 KiB.

/// Fixes glibc's mmap threshold at 128 KiB (which also turns its dynamic adjustment off).
/// Other C libraries do not adjust the threshold; nothing to do there.
pub fn return_big_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of the allocator; it is called before any session
    // thread exists and takes no pointers.
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
