//! The destination check: one ssh call that refuses early (missing or read-only directory,
//! no remote rsync), creates the run directory, and reports what backs the destination. Its
//! `SSHTUNE-INFO` facts are read here and nowhere else.

use super::control::Control;
use super::destination::Endpoint;
use super::model::StorageInfo;
use super::scripts;
use super::ssh::remote_call;
use super::MIB;
use crate::remote::{info, machine, refusal, said_ok, same_boot, Info};
use crate::sysinfo::MachineInfo;
use anyhow::{bail, Result};

/// What the check found out about the remote side.
#[derive(Debug, Default)]
pub struct RemoteSide {
    pub storage: StorageInfo,
    /// The remote machine's cores (`nproc`).
    pub cores: Option<u32>,
    /// The first line of the remote rsync's `--version`, `?` when unknown.
    pub remote_rsync: String,
    /// The destination's CPU, cores, kernel and crypto features.
    pub machine: MachineInfo,
    /// Whether the destination runs on this machine's kernel (same boot id); None when
    /// either side's cannot be read.
    pub same_boot: Option<bool>,
}

/// Checks `end`'s directory and creates `run_dir` in it. Once this returns, the run
/// directory exists and must be registered for removal before anything else can fail.
/// A dm-crypt table that cannot be read is a warning, not a refusal.
pub fn check(
    end: &Endpoint,
    control: &Control,
    run_dir: &str,
    rsync_path: &str,
    warnings: &mut Vec<String>,
) -> Result<RemoteSide> {
    let (dir, label) = (&end.dir, &end.label);
    let pre = remote_call(
        control,
        &scripts::preflight(dir, run_dir, rsync_path),
        label,
        "checking the destination",
    )?;
    if let Some(err) = refusal(&pre) {
        let (what, why) = err.split_once(' ').unwrap_or((&err, ""));
        match what {
            "missing" => bail!("destination directory {dir} does not exist on {label}"),
            "notwritable" => bail!(
                "destination directory {dir} on {label} is not writable: {}",
                // The shell's `sh: 1: cannot create PATH: Read-only file system` → the cause.
                why.rsplit_once(": ").map_or(why, |(_, c)| c).trim()
            ),
            "norsync" => bail!(
                "rsync ({rsync_path}) is missing on {label}: install it there or pass --rsync-path"
            ),
            _ => bail!("cannot create a run directory in {dir} on {label}"),
        }
    }
    if !said_ok(&pre) {
        bail!(
            "the destination check on {label} printed nothing usable: {}",
            crate::process::last_line(&pre)
        );
    }
    Ok(facts(&pre, warnings))
}

fn facts(pre: &str, warnings: &mut Vec<String>) -> RemoteSide {
    let mut storage = StorageInfo {
        device: info(pre, "device").map(String::from),
        fstype: info(pre, "fstype").map(String::from),
        dm_device: info(pre, "dm").map(String::from),
        dm_name: info(pre, "dmname").map(String::from),
        sector_size: info(pre, "sector").and_then(|s| s.parse().ok()),
        free_bytes: info(pre, "avail_k")
            .and_then(|s| s.parse::<u64>().ok())
            .map(|k| k * 1024),
        ..Default::default()
    };
    if let Some((cipher, sector, flags)) = info(pre, "dmtable").and_then(scripts::parse_crypt_table)
    {
        storage.crypt_cipher = Some(cipher);
        storage.sector_size = sector.or(storage.sector_size);
        storage.crypt_flags = flags;
        storage.crypt_key_bits = info(pre, "dmtable").and_then(scripts::crypt_key_bits);
    } else if storage.dm_name.is_some() {
        warnings.push("the dm-crypt table could not be read on the remote side (dmsetup needs root): cipher and flags unknown".into());
    }
    RemoteSide {
        storage,
        cores: info(pre, "cores").and_then(|c| c.parse().ok()),
        remote_rsync: info(pre, "rsync").unwrap_or("?").to_string(),
        machine: machine(&Info::parse(pre)),
        same_boot: same_boot(&Info::parse(pre)),
    }
}

/// Refuses a run the destination filesystem cannot hold: rsync writes a temp copy of each
/// file before renaming it into place.
pub fn check_room(storage: &StorageInfo, bytes: u64, label: &str) -> Result<()> {
    if let Some(free) = storage.free_bytes {
        let need = bytes + bytes / 50 + (1 << 20);
        if free < need {
            bail!(
                "the destination filesystem on {label} is full for this run: {:.1} MiB free, the dataset needs {:.1} MiB (use a smaller --size)",
                free as f64 / MIB,
                need as f64 / MIB
            );
        }
    }
    Ok(())
}
