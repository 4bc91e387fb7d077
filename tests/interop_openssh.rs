//! The native client against a real OpenSSH sshd, and the real OpenSSH `ssh` client against
//! `sshtune serve`: every cipher this OpenSSH offers, several MACs, host keys checked.

use sshtune::bench::remote;
use sshtune::embedded::EmbeddedSshd;
use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::hostkey::Ed25519Key;
use sshtune::transport::kex::Preferences;
use std::sync::Arc;
use std::time::Duration;

fn client_for(sshd: &EmbeddedSshd, cipher: &str, mac: Option<&str>) -> ClientConfig {
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name;
    ClientConfig {
        user,
        key: Arc::new(Ed25519Key::load(&sshd.dir().join("client_ed25519")).unwrap()),
        known_hosts: sshd.dir().join("known_hosts"),
        prefs: Preferences {
            ciphers: vec![cipher.into()],
            macs: mac.into_iter().map(String::from).collect(),
        },
        opts: Default::default(),
        window: 8 << 20,
        packet_size: 32768,
        connect_timeout: Duration::from_secs(10),
    }
}

fn openssh_ciphers() -> Vec<String> {
    sshtune::target::ssh_query("cipher").unwrap()
}

/// Upload through `cat`-like counting and download through `head -c`, as the openssh
/// engine's scripts do it.
fn round_trip(sshd: &EmbeddedSshd, cfg: &ClientConfig) {
    let t = connect("127.0.0.1", sshd.port, cfg).unwrap();
    let mut e = Exec::start(t, &remote::upload_script(), cfg.window, cfg.packet_size).unwrap();
    let ready = e.read_line().unwrap().unwrap();
    assert!(ready.starts_with("SSHTUNE-READY"), "{ready}");
    let data = vec![0xa5u8; 1 << 20];
    for _ in 0..3 {
        e.write_all(&data).unwrap();
    }
    e.send_eof().unwrap();
    let done = e.read_line().unwrap().unwrap();
    assert!(done.contains(&format!("bytes={}", 3 << 20)), "{done}");
    assert_eq!(e.finish().unwrap().0, Some(0));

    let t = connect("127.0.0.1", sshd.port, cfg).unwrap();
    let mut e = Exec::start(
        t,
        &remote::download_script(3_000_001),
        cfg.window,
        cfg.packet_size,
    )
    .unwrap();
    let ready = e.read_line().unwrap().unwrap();
    assert!(ready.starts_with("SSHTUNE-READY"), "{ready}");
    e.drain(3_000_001).unwrap();
    let done = e.read_line().unwrap().unwrap();
    assert!(done.contains("rc=0"), "{done}");
    assert_eq!(e.finish().unwrap().0, Some(0));
}

#[test]
fn native_client_to_openssh_every_cipher() {
    let sshd = EmbeddedSshd::start("").unwrap();
    let list = openssh_ciphers();
    assert!(list.len() >= 8, "{list:?}");
    for c in &list {
        let aead = ciphers::cipher(c).unwrap().is_aead();
        let mac = (!aead).then_some("hmac-sha2-256");
        round_trip(&sshd, &client_for(&sshd, c, mac));
    }
}

#[test]
fn native_client_to_openssh_macs() {
    let sshd = EmbeddedSshd::start("").unwrap();
    for m in [
        "hmac-sha2-256",
        "hmac-sha2-256-etm@openssh.com",
        "hmac-sha2-512",
        "hmac-sha1",
        "umac-64-etm@openssh.com",
        "umac-128@openssh.com",
    ] {
        round_trip(&sshd, &client_for(&sshd, "aes128-ctr", Some(m)));
    }
}

#[test]
fn native_client_rekeys_with_openssh_mid_transfer() {
    let sshd = EmbeddedSshd::start("").unwrap();
    for (c, mac) in [
        ("3des-cbc", Some("hmac-sha1")),
        ("aes128-gcm@openssh.com", None),
    ] {
        let mut cfg = client_for(&sshd, c, mac);
        cfg.opts.rekey_bytes = Some(300 * 1024);
        round_trip(&sshd, &cfg);
    }
}

#[test]
fn unknown_or_changed_host_key_is_refused() {
    let sshd = EmbeddedSshd::start("").unwrap();
    let mut cfg = client_for(&sshd, "aes128-ctr", Some("hmac-sha2-256"));
    let other = sshd.dir().join("other_known_hosts");
    let k = Ed25519Key::generate().unwrap();
    std::fs::write(
        &other,
        format!("[127.0.0.1]:{} {}\n", sshd.port, k.public_openssh()),
    )
    .unwrap();
    cfg.known_hosts = other.clone();
    let err = connect("127.0.0.1", sshd.port, &cfg)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("differs"), "{err}");
    std::fs::write(&other, "").unwrap();
    let err = connect("127.0.0.1", sshd.port, &cfg)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("is not in"), "{err}");
}
