//! The measurements themselves: rsync for every cipher × variant, `repeat` timed runs each,
//! with the samplers' phase set to `cipher/variant#n` so each run's CPU is attributed to it;
//! with `--jobs`, each cipher's `whole-file` cell again as N rsyncs at once (`jobs:` phases).

use super::ceilings::Ceilings;
use super::jobs::{self, Plan};
use super::jobs_run;
use super::model::{JobsRow, Row};
use super::rsync::{self, RunError, Variant};
use super::scripts;
use super::setup::Setup;
use super::ssh::remote_call;
use super::MIB;
use crate::stats;
use crate::target::SshLog;
use anyhow::{anyhow, bail, Result};
use std::process::Command;
use std::sync::atomic::Ordering;

/// Runs every cell in order: ciphers as given, variants in `variants`' order (fresh-destination
/// ones first). With the user's ciphers, each cipher's SSH-only ceiling is measured right
/// before its rsync runs: on a machine whose load changes, figures taken minutes apart do
/// not compare. With a jobs `plan`, each cipher's measured `whole-file` cell is followed by
/// its N-job runs, on the same destination, so the two compare.
pub fn measure(
    s: &Setup,
    ciphers: &[String],
    variants: &[Variant],
    ceilings: &mut Ceilings,
    plan: Option<&Plan>,
) -> Result<(Vec<Row>, Vec<JobsRow>)> {
    let data_dir = format!("{}/data", s.run_dir);
    let mut cells = Cells {
        s,
        rsync_dest: s.end.rsync_dest(&data_dir),
        source: s.dataset.rsync_source(),
        data_dir,
        populated: false,
    };
    let (mut rows, mut jobs_rows) = (Vec::new(), Vec::new());
    for cipher in ciphers {
        if s.opts.ceilings && !s.opts.ciphers.is_empty() {
            ceilings.ssh(s, std::slice::from_ref(cipher), cipher)?;
        }
        let e = rsync::ssh_command(&s.end.target.ssh_options(
            Some(cipher),
            None,
            SshLog::ErrorsOnly,
        ));
        // A cipher the server refuses fails every variant the same way: the first refusal
        // stands for the rest of this cipher's rows instead of being retried.
        let mut refused: Option<String> = None;
        for &variant in variants {
            let row = cells.cell(cipher, &e, variant, &mut refused)?;
            let measured = row.median_mib_s.is_some();
            rows.push(row);
            if let Some(plan) = plan.filter(|_| measured && variant == Variant::WholeFile) {
                jobs_rows.push(cells.jobs(cipher, &e, plan)?);
            }
        }
    }
    Ok((rows, jobs_rows))
}

/// The phase tag of the N-job runs (`jobs:cipher/whole-file#n`).
pub const JOBS_TAG: &str = "jobs:";

/// The state carried from cell to cell: whether the destination holds the data already.
struct Cells<'a> {
    s: &'a Setup<'a>,
    /// rsync's source and destination arguments.
    source: String,
    rsync_dest: String,
    data_dir: String,
    /// The data is in place on the destination (a delta variant can run without a copy first).
    populated: bool,
}

