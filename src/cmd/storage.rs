//! `sshtune storage`: validate, look at the machine, clean up after dead runs, then measure
//! as deep as the machine allows and say what was ruled out.

use crate::cli::StorageArgs;
use crate::process;
use crate::progress::{self, Progress};
use crate::report::{outputs, render};
use crate::storage::model::{StorageReport, SCHEMA};
use crate::storage::plan::{self, Overrides, Preset};
use crate::storage::run::{self, Backing, RunOptions};
use crate::storage::{caps::Capabilities, device, dmcrypt, kspeed, stale};
use anyhow::{bail, Context, Result};
use std::time::Duration;

/// Cipher-speed set of a quick run: the matrix's cipher and the usual alternatives.
const QUICK_SPEED_SET: &[(&str, u32)] = &[
    ("aes-cbc", 256),
    ("aes-xts", 256),
    ("aes-xts", 512),
    ("xchacha12,aes-adiantum-plain64", 256),
];

pub fn run(args: StorageArgs) -> Result<()> {
    let outputs = outputs::plan(&args.out.requests(), args.format)?;
    process::install_signal_handlers()?;
    let preset = if args.quick {
        Preset::Quick
    } else {
        args.preset
    };
    let quick = preset == Preset::Quick;
    let overrides = Overrides {
        ciphers: args.ciphers.clone(),
        sector_sizes: args.sector_sizes.clone(),
        perf: args.perf.clone(),
        layers: args.layers.clone(),
        tests: args.tests.clone(),
        repeat: args.repeat,
    };
    let plan = plan::build(preset, &overrides).map_err(anyhow::Error::msg)?;
    let size = args.size.unwrap_or(if quick { 256 << 20 } else { 1 << 30 });
    if size < 32 << 20 {
        bail!("--size must be at least 32M (ext4 and 16 MiB test blocks need room)");
    }
    let work_parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    if !work_parent.is_dir() {
        bail!("--dir {} is not a directory", work_parent.display());
    }
    let started = chrono::Local::now().to_rfc3339();
    let progress = progress::Stderr::new(args.quiet).log_status("storage");

    // A device is checked before anything else happens, so a refusal costs nothing.
    let device = match &args.device {
        Some(d) => Some(device::check(d, args.destroy_data, args.force)?),
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

    // Layer 2: cipher speed, kernel if possible, else userspace and labelled so.
    let (mut kernel_speed, mut kernel_speed_error) = (None, None);
    if !args.no_speed {
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
            Some(Ok(k)) => kernel_speed = Some(k),
            other => {
                if let Some(Err(e)) = other {
                    if e.downcast_ref::<process::Interrupted>().is_some() {
                        return Err(e);
                    }
                    ruled_out.push(format!("kernel cipher speed: {e:#}"));
                } else if let Some(b) = caps.speed_blocker() {
                    ruled_out.push(b);
                }
                match kspeed::userspace(
                    set,
                    3,
                    Duration::from_millis(if quick { 150 } else { 400 }),
                ) {
                    Ok(u) => kernel_speed = Some(u),
                    Err(e) => kernel_speed_error = Some(format!("{e:#}")),
                }
            }
        }
    }
    process::check_interrupted()?;

    // Layer 3: the matrix.
    let mut matrix = None;
    let blockers = caps.matrix_blockers();
    if args.no_matrix {
        ruled_out.push("dm-crypt matrix: skipped (--no-matrix)".into());
    } else if !blockers.is_empty() {
        if args.device.is_some() {
            bail!("cannot run the matrix on --device: {}", blockers.join("; "));
        }
    } else {
        let backing = match device {
            Some(d) => Backing::Device(std::sync::Arc::new(d)),
            None => Backing::LoopFile(work_parent.clone()),
        };
        let size = match &backing {
            Backing::Device(d) => device_size(d)?,
            Backing::LoopFile(_) => size,
        };
        let options = RunOptions {
            backing,
            work_parent: work_parent.clone(),
            size,
            io_bytes: run::io_bytes_for(size),
            fio_runtime: args.fio_runtime.unwrap_or(Duration::from_secs(if quick {
                5
            } else {
                20
            })),
            format: if args.luks2 {
                dmcrypt::VolumeFormat::Luks2
            } else {
                dmcrypt::VolumeFormat::Plain
            },
            load: args.load,
        };
        if options.io_bytes > 4 << 30 {
            warnings.push("large target: each sequential test moves half of it".into());
        }
        matrix = Some(run::run(&plan, &options, &progress)?);
    }
    progress.finish();

    let report = StorageReport {
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
    };
    outputs.write(|f| render::storage(&report, f))?;
    Ok(())
}

fn device_size(dev: &device::Pinned) -> Result<u64> {
    let sectors: u64 = std::fs::read_to_string(format!("/sys/class/block/{}/size", dev.name))
        .with_context(|| format!("size of {}", dev.path.display()))?
        .trim()
        .parse()
        .context("parsing the device size")?;
    Ok(sectors * 512)
}
