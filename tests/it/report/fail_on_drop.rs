//! `report OLD NEW --fail-on-drop PCT` on the committed examples: the same loopback bench free
//! (`bench.json`) and with the client held to 0.2 of a core (`bench-cpu-quota.json`).

use crate::support::{output, repo_root, sshtune, stderr};

fn example(name: &str) -> String {
    let p = repo_root().join("examples/reports").join(name);
    p.to_string_lossy().into_owned()
}

/// `report OLD NEW --fail-on-drop PCT` on two examples.
fn compare(old: &str, new: &str, pct: &str) -> std::process::Output {
    output(sshtune().args([
        "report",
        &example(old),
        &example(new),
        "--fail-on-drop",
        pct,
    ]))
}

#[test]
fn a_significant_drop_past_the_threshold_exits_3_naming_the_rows() {
    let _lock = crate::support::shared();
    let o = compare("bench.json", "bench-cpu-quota.json", "10%");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    // The quota cut every OpenSSH upload by more than half, apart from the noise.
    for row in [
        "openssh aes128-gcm@openssh.com (aead) upload",
        "openssh chacha20-poly1305@openssh.com (aead) upload",
    ] {
        assert!(err.contains(row), "{row} missing: {err}");
    }
    // Inside the noise: a drop whose sample ranges overlap is not listed.
    assert!(
        !err.contains("aes128-gcm@openssh.com (aead) download"),
        "{err}"
    );
    assert!(!o.stdout.is_empty(), "the comparison is still printed");
}

#[test]
fn a_rise_or_a_high_threshold_passes() {
    let _lock = crate::support::shared();
    let free_after_quota = compare("bench-cpu-quota.json", "bench.json", "10%");
    assert_eq!(
        free_after_quota.status.code(),
        Some(0),
        "{}",
        stderr(&free_after_quota)
    );
    let high = compare("bench.json", "bench-cpu-quota.json", "90%");
    assert_eq!(high.status.code(), Some(0), "{}", stderr(&high));
}

#[test]
fn one_report_or_a_bad_threshold_is_a_usage_error() {
    let _lock = crate::support::shared();
    let one = output(sshtune().args(["report", &example("bench.json"), "--fail-on-drop", "10%"]));
    assert_eq!(one.status.code(), Some(2), "{}", stderr(&one));
    assert!(stderr(&one).contains("--fail-on-drop compares runs"));
    let bad = compare("bench.json", "bench-cpu-quota.json", "lots");
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}
