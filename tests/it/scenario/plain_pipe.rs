//! The figure a user can reproduce: the default bench's upload row for one cipher (OpenSSH
//! engine, real sshd on loopback) against what `head -c N /dev/zero | ssh -c C host 'cat >
//! /dev/null'` gets through the same sshd, timed here. The plain transfer is fed the way a
//! shell pipeline feeds it: `head` writes into an ordinary pipe (the kernel's default width)
//! that is `ssh`'s stdin, and the remote `cat` reads sshd's ordinary pipe; nothing is pinned.
//!
//! The two are measured in alternating rounds (plain then bench, bench then plain, ...), so a
//! change in this machine's load during the test hits both alike, and the medians over the
//! rounds are compared: within ±10%.

use crate::support;

use sshtune::bench::model::Direction;
use sshtune::embedded::EmbeddedSshd;
use sshtune::target::SshTarget;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::exclusive;
use support::scenario::{bench, row};

const CIPHER: &str = "aes128-ctr";
/// Rounds of one plain transfer and one default bench each.
const ROUNDS: usize = 5;
/// A plain transfer lasts at least this long after the login, so the few milliseconds around
/// it (starting `head`, the last line coming back) weigh under 1%.
const PLAIN_SECONDS: f64 = 3.0;
const TOLERANCE: f64 = 0.10;

#[test]
fn default_upload_row_matches_a_plain_pipe_into_ssh() {
    let _one = exclusive();
    let server = EmbeddedSshd::start("").expect("sshd starts");
    let target = &server.target;
    // A pilot sizes the plain transfers to PLAIN_SECONDS at this machine's rate.
    let pilot = plain_upload(target, 256 << 20);
    let bytes = ((pilot * PLAIN_SECONDS) as u64 + 1) << 20;
    let (mut plain, mut ours) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            plain.push(plain_upload(target, bytes));
            ours.push(bench_row(target));
        } else {
            ours.push(bench_row(target));
            plain.push(plain_upload(target, bytes));
        }
    }
    let (p, o) = (median(&plain), median(&ours));
    let dev = (o - p) / p;
    eprintln!(
        "{CIPHER} upload, {ROUNDS} alternating rounds: bench default {o:.1} MiB/s (rounds \
         {ours:.1?}), plain `head -c {bytes} /dev/zero | ssh` {p:.1} MiB/s (rounds {plain:.1?}): \
         bench/plain {:.3} ({:+.1}%)",
        o / p,
        dev * 100.0
    );
    assert!(
        dev.abs() <= TOLERANCE,
        "the default bench's {CIPHER} upload ({o:.1} MiB/s) and a plain pipe into ssh \
         ({p:.1} MiB/s) differ by {:+.1}% (> ±{:.0}%)",
        dev * 100.0,
        TOLERANCE * 100.0
    );
}

/// The default bench's median for the cipher's upload row, MiB/s.
fn bench_row(target: &SshTarget) -> f64 {
    let args = [
        "--engine",
        "openssh",
        "--ciphers",
        CIPHER,
        "--direction",
        "upload",
        "--no-ceiling",
    ];
    let (report, _) = bench(&[], target, &args);
    let r = row(&report, CIPHER, Direction::Upload);
    r.median_mib_s.expect("row measured")
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

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    (s[(n - 1) / 2] + s[n / 2]) / 2.0
}
