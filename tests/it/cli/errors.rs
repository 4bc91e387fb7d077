//! One mistake, one status and one message, whatever command it is made in; with a JSON
//! format the failure is JSON on stdout too.

use crate::support::{output, sshtune, stderr, stdout};

#[test]
fn not_a_report_is_a_usage_error_in_report_and_config() {
    let _lock = crate::support::shared();
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, "garbage\n").unwrap();
    let report = output(sshtune().arg("report").arg(&garbage));
    let config = output(sshtune().args(["config", "--from"]).arg(&garbage));
    assert_eq!(report.status.code(), Some(2), "{}", stderr(&report));
    assert_eq!(config.status.code(), Some(2), "{}", stderr(&config));
}

#[test]
fn a_json_format_prints_the_failure_as_json_with_the_same_status() {
    let _lock = crate::support::shared();
    let o = output(sshtune().args(["report", "--format", "json", "/nonexistent/run.json"]));
    let v: serde_json::Value =
        serde_json::from_str(stdout(&o).trim()).unwrap_or_else(|e| panic!("{e}: {:?}", stdout(&o)));
    assert_eq!(v["status"].as_i64(), o.status.code().map(i64::from), "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/run.json"),
        "{v}"
    );
    assert!(stderr(&o).contains("/nonexistent/run.json"));
    let table = output(sshtune().args(["report", "/nonexistent/run.json"]));
    assert!(stdout(&table).is_empty());
    assert_eq!(table.status.code(), o.status.code());
}

#[test]
fn an_unwritable_export_names_its_own_flag() {
    let _lock = crate::support::shared();
    let report = crate::support::repo_root().join("examples/reports/bench.json");
    let o = output(sshtune().args(["report", "--export-csv", "/"]).arg(report));
    assert_eq!(o.status.code(), Some(4));
    assert!(
        stderr(&o).contains("--export-csv / is a directory"),
        "{}",
        stderr(&o)
    );
}
