//! One LUKS setting's cells: every cipher's `--whole-file` rsync into the mounted scratch
//! volume, `--repeat` copies each, the samplers' phase `luks:<setting>|<cipher>/whole-file#n`.
//! The rows are the plain matrix's (`pipeline::cells`), but emptying the volume before a copy
//! and flushing it after are commands of the run's helper (`agent.rs`), which is already
//! logged in: a copy costs one login (rsync's) instead of three, the fixed cost that
//! dominated a small board's matrix (docs/pipeline.md, "Time").

use super::agent::Agent;
use crate::pipeline::cells::Copies;
use crate::pipeline::model::Row;
use crate::pipeline::rsync::{self, Variant};
use crate::pipeline::setup::Setup;
use crate::target::SshLog;
use anyhow::Result;
use std::process::Command;

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
    let mut copies = Copies::new(s, cipher, variant);
    for rep in 0..s.opts.repeat {
        if copies.refused() {
            break;
        }
        crate::process::check_interrupted()?;
        agent.empty()?;
        let phase = format!("{tag}{cipher}/{}#{}", variant.as_str(), rep + 1);
        // Still in the copy's phase: the writeback's CPU (dm-crypt) is the copy's.
        copies.run(phase, &mut command(s, &e, dest), || agent.flush())?;
    }
    Ok(copies.finish())
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
