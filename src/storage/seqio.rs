//! The seed's five sequential tests (hdparm -t, dd WR / WR S / WR DS / RD) done in-process,
//! so exactly what the clock covers is ours to state: see `Test::how`.

use super::plan::Test;
use crate::process::check_interrupted;
use anyhow::{Context, Result};
use rand::RngCore;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

const BLOCK: usize = 16 << 20;
const HDPARM_BLOCK: usize = 2 << 20;
const HDPARM_LIMIT: Duration = Duration::from_secs(3);
/// O_DIRECT buffers must be aligned to the logical block size; 4096 covers every sector size.
const ALIGN: usize = 4096;

/// Flushes dirty data and drops the page cache, dentries and inodes, like the seed's
/// `sync && echo 3 > /proc/sys/vm/drop_caches` before every test.
pub fn drop_caches() -> Result<()> {
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").context("dropping caches (needs root)")
}

/// Flushes dirty data and drops the cached pages of one file or block device only. Used before
/// fio: its direct I/O bypasses the page cache for data anyway, and a global drop would also
/// evict fio's own program and libraries, which then reload for many seconds on slow machines
/// (and on emulated VMs) without changing any figure.
pub fn drop_target_cache(path: &Path) -> Result<()> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    use std::os::fd::AsRawFd;
    nix::unistd::sync();
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    posix_fadvise(f.as_raw_fd(), 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .with_context(|| format!("dropping cached pages of {}", path.display()))?;
    Ok(())
}

/// A 16 MiB block of random bytes at a 4096-aligned offset inside its allocation.
pub struct Buffer {
    storage: Vec<u8>,
    offset: usize,
}

impl Buffer {
    pub fn new() -> Self {
        let mut storage = vec![0u8; BLOCK + ALIGN];
        rand::thread_rng().fill_bytes(&mut storage);
        let addr = storage.as_ptr() as usize;
        let offset = (ALIGN - addr % ALIGN) % ALIGN;
        Self { storage, offset }
    }

    fn block(&self) -> &[u8] {
        &self.storage[self.offset..self.offset + BLOCK]
    }

    fn block_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + BLOCK]
    }
}

impl Default for Buffer {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs one sequential test on `path` (a block device or a file) over `bytes`; returns MiB/s.
/// Caches are dropped first.
pub fn run(test: Test, path: &Path, bytes: u64, buf: &mut Buffer) -> Result<f64> {
    drop_caches()?;
    let bytes = bytes / BLOCK as u64 * BLOCK as u64;
    let is_file = !is_block_device(path);
    let (moved, elapsed) = match test {
        Test::BufferedRead => read(path, bytes, HDPARM_BLOCK, Some(HDPARM_LIMIT), buf)?,
        Test::Rd => read(path, bytes, BLOCK, None, buf)?,
        Test::Wr => write(path, bytes, WriteMode::Buffered, is_file, buf)?,
        Test::WrS => write(path, bytes, WriteMode::Fsync, is_file, buf)?,
        Test::WrDs => write(path, bytes, WriteMode::DirectSync, is_file, buf)?,
        Test::RandRw4k | Test::RandRw64k => unreachable!("fio tests are run by fio.rs"),
    };
    Ok(moved as f64 / (1u64 << 20) as f64 / elapsed.as_secs_f64().max(1e-9))
}

fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

#[derive(Clone, Copy, PartialEq)]
enum WriteMode {
    Buffered,
    Fsync,
    DirectSync,
}

fn write(
    path: &Path,
    bytes: u64,
    mode: WriteMode,
    is_file: bool,
    buf: &Buffer,
) -> Result<(u64, Duration)> {
    let mut opts = OpenOptions::new();
    opts.write(true);
    if is_file {
        opts.create(true).truncate(true);
    }
    if mode == WriteMode::DirectSync {
        opts.custom_flags(libc::O_DIRECT | libc::O_DSYNC);
    }
    let mut f: File = opts
        .open(path)
        .with_context(|| format!("opening {} for writing", path.display()))?;
    let start = Instant::now();
    let mut done = 0u64;
    while done < bytes {
        check_interrupted()?;
        f.write_all(buf.block())
            .with_context(|| format!("writing {}", path.display()))?;
        done += BLOCK as u64;
    }
    if mode == WriteMode::Fsync {
        f.sync_all().context("fsync")?;
    }
    let elapsed = start.elapsed();
    if mode == WriteMode::Buffered {
        // Untimed, so the next test does not pay for this one's dirty pages.
        f.sync_all().context("fsync")?;
    }
    Ok((done, elapsed))
}

fn read(
    path: &Path,
    bytes: u64,
    block: usize,
    limit: Option<Duration>,
    buf: &mut Buffer,
) -> Result<(u64, Duration)> {
    let mut f =
        File::open(path).with_context(|| format!("opening {} for reading", path.display()))?;
    let start = Instant::now();
    let mut done = 0u64;
    while done < bytes {
        check_interrupted()?;
        if limit.is_some_and(|l| start.elapsed() >= l) {
            break;
        }
        let want = block.min((bytes - done) as usize);
        let n = f
            .read(&mut buf.block_mut()[..want])
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        done += n as u64;
    }
    Ok((done, start.elapsed()))
}
