//! Running `sshtune bench` inside a scenario, and the independent measurement it is checked
//! against: a plain `ssh -c C dest` running `cat > /dev/null` behind a ready line, fed a known
//! byte count by `dd` and clocked by this process between the remote's lines, so both figures
//! exclude connection setup; its pipes are as wide as bench's (`one_upload`).

use super::under;
use sshtune::bench::model::{BenchReport, Direction, ResultRow};
use sshtune::target::SshTarget;
use std::process::{Command, Stdio};

/// `sshtune bench` (run under `prefix`, e.g. `ip netns exec NS` or a cgroup wrapper) against
/// `target` with `args`; returns the JSON report and the `--explain` text.
pub fn bench(prefix: &[String], target: &SshTarget, args: &[&str]) -> (BenchReport, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("report.json");
    let mut cmd = under(prefix, super::SSHTUNE);
    cmd.arg("bench")
        .args(&target.options)
        .arg(&target.destination)
        .args(args)
        .args(["--format", "json", "--explain", "--quiet", "--output"])
        .arg(&json);
    let out = cmd.output().expect("sshtune starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "sshtune bench failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("report written");
    let report: BenchReport = serde_json::from_str(&text).expect("report parses");
    (report, stdout)
}

/// Whether the report warns that client and server share this machine's CPUs.
pub fn warns_shared_machine(report: &BenchReport) -> bool {
    let shared = |w: &String| w.contains("share this machine");
    report.warnings.iter().any(shared)
}

/// Median and relative spread (max−min)/median of one row, for `agreeing`.
pub fn median_and_spread(report: &BenchReport, cipher: &str) -> (f64, f64) {
    let r = row(report, cipher, Direction::Upload);
    let m = r.median_mib_s.expect("measured");
    (m, (r.max_mib_s.unwrap_or(m) - r.min_mib_s.unwrap_or(m)) / m)
}

pub fn row<'a>(report: &'a BenchReport, cipher: &str, direction: Direction) -> &'a ResultRow {
    report
        .results
        .iter()
        .find(|r| r.cipher == cipher && r.direction == direction)
        .unwrap_or_else(|| panic!("no {cipher} {direction} row in {:#?}", report.results))
}

fn ssh(prefix: &[String], target: &SshTarget, cipher: &str, remote: &str) -> Command {
    let mut c = under(prefix, "ssh");
    c.args(&target.options)
        .args([
            "-o",
            "BatchMode=yes",
            "-o",
            "Compression=no",
            "-o",
            "ControlPath=none",
        ])
        .args(["-x", "-a", "-c", cipher, "--"])
        .arg(&target.destination)
        .arg(remote);
    c
}

/// The remote end of an independent upload: the command and the line prefixes it prints when
/// it is ready to count and when it has counted everything.
pub struct Sink {
    pub command: &'static str,
    pub ready: &'static str,
    pub done: &'static str,
}

/// A shell behind sshd or dropbear.
pub const SHELL_SINK: Sink = Sink {
    command: "echo ready; cat > /dev/null; echo done",
    ready: "ready",
    done: "done",
};

/// `sshtune serve`'s built-in (no shell there).
pub const SERVE_SINK: Sink = Sink {
    command: "sink",
    ready: "SSHTUNE-READY",
    done: "SSHTUNE-DONE",
};