impl Cells<'_> {
    /// One cipher × variant: `repeat` timed runs, stopped early once the cipher is refused.
    fn cell(
        &mut self,
        cipher: &str,
        e: &str,
        variant: Variant,
        refused: &mut Option<String>,
    ) -> Result<Row> {
        let s = self.s;
        let mut copies = Copies::new(s, cipher, variant);
        copies.row.error = refused.clone();
        for rep in 0..s.opts.repeat {
            if copies.refused() {
                break;
            }
            self.prepare(e, variant)?;
            let phase = format!("{cipher}/{}#{}", variant.as_str(), rep + 1);
            let mut cmd = self.command(e, variant);
            // Still in the run's phase: the writeback's CPU (dm-crypt) is the run's.
            if copies.run(phase, &mut cmd, || self.flush())? {
                self.populated = true;
            }
        }
        if copies.refused() {
            refused.clone_from(&copies.row.error);
        }
        Ok(copies.finish())
    }

    /// Puts the destination in the state `variant` is measured from: the data in place for a
    /// delta variant (one untimed whole-file copy if missing), an empty directory otherwise.
    fn prepare(&mut self, e: &str, variant: Variant) -> Result<()> {
        let s = self.s;
        if variant.needs_existing() {
            if !self.populated {
                s.shared.set_phase(Some("prepare".into()));
                s.control.measured_login();
                rsync::run(
                    &mut self.command(e, Variant::WholeFile),
                    &s.end.label,
                    |_| {},
                )
                .map_err(fatal)?;
                self.populated = true;
            }
        } else {
            let out = remote_call(
                s.control,
                &scripts::reset(&self.data_dir),
                &s.end.label,
                "emptying the destination between runs",
            )?;
            if !crate::remote::said_ok(&out) {
                bail!(
                    "cannot empty {} on {}: {}",
                    self.data_dir,
                    s.end.label,
                    crate::process::last_line(&out)
                );
            }
            self.populated = false;
        }
        Ok(())
    }

    /// The cipher's `whole-file` copy as N rsyncs at once, `repeat` times; a failure (a
    /// refused connection) is kept as the row's error.
    fn jobs(&mut self, cipher: &str, e: &str, plan: &Plan) -> Result<JobsRow> {
        let s = self.s;
        let mut runs = jobs_run::Runs::new(plan, cipher, command_line(s, cipher, plan.count()));
        for rep in 0..s.opts.repeat {
            self.prepare(e, Variant::WholeFile)?;
            let phase = format!("{JOBS_TAG}{cipher}/whole-file#{}", rep + 1);
            s.shared.set_phase(Some(phase.clone()));
            let sender = &s.shared.sender;
            let args = |i: usize| self.job_args(e, plan, i);
            let ran = jobs_run::run(plan, args, &s.end.label, |pid| {
                sender.store(pid, Ordering::SeqCst)
            });
            let failed = match row_outcome(s, &phase, ran)? {
                Ok(out) => {
                    // Still in the run's phase, as after one rsync.
                    let flush = self.flush()?;
                    let rate = runs.add(&out, flush);
                    (s.say)(&format!(
                        "{phase}: {rate:.1} MiB/s with {} jobs (flush {flush:.2} s)",
                        plan.count()
                    ));
                    self.populated = true;
                    false
                }
                Err(msg) => {
                    runs.row.error = Some(msg);
                    true
                }
            };
            sender.store(0, Ordering::SeqCst);
            s.shared.set_phase(Some("between".into()));
            if failed {
                break;
            }
        }
        Ok(runs.finish())
    }

    /// Job `i`'s rsync: as one `whole-file` run, its part named by `--files-from`.
    fn job_args(&self, e: &str, plan: &Plan, i: usize) -> Vec<String> {
        let mut v: Vec<String> = ["rsync", "-a", "--info=progress2", "--no-h", "--stats"]
            .into_iter()
            .chain(Variant::WholeFile.flags().iter().copied())
            .map(String::from)
            .collect();
        v.push(format!("--files-from={}", plan.list(i).display()));
        v.extend([
            "-e".to_string(),
            e.to_string(),
            format!("--rsync-path={}", self.s.opts.rsync_path),
            self.source.clone(),
            self.rsync_dest.clone(),
        ]);
        v
    }

    /// Writes the copy's dirty pages out and returns how long that took on the destination.
    fn flush(&self) -> Result<f64> {
        let s = self.s;
        let out = remote_call(
            s.control,
            &scripts::flush(&self.data_dir),
            &s.end.label,
            "flushing the destination after a run",
        )?;
        scripts::parse_flush(&out).ok_or_else(|| {
            anyhow!(
                "cannot flush {} on {}: {}",
                self.data_dir,
                s.end.label,
                crate::process::last_line(&out)
            )
        })
    }

    /// The rsync command line of one run; `e` is its ssh command (`rsync -e`).
    fn command(&self, e: &str, v: Variant) -> Command {
        let mut cmd = Command::new("rsync");
        cmd.args(["-a", "--info=progress2", "--no-h", "--stats"])
            .args(v.flags())
            .arg("-e")
            .arg(e)
            .arg(format!("--rsync-path={}", self.s.opts.rsync_path))
            .arg(&self.source)
            .arg(&self.rsync_dest);
        cmd
    }
}

