//! The scratch volumes on the destination: one loop file in a work directory beside the
//! destination directory (same filesystem, so the same disk underneath), a LUKS2 mapping per
//! setting on it, ext4 mounted inside the work directory. Built from storage's pieces —
//! `dmcrypt` (key on stdin, `sshtune-<pid>-<n>` names), `run::allocate` and
//! `run::mount_ext4`, and its `Cleanup` registry — so everything is undone in reverse order
//! on success, error and SIGINT/SIGTERM, and the work directory's `sshtune-storage-<pid>-`
//! name lets the next run's stale scan (`storage::stale`) remove what a killed run left.
//!
//! The destination must be this machine (the embedded loopback server): root runs
//! cryptsetup, losetup and mount here directly.

use crate::pipeline::destination::Endpoint;
use crate::pipeline::model::LuksSetting;
use crate::process::{find_program, run_capture};
use crate::storage::cleanup::{Cleanup, Resource};
use crate::storage::dmcrypt::{self, VolumeFormat};
use crate::storage::plan::{CryptSpec, Perf};
use crate::storage::{run as srun, stale};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Refuses a `--luks` run this machine cannot do, before anything is created.
pub fn require(end: &Endpoint) -> Result<()> {
    if !end.embedded {
        bail!(
            "--luks needs a destination directory on this machine (run sshtune pipeline --luks \
             on the destination host): scratch volumes over ssh are not supported yet"
        );
    }
    if !nix::unistd::geteuid().is_root() {
        bail!("--luks needs root (it creates loop devices, LUKS2 mappings and mounts)");
    }
    for tool in ["cryptsetup", "losetup", "mkfs.ext4"] {
        if find_program(tool).is_none() {
            bail!("--luks needs {tool}: not found (apt-get install cryptsetup-bin util-linux e2fsprogs)");
        }
    }
    Ok(())
}

/// Removes what killed runs left in `dir` (and their mappings, mounts, loop devices).
pub fn clean_stale(dir: &Path) -> Vec<String> {
    stale::clean(dir)
}

pub struct Scratch {
    pub work: PathBuf,
    pub loop_dev: PathBuf,
    pub mnt: PathBuf,
    pub bytes: u64,
}

/// One setting mapped: its name, `/dev/mapper` path and `dm-N` (for the samplers' write rate).
pub struct Mapped {
    pub name: String,
    pub dev: PathBuf,
    pub dm: Option<String>,
}

impl Scratch {
    /// The work directory `sshtune-storage-<pid>-<token>` in `dir` (the token makes the
    /// samplers count the processes writing under it as this run's), a loop file of
    /// `bytes` in it, attached.
    pub fn create(dir: &Path, token: &str, bytes: u64, c: &mut Cleanup) -> Result<Self> {
        let work = dir.join(format!(
            "{}{}-{token}",
            stale::WORKDIR_PREFIX,
            std::process::id()
        ));
        c.push(Resource::Dir(work.clone()));
        std::fs::create_dir(&work).with_context(|| format!("creating {}", work.display()))?;
        let file = work.join("luks.img");
        c.push(Resource::File(file.clone()));
        srun::allocate(&file, bytes)?;
        crate::process::check_interrupted()?;
        let dev = run_capture(
            Command::new("losetup")
                .args(["--find", "--show"])
                .arg(&file),
        )
        .context("attaching a loop device")?;
        let loop_dev = PathBuf::from(dev.trim());
        c.push(Resource::Loop(loop_dev.clone()));
        fill(&loop_dev, bytes)?;
        let mnt = work.join("mnt");
        std::fs::create_dir(&mnt).context("making the mount point")?;
        Ok(Self {
            work,
            loop_dev,
            mnt,
            bytes,
        })
    }

    /// Formats the loop device as LUKS2 with `s` (random key on stdin) and opens it.
    pub fn map(&self, n: usize, s: &LuksSetting, c: &mut Cleanup) -> Result<Mapped> {
        let spec = CryptSpec {
            cipher: s.cipher.clone(),
            key_bits: s.key_bits,
            sector_size: s.sector_size,
            perf: Perf::Default,
        };
        let name = dmcrypt::mapping_name(n);
        c.push(Resource::Mapping(name.clone()));
        let perf = super::settings::perf_args(s);
        let extra: Vec<&str> = perf.iter().map(String::as_str).collect();
        let dev = dmcrypt::open_with(&spec, VolumeFormat::Luks2, &self.loop_dev, &name, &extra)?;
        let dm = dmcrypt::mappings()
            .into_iter()
            .find(|(n, _)| n == &name)
            .map(|(_, dm)| dm);
        Ok(Mapped { name, dev, dm })
    }

    /// ext4 on the mapping, mounted on the work directory's mount point.
    pub fn mount(&self, m: &Mapped, c: &mut Cleanup) -> Result<()> {
        srun::mount_ext4(&m.dev, &self.mnt, c)
    }
}

/// Writes zeros over the whole loop device once, untimed. The file's blocks are reserved
/// with `fallocate`, which leaves them unwritten on ext4 and XFS: whichever setting wrote
/// them first paid for turning them into written ones. In one run the first setting's pass
/// read 2.0 MiB/s and the next two 8.0 and 10.4, where the cells of all three ran alike.
/// That was not all of the first pass's handicap: `run.rs` also writes it once untimed.
fn fill(dev: &Path, bytes: u64) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .with_context(|| format!("opening {}", dev.display()))?;
    let block = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        crate::process::check_interrupted()?;
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])
            .with_context(|| format!("writing {}", dev.display()))?;
        left -= n as u64;
    }
    f.sync_all().context("fsync of the loop device")
}

/// Size in bytes of a block device `dm-N` (for the re-encryption estimate).
pub fn device_bytes(dm: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/sys/block/{dm}/size"))
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}