/// Upload rate in MiB/s measured without sshtune's code: `ssh -c C dest 'echo ready;
/// head -c W > /dev/null; echo warm; cat > /dev/null; echo done'`, fed W + N bytes by `dd if=/dev/zero
/// bs=1M` (under the same prefix, so a client quota holds the feeder too) started only once the
/// remote said ready, and clocked by this process from "warm" to "done": the N bytes after a
/// warm-up of W in the same session, as bench times its samples after a warm-up.
///
/// The warm-up matters under a CPU quota: with sshd held to 20% of a core, transfers of
/// ~2.5 s in fresh sessions read 66–80 MiB/s where ~8 s ones read 95–106 and a long-lived
/// session's 2 s samples 86–106 — a fresh session takes seconds to reach its steady rate
/// there, and a reference that averages that ramp in is low. Starting the feed at "ready"
/// matters too: data sent before the remote command runs (up to a channel window, 2 MiB)
/// would otherwise escape the clock. Returns the rate of each of `runs` transfers.
pub fn independent_upload(
    prefix: &[String],
    target: &SshTarget,
    cipher: &str,
    bytes: u64,
    runs: usize,
) -> Vec<f64> {
    // Every timed part lasts at least MIN_SECONDS after WARM_SECONDS of warm-up, so the fixed
    // costs around it (dd starting, `done` coming back) weigh the same as in bench. `bytes`
    // is the first guess; a pilot transfer scales both up.
    const MIN_SECONDS: f64 = 2.5;
    const WARM_SECONDS: f64 = 2.0;
    let pilot = one_upload(prefix, target, cipher, 0, bytes, &SHELL_SINK);
    let bytes = bytes.max(((pilot * MIN_SECONDS) as u64 + 1) << 20);
    let warm = ((pilot * WARM_SECONDS) as u64 + 1) << 20;
    (0..runs)
        .map(|_| one_upload(prefix, target, cipher, warm, bytes, &SHELL_SINK))
        .collect()
}

/// An independent upload into any `sink`, without a warm-up (a built-in sink cannot say when
/// it is warm): the OpenSSH client and this process's clock are the independent parts,
/// whatever serves the other end. Each transfer lasts at least 2.5 s.
pub fn independent_upload_to(
    prefix: &[String],
    target: &SshTarget,
    cipher: &str,
    bytes: u64,
    runs: usize,
    sink: &Sink,
) -> Vec<f64> {
    const MIN_SECONDS: f64 = 2.5;
    let pilot = one_upload(prefix, target, cipher, 0, bytes, sink);
    let bytes = bytes.max(((pilot * MIN_SECONDS) as u64 + 1) << 20);
    (0..runs)
        .map(|_| one_upload(prefix, target, cipher, 0, bytes, sink))
        .collect()
}

/// One independent transfer: `warm` bytes (none for 0; a shell sink only), then `bytes`
/// bytes timed; MiB/s.
fn one_upload(
    prefix: &[String],
    target: &SshTarget,
    cipher: &str,
    warm: u64,
    bytes: u64,
    sink: &Sink,
) -> f64 {
    use std::io::{BufRead, BufReader};
    let command = if warm > 0 {
        assert_eq!(sink.command, SHELL_SINK.command, "a warm-up needs a shell");
        format!("echo ready; head -c {warm} > /dev/null; echo warm; cat > /dev/null; echo done")
    } else {
        sink.command.to_string()
    };
    // Bench widens the pipes that carry data back on both ends (`process::widen_pipes`,
    // `remote::WIDEN_PIPES`) and leaves the upload's at the default, and under a CPU quota a
    // pipe's width changes what a byte costs (bench read 22% and 55% above this reference
    // under a 20% client quota while only its own pipes were wide): the reference takes the
    // same widths, so the comparison is of the clocks, not of the pipes.
    let command = if sink.command == SERVE_SINK.command {
        command
    } else {
        format!(
            "{} {command}",
            sshtune::remote::WIDEN_PIPES.replace('\n', " ")
        )
    };
    let mut child = ssh(prefix, target, cipher, &command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh starts");
    sshtune::process::widen_pipes(&child);
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line).expect("ready line");
    assert!(
        line.starts_with(sink.ready),
        "independent ssh did not start: {line:?}"
    );
    let mut t0 = std::time::Instant::now();
    let mut dd = under(prefix, "dd")
        .args(["if=/dev/zero", "bs=1M", "iflag=count_bytes"])
        .arg(format!("count={}", warm + bytes))
        .stdout(Stdio::from(child.stdin.take().expect("piped")))
        .stderr(Stdio::null())
        .spawn()
        .expect("dd runs");
    if warm > 0 {
        line.clear();
        out.read_line(&mut line).expect("warm line");
        t0 = std::time::Instant::now();
        assert!(
            line.starts_with("warm"),
            "independent warm-up did not end: {line:?}"
        );
    }
    line.clear();
    out.read_line(&mut line).expect("done line");
    let secs = t0.elapsed().as_secs_f64();
    assert!(dd.wait().expect("dd ends").success(), "dd failed");
    assert!(
        line.starts_with(sink.done),
        "independent transfer did not finish: {line:?}"
    );
    let st = child.wait().expect("ssh exits");
    assert!(st.success(), "independent ssh failed");
    bytes as f64 / (1024.0 * 1024.0) / secs
}

