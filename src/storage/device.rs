//! Safety checks before a real device is overwritten: never one that is mounted or held by
//! anything, and never one with a filesystem or partition table unless the user insists.

use anyhow::{bail, Context, Result};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What stands in the way of overwriting `dev`.
#[derive(Debug, Default, PartialEq)]
pub struct Findings {
    pub mounted: Vec<String>,
    pub holders: Vec<String>,
    pub busy: bool,
    pub signature: Option<String>,
}

pub fn inspect(dev: &Path) -> Result<(PathBuf, Findings)> {
    let real = std::fs::canonicalize(dev).with_context(|| format!("{}", dev.display()))?;
    let meta = std::fs::metadata(&real).with_context(|| format!("{}", real.display()))?;
    if !meta.file_type().is_block_device() {
        bail!("{} is not a block device", dev.display());
    }
    let base = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
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
    f.signature = signature(&real);
    Ok((real, f))
}

/// Refuses unless the device is free; a signature is overridable with `--force`, use never is.
pub fn check(dev: &Path, destroy_data: bool, force: bool) -> Result<PathBuf> {
    if !destroy_data {
        bail!(
            "--device {} would be overwritten: add --destroy-data to confirm",
            dev.display()
        );
    }
    let (real, f) = inspect(dev)?;
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
    if let Some(sig) = &f.signature {
        if !force {
            bail!(
                "refusing {}: it carries {sig}; add --force to overwrite it anyway",
                dev.display()
            );
        }
    }
    Ok(real)
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

/// `blkid -p` exits 0 and names the TYPE/PTTYPE when it finds a signature, 2 when none.
fn signature(dev: &Path) -> Option<String> {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(dev)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")).map(str::to_string))
    };
    match (get("TYPE"), get("PTTYPE")) {
        (Some(t), _) => Some(format!("a {t} signature")),
        (None, Some(p)) => Some(format!("a {p} partition table")),
        _ => Some("a signature blkid recognises".into()),
    }
}
