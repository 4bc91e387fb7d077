//! One LUKS setting's cells: every cipher's `--whole-file` rsync into the mounted scratch
//! volume, `--repeat` copies each, the samplers' phase `luks:<setting>|<cipher>/whole-file#n`.
//! The rows are the plain matrix's (`pipeline::cells`), but emptying the volume before a copy
//! and flushing it after are commands of the run's helper (`agent.rs`), which is already
//! logged in: a copy costs one login (rsync's) instead of three, the fixed cost that
//! dominated a small board's matrix (docs/pipeline.md, "Time").

use super::agent::Agent;
use crate::bench::stats;
use crate::pipeline::model::Row;
use crate::pipeline::rsync::{self, RunError, Variant};
use crate::pipeline::setup::Setup;
use crate::pipeline::MIB;
use crate::target::SshLog;
use anyhow::Result;
use std::process::Command;
use std::sync::atomic::Ordering;

/// Every cipher's cells into `agent`'s mounted volume, `before` run ahead of each cipher
/// (the check of the previous copy, the estimate, the time budget). The rows measured, and
/// how the setting ended (an error or an interruption keeps the rows before it).
pub fn cells(
    s: &Setup,
    agent: &mut Agent,
    ciphers: &[String],
    tag: &str,
    before: &mut dyn FnMut(&String, &mut Agent) -> Result<()>,
) -> (Vec<Row>, Result<()>) {
    let dest = s.end.rsync_dest(&format!("{}/data", agent.mnt));
    let mut rows = Vec::new();
    for cipher in ciphers {
        if let Err(e) = before(cipher, agent) {
            return (rows, Err(e));
        }
        match cell(s, agent, cipher, &dest, tag) {
            Ok(r) => rows.push(r),
            Err(e) => return (rows, Err(e)),
        }
    }
    (rows, Ok(()))
}

/// One cipher's `--repeat` copies; a cipher the server refuses stops at its first refusal.
fn cell(s: &Setup, agent: &mut Agent, cipher: &str, dest: &str, tag: &str) -> Result<Row> {
    let variant = Variant::WholeFile;
    let e = rsync::ssh_command(
        &s.end
            .target
            .ssh_options(Some(cipher), None, SshLog::ErrorsOnly),
    );
    let mut row = Row {
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
    let (mut wire, mut literal) = (Vec::new(), Vec::new());
    for rep in 0..s.opts.repeat {
        if row.error.is_some() {
            break;
        }
        crate::process::check_interrupted()?;
        agent.empty()?;
        let phase = format!("{tag}{cipher}/{}#{}", variant.as_str(), rep + 1);
        s.shared.set_phase(Some(phase.clone()));
        let sender = &s.shared.sender;
        let run = rsync::run(&mut command(s, &e, dest), &s.end.label, |pid| {
            sender.store(pid, Ordering::SeqCst)
        });
        match run {
            Ok(o) => {
                // Still in the copy's phase: the writeback's CPU (dm-crypt) is the copy's.
                let flush = agent.flush()?;
                let secs = o.transfer_s + flush;
                let rate = s.dataset.bytes as f64 / MIB / secs.max(1e-6);
                (s.say)(&format!(
                    "{phase}: {rate:.1} MiB/s ({secs:.2} s, of which flush {flush:.2} s)"
                ));
                row.samples.push(rate);
                row.flush_s.push(flush);
                wire.extend(o.stats.wire_bytes());
                literal.extend(o.stats.literal_data);
            }
            Err(RunError::Failed(msg)) => {
                (s.say)(&format!("{phase}: {msg}"));
                row.error = Some(msg);
            }
            Err(RunError::Fatal(err)) => {
                s.shared.set_phase(None);
                return Err(err);
            }
        }
        s.shared.sender.store(0, Ordering::SeqCst);
        s.shared.set_phase(Some("between".into()));
    }
    row.median_mib_s = stats::median(&row.samples);
    row.min_mib_s = stats::min(&row.samples);
    row.max_mib_s = stats::max(&row.samples);
    row.wire_bytes = median_u64(&wire);
    row.literal_bytes = median_u64(&literal);
    Ok(row)
}

/// The rsync command line of one copy; `e` is its ssh command (`rsync -e`).
fn command(s: &Setup, e: &str, dest: &str) -> Command {
    let mut cmd = Command::new("rsync");
    cmd.args(["-a", "--info=progress2", "--no-h", "--stats"])
        .args(Variant::WholeFile.flags())
        .arg("-e")
        .arg(e)
        .arg(format!("--rsync-path={}", s.opts.rsync_path))
        .arg(s.dataset.rsync_source())
        .arg(dest);
    cmd
}

fn median_u64(v: &[u64]) -> Option<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}
