//! `sshtune probe` against real servers (OpenSSH sshd, Dropbear) and against peers that are
//! not SSH at all.

use crate::support;

use sshtune::embedded::EmbeddedSshd;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::{output, sshtune, stderr, stdout};

/// The names of the ciphers a probe report lists, in its order.
fn cipher_names(v: &serde_json::Value) -> Vec<&str> {
    v["ciphers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}
#[test]
fn probe_reads_openssh_offer_as_json() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("").unwrap();
    let port = server.port.to_string();
    let json = |flags: &[&str]| {
        let o = output(
            sshtune()
                .args(["probe", "127.0.0.1", "-p", &port])
                .args(flags),
        );
        assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let v = json(&["--format", "json"]);
    // --json is the same as --format json in every command: the same document.
    assert_eq!(json(&["--json"]), v);
    assert_eq!(v["schema"], "sshtune.probe/1");
    assert!(v["banner"]
        .as_str()
        .unwrap()
        .starts_with("SSH-2.0-OpenSSH_"));
    let names = cipher_names(&v);
    for c in [
        "aes128-ctr",
        "aes128-gcm@openssh.com",
        "chacha20-poly1305@openssh.com",
    ] {
        assert!(names.contains(&c), "{c} missing from {names:?}");
    }
    let chacha = v["ciphers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "chacha20-poly1305@openssh.com")
        .unwrap();
    assert!(chacha["grade"].is_string());
    assert!(!v["kexinit"]["kex"].as_array().unwrap().is_empty());
    assert!(!v["kexinit"]["host_key"].as_array().unwrap().is_empty());
}

#[test]
fn probe_text_output_grades_every_cipher() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("Ciphers aes128-ctr,3des-cbc\n").unwrap();
    let o = output(sshtune().args(["probe", "127.0.0.1", "-p", &server.port.to_string()]));
    let text = support::ok(&o);
    assert!(text.contains("OpenSSH"), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("aes128-ctr").contains("ok"), "{text}");
    assert!(line("3des-cbc").contains("broken"), "{text}");
    assert!(
        !text.contains("aes256-gcm"),
        "server restricted to two ciphers: {text}"
    );
}

/// Runs `probe --fail-on LEVEL` against an sshd that offers only `ciphers` and `macs`.
fn fail_on(ciphers: &str, macs: &str, level: &str) -> std::process::Output {
    let server = EmbeddedSshd::start(&format!("Ciphers {ciphers}\nMACs {macs}\n")).unwrap();
    output(sshtune().args([
        "probe",
        "127.0.0.1",
        "-p",
        &server.port.to_string(),
        "--fail-on",
        level,
    ]))
}

#[test]
fn fail_on_exits_3_naming_the_offending_algorithms_after_the_report() {
    let _lock = support::shared();
    let sha2 = "hmac-sha2-256-etm@openssh.com";
    let o = fail_on("aes128-ctr,3des-cbc", sha2, "broken");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // The report is still printed; the verdict is one line on stderr.
    assert!(stdout(&o).contains("3des-cbc"), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("3des-cbc (broken)"), "{err}");
    assert!(!err.contains("aes128-ctr") && !err.contains(sha2), "{err}");

    // CBC is weak, not broken: only the stricter level fails on it.
    let o = fail_on("aes128-ctr,aes128-cbc", sha2, "broken");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = fail_on("aes128-ctr,aes128-cbc", sha2, "weak");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("aes128-cbc (weak)"), "{}", stderr(&o));

    // MACs count too.
    let o = fail_on("aes128-ctr", &format!("{sha2},hmac-md5"), "broken");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("hmac-md5 (broken)"), "{}", stderr(&o));
}

