//! How the run reaches the remote side outside rsync: one ssh command line (the target's,
//! errors only on stderr) and one call that runs a helper script from `remote.rs`.

use crate::process;
use crate::remote;
use crate::target::error::{classify, SshError};
use crate::target::{SshLog, SshTarget};
use anyhow::{anyhow, Result};
use std::process::{Command, Stdio};

pub fn ssh_command(target: &SshTarget, cipher: Option<&str>, remote_cmd: &str) -> Command {
    target.ssh_command(cipher, None, SshLog::ErrorsOnly, remote_cmd)
}

/// Runs one helper script; its stdout, or one line saying why not. `what` names the step
/// for that line. Checks for Ctrl-C first, so an interrupted run starts no new ssh.
pub fn remote_call(target: &SshTarget, script: &str, label: &str, what: &str) -> Result<String> {
    process::check_interrupted()?;
    let out = ssh_command(target, None, script)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() || remote::spoke(&stdout) {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(match classify(&stderr, out.status.code(), label) {
        SshError::Fatal(e) => e.context(format!("while {what}")),
        other => anyhow!("{label}: {other} (while {what})"),
    })
}
