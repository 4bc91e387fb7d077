//! `sshtune bench --engine native|both` end to end, with the in-process native server.

mod support;

use support::{output, sshtune, stderr, stdout};

#[test]
fn native_engine_embedded_rows_include_legacy() {
    let o = output(sshtune().args([
        "bench",
        "--engine",
        "native",
        "--size",
        "2M",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--ciphers",
        "aes128-gcm@openssh.com,aes128-ctr,arcfour256,blowfish-cbc",
        "--format",
        "json",
        "--quiet",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        assert_eq!(r["engine"], "native");
        assert!(r["error"].is_null(), "{r}");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        assert!(r["server_cpu_pct"].as_f64().is_some(), "{r}");
        assert!(r["client_cpu_pct"].as_f64().is_some(), "{r}");
    }
    let grade = |c: &str| {
        rows.iter()
            .find(|r| r["cipher"] == c)
            .map(|r| r["grade"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(grade("arcfour256"), "broken");
    assert_eq!(v["settings"]["engines"][0], "native");
}

#[test]
fn both_engines_side_by_side() {
    let o = output(sshtune().args([
        "bench",
        "--engine",
        "both",
        "--size",
        "2M",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--ciphers",
        "aes128-ctr",
        "--macs",
        "hmac-sha2-256",
        "--direction",
        "upload",
        "--format",
        "json",
        "--quiet",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let engines: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["openssh", "native"]);
}

#[test]
fn packet_size_and_window_are_options_recorded_in_the_json() {
    let o = output(sshtune().args([
        "bench",
        "--engine",
        "native",
        "--ciphers",
        "aes128-ctr",
        "--size",
        "2M",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--packet-size",
        "16K",
        "--window",
        "1M",
        "--format",
        "json",
        "--quiet",
    ]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["settings"]["native_packet_bytes"], 16384);
    assert_eq!(v["settings"]["native_window_bytes"], 1 << 20);
    assert!(v["results"][0]["error"].is_null(), "{}", v["results"][0]);
    let o = output(sshtune().args(["bench", "--engine", "native", "--packet-size", "300K"]));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--packet-size must be between"),
        "{}",
        stderr(&o)
    );
}
