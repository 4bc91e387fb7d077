//! `sshtune bench --engine native|both` end to end, with the in-process native server.

use crate::support;

use support::{output, sshtune, sshtune_with, stderr};

#[test]
fn native_engine_embedded_rows_include_legacy() {
    let _lock = support::shared();
    let o = output(
        sshtune_with("bench --engine native --size 2M --repeat 2 --warmup 0 --format json --quiet")
            .args([
                "--ciphers",
                "aes128-gcm@openssh.com,aes128-ctr,arcfour256,blowfish-cbc",
            ]),
    );
    let v = support::ok_json(&o);
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        assert_eq!(r["engine"], "native");
        assert!(r["error"].is_null(), "{r}");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        assert!(r["server_cpu_pct"].as_f64().is_some(), "{r}");
        assert!(r["client_cpu_pct"].as_f64().is_some(), "{r}");
        // The native client's clock is split: its user part is part of the whole.
        let (all, user) = (
            r["client_cpu_pct"].as_f64().unwrap(),
            r["client_user_cpu_pct"].as_f64().unwrap(),
        );
        assert!((0.0..=all + 1e-6).contains(&user), "{r}");
        // Native uploads carry the sender's CPU per byte against sealing alone; others none.
        let overhead = r["transport_overhead"]["ratio"].as_f64();
        match r["direction"].as_str() {
            Some("upload") => {
                assert!(overhead.is_some_and(|x| x > 0.0), "{r}");
                // Counting fewer seconds can only make the sender look cheaper.
                if let Some(u) = r["transport_overhead"]["user_ratio"].as_f64() {
                    assert!(u > 0.0 && u <= overhead.unwrap() + 1e-9, "{r}");
                }
                // The embedded server is on this machine: the plain loopback socket's send
                // is measured, and adding its cost can only bring the ratio down.
                let beyond = r["transport_overhead"]["beyond_socket_ratio"].as_f64();
                assert!(
                    beyond.is_some_and(|b| b > 0.0 && b <= overhead.unwrap() + 1e-9),
                    "{r}"
                );
                assert!(r["transport_overhead"]["socket_mib_per_cpu_s"].as_f64() > Some(0.0));
            }
            _ => assert!(r.get("transport_overhead").is_none(), "{r}"),
        }
        assert_placed(&v["settings"]["placement"][0], r);
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

/// Every sample says where our client's thread and the in-process server's session thread
/// ran; in a pinned run, on the CPUs the run's placement names.
fn assert_placed(placement: &serde_json::Value, row: &serde_json::Value) {
    assert_eq!(placement["engine"], "native", "{placement}");
    let places = row["sample_placement"].as_array().unwrap();
    assert_eq!(places.len(), 2, "{row}");
    for p in places {
        assert!(p["ssh_cpu"].is_u64() && p["sshd_cpu"].is_u64(), "{p}");
        assert_eq!(p["ssh_cpu"], p["feeder_cpu"], "{p}");
        if placement["pinned"] == true {
            assert_eq!(p["ssh_cpu"], placement["client_cpu"], "{p} {placement}");
            assert_eq!(p["sshd_cpu"], placement["server_cpu"], "{p} {placement}");
            assert_eq!(p["ssh_sshd_shared"], 0.0, "{p}");
        } else {
            assert!(placement["note"]
                .as_str()
                .unwrap()
                .starts_with("not pinned"));
        }
    }
}

/// The JSON report of a quick aes128-ctr bench (2 MiB) on the embedded server with `engine`
/// and `extra` arguments; the run must succeed.
fn quick_json(engine: &str, extra: &[&str]) -> serde_json::Value {
    let o = output(
        sshtune()
            .args(["bench", "--engine", engine])
            .args(support::quick_bench("aes128-ctr", "2M"))
            .args(extra)
            .args(["--format", "json", "--quiet"]),
    );
    support::ok_json(&o)
}

#[test]
fn both_engines_side_by_side() {
    let _lock = support::shared();
    let v = quick_json(
        "both",
        &["--macs", "hmac-sha2-256", "--direction", "upload"],
    );
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
    let _lock = support::shared();
    let v = quick_json("native", &["--packet-size", "16K", "--window", "1M"]);
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

/// A loopback listener that speaks just enough SSH to hear a client's KEXINIT: it sends its
/// version line and a KEXINIT offering every name we know, records what the client offers and
/// hangs up.
fn kexinit_recorder() -> (
    u16,
    std::sync::mpsc::Receiver<sshtune::wire::kexinit::KexInit<'static>>,
) {
    use sshtune::wire::{ident, kexinit::KexInit, numbers as msg, plain};
    use std::io::Write as _;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    let names = |v: Vec<&str>| v.into_iter().collect::<sshtune::wire::codec::NameList>();
    let all_ciphers = names(ciphers::CIPHERS.iter().map(|c| c.name).collect());
    let all_macs = names(ciphers::MACS.iter().map(|m| m.name).collect());
    let ours = KexInit {
        cookie: [0; 16],
        kex: names(vec!["curve25519-sha256"]),
        host_key: names(vec!["ssh-ed25519"]),
        ciphers_c2s: all_ciphers.clone(),
        ciphers_s2c: all_ciphers,
        macs_c2s: all_macs.clone(),
        macs_s2c: all_macs,
        compression_c2s: names(vec!["none"]),
        compression_s2c: names(vec!["none"]),
        languages_c2s: Default::default(),
        languages_s2c: Default::default(),
        first_kex_follows: false,
    };
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
            let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2 recorder\r\n");
            let _ = plain::write_packet(&mut s, &ours.encode());
            let mut r = std::io::BufReader::new(s.try_clone().unwrap());
            if ident::read_ident(&mut r).is_err() {
                continue;
            }
            while let Ok(p) = plain::read_packet(&mut r) {
                if p.first() == Some(&msg::KEXINIT) {
                    let _ = tx.send(KexInit::decode(&p).unwrap().into_owned());
                    break;
                }
            }
        }
    });
    (port, rx)
}

