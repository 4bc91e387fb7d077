//! Real rsync over real ssh: the command line, its progress and `--stats` output, and its
//! failures turned into one line the user can act on.

use crate::process::{self, drain_stderr, last_line, ChildGuard};
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An rsync variant as the report names it (`Variant::as_str`, the same words in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Fresh destination, `--whole-file`: no delta algorithm, the plain copy speed.
    WholeFile,
    /// Existing destination, `--no-whole-file --ignore-times`: every file goes through the
    /// rolling-checksum delta, as a re-sync of touched files does.
    Delta,
    /// As `delta` with `--checksum-choice=md5` instead of the negotiated default (xxh*).
    DeltaMd5,
    /// Fresh destination, `--whole-file -z`: what compression costs on incompressible data.
    Compress,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::WholeFile => "whole-file",
            Variant::Delta => "delta",
            Variant::DeltaMd5 => "delta-md5",
            Variant::Compress => "compress",
        }
    }

    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Variant::WholeFile => &["--whole-file"],
            Variant::Delta => &["--no-whole-file", "--ignore-times"],
            Variant::DeltaMd5 => &["--no-whole-file", "--ignore-times", "--checksum-choice=md5"],
            Variant::Compress => &["--whole-file", "-z"],
        }
    }

    /// Whether the destination must already hold the dataset (else it must be empty).
    pub fn needs_existing(self) -> bool {
        matches!(self, Variant::Delta | Variant::DeltaMd5)
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Quotes one word for rsync's `-e` splitter (which honours single quotes like a shell).
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%^".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The `-e` value: ssh with its options (`SshTarget::ssh_options`), each word quoted for the
/// shell rsync hands it to.
pub fn ssh_command(options: &[String]) -> String {
    let mut words = vec!["ssh".to_string()];
    words.extend(options.iter().map(|o| quote(o)));
    words.join(" ")
}

/// What one rsync run printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub total_file_size: Option<u64>,
    pub literal_data: Option<u64>,
    pub matched_data: Option<u64>,
    pub bytes_sent: Option<u64>,
    pub bytes_received: Option<u64>,
    /// The last progress2 byte count.
    pub progress_bytes: Option<u64>,
}

impl Stats {
    pub fn wire_bytes(&self) -> Option<u64> {
        Some(self.bytes_sent? + self.bytes_received?)
    }
}

/// Parses `--stats` lines (`Total file size: 53477376 bytes`) and progress2 records
/// (`   53477376 100%  182.68MB/s    0:00:00 (xfr#2, to-chk=0/3)`), separated by CR or LF.
pub fn parse_output(text: &str) -> Stats {
    let mut s = Stats::default();
    let num = |v: &str| -> Option<u64> {
        v.split_whitespace()
            .next()
            .map(|n| n.replace(',', ""))
            .and_then(|n| n.parse().ok())
    };
    for rec in text.split(['\r', '\n']) {
        let rec = rec.trim();
        if let Some((k, v)) = rec.split_once(':') {
            match k {
                "Total file size" => s.total_file_size = num(v),
                "Literal data" => s.literal_data = num(v),
                "Matched data" => s.matched_data = num(v),
                "Total bytes sent" => s.bytes_sent = num(v),
                "Total bytes received" => s.bytes_received = num(v),
                _ => {}
            }
        }
        let mut words = rec.split_whitespace();
        if let (Some(n), Some(p)) = (words.next(), words.next()) {
            if p.ends_with('%') && p[..p.len() - 1].parse::<u32>().is_ok() {
                if let Ok(n) = n.replace(',', "").parse() {
                    s.progress_bytes = Some(n);
                }
            }
        }
    }
    s
}

/// One finished rsync run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// From rsync's first progress record (login and file list done) to its exit.
    pub transfer_s: f64,
    pub wall_s: f64,
    pub stats: Stats,
}

/// Why a run failed, for the caller to decide whether the whole pipeline can go on.
#[derive(Debug)]
pub enum RunError {
    /// Nothing more can work: the connection, the destination or the remote rsync is gone.
    Fatal(anyhow::Error),
    /// This configuration failed (a cipher the server refuses); others may work.
    Failed(String),
}

/// Runs rsync to completion. `on_start` is called with the child's pid once it runs (the
/// sampler uses it to tell our sender from other rsync processes).
pub fn run(
    cmd: &mut Command,
    dest_label: &str,
    on_start: impl FnOnce(u32),
) -> Result<RunOutcome, RunError> {
    process::check_interrupted().map_err(RunError::Fatal)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = ChildGuard::spawn(cmd, "rsync")
        .map_err(|e| RunError::Fatal(anyhow!("{e:#} (apt-get install rsync)")))?;
    on_start(child.id());
    let stderr = drain_stderr(child.child_mut());
    let mut out = child.child_mut().stdout.take().expect("stdout piped");
    let mut text = String::new();
    let mut first: Option<Instant> = None;
    let mut buf = [0u8; 8192];
    loop {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                first.get_or_insert_with(Instant::now);
                if text.len() < 1 << 20 {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        }
    }
    let status = child
        .wait_timeout(Duration::from_secs(30))
        .map_err(|e| RunError::Fatal(anyhow!("waiting for rsync: {e}")))?;
    let end = Instant::now();
    process::check_interrupted().map_err(RunError::Fatal)?;
    if !status.success() {
        let err = stderr.text(Duration::from_secs(5));
        return Err(classify(&err, status.code(), dest_label));
    }
    let start = first.unwrap_or(t0);
    Ok(RunOutcome {
        transfer_s: end.duration_since(start).as_secs_f64(),
        wall_s: end.duration_since(t0).as_secs_f64(),
        stats: parse_output(&text),
    })
}

