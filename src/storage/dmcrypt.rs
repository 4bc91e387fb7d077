//! cryptsetup: mapping a device with a random key that never touches a disk (it goes to
//! cryptsetup's stdin), closing it, and finding mappings an earlier killed run left behind.

use super::plan::{CryptSpec, Perf};
use crate::process::{check_interrupted, last_line};
use anyhow::{bail, Context, Result};
use rand::RngCore;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every mapping we create is named `sshtune-<pid>-<n>`, so a later run can tell ours (and
/// whether their owner is still alive) from anybody else's.
pub const PREFIX: &str = "sshtune-";

/// Work directories are `sshtune-storage-<pid>-<random>` in the chosen directory.
pub const WORKDIR_PREFIX: &str = "sshtune-storage-";

pub fn mapping_name(n: usize) -> String {
    format!("{PREFIX}{}-{n}", std::process::id())
}

/// How a mapping is laid out on disk: header-less plain mode (the default) or LUKS2 with a
/// fast PBKDF (the header and key slot cost nothing at run time; the data path is the same
/// dm-crypt table). Serialized as the matrix's `format` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VolumeFormat {
    Plain,
    Luks2,
}

fn perf_args(p: Perf) -> &'static [&'static str] {
    match p {
        Perf::Default => &[],
        Perf::NoWorkqueue => &["--perf-no_read_workqueue", "--perf-no_write_workqueue"],
    }
}

/// Maps `backing` as `/dev/mapper/<name>`.
pub fn open(spec: &CryptSpec, format: VolumeFormat, backing: &Path, name: &str) -> Result<PathBuf> {
    open_with(spec, format, backing, name, &[])
}

/// As `open`, with more `cryptsetup open` options after the spec's own perf flags (e.g.
/// `--perf-same_cpu_crypt`, which the storage matrix has no axis for).
pub fn open_with(
    spec: &CryptSpec,
    format: VolumeFormat,
    backing: &Path,
    name: &str,
    extra: &[&str],
) -> Result<PathBuf> {
    check_interrupted()?;
    let mut key = vec![0u8; (spec.key_bits / 8) as usize];
    rand::thread_rng().fill_bytes(&mut key);
    let key_size = spec.key_bits.to_string();
    let sector = spec.sector_size.to_string();
    let backing_s = backing.display().to_string();
    let kbytes = (spec.key_bits / 8).to_string();
    let common = [
        "--cipher",
        spec.cipher.as_str(),
        "--key-size",
        &key_size,
        "--sector-size",
        &sector,
        "--key-file",
        "-",
        "--keyfile-size",
        &kbytes,
    ];
    match format {
        VolumeFormat::Plain => {
            let mut args = vec!["open", "--type", "plain", "--batch-mode"];
            args.extend(common);
            args.extend(perf_args(spec.perf));
            args.extend(extra);
            args.extend([backing_s.as_str(), name]);
            with_key(&args, &key)?;
        }
        VolumeFormat::Luks2 => {
            let mut fmt = vec![
                "luksFormat",
                "--batch-mode",
                "--type",
                "luks2",
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
            ];
            fmt.extend(common);
            fmt.push(&backing_s);
            with_key(&fmt, &key)?;
            let mut args = vec![
                "open",
                "--batch-mode",
                "--key-file",
                "-",
                "--keyfile-size",
                &kbytes,
            ];
            args.extend(perf_args(spec.perf));
            args.extend(extra);
            args.extend([backing_s.as_str(), name]);
            with_key(&args, &key)?;
        }
    }
    key.iter_mut().for_each(|b| *b = 0);
    let dev = PathBuf::from(format!("/dev/mapper/{name}"));
    if !dev.exists() {
        bail!(
            "cryptsetup opened {name} but {} does not exist",
            dev.display()
        );
    }
    Ok(dev)
}

fn with_key(args: &[&str], key: &[u8]) -> Result<()> {
    let mut child = Command::new("cryptsetup")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run cryptsetup (is cryptsetup-bin installed?)")?;
    {
        let mut stdin = child.stdin.take().context("cryptsetup stdin")?;
        stdin
            .write_all(key)
            .context("passing the key to cryptsetup")?;
    }
    let out = child.wait_with_output().context("waiting for cryptsetup")?;
    if !out.status.success() {
        bail!(
            "cryptsetup {} failed: {}",
            args[0],
            last_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(())
}

/// Every block device in sysfs that has the attribute `attr` (`dm/name`), as its kernel name
/// (`dm-0`) and the attribute's value, trimmed.
fn block_attrs(attr: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/sys/block") {
        for e in rd.flatten() {
            let dev = e.file_name().to_string_lossy().into_owned();
            if let Ok(value) = std::fs::read_to_string(e.path().join(attr)) {
                out.push((dev, value.trim().to_string()));
            }
        }
    }
    out
}

/// Device-mapper devices by name, from sysfs (works without udev and without dmsetup).
pub fn mappings() -> Vec<(String, String)> {
    let by_dev = block_attrs("dm/name").into_iter();
    by_dev.map(|(dm, name)| (name, dm)).collect()
}

pub fn exists(name: &str) -> bool {
    mappings().iter().any(|(n, _)| n == name)
}

/// Loop devices with their backing files.
pub fn loops() -> Vec<(PathBuf, String)> {
    let by_dev = block_attrs("loop/backing_file").into_iter();
    by_dev
        .map(|(n, b)| (PathBuf::from("/dev").join(n), b))
        .collect()
}

pub fn loop_attached(dev: &Path) -> bool {
    loops().iter().any(|(d, _)| d == dev)
}

/// The owner's pid of a mapping `sshtune-<pid>-<n>`, as written (decimal digits only).
/// The helper on a pipeline's destination (`pipeline::luks::agent`) applies the same rule in
/// shell; `tests/it/storage/stale_rules.rs` holds the two to one answer.
pub fn mapping_owner(name: &str) -> Option<&str> {
    let (pid, _) = name.strip_prefix(PREFIX)?.split_once('-')?;
    digits(pid)
}

/// The owner's pid of a work directory `sshtune-storage-<pid>[-<token>]`, as written.
pub fn workdir_owner(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(WORKDIR_PREFIX)?;
    digits(rest.split('-').next()?)
}

fn digits(s: &str) -> Option<&str> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then_some(s)
}

/// Whether `/proc/<pid>` exists, with the pid as written: one too large for any pid type (or
/// with leading zeros) names no process, so what it owns is a dead run's.
pub fn pid_alive(pid: &str) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mappings are the one stale rule the host tests cannot plant (no device-mapper there):
    /// the names, as the helper's `sshtune-[0-9]*-*` and its digits check read them.
    #[test]
    fn a_mapping_is_a_runs_only_with_an_all_digit_pid_and_a_number_after_it() {
        assert_eq!(mapping_owner("sshtune-123-0"), Some("123"));
        assert_eq!(mapping_owner("sshtune-0123-x"), Some("0123"));
        for other in [
            "sshtune-vm",
            "sshtune-123",
            "sshtune--1-0",
            "sshtune-+1-0",
            "sshtune-12a-0",
            "sshtune-storage-123-0",
            "luks-123-0",
        ] {
            assert_eq!(mapping_owner(other), None, "{other}");
        }
        assert_eq!(workdir_owner("sshtune-storage-77"), Some("77"));
        assert_eq!(workdir_owner("sshtune-storage-77-tok-x"), Some("77"));
        assert_eq!(workdir_owner("sshtune-storage-+77-tok"), None);
        assert!(!pid_alive(&"9".repeat(24)));
        assert!(pid_alive(&std::process::id().to_string()));
    }
}
