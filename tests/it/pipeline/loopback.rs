//! `sshtune pipeline` against a real sshd on loopback with real rsync: the data arrives intact,
//! the report has its documented shape, and the CPU breakdown names the pipeline's processes.

use crate::support;

use serde_json::Value;
use std::path::Path;
use support::pipeline::{
    assert_no_leftovers, assert_same_tree, command, cpu_pct, dirs, files, remote_dir, ONE_CELL,
};
use support::{output, sshtune, stderr, stdout};

fn run_json(dest: &Path, src: &Path, tmp: &Path, extra: &[&str]) -> Value {
    let mut cmd = command(sshtune(), tmp, dest);
    cmd.arg("--source")
        .arg(src)
        .args(["--ciphers", "aes128-gcm@openssh.com", "--format", "json"])
        .args(extra);
    let o = output(&mut cmd);
    assert!(o.status.success(), "pipeline failed: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("JSON report")
}

fn pct(row: &Value, side: &str, group: &str) -> f64 {
    cpu_pct(row, side, group).unwrap_or_else(|| panic!("no {side}/{group} in {}", row["cpu"]))
}

#[test]
fn rsync_over_embedded_sshd_copies_exactly_and_reports_where_the_cpu_goes() {
    let _lock = support::shared();
    // Large enough that every process burns measurable ticks at loopback speed.
    let work = dirs(128 << 20);
    let (src, dest, tmp) = (&work.src, &work.dest, &work.tmp);
    let r = run_json(
        dest,
        src,
        tmp,
        &[
            "--variants",
            "whole-file,delta",
            "--repeat",
            "2",
            "--interval-ms",
            "100",
            "--keep",
        ],
    );

    assert_eq!(r["schema"], "sshtune.pipeline/1");
    assert_eq!(r["embedded"], true);
    assert_eq!(r["dataset"]["files"], 13);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert!(row["error"].is_null(), "{row}");
        assert_eq!(row["samples"].as_array().unwrap().len(), 2);
        assert!(row["median_mib_s"].as_f64().unwrap() > 0.0);
    }
    let whole = &rows[0];
    assert_eq!(whole["variant"], "whole-file");
    for (side, group) in [
        ("client", "rsync-sender"),
        ("client", "ssh"),
        ("server", "sshd"),
        ("server", "rsync-receiver"),
    ] {
        assert!(
            pct(whole, side, group) > 0.0,
            "{side}/{group} shows no CPU: {}",
            whole["cpu"]
        );
    }
    // Delta on an existing destination sends (almost) no literal data.
    assert!(
        rows[1]["literal_bytes"].as_u64().unwrap() < whole["literal_bytes"].as_u64().unwrap() / 10
    );

    // Every stage ceiling was measured in this run.
    let mut stages: Vec<&str> = r["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stage"].as_str().unwrap())
        .collect();
    stages.sort_unstable();
    assert_eq!(stages, ["disk", "rsync-local", "ssh"]);
    for c in r["ceilings"].as_array().unwrap() {
        assert!(c["median_mib_s"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(r["verdict"]["bound_by"].is_string());
    assert_eq!(r["verdict"]["cipher"], "aes128-gcm@openssh.com");

    // The time series covers both ends and names the runs.
    let series = r["series"].as_array().unwrap();
    for side in ["client", "server"] {
        assert!(series
            .iter()
            .any(|t| t["side"] == side && t["phase"] == "aes128-gcm@openssh.com/whole-file#1"));
    }

    // --keep: the run directory holds an exact copy.
    let run_dir = Path::new(r["remote_dir"].as_str().unwrap());
    assert!(run_dir.starts_with(dest));
    assert_same_tree(src, &run_dir.join("data"));
    assert_no_leftovers(tmp);
}

#[test]
fn without_keep_the_remote_run_directory_is_removed_and_other_formats_render() {
    let _lock = support::shared();
    let work = dirs(4 << 20);
    let (src, dest, tmp) = (&work.src, &work.dest, &work.tmp);
    std::fs::write(dest.join("unrelated.txt"), b"stays").unwrap();
    for format in ["table", "csv", "markdown"] {
        let o = output(
            command(sshtune(), tmp, dest)
                .arg("--source")
                .arg(src)
                .args(ONE_CELL)
                .args(["--repeat", "1", "--format", format]),
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains("aes128-ctr") && text.contains("whole-file"),
            "{format}: {text}"
        );
        assert_eq!(files(dest), [Path::new("unrelated.txt")]);
        assert_no_leftovers(tmp);
    }
}

/// `pipeline HOST:DIR` into a private sshd that logs every login: the destination check,
/// samplers, emptying, flushing and clean-up share one login (the control master), each
/// measured copy logs in on its own, and neither the master nor its socket outlives the run.
/// Without the master the same run made nine logins (seven of them control traffic).
#[test]
fn control_traffic_shares_one_login_and_leaves_no_master() {
    let _lock = support::shared();
    let (server, r, tmp) = run_against_logging_sshd("");
    assert_eq!(r["control"]["multiplexed"], true, "{}", r["control"]);
    assert_eq!(r["control"]["logins"], 1, "{}", r["control"]);
    // Two timed copies, each its own login and counted as measured, plus the master's.
    assert_eq!(r["control"]["measured_logins"], 2, "{}", r["control"]);
    assert_eq!(accepted_logins(&server), 3, "{}", sshd_log(&server));
    no_master_and_nothing_left(tmp.path());
}

/// A server that allows one session per connection (`MaxSessions 1`) cannot carry the
/// samplers and the helper on one master: the run says why and logs in once per command.
#[test]
fn a_server_refusing_multiplexed_sessions_gets_one_login_per_command_and_a_warning() {
    let _lock = support::shared();
    let (server, r, tmp) = run_against_logging_sshd("MaxSessions 1\n");
    assert_eq!(r["control"]["multiplexed"], false, "{}", r["control"]);
    let why = r["control"]["not_multiplexed_because"].as_str().unwrap();
    assert!(
        why.contains("refused 3 sessions on one connection"),
        "{why}"
    );
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.starts_with("no shared control connection"))
    });
    assert!(warned, "{}", r["warnings"]);
    // The refused master's, the two probe sessions it refused (ssh then logs in on its own),
    // then one each: the check, the sampler, 2 × (empty, flush), the removal.
    let logins = r["control"]["logins"].as_u64().unwrap();
    assert_eq!(logins, 10, "{}", r["control"]);
    let measured = r["control"]["measured_logins"].as_u64().unwrap();
    assert_eq!(measured, 2, "{}", r["control"]);
    assert_eq!(
        accepted_logins(&server),
        (logins + measured) as usize,
        "{}",
        sshd_log(&server)
    );
    no_master_and_nothing_left(tmp.path());
}

