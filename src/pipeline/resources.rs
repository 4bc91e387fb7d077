//! Everything a run creates outside this process, and the order it goes away in.
//!
//! The order is fixed by what each thing needs: the remote run directory is removed through
//! ssh, so the server (the embedded one, for a local destination) must still run; the
//! server is stopped before its temp destination is deleted, so nothing writes into a
//! directory being removed. The samplers are not here: they live inside the measuring
//! step and are stopped when it returns, before this release starts.

use super::model::PipelineReport;
use super::scripts;
use super::ssh::ssh_command;
use crate::embedded::EmbeddedSshd;
use crate::target::SshTarget;
use anyhow::{anyhow, bail, Result};
use std::process::Stdio;

/// The run directory on the remote side; removed at release unless the user keeps it.
pub struct RemoteDir {
    pub target: SshTarget,
    pub path: String,
    pub label: String,
    pub keep: bool,
}

impl RemoteDir {
    /// Removes the directory unless the user keeps it. Runs also after Ctrl-C (a signal
    /// marks the run interrupted, it does not end the process), so unlike every other remote
    /// call it does not check for interruption: an interrupted run still cleans up.
    fn remove(&self) -> Result<()> {
        if self.keep {
            return Ok(());
        }
        let out = ssh_command(&self.target, None, &scripts::remove(&self.path))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| anyhow!("cannot run ssh: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if crate::remote::said_ok(&stdout) {
            return Ok(());
        }
        bail!(
            "{} on {} could not be removed ({})",
            self.path,
            self.label,
            crate::process::last_line(&String::from_utf8_lossy(&out.stderr))
        )
    }
}

/// Filled in by the steps as they create things, so whatever step fails, `release` knows
/// what exists.
#[derive(Default)]
pub struct Resources {
    pub remote_dir: Option<RemoteDir>,
    pub embedded: Option<EmbeddedSshd>,
    pub auto_dir: Option<tempfile::TempDir>,
    /// `--luks`: the helper on the destination that holds the scratch volumes (mounts,
    /// mappings, loop device, work directory). Closed first: the mounts sit in the
    /// destination directory, and it reaches the destination through the server.
    pub luks: Option<super::luks::agent::Agent>,
}

impl Resources {
    /// Undoes the run in order (remote directory, server, temp destination) and folds a
    /// cleanup failure into the run's result: a warning on a report, a second cause on an
    /// error. `keep` also keeps an auto-created destination.
    pub fn release(mut self, keep: bool, result: Result<PipelineReport>) -> Result<PipelineReport> {
        let luks = self.luks.take().map(|mut a| a.close()).transpose();
        let cleaned = self
            .remote_dir
            .take()
            .map(|d| d.remove())
            .transpose()
            .and_then(|r| {
                luks.map_err(|e| anyhow!("the LUKS scratch volumes were not all removed: {e}"))?;
                Ok(r)
            });
        drop(self.embedded.take());
        if keep {
            // The user asked to keep the files: an auto-created destination stays too.
            let _ = self.auto_dir.take().map(tempfile::TempDir::keep);
        }
        drop(self.auto_dir.take());
        match (result, cleaned) {
            (Ok(r), Ok(_)) => Ok(r),
            (Ok(mut r), Err(e)) => {
                r.warnings.push(format!("{e:#}"));
                Ok(r)
            }
            (Err(e), Ok(_)) => Err(e),
            (Err(e), Err(c)) if e.is::<crate::process::Interrupted>() => {
                Err(crate::process::InterruptedUnclean(format!("{c:#}")).into())
            }
            (Err(e), Err(c)) => Err(anyhow!("{e:#}; {c:#}")),
        }
    }
}
