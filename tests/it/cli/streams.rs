//! `sshtune bench --streams`: the real binary and `ssh` against a real sshd on loopback, N
//! connections at once. Correctness only (the fields, the table, the gain, `auto`, the
//! refusals); what streams gain is measured by scripts/bench-streams.

use crate::support;

use sshtune::embedded::EmbeddedSshd;
use std::process::Command;
use support::{output, sshtune, sshtune_with, stderr, stdout};

/// One OpenSSH upload row of aes128-ctr, 2 MiB per transfer, one sample, no ceiling.
fn quick(server: &EmbeddedSshd, streams: &str) -> Command {
    let mut cmd = sshtune();
    cmd.arg("bench")
        .args(&server.target.options)
        .arg(&server.target.destination)
        .args(support::quick_bench("aes128-ctr", "2M"))
        .args([
            "--no-ceiling",
            "--engine",
            "openssh",
            "--direction",
            "upload",
        ])
        .args(["--streams", streams, "-q"]);
    cmd
}

fn report(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn two_streams_report_the_aggregate_each_stream_both_ends_cpu_and_the_gain() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let json = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    let o = output(
        quick(&server, "2")
            .args(["--format", "table", "--explain", "--output"])
            .arg(json.path()),
    );
    let table = support::ok(&o);
    let v = report(json.path());
    assert_eq!(v["settings"]["streams"]["count"], 2, "{v:#}");
    assert_eq!(v["settings"]["streams"]["asked"], "2");
    let row = &v["results"][0];
    let s = &row["streams"];
    assert_eq!(s["count"], 2, "{s:#}");
    assert!(s["error"].is_null(), "{s:#}");
    assert_eq!(s["bytes_per_stream"], row["bytes"]);
    let samples = s["samples"].as_array().unwrap();
    assert!(samples.len() >= 3, "several rounds: {s:#}");
    assert_eq!(s["sample_seconds"].as_array().unwrap().len(), samples.len());
    let (lo, m, hi) = support::spread(s);
    assert!(0.0 < lo && lo <= m && m <= hi, "{s:#}");
    let each = s["per_stream_mib_s"].as_array().unwrap();
    assert_eq!(each.len(), 2, "{s:#}");
    assert!(each.iter().all(|r| r.as_f64().unwrap() > 0.0), "{s:#}");
    // Present for both ends (2 MiB transfers are too short for 10 ms ticks to say more).
    for cpu in ["client_cpu_pct", "server_cpu_pct"] {
        assert!(s[cpu].as_f64().is_some_and(|c| c >= 0.0), "{cpu}: {s:#}");
    }
    let g = &s["gain"];
    let (glo, gm, ghi) = support::gain(g);
    assert!(glo <= gm && gm <= ghi, "{g:#}");
    assert!((gm - m / row["median_mib_s"].as_f64().unwrap()).abs() < 1e-9);
    assert!(g["significant"].is_boolean());
    let note = s["note"].as_str().unwrap();
    assert!(note.contains("2 streams: ×"), "{note}");
    // The table beside the bench table, its columns, the gain and the line of what binds.
    for needle in [
        "Parallel streams",
        "1 stream",
        "2 streams",
        "gain",
        "each stream",
        "×",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    let label = note.split(':').next().unwrap();
    assert!(
        table.contains(&format!(" upload: {label}:")),
        "the line of what binds: {table}"
    );
    assert!(table.contains("      streams: "), "--explain: {table}");
    let md = support::squeeze(&support::ok(&output(
        sshtune()
            .arg("report")
            .arg(json.path())
            .args(["--format", "markdown"]),
    )));
    assert!(md.contains("Parallel streams"), "{md}");
    assert!(
        md.contains("| 1 stream MiB/s | 2 streams MiB/s | gain |"),
        "{md}"
    );
    assert!(md.contains(&format!(" upload: {label}:")), "{md}");
    // CSV: the same line carries the streams' figures.
    let csv = support::csv_lines(&support::ok(&output(
        sshtune()
            .arg("report")
            .arg(json.path())
            .args(["--format", "csv"]),
    )));
    assert_eq!(csv.len(), 1, "{csv:#?}");
    let line = &csv[0];
    assert_eq!(line["cipher"], "aes128-ctr", "{line:#?}");
    assert_eq!(line["streams"], "2", "{line:#?}");
    let num = |k: &str| line[k].parse::<f64>().unwrap();
    assert!((num("streams_median_mib_s") - m).abs() < 1e-3, "{line:#?}");
    assert!((num("streams_min_mib_s") - lo).abs() < 1e-3);
    assert!((num("streams_max_mib_s") - hi).abs() < 1e-3);
    assert!((num("streams_gain") - gm).abs() < 1e-3, "{line:#?}");
    assert!((num("streams_gain_min") - glo).abs() < 1e-3);
    assert!((num("streams_gain_max") - ghi).abs() < 1e-3);
    assert_eq!(
        line["streams_gain_significant"],
        g["significant"].to_string()
    );
    assert_eq!(
        line["streams_samples_mib_s"].split(';').count(),
        samples.len()
    );
    assert_eq!(line["streams_per_stream_mib_s"].split(';').count(), 2);
    assert!(num("streams_client_cpu_pct") >= 0.0, "{line:#?}");
    assert_eq!(line["streams_note"], note);
    assert_eq!(line["streams_error"], "");
}

#[test]
fn streams_auto_takes_the_servers_online_cores() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let o = output(quick(&server, "auto").args(["--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&support::ok(&o)).unwrap();
    // The server is this machine: its cores are ours.
    let cores = v["server"]["cores"].as_u64().expect("server cores read");
    let want = cores.min(8);
    let setting = &v["settings"]["streams"];
    assert_eq!(setting["asked"], "auto", "{setting:#}");
    assert_eq!(setting["count"], want, "{setting:#}");
    assert!(
        setting["reason"].as_str().unwrap().contains("cores"),
        "{setting:#}"
    );
    let s = &v["results"][0]["streams"];
    if want >= 2 {
        assert_eq!(s["count"], want, "{s:#}");
        assert_eq!(s["per_stream_mib_s"].as_array().unwrap().len() as u64, want);
    } else {
        assert!(s.is_null(), "one core: one stream, nothing more: {s:#}");
    }
}

#[test]
fn streams_refuse_the_native_engine_and_bad_counts_with_the_usage_status() {
    let _lock = support::shared();
    let o = output(&mut sshtune_with(
        "bench --engine native --streams 2 --no-ceiling",
    ));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.trim(),
        "sshtune: --streams needs --engine openssh",
        "one line: {err}"
    );
    assert!(stdout(&o).is_empty());
    for bad in ["0", "17", "many"] {
        let o = output(sshtune().args(["bench", "--streams", bad]));
        assert_eq!(o.status.code(), Some(2), "--streams {bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--streams"), "{}", stderr(&o));
    }
}
