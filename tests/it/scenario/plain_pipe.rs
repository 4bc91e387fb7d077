//! The figure a user can reproduce: the default bench's upload row for one cipher (OpenSSH
//! engine, real sshd on loopback) against what `head -c N /dev/zero | ssh -c C host 'cat >
//! /dev/null'` gets through the same sshd, timed here. The plain transfer is fed the way a
//! shell pipeline feeds it: `head` writes into an ordinary pipe (the kernel's default width)
//! that is `ssh`'s stdin, and the remote `cat` reads sshd's ordinary pipe; nothing is pinned.
//!
//! The two are measured in alternation (two plain transfers, one bench, two plain transfers:
//! `support::scenario::agreeing`), so a change in this machine's load during the test hits both
//! alike, and the bench row's median is compared with the plain transfers' median: within
//! ±10%. Where either side's samples spread wider than twice that (a busy machine), the
//! attempt cannot judge ±10% and says "accuracy NOT verified"; disagreement in every
//! conclusive attempt fails.

use crate::support;

use sshtune::embedded::EmbeddedSshd;
use sshtune::target::SshTarget;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::exclusive;
use support::scenario::{agreeing, bench, median_and_spread};

const CIPHER: &str = "aes128-ctr";
/// A plain transfer lasts at least this long after the login, so the few milliseconds around
/// it (starting `head`, the last line coming back) weigh under 1%.
const PLAIN_SECONDS: f64 = 3.0;

#[test]
fn default_upload_row_matches_a_plain_pipe_into_ssh() {
    let _one = exclusive();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let target = &server.target;
    // A pilot sizes the plain transfers to PLAIN_SECONDS at this machine's rate.
    let pilot = plain_upload(target, 256 << 20);
    let bytes = ((pilot * PLAIN_SECONDS) as u64 + 1) << 20;
    let args = [
        "--engine",
        "openssh",
        "--ciphers",
        CIPHER,
        "--direction",
        "upload",
        "--no-ceiling",
    ];
    agreeing(
        &format!("{CIPHER} upload: the default bench vs `head -c {bytes} /dev/zero | ssh`"),
        0.10,
        |runs| (0..runs).map(|_| plain_upload(target, bytes)).collect(),
        || bench(&[], target, &args),
        |(report, _)| median_and_spread(report, CIPHER),
    );
}

/// `head -c BYTES /dev/zero | ssh -c CIPHER dest 'cat > /dev/null'`, clocked from the remote
/// shell's first line (the login is over, `cat` about to read) to its last (`cat` has read
/// every byte): MiB/s. `head` starts once the remote is ready, so nothing is sent before the
/// clock starts.
fn plain_upload(target: &SshTarget, bytes: u64) -> f64 {
    let mut ssh = Command::new("ssh")
        .args(&target.options)
        .args(["-o", "BatchMode=yes", "-o", "ControlPath=none"])
        .args(["-x", "-a", "-c", CIPHER, "--"])
        .arg(&target.destination)
        .arg("echo ready; cat > /dev/null; echo done")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh starts");
    let mut out = BufReader::new(ssh.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line).expect("ready line");
    assert_eq!(line.trim(), "ready", "plain ssh did not start");
    let t0 = Instant::now();
    let mut head = Command::new("head")
        .args(["-c", &bytes.to_string(), "/dev/zero"])
        .stdout(Stdio::from(ssh.stdin.take().expect("piped")))
        .spawn()
        .expect("head runs");
    line.clear();
    out.read_line(&mut line).expect("done line");
    let seconds = t0.elapsed().as_secs_f64();
    assert_eq!(line.trim(), "done", "plain transfer did not finish");
    assert!(head.wait().expect("head ends").success(), "head failed");
    let status = ssh.wait_with_output().expect("ssh exits");
    assert!(
        status.status.success(),
        "plain ssh failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    bytes as f64 / f64::from(1 << 20) / seconds
}
