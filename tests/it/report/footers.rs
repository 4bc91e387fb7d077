//! What the bench table says under itself matches the run: the samples each row has, the advice
//! that applies to how it was sized, the legends of the grade and verdict columns, and one grade
//! for a cipher+MAC pair however the report was written.

use crate::support::{ok, output, repo_root, sshtune};
use serde_json::Value;

fn example() -> Value {
    let p = repo_root().join("examples/reports/bench.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("example")).expect("JSON")
}

fn table_of(report: &Value) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("run.json");
    std::fs::write(&path, report.to_string()).expect("write");
    let out = ok(&output(sshtune().arg("report").arg(&path)));
    unwrapped(&out)
}

/// The text with lines joined: footers wrap at the table's width.
fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_footer_counts_the_samples_of_the_committed_example() {
    let _lock = crate::support::shared();
    let report = example();
    let counts: Vec<usize> = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["samples"].as_array().expect("samples").len())
        .collect();
    let n = counts[0];
    assert!(counts.iter().all(|&c| c == n), "{counts:?}");
    let out = table_of(&report);
    assert!(
        out.contains(&format!("of {n} samples per direction")),
        "{out}"
    );
    // A fixed --size run: the advice to lengthen transfers applies as written.
    assert!(
        out.contains("use a larger --size or the adaptive default"),
        "{out}"
    );
    assert!(out.contains("grade: ok = recommended"), "{out}");
    assert!(out.contains("verdict: what bounds the row"), "{out}");
}

#[test]
fn an_adaptive_run_with_uneven_rows_says_so() {
    let _lock = crate::support::shared();
    let mut report = example();
    report["settings"]["fixed_size_bytes"] = Value::Null;
    report["settings"]["mode"] = "adaptive".into();
    for (i, r) in report["results"]
        .as_array_mut()
        .expect("results")
        .iter_mut()
        .enumerate()
    {
        let keep = if i % 2 == 0 { 2 } else { 3 };
        r["samples"].as_array_mut().expect("samples").truncate(keep);
    }
    let out = table_of(&report);
    assert!(
        out.contains("of 2–3 samples per row and direction"),
        "{out}"
    );
    assert!(!out.contains("samples per direction after"), "{out}");
    assert!(!out.contains("the adaptive default"), "{out}");
    assert!(out.contains("--thorough takes longer samples"), "{out}");
}

#[test]
fn a_cipher_mac_pair_takes_the_weaker_grade_in_every_format() {
    let _lock = crate::support::shared();
    let report = example();
    // The example was written when the pair carried its cipher's grade.
    let stored: Vec<&str> = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["mac"] == "umac-64-etm@openssh.com")
        .map(|r| r["grade"].as_str().expect("grade"))
        .collect();
    assert!(!stored.is_empty());
    let path = repo_root().join("examples/reports/bench.json");
    let json = ok(&output(
        sshtune()
            .arg("report")
            .arg(&path)
            .args(["--format", "json"]),
    ));
    let rerendered: Value = serde_json::from_str(&json).expect("JSON");
    for r in rerendered["results"].as_array().expect("results") {
        let want = match r["mac"].as_str() {
            // umac-64-etm is graded weak (a 64-bit tag), as `probe` lists it.
            Some("umac-64-etm@openssh.com") => "weak",
            _ => "ok",
        };
        assert_eq!(r["grade"], want, "{r}");
    }
    let table = ok(&output(sshtune().arg("report").arg(&path)));
    for line in table
        .lines()
        .filter(|l| l.contains("aes128-ctr+umac-64-etm "))
    {
        assert!(line.contains(" weak "), "{line}");
    }
}

#[test]
fn every_table_with_grades_has_their_legend() {
    let _lock = crate::support::shared();
    for (example, format) in [
        ("speed.json", "table"),
        ("speed.json", "markdown"),
        ("bench.json", "markdown"),
    ] {
        let path = repo_root().join("examples/reports").join(example);
        let out = ok(&output(
            sshtune()
                .arg("report")
                .arg(&path)
                .args(["--format", format]),
        ));
        assert!(
            unwrapped(&out).contains("grade: ok = recommended; weak = allowed"),
            "{example} {format}:\n{out}"
        );
    }
}
