//! Everything a storage run creates is recorded here the moment it exists and undone in
//! reverse order: on success, on error (the registry is dropped while the error unwinds) and
//! on SIGINT/SIGTERM (the signal makes every step fail with `Interrupted`, which unwinds too).

use crate::process::run_capture;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    Dir(PathBuf),
    File(PathBuf),
    Loop(PathBuf),
    Mapping(String),
    Mount(PathBuf),
}

/// What a person reads in a report: `mapping sshtune-…`, `loop device /dev/loop1`.
impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Dir(p) => write!(f, "directory {}", p.display()),
            Resource::File(p) => write!(f, "file {}", p.display()),
            Resource::Loop(p) => write!(f, "loop device {}", p.display()),
            Resource::Mapping(n) => write!(f, "mapping {n}"),
            Resource::Mount(p) => write!(f, "mount {}", p.display()),
        }
    }
}

#[derive(Debug, Default)]
pub struct Cleanup {
    stack: Vec<Resource>,
    /// What could not be removed, for the report.
    pub failures: Vec<String>,
}

impl Cleanup {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, r: Resource) {
        self.stack.push(r);
    }

    /// Position to return to with `unwind_to`.
    pub fn mark(&self) -> usize {
        self.stack.len()
    }

    /// Undoes everything registered after `mark`, newest first; errors are kept, not raised,
    /// so one stuck resource does not leave the rest behind.
    pub fn unwind_to(&mut self, mark: usize) -> Result<(), String> {
        let mut errs = Vec::new();
        while self.stack.len() > mark {
            let r = self.stack.pop().expect("non-empty");
            if let Err(e) = undo(&r) {
                errs.push(e);
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            self.failures.extend(errs.iter().cloned());
            Err(errs.join("; "))
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Err(e) = self.unwind_to(0) {
            eprintln!("sshtune: cleanup incomplete: {e}");
        }
    }
}

/// Undoes one resource. Busy devices get a few retries: udev or a just-finished writer may
/// still hold them for a moment.
pub fn undo(r: &Resource) -> Result<(), String> {
    match r {
        Resource::Dir(p) => match std::fs::remove_dir_all(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("removing {}: {e}", p.display()))
            }
            _ => Ok(()),
        },
        Resource::File(p) => match std::fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("removing {}: {e}", p.display()))
            }
            _ => Ok(()),
        },
        Resource::Mount(p) => unmount(p, true),
        Resource::Mapping(name) => retry(|| {
            if !super::dmcrypt::exists(name) {
                return Ok(());
            }
            run_capture(Command::new("cryptsetup").args(["close", name]))
                .map(drop)
                .or_else(|_| {
                    run_capture(Command::new("dmsetup").args(["remove", "--retry", name])).map(drop)
                })
                .map_err(|e| format!("removing mapping {name}: {e:#}"))
        }),
        Resource::Loop(dev) => retry(|| {
            if !super::dmcrypt::loop_attached(dev) {
                return Ok(());
            }
            run_capture(Command::new("losetup").arg("-d").arg(dev))
                .map_err(|e| format!("detaching {}: {e:#}", dev.display()))?;
            // `losetup -d` succeeds on a device another process still holds open (udev probing
            // it, for one): the kernel only marks it to detach when that process closes it. A
            // run in the test VM reported its device gone while it was still attached; wait
            // until it is gone.
            if detached_within(dev, LOOP_DETACH_WAIT) {
                Ok(())
            } else {
                Err(format!(
                    "{} is still attached: another process holds it open (the kernel detaches \
                     it when that process closes it)",
                    dev.display()
                ))
            }
        }),
    }
}

/// Unmounts `p`, never through a symlink as its last component (`UMOUNT_NOFOLLOW`); a
/// mount that is not there (any more) counts as done. Busy mounts get a few retries; with
/// `lazy`, a mount still busy is detached lazily as a last resort, so the mapping under a
/// run's own mount can still go. Another run's leftovers are never detached lazily: a busy
/// mount there is someone's, and stays with what is under it (`stale`).
pub fn unmount(p: &std::path::Path, lazy: bool) -> Result<(), String> {
    use nix::mount::{umount2, MntFlags};
    let strict = retry(|| {
        umount2(p, MntFlags::UMOUNT_NOFOLLOW)
            .or_else(|e| {
                if e == nix::errno::Errno::EINVAL || e == nix::errno::Errno::ENOENT {
                    Ok(()) // not mounted (any more)
                } else {
                    Err(e)
                }
            })
            .map_err(|e| format!("unmounting {}: {e}", p.display()))
    });
    match strict {
        Err(e) if lazy => umount2(p, MntFlags::MNT_DETACH | MntFlags::UMOUNT_NOFOLLOW)
            .map_err(|e2| format!("{e}; lazy unmount: {e2}")),
        r => r,
    }
}

/// How long one detach waits for the last holder of a loop device to close it.
const LOOP_DETACH_WAIT: Duration = Duration::from_secs(2);

/// Whether `dev` is detached within `wait`, polled every 20 ms.
fn detached_within(dev: &std::path::Path, wait: Duration) -> bool {
    let end = std::time::Instant::now() + wait;
    loop {
        if !super::dmcrypt::loop_attached(dev) {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn retry(mut f: impl FnMut() -> Result<(), String>) -> Result<(), String> {
    let mut last = Ok(());
    for i in 0..5 {
        last = f();
        if last.is_ok() {
            return last;
        }
        std::thread::sleep(Duration::from_millis(200 * (i + 1)));
    }
    last
}