/// rsync's exit codes (rsync(1) EXIT VALUES) and ssh's messages, turned into one line.
pub fn classify(stderr: &str, code: Option<i32>, dest: &str) -> RunError {
    let has = |s: &str| stderr.contains(s);
    let line = last_line(stderr);
    let fatal = |m: String| RunError::Fatal(anyhow!(m));
    if has("no matching cipher found") || has("Unknown cipher") || has("Bad SSH2 cipher spec") {
        return RunError::Failed(format!("cipher refused: {line}"));
    }
    if has("No space left on device") || has("Disk quota exceeded") {
        return fatal(format!(
            "no space left on the destination {dest}: its filesystem filled up during the run \
             (rsync: No space left on device)"
        ));
    }
    if has("Read-only file system") {
        return fatal(format!("the destination on {dest} is read-only"));
    }
    if has("Permission denied") && !has("publickey") {
        return fatal(format!(
            "no permission to write the destination on {dest}: {line}"
        ));
    }
    if has("rsync: command not found")
        || has("rsync: not found")
        || has("No such file or directory") && code == Some(12) && has("protocol data stream")
        || code == Some(127)
    {
        return fatal(format!(
            "rsync is missing on {dest} (install it there, or point --rsync-path at it)"
        ));
    }
    let ssh = crate::target::error::classify(stderr, Some(255), dest);
    match (code, ssh) {
        (_, crate::target::SshError::Fatal(e)) => RunError::Fatal(e),
        // 10: rsync's pipe to `ssh` broke (ssh gone with its connection), before rsync
        // could wait for ssh's own 255.
        (Some(10) | Some(12) | Some(255) | Some(30) | Some(35) | None, _)
            if has("Connection closed")
                || has("error in socket IO")
                || has("Connection reset")
                || has("Broken pipe")
                || has("connection unexpectedly closed")
                || has("Timeout")
                || has("killed by signal") =>
        {
            fatal(format!("connection to {dest} lost during rsync: {line}"))
        }
        (Some(20), _) => fatal("rsync was interrupted".into()),
        (c, _) => fatal(format!(
            "rsync to {dest} failed (exit {}): {line}",
            c.map_or("signal".into(), |c| c.to_string())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_progress_and_stats() {
        let out = "\r              0   0%    0.00kB/s    0:00:00  \r     53477376 100%  182.68MB/s    0:00:00 (xfr#2, to-chk=0/3)\n\n\
                   Number of files: 3 (reg: 2, dir: 1)\nTotal file size: 53477376 bytes\n\
                   Literal data: 53477376 bytes\nMatched data: 0 bytes\nTotal bytes sent: 53490000\n\
                   Total bytes received: 57\n\nsent 53490000 bytes  received 57 bytes  35660038.00 bytes/sec\n";
        let s = parse_output(out);
        assert_eq!(s.total_file_size, Some(53477376));
        assert_eq!(s.progress_bytes, Some(53477376));
        assert_eq!(s.literal_data, Some(53477376));
        assert_eq!(s.matched_data, Some(0));
        assert_eq!(s.wire_bytes(), Some(53490057));
        // Older rsync (and the seed) print thousands separators.
        assert_eq!(
            parse_output("    178,540,200   2%    7.46MB/s    0:17:15").progress_bytes,
            Some(178540200)
        );
    }

    #[test]
    fn ssh_command_quotes_what_needs_it() {
        let e = ssh_command(&[
            "-i".into(),
            "/tmp/a b/key".into(),
            "-o".into(),
            "UserKnownHostsFile=/x".into(),
            "-o".into(),
            "Compression=no".into(),
            "-c".into(),
            "aes128-gcm@openssh.com".into(),
        ]);
        assert_eq!(
            e,
            "ssh -i '/tmp/a b/key' -o UserKnownHostsFile=/x -o Compression=no -c aes128-gcm@openssh.com"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn classifies_failures() {
        let fatal = |e: RunError| match e {
            RunError::Fatal(e) => e.to_string(),
            RunError::Failed(m) => panic!("not fatal: {m}"),
        };
        assert!(fatal(classify(
            "rsync: [receiver] write failed on \"/d/x\": No space left on device (28)",
            Some(11),
            "h"
        ))
        .contains("no space left on the destination"));
        assert!(fatal(classify("bash: line 1: /nope/rsync: No such file or directory\nrsync: connection unexpectedly closed (0 bytes received so far) [sender]\nrsync error: error in rsync protocol data stream (code 12)", Some(12), "h")).contains("missing"));
        assert!(fatal(classify("client_loop: send disconnect: Broken pipe\nrsync: connection unexpectedly closed (1 bytes received so far) [sender]", Some(12), "h")).contains("lost"));
        assert!(fatal(classify("rsync: [sender] write error: Broken pipe (32)\nrsync error: error in socket IO (code 10) at io.c(849) [sender=3.2.7]", Some(10), "h")).contains("lost"));
        assert!(matches!(
            classify(
                "Unable to negotiate with 127.0.0.1 port 2: no matching cipher found.",
                Some(255),
                "h"
            ),
            RunError::Failed(_)
        ));
    }
}
