//! Keeps a long-running `sshtune serve` from growing with the number of sessions it has served.
//!
//! Each connection has its own thread and a few buffers of 256 KiB to 1 MiB (the packet reader
//! and writer, `source`'s block). glibc serves such sizes with mmap and gives them back on free,
//! but the first such free raises its mmap threshold to the freed size ("dynamic threshold"),
//! after which they come from the per-thread arenas and stay resident, fragmented. Measured with
//! `scripts/serve-load` (300 + 50 logins per round): RSS 9.9 → 14.0 → 14.9 MB with the dynamic
//! threshold, 9.9 → 11.2 → 11.3 MB with it fixed at glibc's default of 128 KiB.
//!
//! Buffers under that threshold (an unauthenticated connection's 70 KiB read buffer, decoded
//! messages) come from the arenas, which glibc shrinks only from their top: after many
//! connections end at once, the free pages between live chunks stay resident. So each
//! connection's thread hands them back when it ends (`give_back`, glibc's `malloc_trim`). Each
//! arena also keeps some pages of its own, and glibc makes up to 8 per CPU: serve caps them at
//! one per CPU (at least 2). With both, RSS returns to within 1 MB of idle after 100 hostile
//! connections close (docs/serve-load.md; docs/measurements.md has the figures).

/// Fixes glibc's mmap threshold at 128 KiB (which also turns its dynamic adjustment off) and
/// caps its arenas at one per CPU, at least 2. Other C libraries do not adjust the threshold;
/// nothing to do there.
pub fn return_big_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let arenas = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let arenas = i32::try_from(arenas).unwrap_or(i32::MAX);
        // SAFETY: mallopt only sets tunables of the allocator; it is called before any
        // session thread exists and takes no pointers.
        #[allow(unsafe_code)]
        unsafe {
            nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 128 * 1024);
            nix::libc::mallopt(nix::libc::M_ARENA_MAX, arenas);
        }
    }
}

/// Returns the free pages of every glibc arena to the kernel (`malloc_trim(0)`: it also frees
/// whole pages inside the heaps, not only at their top). Called as a connection's thread ends;
/// it costs a walk over the arenas' free lists. Other C libraries: nothing to do.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free; it takes no pointers
    // and is thread-safe (it locks each arena in turn).
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::malloc_trim(0);
    }
}
