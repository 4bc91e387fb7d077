//! What an `ssh` failure means: one error type with three severities, and `classify`, which
//! reads ssh's stderr and exit status into one line naming the cause. The bench engines'
//! transfers and every other `ssh` call (pipeline's helper scripts, rsync over ssh) share it.

use crate::process::last_line;
use anyhow::anyhow;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SshError {
    /// This cipher/MAC cannot be used here: a row saying so, and the run goes on.
    #[error("{0}")]
    Refused(String),
    /// This transfer failed (peer died, short count): a row with the error.
    #[error("{0}")]
    Failed(String),
    /// Nothing else can work either (unreachable, auth refused, host key, interrupted).
    #[error(transparent)]
    Fatal(#[from] anyhow::Error),
}

impl SshError {
    /// `classify` as a constructor.
    pub fn classify(stderr: &str, code: Option<i32>, dest: &str) -> Self {
        classify(stderr, code, dest)
    }
}

/// Turns ssh's stderr into one line that names the cause.
pub fn classify(stderr: &str, code: Option<i32>, dest: &str) -> SshError {
    let has = |s: &str| stderr.contains(s);
    let line = last_line(stderr);
    if has("no matching cipher found") {
        return SshError::Refused("cipher not offered by the server".into());
    }
    if has("no matching MAC found") {
        return SshError::Refused("MAC not offered by the server".into());
    }
    if has("Unknown cipher")
        || has("Bad SSH2 cipher spec")
        || has("Unknown mac")
        || has("Bad SSH2 mac spec")
    {
        return SshError::Refused(format!("not supported by the local ssh: {line}"));
    }
    if has("Unable to negotiate") {
        return SshError::Refused(format!("negotiation failed: {line}"));
    }
    let fatal = |msg: String| SshError::Fatal(anyhow!(msg));
    if has("Could not resolve hostname") {
        return fatal(format!("cannot resolve host {dest}: {line}"));
    }
    if has("Connection refused") {
        return fatal(format!(
            "{dest}: connection refused (is an SSH server listening on that port?)"
        ));
    }
    if has("timed out") || has("No route to host") || has("Network is unreachable") {
        return fatal(format!("{dest} is unreachable: {line}"));
    }
    if has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return fatal(format!(
            "the host key of {dest} has changed: refusing to connect (verify it, then fix known_hosts)"
        ));
    }
    if has("Host key verification failed") {
        return fatal(format!(
            "host key of {dest} could not be verified (unknown host: connect once with ssh to check and accept it)"
        ));
    }
    if has("Permission denied") || has("Too many authentication failures") {
        return fatal(format!(
            "authentication to {dest} refused ({line}); bench logs in non-interactively: use a key or ssh-agent"
        ));
    }
    if code == Some(127) || has("not found") {
        return fatal(format!("a command is missing on {dest}: {line}"));
    }
    if has("Connection closed")
        || has("Connection reset")
        || has("Broken pipe")
        || has("not responding")
        || code == Some(255)
    {
        return SshError::Failed(format!("connection lost: {line}"));
    }
    SshError::Failed(format!(
        "ssh failed ({}): {line}",
        code.map_or("signal".into(), |c| c.to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_common_failures() {
        let kind = |e: &SshError| match e {
            SshError::Refused(_) => "refused",
            SshError::Fatal(_) => "fatal",
            SshError::Failed(_) => "failed",
        };
        let cases = [
            ("Unable to negotiate with 127.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr", "refused"),
            ("ssh: Could not resolve hostname nope: Name or service not known", "fatal"),
            ("ssh: connect to host 127.0.0.1 port 1: Connection refused", "fatal"),
            ("root@127.0.0.1: Permission denied (publickey).", "fatal"),
            ("Host key verification failed.", "fatal"),
            ("Connection closed by 127.0.0.1 port 22", "failed"),
            ("Unknown cipher type 'arcfour'", "refused"),
        ];
        for (stderr, want) in cases {
            assert_eq!(kind(&classify(stderr, Some(255), "h")), want, "{stderr}");
        }
    }
}