fn assert_only_ok_graded(k: &sshtune::wire::kexinit::KexInit, what: &str) {
    for c in k.ciphers_c2s.iter().chain(k.ciphers_s2c.iter()) {
        let spec = ciphers::cipher(c).unwrap();
        assert!(
            !spec.legacy && spec.grade == ciphers::Grade::Ok,
            "{what} offered {c}"
        );
    }
    for m in k.macs_c2s.iter().chain(k.macs_s2c.iter()) {
        assert_eq!(
            ciphers::mac(m).unwrap().grade,
            ciphers::Grade::Ok,
            "{what} offered {m}"
        );
    }
}

/// Regression: on a remote host the native client logged in offering every legacy cipher,
/// `none` and the broken MACs, and each AEAD transfer offered every MAC.
#[test]
fn native_client_offers_only_what_the_run_asks_for() {
    let _lock = support::shared();
    use sshtune::bench::executor::{Executor, Job};
    use sshtune::bench::model::Direction;
    use sshtune::bench::native::{NativeEngine, Peer};
    let (port, rx) = kexinit_recorder();
    let dir = tempfile::tempdir().unwrap();
    let key = support::keygen(&dir.path().join("id"));
    // The preflight of `bench --engine native HOST`: it fails (the recorder hangs up), after
    // offering.
    let o = output(
        sshtune()
            .args(support::native::BENCH_LOCALHOST)
            .args([
                "-p",
                &port.to_string(),
                "-o",
                "UserKnownHostsFile=/dev/null",
            ])
            .arg("-i")
            .arg(&key)
            .args(["--ciphers", "3des-cbc", "--quiet"]),
    );
    assert!(!o.status.success());
    let k = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the preflight's KEXINIT");
    assert!(!k.ciphers_c2s.is_empty());
    assert_only_ok_graded(&k, "the preflight");
    // Each transfer offers its own cipher and MAC only; an AEAD one the ok-graded MACs.
    let cfg = sshtune::transport::client::ClientConfig {
        user: "nobody".into(),
        key: std::sync::Arc::new(sshtune::transport::hostkey::Ed25519Key::generate().unwrap()),
        known_hosts: dir.path().join("known_hosts"),
        prefs: sshtune::transport::kex::Preferences::from_catalog(true),
        opts: Default::default(),
        window: 1 << 20,
        packet_size: 32768,
        connect_timeout: std::time::Duration::from_secs(10),
    };
    let mut n = NativeEngine::new("127.0.0.1".into(), port, cfg, Peer::Shell);
    for (cipher, mac) in [
        ("aes128-ctr", Some("hmac-sha2-256")),
        ("arcfour256", Some("hmac-md5")),
        ("aes128-gcm@openssh.com", None),
    ] {
        let job = Job {
            cipher,
            mac,
            direction: Direction::Upload,
            bytes: 1 << 20,
        };
        assert!(n.transfer(&job).is_err());
        let k = rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
        assert_eq!(k.ciphers_c2s.as_str(), cipher);
        assert_eq!(k.ciphers_s2c.as_str(), cipher);
        match mac {
            Some(m) => assert_eq!(k.macs_c2s.as_str(), m, "{cipher}"),
            None => assert_only_ok_graded(&k, cipher),
        }
    }
}

