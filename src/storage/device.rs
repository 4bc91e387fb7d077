//! Safety checks before a real device is overwritten: never one that is mounted or held by
//! anything, and never one with a filesystem or partition table unless the user insists.
//!
//! The device that passed is pinned (`Pinned`) for the whole run, because formatting starts
//! minutes after the check: a descriptor stays open on it, which keeps the kernel from giving
//! its name and number to another disk (a SCSI disk's index and a loop device are not reused
//! while open; a loop device detached meanwhile only goes when its last user closes it), and
//! before each write the path is checked to lead to the same device number and the same disk
//! sequence number (`diskseq`, Linux 5.15+, new for every disk the kernel creates and for
//! every file attached to a loop device). The descriptor cannot be an `O_EXCL` one:
//! cryptsetup, device-mapper and mkfs claim the device exclusively themselves.

use anyhow::{bail, Context, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The device the user gave up, as it was checked.
#[derive(Debug)]
pub struct Pinned {
    /// The path every step writes through (symlinks resolved once, at the check).
    pub path: PathBuf,
    /// The kernel's name for it (`sdb`, `loop3`): its directory in `/sys/class/block`.
    pub name: String,
    rdev: u64,
    diskseq: Option<u64>,
    _held: std::fs::File,
}

impl Pinned {
    /// Opens `path` and records what it is. The path is read again afterwards (`verify`):
    /// whatever happens in between, the checks were made on the device the descriptor holds.
    pub fn open(path: &Path) -> Result<Self> {
        let held = std::fs::OpenOptions::new()
            .read(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let meta = held.metadata()?;
        if !meta.file_type().is_block_device() {
            bail!("{} is not a block device", path.display());
        }
        let rdev = meta.rdev();
        let name = sysfs_name(rdev)
            .with_context(|| format!("{} has no entry in /sys/dev/block", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            name,
            rdev,
            diskseq: diskseq(rdev),
            _held: held,
        })
    }

    /// Fails unless the path still leads to the device that was checked: same device number,
    /// same disk sequence number where the kernel has one.
    pub fn verify(&self) -> Result<()> {
        let now = std::fs::metadata(&self.path)
            .ok()
            .map(|m| (m.rdev(), m.file_type()));
        let same_node = now.is_some_and(|(r, t)| r == self.rdev && t.is_block_device());
        if same_node && diskseq(self.rdev) == self.diskseq {
            return Ok(());
        }
        bail!(
            "{} is no longer the device that was checked ({} {}, disk sequence {}, now {}): \
             stopped before writing to it",
            self.path.display(),
            self.name,
            devnum(self.rdev),
            self.diskseq.map_or("unknown".into(), |d| d.to_string()),
            match now {
                Some((r, _)) => format!(
                    "{} with disk sequence {}",
                    devnum(r),
                    diskseq(r).map_or("unknown".into(), |d| d.to_string())
                ),
                None => "gone".into(),
            }
        )
    }
}

/// `major:minor`, as sysfs and /proc/self/mountinfo write it.
fn devnum(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

fn sysfs_name(rdev: u64) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{}", devnum(rdev))).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

fn diskseq(rdev: u64) -> Option<u64> {
    std::fs::read_to_string(format!("/sys/dev/block/{}/diskseq", devnum(rdev)))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What stands in the way of overwriting `dev`.
#[derive(Debug, Default, PartialEq)]
pub struct Findings {
    pub mounted: Vec<String>,
    pub holders: Vec<String>,
    pub busy: bool,
    /// Why blkid forbids overwriting it without `--force`: a signature, or no clear answer.
    pub signature: Option<String>,
}

pub fn inspect(dev: &Path) -> Result<(Pinned, Findings)> {
    let real = std::fs::canonicalize(dev).with_context(|| format!("{}", dev.display()))?;
    let meta = std::fs::metadata(&real).with_context(|| format!("{}", real.display()))?;
    if !meta.file_type().is_block_device() {
        bail!("{} is not a block device", dev.display());
    }
    let pinned = Pinned::open(&real)?;
    let base = pinned.name.clone();
    let mut f = Findings::default();
    // Mounted: the device itself or any of its partitions.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let parts = partitions(&base);
    for line in mounts.lines() {
        let mut it = line.split_whitespace();
        let (Some(src), Some(dst)) = (it.next(), it.next()) else {
            continue;
        };
        let src_real = std::fs::canonicalize(src).unwrap_or_else(|_| PathBuf::from(src));
        let src_base = src_real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if src_real == real || parts.contains(&src_base) {
            f.mounted.push(format!("{src} on {dst}"));
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for l in swaps.lines().skip(1) {
            if let Some(s) = l.split_whitespace().next() {
                if std::fs::canonicalize(s).is_ok_and(|p| p == real) {
                    f.mounted.push(format!("{s} is swap"));
                }
            }
        }
    }
    for p in std::iter::once(base.clone()).chain(parts) {
        if let Ok(rd) = std::fs::read_dir(format!("/sys/class/block/{p}/holders")) {
            f.holders.extend(
                rd.flatten()
                    .map(|e| format!("{p} held by {}", e.file_name().to_string_lossy())),
            );
        }
    }
    // O_EXCL on a block device fails with EBUSY while anyone else holds it exclusively.
    f.busy = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&real)
        .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY));
    f.signature = signature(&real)?;
    pinned.verify()?;
    Ok((pinned, f))
}

/// Refuses unless the device is free; a signature (or no clear answer from blkid) is
/// overridable with `--force`, use never is. The device that passed comes back pinned.
pub fn check(dev: &Path, destroy_data: bool, force: bool) -> Result<Pinned> {
    if !destroy_data {
        bail!(
            "--device {} would be overwritten: add --destroy-data to confirm",
            dev.display()
        );
    }
    let (pinned, f) = inspect(dev)?;
    if !f.mounted.is_empty() {
        bail!(
            "refusing {}: mounted ({})",
            dev.display(),
            f.mounted.join(", ")
        );
    }
    if !f.holders.is_empty() {
        bail!(
            "refusing {}: in use ({})",
            dev.display(),
            f.holders.join(", ")
        );
    }
    if f.busy {
        bail!(
            "refusing {}: in use (opened exclusively by another program)",
            dev.display()
        );
    }
    if let Some(why) = &f.signature {
        if !force {
            bail!(
                "refusing {}: {why}; add --force to overwrite it anyway",
                dev.display()
            );
        }
    }
    Ok(pinned)
}

fn partitions(base: &str) -> Vec<String> {
    std::fs::read_dir(format!("/sys/class/block/{base}"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(base) && n != base)
                .collect()
        })
        .unwrap_or_default()
}

/// What `blkid -p` says about a device. Only its exit status 2 means "nothing found": 0 is a
/// signature, 8 an ambivalent result (several signatures), 4 a usage or I/O error, and anything
/// else (a crash, a blkid that does not know `-p`) is no answer at all.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Clean,
    /// Why the device must not be overwritten without `--force`.
    Refuse(String),
}

