//! `--threads 2`: the keystream helper must not change a byte on the wire. Against OpenSSH's
//! sshd the uploaded bytes are hashed on the far side; against `sshtune serve --threads 2`
//! both directions are sealed with helpers and opened by the other end's single-thread code.
//! Rekeying mid-transfer replaces the helpers, so it is part of every case.

use crate::support;
use crate::support::native::start_serve;
use sshtune::embedded::EmbeddedSshd;
use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::conn::Options;
use sshtune::transport::hostkey::Ed25519Key;
use sshtune::transport::kex::Preferences;
use std::sync::Arc;
use std::time::Duration;

/// The ciphers with a keystream to compute ahead, with a MAC for the one that needs it.
const CASES: &[(&str, Option<&str>)] = &[
    ("chacha20-poly1305@openssh.com", None),
    ("aes128-ctr", Some("umac-64-etm@openssh.com")),
];

fn prefs(cipher: &str, mac: Option<&str>) -> Preferences {
    Preferences {
        ciphers: vec![cipher.into()],
        macs: mac.into_iter().map(String::from).collect(),
    }
}

fn threaded() -> Options {
    Options {
        threads: 2,
        rekey_bytes: Some(2 << 20),
        ..Options::default()
    }
}

fn random(len: usize) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut v = vec![0u8; len];
    rand::rngs::SmallRng::seed_from_u64(len as u64).fill_bytes(&mut v);
    v
}

fn sha256_hex(data: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn threads_2_upload_to_openssh_arrives_intact() {
    let _lock = support::shared();
    let sshd = EmbeddedSshd::start("").unwrap();
    let user = support::user_name();
    // Odd sizes cross the helper's chunks and packet boundaries.
    let data = random((5 << 20) + 777);
    for (cipher, mac) in CASES {
        let cfg = ClientConfig {
            user: user.clone(),
            key: Arc::new(Ed25519Key::load(&sshd.dir().join("client_ed25519")).unwrap()),
            known_hosts: sshd.dir().join("known_hosts"),
            prefs: prefs(cipher, *mac),
            opts: threaded(),
            window: 8 << 20,
            packet_size: 32768,
            connect_timeout: Duration::from_secs(10),
        };
        let t = connect("127.0.0.1", sshd.port, &cfg).unwrap();
        let mut e = Exec::start(t, "sha256sum", cfg.window, cfg.packet_size).unwrap();
        for part in data.chunks(1_000_003) {
            e.write_all(part).unwrap();
        }
        e.send_eof().unwrap();
        let line = e.read_line().unwrap().unwrap();
        let (status, t) = e.finish().unwrap();
        assert_eq!(status, Some(0), "{cipher}");
        assert_eq!(
            line.split_whitespace().next(),
            Some(sha256_hex(&data).as_str()),
            "{cipher}: the bytes sshd received differ"
        );
        assert!(t.rekeys >= 2, "{cipher}: {} rekeys", t.rekeys);
        assert!(
            t.helper_cpu_seconds() > 0.0,
            "{cipher}: the helper's CPU is counted"
        );
    }
}

#[test]
fn threads_2_both_ways_with_sshtune_serve() {
    let _lock = support::shared();
    let serve = start_serve(&["--threads", "2", "--rekey-limit", "2M"]);
    // For CTR, hmac-sha2-256 is encrypt-and-MAC: its MAC covers the plaintext, so a wrong
    // keystream byte in either direction fails the receiver's check.
    let cases = [
        ("chacha20-poly1305@openssh.com", None),
        ("aes128-ctr", Some("hmac-sha2-256")),
    ];
    let data = random((5 << 20) + 4321);
    for (cipher, mac) in cases {
        let mut cfg = serve.client_cfg(prefs(cipher, mac));
        cfg.opts = threaded();
        let t = connect("127.0.0.1", serve.port, &cfg).unwrap();
        let mut e = Exec::start(t, "sink", cfg.window, cfg.packet_size).unwrap();
        assert!(e.read_line().unwrap().unwrap().starts_with("SSHTUNE-READY"));
        e.write_all(&data).unwrap();
        e.send_eof().unwrap();
        let done = e.read_line().unwrap().unwrap();
        assert!(done.contains(&format!("bytes={} ", data.len())), "{done}");
        let (status, t) = e.finish().unwrap();
        assert_eq!(status, Some(0));
        assert!(t.rekeys >= 2, "{cipher}: {} rekeys", t.rekeys);

        let t = connect("127.0.0.1", serve.port, &cfg).unwrap();
        let mut e = Exec::start(t, "source 6000001", cfg.window, cfg.packet_size).unwrap();
        assert!(e.read_line().unwrap().unwrap().starts_with("SSHTUNE-READY"));
        e.drain(6_000_001).unwrap();
        let done = e.read_line().unwrap().unwrap();
        assert!(done.starts_with("SSHTUNE-DONE rc=0"), "{cipher}: {done}");
        assert_eq!(e.finish().unwrap().0, Some(0));
    }
}