/// Bounds the CI time a noisy machine can cost.
const ATTEMPTS: u32 = 2;

/// Runs `measure` (the sshtune bench) between two halves of the independent measurement, so a
/// change in this machine's load during the test hits both sides alike, and checks that its
/// figure (`figure` of the result: a median and its samples' relative spread) agrees with the
/// independent median within `tol`.
///
/// Agreement within `tol` can only be judged when both measurements are more precise than
/// that: an attempt where either side's samples spread (max−min)/median wider than `2 × tol`
/// is inconclusive. Beyond that spread, this machine's speed drifts from minute to minute
/// (under a CPU quota by 10–20%), so one conclusive disagreement is not yet a bias: a real
/// bias disagrees in every attempt. A conclusive agreement passes; conclusive disagreement in
/// every attempt fails; anything else is reported loudly as "accuracy NOT verified" and the
/// last result is returned for the remaining (verdict) checks.
pub fn agreeing<T>(
    what: &str,
    tol: f64,
    independent: impl Fn(usize) -> Vec<f64>,
    measure: impl Fn() -> T,
    figure: impl Fn(&T) -> (f64, f64),
) -> T {
    let mut result = None;
    let mut disagreements = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let mut samples = independent(2);
        let r = measure();
        samples.extend(independent(2));
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let other = (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
        let spread = (samples[n - 1] - samples[0]) / other;
        let (ours, our_spread) = figure(&r);
        let dev = (ours - other) / other;
        eprintln!(
            "{what} (attempt {attempt}): sshtune {ours:.2} (spread {:.0}%) vs independent \
             {other:.2} MiB/s ({:+.1}%; independent samples {samples:.1?}, spread {:.0}%)",
            our_spread * 100.0,
            dev * 100.0,
            spread * 100.0
        );
        if spread <= 2.0 * tol && our_spread <= 2.0 * tol {
            if dev.abs() <= tol {
                return r;
            }
            disagreements.push(dev);
        }
        result = Some(r);
    }
    assert!(
        disagreements.len() < ATTEMPTS as usize,
        "{what}: sshtune and the independent measurement differ by more than {:.0}% in every \
         attempt ({:+.1?}%)",
        tol * 100.0,
        disagreements.iter().map(|d| d * 100.0).collect::<Vec<_>>()
    );
    eprintln!(
        "WARNING {what}: accuracy NOT verified: no attempt of {ATTEMPTS} was both precise to \
         {:.0}% and in agreement (this machine is busy with other work)",
        2.0 * tol * 100.0
    );
    result.expect("at least one attempt")
}

/// Fails unless `a` and `b` agree within `tol` (relative to `b`).
pub fn assert_agree(what: &str, a: f64, b: f64, tol: f64) {
    let dev = (a - b).abs() / b;
    assert!(
        dev <= tol,
        "{what}: {a:.2} vs {b:.2} MiB/s differ by {:.1}% (> {:.0}%)",
        dev * 100.0,
        tol * 100.0
    );
    eprintln!(
        "{what}: {a:.2} vs {b:.2} MiB/s ({:+.1}%)",
        (a - b) / b * 100.0
    );
}

/// The two CPUs the bench pins its ends to when the server is this machine: the first two
/// this process may use (client, server); None on one CPU, where the bench does not pin.
pub fn two_cpus() -> Option<(usize, usize)> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).expect("affinity");
    let mut allowed = (0..nix::sched::CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false));
    Some((allowed.next()?, allowed.next()?))
}

/// A command prefix holding a program (and its children) to one CPU.
pub fn taskset(cpu: usize) -> Vec<String> {
    vec!["taskset".into(), "-c".into(), cpu.to_string()]
}
