//! `sshtune speed` end to end through the real binary: the JSON shape, filters and errors.
//! Numbers are not asserted (speed goals live in benchmarks); only that they exist.

use crate::support;
use serde_json::Value;
use std::process::Command;
use support::{ok, output, sshtune, sshtune_with};

/// `sshtune speed` timing samples of `min_time` CPU seconds, with the arguments of `line`.
fn speed(min_time: &str, line: &str) -> Command {
    let mut c = sshtune_with(line);
    c.args(["--min-time", min_time]);
    c
}

#[test]
fn json_report_has_one_row_per_subject_and_backend() {
    let _lock = support::shared();
    let out = ok(&output(&mut speed(
        "0.05",
        "speed --format json --ciphers aes128-ctr,chacha20-poly1305@openssh.com \
         --macs hmac-sha2-256 --quiet",
    )));
    let v: Value = serde_json::from_str(&out).expect("stdout is JSON");
    assert_eq!(v["schema"], "sshtune.speed/1");
    assert_eq!(v["settings"]["packet_bytes"], 32768);
    assert_eq!(v["settings"]["samples"], 3);
    assert_eq!(
        v["settings"]["crypto"],
        serde_json::json!(["openssl", "rust"])
    );
    let openssl = v["openssl"]["available"].as_bool().unwrap();
    let rows = v["rows"].as_array().unwrap();
    // 2 ciphers + 1 MAC + 1 pair (aes128-ctr + the MAC; the AEAD takes no MAC), two backends.
    assert_eq!(rows.len(), 8, "{rows:#?}");
    let kinds: Vec<&str> = rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "cipher").count(), 4);
    assert_eq!(kinds.iter().filter(|k| **k == "mac").count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == "pair").count(), 2);
    for r in rows {
        assert!(r["error"].is_null(), "{r}");
        let samples = r["samples_mib_s"].as_array().unwrap();
        // --min-time below the 0.1 s start: samples last it and are never lengthened.
        assert_eq!(samples.len(), 3);
        let secs = r["sample_cpu_s"].as_array().unwrap();
        assert_eq!(secs.len(), 3, "{r}");
        assert!(secs.iter().all(|s| s.as_f64().unwrap() >= 0.05), "{r}");
        assert!(samples.iter().all(|s| s.as_f64().unwrap() > 0.0));
        let (lo, med, hi) = support::spread(r);
        assert!(lo <= med && med <= hi, "{r}");
        assert!(r["default_backend"].is_boolean());
        match r["kind"].as_str().unwrap() {
            "pair" => {
                assert_eq!(r["cipher"], "aes128-ctr");
                assert_eq!(r["mac"], "hmac-sha2-256");
                assert!(r["reference"].is_null());
                assert!(r["reference_note"].is_string());
            }
            _ if openssl => {
                assert!(r["reference"]["command"]
                    .as_str()
                    .unwrap()
                    .starts_with("openssl speed"));
                assert!(r["reference"]["median_mib_s"].as_f64().unwrap() > 0.0);
                assert!(r["ratio"].as_f64().unwrap() > 0.0);
            }
            _ => assert!(r["reference_note"].is_string()),
        }
    }
    // Exactly one default backend per cipher row pair.
    for c in ["aes128-ctr", "chacha20-poly1305@openssh.com"] {
        let defaults = rows
            .iter()
            .filter(|r| r["kind"] == "cipher" && r["cipher"] == c && r["default_backend"] == true)
            .count();
        assert_eq!(defaults, 1, "{c}");
    }
}

#[test]
fn csv_to_a_file_with_one_backend() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("speed.csv");
    ok(&output(
        speed(
            "0.02",
            "speed --rows cipher --ciphers arcfour256 --crypto rust --no-reference --format csv -q",
        )
        .arg("--output")
        .arg(&path),
    ));
    let text = support::read_text(&path);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("kind,cipher,mac,grade,backend"));
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[1].starts_with("cipher,arcfour256,,broken,rust,"));
}

#[test]
fn unknown_cipher_is_a_one_line_error() {
    let _lock = support::shared();
    let out = output(sshtune().args(["speed", "--ciphers", "rot13-cbc", "-q"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("unknown cipher \"rot13-cbc\""), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn without_openssl_the_report_says_so() {
    let _lock = support::shared();
    // An empty PATH hides the openssl command; the measurement itself needs nothing from it.
    let empty = tempfile::tempdir().unwrap();
    let text = ok(&output(
        speed(
            "0.02",
            "speed --rows cipher --ciphers aes128-ctr --crypto openssl -q",
        )
        .env("PATH", empty.path()),
    ));
    assert!(text.contains("openssl is not installed"), "{text}");
    assert!(text.contains("aes128-ctr"), "{text}");
}

#[test]
fn markdown_rows_for_a_mac() {
    let _lock = support::shared();
    let out = ok(&output(&mut speed(
        "0.02",
        "speed --rows mac --macs umac-64@openssh.com --no-reference --format markdown -q",
    )));
    let text = support::squeeze(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("| kind | algorithm |"), "{text}");
    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with("| mac |")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.contains("umac-64@openssh.com")));
    assert!(text.contains("--no-reference"), "{text}");
}

#[test]
fn an_unwritable_output_fails_before_measuring_and_leaves_nothing() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone/speed.json");
    let out = output(sshtune().args(["speed", "-q", "--output", missing.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(sshtune::exit::OUTPUT as i32));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--output") && err.contains("cannot be created"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