#[test]
fn a_probe_that_cannot_run_is_an_error_not_a_policy_failure() {
    let _lock = support::shared();
    let port = support::free_port();
    let o = output(sshtune().args([
        "probe",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "--fail-on",
        "weak",
    ]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = output(sshtune().args(["probe", "h", "--fail-on", "bad"]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn probe_reads_dropbear() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("host_ed25519");
    let ok = Command::new("dropbearkey")
        .args(["-t", "ed25519", "-f"])
        .arg(&key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("dropbearkey is installed (scripts/setup installs dropbear-bin)");
    assert!(ok.success());
    let port = support::free_port();
    let mut child = Command::new("dropbear")
        .args(["-F", "-E", "-s", "-p", &format!("127.0.0.1:{port}"), "-r"])
        .arg(&key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("dropbear is installed");
    let mut result = None;
    for _ in 0..100 {
        let o = output(sshtune().args(["probe", "127.0.0.1", "-p", &port.to_string(), "--json"]));
        if o.status.success() {
            result = Some(stdout(&o));
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let v: serde_json::Value =
        serde_json::from_str(&result.expect("dropbear answered a probe")).unwrap();
    assert!(
        v["software"].as_str().unwrap().starts_with("dropbear"),
        "{v}"
    );
    let names = cipher_names(&v);
    assert!(names.contains(&"aes128-ctr"), "{names:?}");
}

/// A one-connection TCP peer that behaves badly in a chosen way.
fn bad_peer(behaviour: fn(std::net::TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            behaviour(s);
        }
    });
    port
}

fn probe_fails(port: u16, expect: &str) {
    let o = output(sshtune().args([
        "probe",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "--timeout",
        "2",
    ]));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(expect), "expected {expect:?} in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn probe_rejects_a_peer_that_is_not_ssh() {
    let _lock = support::shared();
    let port = bad_peer(|mut s| {
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    probe_fails(port, "not an SSH server");
}

#[test]
fn probe_times_out_on_a_silent_peer() {
    let _lock = support::shared();
    let port = bad_peer(|mut s| {
        let mut buf = [0u8; 64];
        let _ = s.read(&mut buf);
        std::thread::sleep(Duration::from_secs(6));
    });
    probe_fails(port, "timeout");
}

#[test]
fn probe_reports_a_peer_that_closes_early() {
    let _lock = support::shared();
    let port = bad_peer(drop);
    probe_fails(port, "closed");
}

#[test]
fn probe_rejects_oversized_packet_lengths() {
    let _lock = support::shared();
    let port = bad_peer(|mut s| {
        let _ = s.write_all(b"SSH-2.0-evil\r\n\xff\xff\xff\xf0garbage");
        std::thread::sleep(Duration::from_millis(500));
    });
    probe_fails(port, "invalid packet length");
}

#[test]
fn probe_reports_refused_connections_and_unknown_hosts() {
    let _lock = support::shared();
    let port = support::free_port();
    probe_fails(port, "Connection refused");
    let o = output(sshtune().args(["probe", "no-such-host.invalid", "--timeout", "2"]));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("resolve"), "{}", stderr(&o));
}

#[test]
fn a_saved_probe_is_rendered_again_in_every_format_and_not_compared() {
    let _lock = support::shared();
    let server = EmbeddedSshd::start("Ciphers aes128-ctr,chacha20-poly1305@openssh.com\n").unwrap();
    let saved = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    let saved = saved.path();
    let o = output(
        sshtune()
            .args(["probe", "127.0.0.1", "-p", &server.port.to_string()])
            .arg("--output")
            .arg(saved),
    );
    let live = support::ok(&o);
    assert!(live.contains("chacha20-poly1305@openssh.com"), "{live}");
    let report = |format: &str| {
        let o = output(
            sshtune()
                .arg("report")
                .arg(saved)
                .args(["--format", format]),
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(
        report("table"),
        live,
        "the saved probe reads as the live one"
    );
    let again: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let first = support::read_json(saved);
    assert_eq!(again, first, "JSON survives a round trip unchanged");
    assert!(report("csv").contains("cipher,aes128-ctr,ok,"));
    assert!(report("markdown").contains("| `aes128-ctr` | ok |"));
    assert!(report("html").contains("<td>chacha20-poly1305@openssh.com</td>"));
    let o = output(sshtune().arg("report").arg(saved).arg(saved));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not compared"), "{}", stderr(&o));
}
