//! Stage ceilings: each stage of the pipeline measured alone, in the same run, so the
//! end-to-end figure can be compared with what every stage could do by itself.

use super::model::{Stage, StageCeiling};
use super::rsync::{self, RunError};
use super::scripts;
use crate::bench::model::{BenchReport, Direction};
use crate::bench::{suite, EngineKind, Options, SamplingOptions};
use crate::progress;
use crate::remote::Line;
use crate::stats;
use crate::target::SshTarget;
use anyhow::Result;
use std::path::Path;
use std::process::Command;

const MIB: f64 = 1024.0 * 1024.0;
const SSH: Stage = Stage::Ssh;
const DISK: Stage = Stage::Disk;
const RSYNC_LOCAL: Stage = Stage::RsyncLocal;

pub fn ceiling(
    stage: Stage,
    cipher: Option<&str>,
    samples: Vec<f64>,
    method: String,
) -> StageCeiling {
    StageCeiling {
        stage,
        cipher: cipher.map(String::from),
        median_mib_s: stats::median(&samples),
        min_mib_s: stats::min(&samples),
        max_mib_s: stats::max(&samples),
        samples,
        method,
        error: None,
    }
}

pub fn failed(stage: Stage, cipher: Option<&str>, error: String) -> StageCeiling {
    StageCeiling {
        stage,
        cipher: cipher.map(String::from),
        samples: Vec::new(),
        median_mib_s: None,
        min_mib_s: None,
        max_mib_s: None,
        method: String::new(),
        error: Some(error),
    }
}

/// SSH-only upload throughput per cipher, through the same bench every `sshtune bench` runs,
/// against exactly the target the pipeline uses (the embedded server included).
pub fn ssh_only(
    destination: &str,
    options: &[String],
    ciphers: &[String],
    repeat: u32,
    quiet: bool,
) -> Result<(Vec<StageCeiling>, BenchReport)> {
    let target = SshTarget {
        destination: destination.to_string(),
        options: options.to_vec(),
        embedded: false,
    };
    let opts = Options {
        ciphers: ciphers.to_vec(),
        sampling: SamplingOptions {
            repeat,
            min_duration_s: 1.0,
            ..SamplingOptions::DEFAULT
        },
        directions: vec![Direction::Upload],
        ..Options::new(Some(target), vec![EngineKind::Openssh])
    };
    let report = suite::run(&opts, &|| Box::new(progress::Stderr::new(quiet)))?;
    let rows = report
        .results
        .iter()
        .filter(|r| r.direction == Direction::Upload)
        .map(|r| match &r.error {
            Some(e) => failed(SSH, Some(&r.cipher), e.clone()),
            None => ceiling(
                SSH,
                Some(&r.cipher),
                r.samples.clone(),
                format!(
                    "bench upload, random data into `cat > /dev/null`, {} MiB per sample",
                    r.bytes >> 20
                ),
            ),
        })
        .collect();
    Ok((rows, report))
}

/// Sequential write of `mib` MiB to a temp file in the run directory, through `ssh_cmd`.
pub fn disk_only(
    mut ssh_cmd: impl FnMut(&str) -> Result<String>,
    run_dir: &str,
    mib: u64,
    repeat: u32,
) -> StageCeiling {
    let file = format!("{run_dir}/.sshtune-disk-test");
    let mut samples = Vec::new();
    let mut mode = String::new();
    for _ in 0..repeat {
        let out = match ssh_cmd(&scripts::disk(&file, mib)) {
            Ok(o) => o,
            Err(e) => return failed(DISK, None, format!("{e:#}")),
        };
        let mut lines = out.lines();
        let disk = lines
            .by_ref()
            .find_map(|l| match Line::parse(l) {
                Ok(Line::Disk(f)) => Some(f),
                _ => None,
            })
            .unwrap_or_default();
        let tail = lines.next().unwrap_or_default();
        mode = disk.get("mode").unwrap_or("?").to_string();
        match (disk.get("rc"), scripts::parse_dd(tail)) {
            (Some("0"), Some((bytes, secs))) if secs > 0.0 => {
                samples.push(bytes as f64 / MIB / secs)
            }
            _ => {
                let why = if tail.contains("No space") {
                    "no space left on the destination".to_string()
                } else {
                    format!("dd failed: {}", tail.trim())
                };
                return failed(DISK, None, why);
            }
        }
    }
    ceiling(
        DISK,
        None,
        samples,
        format!(
            "dd {mib} MiB of zeros, {mode} I/O + fsync, temp file on the destination filesystem"
        ),
    )
}

/// rsync without ssh: the dataset copied to a local scratch directory with `--whole-file`.
pub fn rsync_local(source: &str, scratch: &Path, bytes: u64, repeat: u32) -> StageCeiling {
    let dst = scratch.join("copy");
    let mut samples = Vec::new();
    for _ in 0..repeat {
        let _ = std::fs::remove_dir_all(&dst);
        let mut cmd = Command::new("rsync");
        cmd.args([
            "-a",
            "--info=progress2",
            "--no-h",
            "--stats",
            "--whole-file",
            source,
        ])
        .arg(format!("{}/", dst.display()));
        match rsync::run(&mut cmd, "the local scratch directory", |_| {}) {
            Ok(o) if o.transfer_s > 0.0 => samples.push(bytes as f64 / MIB / o.transfer_s),
            Ok(_) => {}
            Err(RunError::Fatal(e)) => return failed(RSYNC_LOCAL, None, format!("{e:#}")),
            Err(RunError::Failed(e)) => return failed(RSYNC_LOCAL, None, e),
        }
    }
    let _ = std::fs::remove_dir_all(&dst);
    ceiling(
        RSYNC_LOCAL,
        None,
        samples,
        "rsync --whole-file of the dataset into a local temp directory (no ssh)".into(),
    )
}