/// Two timed whole-file copies of a small dataset into a private sshd (its `extra` config
/// first, logging every login), as HOST:DIR, which must succeed; the server, the run's JSON
/// report and its TMPDIR.
fn run_against_logging_sshd(
    extra: &str,
) -> (sshtune::embedded::EmbeddedSshd, Value, tempfile::TempDir) {
    let server = sshtune::embedded::EmbeddedSshd::start(&format!("{extra}LogLevel INFO\n"))
        .expect("starting a private sshd");
    let dest = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = command(
        sshtune(),
        tmp.path(),
        remote_dir(&server.target, dest.path()),
    );
    cmd.args(&server.target.options)
        .args(ONE_CELL)
        .args(["--repeat", "2", "--size", "4M"])
        .args(["-q", "--format", "json"]);
    let report = support::ok_json(&output(&mut cmd));
    assert!(files(dest.path()).is_empty(), "{:?}", files(dest.path()));
    (server, report, tmp)
}

fn sshd_log(server: &sshtune::embedded::EmbeddedSshd) -> String {
    std::fs::read_to_string(server.dir().join("sshd.log")).unwrap_or_default()
}

/// Logins sshd accepted, from its log.
fn accepted_logins(server: &sshtune::embedded::EmbeddedSshd) -> usize {
    sshd_log(server)
        .lines()
        .filter(|l| l.contains("Accepted publickey"))
        .count()
}

/// No control master still runs for `tmp`'s runs, and nothing of the run is left in `tmp`.
fn no_master_and_nothing_left(tmp: &std::path::Path) {
    assert_eq!(
        support::pipeline::control_masters(tmp),
        Vec::<String>::new()
    );
    assert_no_leftovers(tmp);
}
