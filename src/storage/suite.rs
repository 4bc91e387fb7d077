//! One `sshtune storage` run: look at the machine, clean up after dead runs, then measure as
//! deep as the machine allows (cipher speed, then the dm-crypt matrix) and say what was ruled
//! out. `cmd/storage.rs` builds the `Options` from the command line.

use super::caps::Capabilities;
use super::kspeed::SpeedSection;
use super::model::{StorageReport, SCHEMA};
use super::plan::{self, Overrides, Preset};
use super::run::{self, Backing, RunOptions};
use super::{device, dmcrypt, kspeed, stale};
use crate::process;
use crate::progress::Progress;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Cipher-speed set of a quick run: the matrix's cipher and the usual alternatives.
const QUICK_SPEED_SET: &[(&str, u32)] = &[
    ("aes-cbc", 256),
    ("aes-xts", 256),
    ("aes-xts", 512),
    ("xchacha12,aes-adiantum-plain64", 256),
];

/// What a storage run measures and where; `None` sizes and durations take the preset's.
#[derive(Debug, Clone)]
pub struct Options {
    pub preset: Preset,
    pub overrides: Overrides,
    /// Bytes of the loop file (256 MiB quick, 1 GiB otherwise).
    pub size: Option<u64>,
    /// Where the work directory goes (the system's temp directory by default).
    pub dir: Option<PathBuf>,
    /// A whole device to measure instead of a loop file, with the user's consent flags.
    pub device: Option<PathBuf>,
    pub destroy_data: bool,
    pub force: bool,
    /// Busy threads on every core during the matrix.
    pub load: u32,
    /// LUKS2 volumes instead of plain dm-crypt mappings.
    pub luks2: bool,
    /// Each fio test's runtime (5 s quick, 20 s otherwise).
    pub fio_runtime: Option<Duration>,
    pub no_matrix: bool,
    pub no_speed: bool,
}

pub fn run(opts: &Options, progress: &dyn Progress) -> Result<StorageReport> {
    process::install_signal_handlers()?;
    let quick = opts.preset == Preset::Quick;
    let plan = plan::build(opts.preset, &opts.overrides).map_err(anyhow::Error::msg)?;
    let size = opts.size.unwrap_or(if quick { 256 << 20 } else { 1 << 30 });
    if size < 32 << 20 {
        bail!("--size must be at least 32M (ext4 and 16 MiB test blocks need room)");
    }
    let work_parent = opts.dir.clone().unwrap_or_else(std::env::temp_dir);
    if !work_parent.is_dir() {
        bail!("--dir {} is not a directory", work_parent.display());
    }
    let started = chrono::Local::now().to_rfc3339();

    // A device is checked before anything else happens, so a refusal costs nothing.
    let device = match &opts.device {
        Some(d) => Some(device::check(d, opts.destroy_data, opts.force)?),
        None => None,
    };
    let caps = Capabilities::detect(&plan.cipher_specs());
    let mut ruled_out = caps.matrix_blockers();
    let mut warnings = Vec::new();
    let stale_cleanup = if caps.root {
        stale::clean(&work_parent)
    } else {
        Vec::new()
    };

    let (kernel_speed, kernel_speed_error) = if opts.no_speed {
        (None, None)
    } else {
        cipher_speed(quick, &caps, &mut ruled_out, progress)?
    };
    process::check_interrupted()?;

    // Layer 3: the matrix.
    let mut matrix = None;
    let blockers = caps.matrix_blockers();
    if opts.no_matrix {
        ruled_out.push("dm-crypt matrix: skipped (--no-matrix)".into());
    } else if !blockers.is_empty() {
        if opts.device.is_some() {
            bail!("cannot run the matrix on --device: {}", blockers.join("; "));
        }
    } else {
        let backing = match device {
            Some(d) => Backing::Device(std::sync::Arc::new(d)),
            None => Backing::LoopFile(work_parent.clone()),
        };
        let options = run_options(opts, backing, work_parent, size)?;
        if options.io_bytes > 4 << 30 {
            warnings.push("large target: each sequential test moves half of it".into());
        }
        matrix = Some(run::run(&plan, &options, progress)?);
    }

    Ok(StorageReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started,
        machine: crate::sysinfo::local(),
        capabilities: caps,
        ruled_out,
        kernel_speed,
        kernel_speed_error,
        matrix,
        stale_cleanup,
        warnings,
    })
}

/// Layer 2: cipher speed, the kernel's if it can be measured, else userspace and labelled
/// so; why the kernel's could not goes to `ruled_out`.
fn cipher_speed(
    quick: bool,
    caps: &Capabilities,
    ruled_out: &mut Vec<String>,
    progress: &dyn Progress,
) -> Result<(Option<SpeedSection>, Option<String>)> {
    let set = if quick {
        QUICK_SPEED_SET
    } else {
        kspeed::KERNEL_SET
    };
    progress.status("measuring cipher speed");
    let kernel = if caps.speed_blocker().is_none() {
        Some(kspeed::kernel(set))
    } else {
        None
    };
    match kernel {
        Some(Ok(k)) => return Ok((Some(k), None)),
        Some(Err(e)) => {
            if e.downcast_ref::<process::Interrupted>().is_some() {
                return Err(e);
            }
            ruled_out.push(format!("kernel cipher speed: {e:#}"));
        }
        None => ruled_out.extend(caps.speed_blocker()),
    }
    let budget = Duration::from_millis(if quick { 150 } else { 400 });
    Ok(match kspeed::userspace(set, 3, budget) {
        Ok(u) => (Some(u), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    })
}

/// How the matrix runs: on the device (its whole size) or a loop file of `size` bytes.
fn run_options(
    opts: &Options,
    backing: Backing,
    work_parent: PathBuf,
    size: u64,
) -> Result<RunOptions> {
    let quick = opts.preset == Preset::Quick;
    let size = match &backing {
        Backing::Device(d) => device_size(d)?,
        Backing::LoopFile(_) => size,
    };
    Ok(RunOptions {
        backing,
        work_parent,
        size,
        io_bytes: run::io_bytes_for(size),
        fio_runtime: opts
            .fio_runtime
            .unwrap_or(Duration::from_secs(if quick { 5 } else { 20 })),
        format: if opts.luks2 {
            dmcrypt::VolumeFormat::Luks2
        } else {
            dmcrypt::VolumeFormat::Plain
        },
        load: opts.load,
    })
}

fn device_size(dev: &device::Pinned) -> Result<u64> {
    let sectors: u64 = std::fs::read_to_string(format!("/sys/class/block/{}/size", dev.name))
        .with_context(|| format!("size of {}", dev.path.display()))?
        .trim()
        .parse()
        .context("parsing the device size")?;
    Ok(sectors * 512)
}
