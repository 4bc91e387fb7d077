//! The report from what the steps measured: the cross-checks that turn into warnings, the
//! verdict, and the `sshtune.pipeline/1` document. Nothing here runs anything.

use super::dataset::Dataset;
use super::destination::Endpoint;
use super::model::*;
use super::options::Options;
use super::preflight::RemoteSide;
use super::recording::{self, Interval};
use super::rsync::Variant;
use super::verdict;
use crate::target::Resolved;
use std::time::Instant;

/// Everything the report is made of.
pub struct Measured<'a> {
    pub opts: &'a Options,
    pub end: &'a Endpoint,
    pub resolved: &'a Resolved,
    /// When the run started: wall clock for the report, monotonic for the time series.
    pub started: String,
    pub t0: Instant,
    pub run_dir: String,
    pub dataset: &'a Dataset,
    pub facts: RemoteSide,
    /// The first line of the local `rsync --version`.
    pub local_rsync: String,
    pub default_cipher: Option<String>,
    pub ciphers: Vec<String>,
    pub variants: Vec<Variant>,
    pub ceilings: Vec<StageCeiling>,
    pub cores: Option<u32>,
    pub rows: Vec<Row>,
    pub intervals: Vec<Interval>,
    pub warnings: Vec<String>,
    /// `--jobs`: the N-job rows, judged here once the CPU is known.
    pub jobs: Option<super::model::JobsSection>,
}

/// The warnings come after the run's own (dm-crypt table, remote sampler) in a fixed order:
/// load changes, shared machine, compressing filesystem.
pub fn report(m: Measured) -> PipelineReport {
    let (opts, end) = (m.opts, m.end);
    let mut warnings = m.warnings;
    warnings.extend(above_ceiling(&m.rows, &m.ceilings));
    let same_machine = same_machine(end, m.resolved, m.facts.same_boot);
    if same_machine {
        warnings.push("client and server share this machine's CPUs and disk: good for ranking, not for absolute figures of a remote link".into());
    }
    let (client, server) = (crate::sysinfo::local(), m.facts.machine.clone());
    let storage = m.facts.storage;
    if storage
        .fstype
        .as_deref()
        .is_some_and(|f| matches!(f, "btrfs" | "zfs"))
    {
        warnings.push("the destination filesystem may compress: the disk-only ceiling writes zeros and can overstate it".into());
    }
    let mut jobs = m.jobs;
    if let Some(j) = jobs.as_mut() {
        let cores = super::jobs_gain::Cores {
            client: client.cores,
            server: m.cores,
            same_machine,
        };
        super::jobs_gain::judge(j, &m.rows, &m.intervals, cores);
    }
    let mut verdict = verdict::decide(&verdict::Input {
        rows: &m.rows,
        ceilings: &m.ceilings,
        storage: &storage,
        default_cipher: m.default_cipher.as_deref(),
        cores: m.cores,
        same_machine,
    });
    verdict::add_jobs(&mut verdict, &m.rows, jobs.as_ref());
    PipelineReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started: m.started,
        destination: end.describe(),
        embedded: end.embedded,
        same_machine,
        client,
        server,
        remote_dir: m.run_dir,
        keep: opts.keep,
        dataset: DatasetInfo {
            kind: m.dataset.kind.clone(),
            files: m.dataset.files,
            bytes: m.dataset.bytes,
            source: opts.source.as_ref().map(|p| p.display().to_string()),
        },
        storage,
        settings: Settings {
            ciphers: m.ciphers,
            variants: m.variants,
            repeat: opts.repeat,
            interval_ms: opts.interval_ms,
            rsync_version: m.local_rsync.lines().next().map(|l| l.trim().to_string()),
            remote_rsync: m.facts.remote_rsync,
        },
        ceilings: m.ceilings,
        rows: m.rows,
        verdict,
        series: recording::series(&m.intervals, m.t0),
        warnings,
        luks: None,
        jobs,
        control: None,
    }
}

/// A whole-file rsync well above its cipher's SSH-only ceiling means the machine's load
/// changed between the two measurements.
fn above_ceiling(rows: &[Row], ceilings: &[StageCeiling]) -> Vec<String> {
    let mut warnings = Vec::new();
    for row in rows {
        let ssh = ceilings
            .iter()
            .find(|c| c.stage == Stage::Ssh && c.cipher.as_ref() == Some(&row.cipher))
            .and_then(|c| c.median_mib_s);
        if row.variant != Variant::WholeFile {
            continue;
        }
        if let (Some(m), Some(c)) = (row.median_mib_s, ssh) {
            if m > c * 1.2 {
                warnings.push(format!(
                    "{}: rsync ran at {m:.1} MiB/s, above its SSH-only ceiling of {c:.1}: the machine's load changed between the measurements, so compare ratios with care",
                    row.cipher
                ));
            }
        }
    }
    warnings
}

/// Both ends on this machine: the embedded server, or the same kernel boot id (a loopback
/// address that leads to another kernel is a port forward to another machine); where a boot
/// id cannot be read, a loopback address reached directly. Behind a jump host, 127.0.0.1 is
/// the far side's loopback, not ours.
fn same_machine(end: &Endpoint, resolved: &Resolved, same_boot: Option<bool>) -> bool {
    let target = &end.target;
    let proxied = crate::proxy::Proxy::of(resolved, &target.options, &target.destination).is_some();
    end.embedded || same_boot.unwrap_or(!proxied && is_loopback(&resolved.hostname))
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
