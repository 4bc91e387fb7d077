//! Everything a run creates outside this process, and the order it goes away in.
//!
//! The order is fixed by what each thing needs: the remote run directory is removed through
//! ssh, so the server (the embedded one, for a local destination) must still run; the
//! server is stopped before its temp destination is deleted, so nothing writes into a
//! directory being removed. The remote commands of the clean-up go through the control
//! master, which closes after them and before the server. The samplers are not here: they
//! live inside the measuring step and are stopped when it returns, before this release starts.

use super::control::{Control, Master};
use super::model::PipelineReport;
use super::scripts;
use crate::embedded::EmbeddedSshd;
use anyhow::{anyhow, bail, Result};
use std::process::Stdio;

/// The run directory on the remote side; removed at release unless the user keeps it.
pub struct RemoteDir {
    pub control: Control,
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
        let out = self
            .control
            .command(&scripts::remove(&self.path))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| anyhow!("cannot run ssh: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        self.control
            .note_fallback(&String::from_utf8_lossy(&out.stderr));
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
    /// The control master, closed after the clean-up commands that go through it.
    pub master: Option<Master>,
    /// The control traffic's handle, for the report's count of its logins.
    pub control: Option<Control>,
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
        if let Some(m) = self.master.take() {
            m.close();
        }
        let control = self.control.take().map(|c| c.info());
        drop(self.embedded.take());
        if keep {
            // The user asked to keep the files: an auto-created destination stays too.
            let _ = self.auto_dir.take().map(tempfile::TempDir::keep);
        }
        drop(self.auto_dir.take());
        match (result, cleaned) {
            (Ok(mut r), Ok(_)) => {
                r.control = control;
                Ok(r)
            }
            (Ok(mut r), Err(e)) => {
                r.warnings.push(format!("{e:#}"));
                r.control = control;
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
