//! One helper script run on the remote side as control traffic (`control.rs`): its stdout, or
//! one line saying why not.

use super::control::Control;
use crate::process;
use crate::remote;
use crate::target::error::{classify, SshError};
use anyhow::{anyhow, Result};
use std::process::Stdio;

/// Runs one helper script; its stdout, or one line saying why not. `what` names the step
/// for that line. Checks for Ctrl-C first, so an interrupted run starts no new ssh.
pub fn remote_call(control: &Control, script: &str, label: &str, what: &str) -> Result<String> {
    process::check_interrupted()?;
    let out = control
        .command(script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    control.note_fallback(&stderr);
    if out.status.success() || remote::spoke(&stdout) {
        return Ok(stdout);
    }
    Err(match classify(&stderr, out.status.code(), label) {
        SshError::Fatal(e) => e.context(format!("while {what}")),
        other => anyhow!("{label}: {other} (while {what})"),
    })
}
