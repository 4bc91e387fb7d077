//! Running `sshtune bench` inside a scenario, and the independent measurement it is checked
//! against: a plain `ssh -c C dest 'cat > /dev/null'` fed a known byte count, timed from
//! outside, with the time of a bare login (`ssh dest true`) subtracted so both figures exclude
//! connection setup.

use sshtune::bench::model::{BenchReport, Direction, ResultRow};
use sshtune::target::SshTarget;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

/// Scenarios measure CPU and time on a shared machine: never two at once within one test
/// binary (cargo already runs test binaries one after another).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn exclusive() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn prefixed(prefix: &[String], program: &str) -> Command {
    match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// `sshtune bench` (run under `prefix`, e.g. `ip netns exec NS` or a cgroup wrapper) against
/// `target` with `args`; returns the JSON report and the `--explain` text.
pub fn bench(prefix: &[String], target: &SshTarget, args: &[&str]) -> (BenchReport, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("report.json");
    let mut cmd = prefixed(prefix, env!("CARGO_BIN_EXE_sshtune"));
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

pub fn row<'a>(report: &'a BenchReport, cipher: &str, direction: Direction) -> &'a ResultRow {
    report
        .results
        .iter()
        .find(|r| r.cipher == cipher && r.direction == direction)
        .unwrap_or_else(|| panic!("no {cipher} {direction} row in {:#?}", report.results))
}

fn ssh(prefix: &[String], target: &SshTarget, cipher: &str, remote: &str) -> Command {
    let mut c = prefixed(prefix, "ssh");
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

/// Upload rate in MiB/s measured without sshtune: `head -c N /dev/zero | ssh -c C dest 'cat >
/// /dev/null'`, with the clock on the receiving end (`date` before and after `cat`), so it runs
/// from the moment the remote command starts (after login, like sshtune's) to the last byte.
/// Returns the rate of each of `runs` transfers.
pub fn independent_upload(
    prefix: &[String],
    target: &SshTarget,
    cipher: &str,
    bytes: u64,
    runs: usize,
) -> Vec<f64> {
    let remote = "s=$(date +%s%N); cat > /dev/null; e=$(date +%s%N); echo ns=$((e - s))";
    (0..runs)
        .map(|_| {
            let mut head = prefixed(prefix, "head")
                .args(["-c", &bytes.to_string(), "/dev/zero"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("head starts");
            let feed = head.stdout.take().expect("piped");
            let out = ssh(prefix, target, cipher, remote)
                .stdin(Stdio::from(feed))
                .output()
                .expect("ssh starts");
            let _ = head.wait();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "independent ssh failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let ns: f64 = text
                .trim()
                .strip_prefix("ns=")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no timing from the remote side: {text:?}"));
            bytes as f64 / (1024.0 * 1024.0) / (ns / 1e9)
        })
        .collect()
}

/// Runs `measure` (the sshtune bench) between two halves of the independent measurement, so a
/// change in this machine's load during the test hits both sides alike; returns its result
/// and the median of the independent samples.
pub fn bracketed<T>(
    independent: impl Fn(usize) -> Vec<f64>,
    measure: impl FnOnce() -> T,
) -> (T, f64) {
    let mut samples = independent(2);
    let result = measure();
    samples.extend(independent(2));
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    (result, (samples[n / 2 - 1] + samples[n / 2]) / 2.0)
}

/// The last `[5.22MiB/s]` of pv's `-a` output, in MiB/s.
pub fn pv_average(stderr: &str) -> Option<f64> {
    let last = stderr.rsplit('[').find(|s| s.contains("/s]"))?;
    let field = last.split("/s]").next()?;
    let unit_at = field.find(|c: char| c.is_ascii_alphabetic())?;
    let value: f64 = field[..unit_at].parse().ok()?;
    let scale = match &field[unit_at..] {
        "B" => 1.0 / (1024.0 * 1024.0),
        "KiB" => 1.0 / 1024.0,
        "MiB" => 1.0,
        "GiB" => 1024.0,
        _ => return None,
    };
    Some(value * scale)
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
