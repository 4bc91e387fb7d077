//! `sshtune pipeline --jobs`: N real rsyncs at once against the embedded sshd on loopback.
//! Correctness only (every file arrives once and intact, the fields, the gain row, the command
//! line it prints really copies, the refusals); what N jobs gain is scripts/bench-jobs'.

use crate::support;

use serde_json::Value;
use std::path::Path;
use support::pipeline::{assert_same_tree, dirs, leftovers, ONE_CELL};
use support::{output, sshtune, stderr, stdout};

fn pipeline(dest: &Path, src: &Path, tmp: &Path, extra: &[&str]) -> std::process::Output {
    output(
        support::pipeline::command(sshtune(), tmp, dest)
            .arg("--source")
            .arg(src)
            .args(ONE_CELL)
            .arg("-q")
            .args(extra),
    )
}

#[test]
fn two_jobs_copy_every_file_once_and_report_the_gain_over_one_rsync() {
    let _lock = support::shared();
    let work = dirs(2 << 20);
    let (src, dest, tmp) = (&work.src, &work.dest, &work.tmp);
    let top = tmp.parent().unwrap();
    let json = top.join("report.json");
    let json_arg = json.display().to_string();
    let table = support::ok(&pipeline(
        dest,
        src,
        tmp,
        &[
            "--jobs", "2", "--repeat", "2", "--keep", "--output", &json_arg,
        ],
    ));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let j = &r["jobs"];
    assert_eq!(j["asked"], "2", "{j:#}");
    assert_eq!(j["count"], 2, "{j:#}");
    // The parts share out every file and byte of the dataset, once.
    let parts = j["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    let sum = |k: &str| parts.iter().map(|p| p[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("files"), r["dataset"]["files"].as_u64().unwrap());
    assert_eq!(sum("bytes"), r["dataset"]["bytes"].as_u64().unwrap());
    assert!(parts.iter().all(|p| p["files"].as_u64().unwrap() > 0));

    let row = &j["rows"][0];
    assert_eq!(row["cipher"], "aes128-ctr", "{row:#}");
    assert_eq!(row["variant"], "whole-file");
    assert!(row["error"].is_null(), "{row:#}");
    assert_eq!(row["samples"].as_array().unwrap().len(), 2, "{row:#}");
    assert_eq!(row["sample_seconds"].as_array().unwrap().len(), 2);
    let (m, lo, hi) = (
        row["median_mib_s"].as_f64().unwrap(),
        row["min_mib_s"].as_f64().unwrap(),
        row["max_mib_s"].as_f64().unwrap(),
    );
    assert!(0.0 < lo && lo <= m && m <= hi, "{row:#}");
    let each = row["per_job_mib_s"].as_array().unwrap();
    assert_eq!(each.len(), 2, "{row:#}");
    assert!(each.iter().all(|e| e.as_f64().unwrap() > 0.0), "{row:#}");
    for (side, group) in [("client", "rsync-sender"), ("server", "sshd")] {
        let found = row["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["side"] == side && c["group"] == group);
        assert!(found, "{side}/{group} missing: {}", row["cpu"]);
    }

    // The gain over the one rsync of the same cipher, and the line that judges it.
    let one = &r["rows"][0];
    let g = &row["gain"];
    let (gm, glo, ghi) = (
        g["median"].as_f64().unwrap(),
        g["min"].as_f64().unwrap(),
        g["max"].as_f64().unwrap(),
    );
    assert!(glo <= gm && gm <= ghi, "{g:#}");
    assert!((gm - m / one["median_mib_s"].as_f64().unwrap()).abs() < 1e-9);
    let note = row["note"].as_str().unwrap();
    let pays = g["significant"].as_bool().unwrap();
    let suggested = r["verdict"]["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| {
            s["change"]
                .as_str()
                .unwrap()
                .starts_with("parallel transfer: 2")
        });
    assert_eq!(pays, suggested, "{:#}", r["verdict"]);
    if pays {
        assert!(note.starts_with("2 jobs: ×"), "{note}");
    } else {
        assert!(note.starts_with("no gain from 2 jobs: ×"), "{note}");
        assert!(table.contains("no gain from 2 jobs"), "{table}");
    }
    for needle in ["Parallel rsync", "1 rsync", "2 jobs", "gain", "each job"] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    let report = |format: &str| {
        support::ok(&output(
            sshtune()
                .arg("report")
                .arg(&json)
                .args(["--format", format]),
        ))
    };
    let md = support::squeeze(&report("markdown"));
    assert!(
        md.contains("| 1 rsync MiB/s | 2 jobs MiB/s | gain |"),
        "{md}"
    );
    let html = report("html");
    assert!(
        html.contains("<h2>Parallel rsync: 2 jobs at once"),
        "{html}"
    );
    // CSV: `jobs` 1 on the one-rsync line, and a line for the two jobs with their figures.
    let csv = support::csv_lines(&support::ok(&output(
        sshtune().arg("report").arg(&json).args(["--format", "csv"]),
    )));
    assert_eq!(csv.len(), 2, "{csv:#?}");
    let (one_line, jobs_line) = (&csv[0], &csv[1]);
    assert_eq!(one_line["jobs"], "1", "{one_line:#?}");
    assert_eq!(one_line["jobs_gain"], "", "{one_line:#?}");
    assert_eq!(jobs_line["jobs"], "2", "{jobs_line:#?}");
    assert_eq!(jobs_line["cipher"], "aes128-ctr");
    assert_eq!(jobs_line["variant"], "whole-file");
    assert_eq!(jobs_line["bytes"], r["dataset"]["bytes"].to_string());
    let num = |k: &str| jobs_line[k].parse::<f64>().unwrap();
    assert!((num("median_mib_s") - m).abs() < 1e-3, "{jobs_line:#?}");
    assert!((num("jobs_gain") - gm).abs() < 1e-3, "{jobs_line:#?}");
    assert!((num("jobs_gain_min") - glo).abs() < 1e-3);
    assert!((num("jobs_gain_max") - ghi).abs() < 1e-3);
    assert_eq!(jobs_line["jobs_gain_significant"], pays.to_string());
    assert_eq!(jobs_line["per_job_mib_s"].split(' ').count(), 2);
    assert_eq!(jobs_line["jobs_note"], note);
    assert_eq!(jobs_line["jobs_command"], row["command"].as_str().unwrap());
    assert!(num("client_ssh_pct") >= 0.0, "{jobs_line:#?}");

    // --keep: the last copy (the two jobs') holds every file once, byte for byte.
    let run_dir = Path::new(r["remote_dir"].as_str().unwrap());
    assert_same_tree(src, &run_dir.join("data"));
    assert!(leftovers(tmp).is_empty(), "left: {:?}", leftovers(tmp));

    // The command line the report gives copies the same way (here into a local directory).
    let copy = top.join("copy");
    std::fs::create_dir(&copy).unwrap();
    let line = row["command"].as_str().unwrap();
    assert!(line.contains("xargs -P 2"), "{line}");
    let line = line.replace("HOST:DIR", &copy.display().to_string());
    let o = output(std::process::Command::new("sh").arg("-c").arg(&line));
    assert!(o.status.success(), "{line}: {}", stderr(&o));
    assert_same_tree(src, &copy);
}

#[test]
fn fewer_files_than_jobs_use_one_job_per_file_and_say_so() {
    let _lock = support::shared();
    let work = dirs(1 << 20);
    let one = work.src.join("big.bin");
    let o = pipeline(
        &work.dest,
        &one,
        &work.tmp,
        &["--jobs", "4", "--repeat", "1", "--format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["jobs"]["count"], 1, "{:#}", r["jobs"]);
    assert!(r["jobs"]["rows"].as_array().unwrap().is_empty());
    let warned = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w == "--jobs 4: the dataset has 1 file: 1 job instead of 4");
    assert!(warned, "{:#}", r["warnings"]);
}

#[test]
fn bad_job_counts_and_jobs_with_luks_are_usage_errors() {
    let _lock = support::shared();
    for bad in ["0", "17", "x"] {
        let o = output(sshtune().args(["pipeline", "--jobs", bad]));
        assert_eq!(o.status.code(), Some(2), "--jobs {bad}: {}", stderr(&o));
        let err = stderr(&o);
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.contains("'--jobs <N|auto>'") && first.contains("1 to 16, or auto"),
            "{err}"
        );
        assert!(stdout(&o).is_empty());
    }
    let o = output(sshtune().args(["pipeline", "--jobs", "2", "--luks"]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "sshtune: --jobs cannot be combined with --luks"
    );
}