/// The line a user runs to copy as the N jobs did: their `--source` and `HOST:DIR` when they
/// gave them, else `SRC` and `HOST:DIR`; the user's ssh options with the cipher.
fn command_line(s: &Setup, cipher: &str, n: u32) -> String {
    let mut ssh = if s.end.host.is_some() {
        s.opts.ssh_options.clone()
    } else {
        Vec::new()
    };
    ssh.extend(["-c".to_string(), cipher.to_string()]);
    let source = s
        .opts
        .source
        .as_ref()
        .filter(|p| p.is_dir())
        .map_or("SRC".to_string(), |p| p.display().to_string());
    let dest = match (&s.end.host, &s.opts.destination) {
        (Some(_), Some(d)) => d.clone(),
        _ => "HOST:DIR".to_string(),
    };
    jobs::command_line(n, &rsync::ssh_command(&ssh), &source, &dest)
}

/// A measured run's outcome for its row: what it gave, or a refusal (said, and kept as the
/// row's error) while other configurations may work. Anything fatal ends the phase and the
/// pipeline.
fn row_outcome<T>(s: &Setup, phase: &str, ran: Result<T, RunError>) -> Result<Result<T, String>> {
    match ran {
        Ok(v) => Ok(Ok(v)),
        Err(RunError::Failed(msg)) => {
            (s.say)(&format!("{phase}: {msg}"));
            Ok(Err(msg))
        }
        Err(RunError::Fatal(err)) => {
            s.shared.set_phase(None);
            Err(err)
        }
    }
}

fn fatal(e: RunError) -> anyhow::Error {
    match e {
        RunError::Fatal(e) => e,
        RunError::Failed(m) => anyhow!(m),
    }
}

/// One row's `--repeat` timed copies, each added as it ends: its rate over the copy and the
/// flush after it, the flush's share, the bytes on the wire and the literal data.
pub(crate) struct Copies<'s, 'a> {
    s: &'s Setup<'a>,
    pub row: Row,
    wire: Vec<u64>,
    literal: Vec<u64>,
}

impl<'s, 'a> Copies<'s, 'a> {
    pub fn new(s: &'s Setup<'a>, cipher: &str, variant: Variant) -> Self {
        let row = Row {
            cipher: cipher.to_string(),
            variant,
            rsync_flags: variant.flags().iter().map(|s| s.to_string()).collect(),
            bytes: s.dataset.bytes,
            samples: Vec::new(),
            flush_s: Vec::new(),
            median_mib_s: None,
            min_mib_s: None,
            max_mib_s: None,
            wire_bytes: None,
            literal_bytes: None,
            cpu: Vec::new(),
            error: None,
        };
        Self {
            s,
            row,
            wire: Vec::new(),
            literal: Vec::new(),
        }
    }

    /// The server refused the cipher: no further copy.
    pub fn refused(&self) -> bool {
        self.row.error.is_some()
    }

    /// One timed copy in the samplers' `phase`: rsync (`cmd`), then `flush` (seconds) in the
    /// same phase. Whether it copied; a refusal is kept as the row's error.
    pub fn run(
        &mut self,
        phase: String,
        cmd: &mut Command,
        flush: impl FnOnce() -> Result<f64>,
    ) -> Result<bool> {
        let s = self.s;
        s.shared.set_phase(Some(phase.clone()));
        let sender = &s.shared.sender;
        s.control.measured_login();
        let ran = rsync::run(cmd, &s.end.label, |pid| sender.store(pid, Ordering::SeqCst));
        let copied = match row_outcome(s, &phase, ran)? {
            Ok(o) => {
                let flush = flush()?;
                let secs = o.transfer_s + flush;
                let rate = s.dataset.bytes as f64 / MIB / secs.max(1e-6);
                (s.say)(&format!(
                    "{phase}: {rate:.1} MiB/s ({secs:.2} s, of which flush {flush:.2} s)"
                ));
                self.row.samples.push(rate);
                self.row.flush_s.push(flush);
                self.wire.extend(o.stats.wire_bytes());
                self.literal.extend(o.stats.literal_data);
                true
            }
            Err(msg) => {
                self.row.error = Some(msg);
                false
            }
        };
        s.shared.sender.store(0, Ordering::SeqCst);
        s.shared.set_phase(Some("between".into()));
        Ok(copied)
    }

    /// The row with its medians and range.
    pub fn finish(mut self) -> Row {
        let row = &mut self.row;
        row.median_mib_s = stats::median(&row.samples);
        row.min_mib_s = stats::min(&row.samples);
        row.max_mib_s = stats::max(&row.samples);
        row.wire_bytes = median_u64(&self.wire);
        row.literal_bytes = median_u64(&self.literal);
        self.row
    }
}

fn median_u64(v: &[u64]) -> Option<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}