/// Every transfer of one (cipher, MAC) pair runs in a channel of its own on one connection;
/// the next pair logs in again, and a connection the server closed while it sat idle is
/// replaced by a new login, not reported as a failed transfer.
#[test]
fn native_engine_runs_a_pairs_transfers_on_one_connection() {
    let _lock = support::shared();
    use sshtune::bench::executor::{Executor, Job};
    use sshtune::bench::model::Direction;
    use sshtune::bench::native::{NativeEngine, Peer};
    let s = support::native::start_serve(&["--idle-timeout", "1"]);
    let cfg = s.client_cfg(sshtune::transport::kex::Preferences::recommended());
    let mut n = NativeEngine::new("127.0.0.1".into(), s.port, cfg, Peer::Sshtune);
    let job = |cipher, direction| Job {
        cipher,
        mac: None,
        direction,
        bytes: 4 << 20,
    };
    let gcm = "aes128-gcm@openssh.com";
    let chacha = "chacha20-poly1305@openssh.com";
    for j in [
        job(gcm, Direction::Upload),
        job(gcm, Direction::Upload),
        job(gcm, Direction::Download),
        job(chacha, Direction::Upload),
    ] {
        let sample = n.transfer(&j).unwrap();
        assert_eq!(sample.bytes, 4 << 20);
    }
    // The chacha20 connection is left idle past the server's timeout, which closes it.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    n.transfer(&job(chacha, Direction::Download)).unwrap();
    drop(n);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let log = s.log();
    let sessions: Vec<&str> = log.lines().filter(|l| l.contains(" rekeys: ")).collect();
    let gcm_lines: Vec<&&str> = sessions
        .iter()
        .filter(|l| l.contains("aes128-gcm"))
        .collect();
    assert_eq!(gcm_lines.len(), 1, "{log}");
    // serve folds repeated events of a connection into one entry with a count.
    assert!(gcm_lines[0].contains("\"sink\" exit 0 (2 times)"), "{log}");
    assert_eq!(
        gcm_lines[0].matches("\"source 4194304\" exit 0").count(),
        1,
        "{log}"
    );
    assert!(log.contains("(idle timeout)"), "{log}");
    let chacha_source = sessions
        .iter()
        .filter(|l| l.contains("chacha20") && l.contains("\"source 4194304\" exit 0"))
        .count();
    assert_eq!(chacha_source, 1, "{log}");
}
