//! The figure a user can reproduce: the default bench's upload row for one cipher (OpenSSH
//! engine, real sshd on loopback) against what a plain shell pipeline into `ssh -c C host 'cat
//! > /dev/null'` gets through the same sshd, timed here. The plain transfer is fed as the bench
//! feeds: 1 MiB writes into an ordinary pipe (the kernel's default width) that is `ssh`'s stdin,
//! `dd if=/dev/zero bs=1M`; the remote `cat` reads sshd's ordinary pipe.
//!
//! Both run where the report says the bench ran its ends: with the server on this machine the
//! bench pins `ssh` and its feeder to one CPU and sshd's session to another, and states it
//! (`settings.placement`). The plain transfer reproduces that placement the way a user would,
//! with `taskset`: the feeder and `ssh` on the client's CPU, sshd (and so every session it
//! forks) on the server's. Unpinned, the scheduler's choice of shared or separate cores moves a
//! loopback transfer by more than this test's tolerance on some machines.
//!
//! `head -c N /dev/zero` writes 8 KiB at a time: on the core it shares with `ssh` its two
//! system calls per 8 KiB cost what `ssh` would have used. That figure is measured beside the
//! `dd` one and printed for the record (docs/measurements.md has today's ratio); it is the
//! feeder's cost, not the cipher's, so it is not asserted.
//!
//! The two are measured in alternation (two plain transfers, one bench, two plain transfers:
//! `support::scenario::agreeing`), so a change in this machine's load during the test hits both
//! alike, and the bench row's median is compared with the plain transfers' median: within
//! ±10%. Where either side's samples spread wider than twice that (a busy machine), the
//! attempt cannot judge ±10% and says "accuracy NOT verified"; disagreement in every
//! conclusive attempt fails.

use crate::support;

use sshtune::embedded::EmbeddedSshd;
use sshtune::embedded::Options;
use sshtune::target::SshTarget;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::exclusive;
use support::scenario::{agreeing, bench, median_and_spread, taskset, two_cpus};

const CIPHER: &str = "aes128-ctr";
/// A plain transfer lasts at least this long after the login, so the few milliseconds around
/// it (starting the feeder, the last line coming back) weigh under 1%.
const PLAIN_SECONDS: f64 = 3.0;

#[test]
fn default_upload_row_matches_a_plain_pipe_into_ssh() {
    let _one = exclusive();
    let cpus = two_cpus();
    let server = EmbeddedSshd::start_with(&Options {
        wrapper: cpus.map_or_else(Vec::new, |(_, s)| taskset(s)),
        ..Options::default()
    })
    .expect("sshd starts");
    let target = &server.target;
    let client = cpus.map(|(c, _)| c);
    // A pilot sizes the plain transfers to PLAIN_SECONDS at this machine's rate.
    let pilot = plain_upload(target, client, Feed::Dd, 256 << 20);
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
    let (report, _) = agreeing(
        &format!("{CIPHER} upload: the default bench vs `dd bs=1M` of {bytes} bytes | ssh"),
        0.10,
        |runs| {
            (0..runs)
                .map(|_| plain_upload(target, client, Feed::Dd, bytes))
                .collect()
        },
        || bench(&[], target, &args),
        |(report, _)| median_and_spread(report, CIPHER),
    );
    // The plain transfers ran where the bench says it ran its ends.
    let placed = &report.settings.placement;
    assert!(
        placed.iter().all(|p| p.pinned == cpus.is_some()
            && p.client_cpu == cpus.map(|(c, _)| c as u32)
            && p.server_cpu == cpus.map(|(_, s)| s as u32)),
        "bench placement {placed:?} differs from the plain transfers' {cpus:?}"
    );
    let (dd, head): (Vec<f64>, Vec<f64>) = (0..2)
        .map(|_| {
            let dd = plain_upload(target, client, Feed::Dd, bytes);
            (dd, plain_upload(target, client, Feed::Head, bytes))
        })
        .unzip();
    eprintln!(
        "for the record: `head -c` (8 KiB writes) {head:.1?} MiB/s against `dd bs=1M` {dd:.1?} \
         MiB/s, alternating, feeder and ssh on one CPU"
    );
}

/// The feeder of BYTES zero bytes, on `cpu` when given.
fn feeder_command(cpu: Option<usize>, feed: Feed, bytes: u64) -> Command {
    let mut cmd = match feed {
        Feed::Dd => placed(cpu, "dd"),
        Feed::Head => placed(cpu, "head"),
    };
    match feed {
        Feed::Dd => cmd
            .args(["if=/dev/zero", "bs=1M", "iflag=count_bytes", "status=none"])
            .arg(format!("count={bytes}")),
        Feed::Head => cmd.args(["-c", &bytes.to_string(), "/dev/zero"]),
    };
    cmd
}

/// How a plain transfer is fed.
#[derive(Clone, Copy)]
enum Feed {
    /// `dd if=/dev/zero bs=1M`: 1 MiB writes, as the bench writes.
    Dd,
    /// `head -c N /dev/zero`: 8 KiB writes, as users often type it.
    Head,
}

/// `program` under `taskset -c CPU` when `cpu` is given.
fn placed(cpu: Option<usize>, program: &str) -> Command {
    match cpu {
        Some(c) => {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", &c.to_string(), program]);
            cmd
        }
        None => Command::new(program),
    }
}

/// `FEEDER | ssh -c CIPHER dest 'cat > /dev/null'` for BYTES, clocked from the remote shell's
/// first line (the login is over, `cat` about to read) to its last (`cat` has read every byte):
/// MiB/s. The feeder starts once the remote is ready, so nothing is sent before the clock
/// starts. The feeder and `ssh` run on `cpu` when given.
fn plain_upload(target: &SshTarget, cpu: Option<usize>, feed: Feed, bytes: u64) -> f64 {
    let mut ssh = placed(cpu, "ssh")
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
    // The command is dropped once spawned: it holds the pipe's write end, and `ssh` sees the
    // end of its input only when every holder has closed it.
    let mut feeder = feeder_command(cpu, feed, bytes)
        .stdout(Stdio::from(ssh.stdin.take().expect("piped")))
        .spawn()
        .expect("the feeder runs");
    line.clear();
    out.read_line(&mut line).expect("done line");
    let seconds = t0.elapsed().as_secs_f64();
    assert_eq!(line.trim(), "done", "plain transfer did not finish");
    assert!(
        feeder.wait().expect("feeder ends").success(),
        "feeder failed"
    );
    let status = ssh.wait_with_output().expect("ssh exits");
    assert!(
        status.status.success(),
        "plain ssh failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    bytes as f64 / f64::from(1 << 20) / seconds
}
