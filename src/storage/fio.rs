//! fio's random read/write mix: the job as arguments, the figures from its JSON report. The
//! job's whole JSON object is kept so a reader can check any figure we did not pick.

use super::plan::Test;
use crate::process::{check_interrupted, ChildGuard};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FioFigures {
    pub read_mib_s: f64,
    pub write_mib_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub runtime_ms: u64,
    pub read_clat_p99_us: Option<f64>,
    pub write_clat_p99_us: Option<f64>,
    /// fio's own CPU figures for the job, % of one core.
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    /// `jobs[0]` of fio's JSON, untouched.
    pub raw: serde_json::Value,
}

impl FioFigures {
    pub fn total_mib_s(&self) -> f64 {
        self.read_mib_s + self.write_mib_s
    }
}

/// Arguments of the randrw job. `size` bounds the region, `runtime` the duration.
pub fn args(test: Test, file: &Path, size: u64, runtime: Duration) -> Vec<String> {
    let bs = match test {
        Test::RandRw64k => "64k",
        _ => "4k",
    };
    vec![
        format!("--name=sshtune-{}", test.id()),
        format!("--filename={}", file.display()),
        "--rw=randrw".into(),
        "--rwmixread=75".into(),
        format!("--bs={bs}"),
        format!("--size={size}"),
        "--direct=1".into(),
        "--ioengine=psync".into(),
        "--iodepth=1".into(),
        "--numjobs=1".into(),
        format!("--runtime={}", runtime.as_secs().max(1)),
        "--randrepeat=0".into(),
        "--norandommap".into(),
        "--output-format=json".into(),
    ]
}

/// Runs fio as a registered child (so Ctrl-C stops it) and parses its report.
pub fn run(
    test: Test,
    file: &Path,
    size: u64,
    runtime: Duration,
    out_dir: &Path,
) -> Result<FioFigures> {
    check_interrupted()?;
    let out_path = out_dir.join(format!("fio-{}.json", test.id()));
    let mut cmd = Command::new("fio");
    cmd.args(args(test, file, size, runtime))
        .arg(format!("--output={}", out_path.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = ChildGuard::spawn(&mut cmd, "fio")?;
    let stderr = crate::process::drain_stderr(child.child_mut());
    // Generous: fio's runtime cap plus file layout time.
    let status = child.wait_timeout(runtime * 4 + Duration::from_secs(120))?;
    check_interrupted()?;
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    if !status.success() {
        let err = stderr.text(Duration::from_secs(5));
        bail!("fio failed ({status}): {}", crate::process::last_line(&err));
    }
    parse(&text).context("reading fio's JSON report")
}

/// Figures of the first job in fio ≥ 3.0 `--output-format=json`.
pub fn parse(text: &str) -> Result<FioFigures> {
    // fio may print notes before the JSON object.
    let start = text.find('{').context("no JSON object in fio output")?;
    let v: serde_json::Value = serde_json::from_str(&text[start..]).context("fio JSON")?;
    let job = v
        .get("jobs")
        .and_then(|j| j.get(0))
        .context("fio JSON has no jobs[0]")?;
    if let Some(e) = job.get("error").and_then(|e| e.as_i64()) {
        if e != 0 {
            bail!("fio job reported error {e}");
        }
    }
    let num = |dir: &str, key: &str| {
        job.get(dir)
            .and_then(|d| d.get(key))
            .and_then(|x| x.as_f64())
    };
    let p99 = |dir: &str| {
        job.get(dir)?
            .get("clat_ns")?
            .get("percentile")?
            .get("99.000000")?
            .as_f64()
            .map(|ns| ns / 1000.0)
    };
    let mib = |dir: &str| num(dir, "bw_bytes").unwrap_or(0.0) / (1u64 << 20) as f64;
    let runtime = num("read", "runtime")
        .unwrap_or(0.0)
        .max(num("write", "runtime").unwrap_or(0.0));
    Ok(FioFigures {
        read_mib_s: mib("read"),
        write_mib_s: mib("write"),
        read_iops: num("read", "iops").unwrap_or(0.0),
        write_iops: num("write", "iops").unwrap_or(0.0),
        read_bytes: num("read", "io_bytes").unwrap_or(0.0) as u64,
        write_bytes: num("write", "io_bytes").unwrap_or(0.0) as u64,
        runtime_ms: runtime as u64,
        read_clat_p99_us: p99("read"),
        write_clat_p99_us: p99("write"),
        usr_cpu: job.get("usr_cpu").and_then(|x| x.as_f64()).unwrap_or(0.0),
        sys_cpu: job.get("sys_cpu").and_then(|x| x.as_f64()).unwrap_or(0.0),
        raw: job.clone(),
    })
}