/// Judges one `blkid -p -o export` run: its exit code (`None` when killed by a signal), stdout
/// and stderr. Pure, so every exit code is tested.
pub fn judge_blkid(code: Option<i32>, stdout: &str, stderr: &str) -> Verdict {
    let get = |k: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")).map(str::to_string))
    };
    let why = |s: &str| {
        let s = s.trim();
        if s.is_empty() {
            String::new()
        } else {
            format!(": {}", s.lines().next().unwrap_or(s))
        }
    };
    match code {
        Some(2) => Verdict::Clean,
        Some(0) => Verdict::Refuse(match (get("TYPE"), get("PTTYPE")) {
            (Some(t), _) => format!("it carries a {t} signature"),
            (None, Some(p)) => format!("it carries a {p} partition table"),
            _ => "it carries a signature blkid recognises".into(),
        }),
        Some(8) => Verdict::Refuse(format!(
            "blkid -p found more than one signature (ambivalent result){}",
            why(stderr)
        )),
        Some(c) => Verdict::Refuse(format!(
            "blkid -p could not tell whether it holds data (exit {c}){}",
            why(stderr)
        )),
        None => Verdict::Refuse("blkid -p was killed before it answered".into()),
    }
}

/// `--device` needs util-linux's blkid: busybox's has no `-p` (low-level probing that ignores
/// the cache), so its silence proves nothing. Returns the blkid to run, found as the
/// capability check finds tools (PATH, then sbin).
pub fn require_blkid() -> Result<PathBuf> {
    let blkid = crate::process::find_program("blkid").context(
        "--device needs blkid (util-linux) to check the device for data: not found \
         (apt-get install util-linux)",
    )?;
    let out = Command::new(&blkid).arg("-V").output().with_context(|| {
        format!(
            "--device needs blkid (util-linux) to check the device for data; {} cannot run",
            blkid.display()
        )
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !text.contains("util-linux") {
        bail!(
            "--device needs util-linux's blkid (with -p) to check the device for data; {} is \
             another one (apt-get install util-linux)",
            blkid.display()
        );
    }
    Ok(blkid)
}

fn signature(dev: &Path) -> Result<Option<String>> {
    let blkid = require_blkid()?;
    let out = Command::new(blkid)
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()
        .context("running blkid -p")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    Ok(match judge_blkid(out.status.code(), &text, &err) {
        Verdict::Clean => None,
        Verdict::Refuse(why) => Some(why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exit_2_is_clean() {
        assert_eq!(judge_blkid(Some(2), "", ""), Verdict::Clean);
        let refuse = |c, out: &str, err: &str| match judge_blkid(c, out, err) {
            Verdict::Refuse(why) => why,
            Verdict::Clean => panic!("{c:?} judged clean"),
        };
        assert!(refuse(Some(0), "DEVNAME=x\nTYPE=ext4\n", "").contains("ext4 signature"));
        assert!(refuse(Some(0), "PTTYPE=dos\n", "").contains("dos partition table"));
        assert!(refuse(Some(0), "", "").contains("signature"));
        let amb = refuse(Some(8), "", "blkid: x: ambivalent result (probably more)\n");
        assert!(amb.contains("ambivalent"), "{amb}");
        assert!(refuse(Some(4), "", "blkid: bad usage").contains("exit 4"));
        assert!(refuse(Some(1), "", "").contains("exit 1"));
        assert!(refuse(Some(127), "", "applet not found").contains("exit 127"));
        assert!(refuse(None, "", "").contains("killed"));
    }
}
