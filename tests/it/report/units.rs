//! `--units`: tables show rates in Mbit/s or MB/s when asked; the JSON keeps MiB/s.

use crate::support::{self, ok, output, repo_root, sshtune};
use serde_json::Value;

fn example() -> (String, Value) {
    let p = repo_root().join("examples/reports/bench.json");
    let text = std::fs::read_to_string(&p).expect("example");
    (
        p.to_string_lossy().into_owned(),
        serde_json::from_str(&text).expect("JSON"),
    )
}

#[test]
fn tables_convert_and_json_keeps_mib_per_second() {
    let _lock = crate::support::shared();
    let (path, saved) = example();
    let first = &saved["results"][0];
    let mib_s = first["median_mib_s"].as_f64().expect("a median");
    for (unit, factor) in [("Mbit/s", 8.388608), ("MB/s", 1.048576), ("MiB/s", 1.0)] {
        let table = ok(&output(sshtune().args(["report", &path, "--units", unit])));
        assert!(table.contains(&format!("up {unit}")), "{table}");
        assert!(
            table.contains(&format!("{:.1} (", mib_s * factor)),
            "{unit}: {:.1} expected:\n{table}",
            mib_s * factor
        );
        let md =
            ok(&output(sshtune().args([
                "report", &path, "--units", unit, "--format", "markdown",
            ])));
        assert!(
            support::squeeze(&md).contains(&format!("| up {unit} |")),
            "{md}"
        );
        let json =
            ok(&output(sshtune().args([
                "report", &path, "--units", unit, "--format", "json",
            ])));
        let again: Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(again["results"][0]["median_mib_s"], first["median_mib_s"]);
    }
    let bad = output(sshtune().args(["report", &path, "--units", "furlongs"]));
    assert_eq!(bad.status.code(), Some(2));
}
