//! Native client against the native server, in one process, over real loopback TCP.

use crate::support;
use sshtune::serve::in_process::InProcessServer;
use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::conn::Options;
use sshtune::transport::kex::Preferences;

fn prefs(cipher: &str, mac: Option<&str>) -> Preferences {
    Preferences {
        ciphers: vec![cipher.into()],
        macs: mac.into_iter().map(String::from).collect(),
    }
}

/// Returns how many times the client rekeyed.
fn upload_download(cipher: &str, mac: Option<&str>, opts: Options) -> u32 {
    let server =
        InProcessServer::start(Preferences::from_catalog(true), Options::default()).unwrap();
    let mut cfg = server.client.clone();
    cfg.prefs = prefs(cipher, mac);
    cfg.opts = opts;
    let port = server.addr.port();

    let mut e = started(port, &cfg, "sink");
    let data = vec![0x5au8; 3 << 20];
    e.write_all(&data).unwrap();
    e.write_all(&data[..12345]).unwrap();
    e.send_eof().unwrap();
    let done = e.read_line().unwrap().unwrap();
    assert!(
        done.contains(&format!("bytes={}", (3 << 20) + 12345)),
        "{done}"
    );
    let (status, t) = e.finish().unwrap();
    assert_eq!(status, Some(0));
    let mut rekeys = t.rekeys;

    let mut e = started(port, &cfg, "source 5000001");
    e.drain(5_000_001).unwrap();
    let done = e.read_line().unwrap().unwrap();
    assert!(done.starts_with("SSHTUNE-DONE rc=0"), "{done}");
    let (status, t) = e.finish().unwrap();
    assert_eq!(status, Some(0));
    rekeys += t.rekeys;
    rekeys
}

/// `command` started on our server at `port` over a fresh login, past its READY line.
fn started(port: u16, cfg: &ClientConfig, command: &str) -> Exec {
    let t = connect("127.0.0.1", port, cfg).unwrap();
    let mut e = Exec::start(t, command, cfg.window, cfg.packet_size).unwrap();
    assert!(e
        .read_line()
        .unwrap()
        .unwrap()
        .starts_with("SSHTUNE-READY "));
    e
}
#[test]
fn none_cipher_moves_bytes_both_ways() {
    let _lock = support::shared();
    upload_download("none", None, Options::default());
}

#[test]
fn unknown_command_is_refused_without_a_shell() {
    let _lock = support::shared();
    let server =
        InProcessServer::start(Preferences::from_catalog(true), Options::default()).unwrap();
    let mut cfg = server.client.clone();
    cfg.prefs = prefs("none", None);
    let t = connect("127.0.0.1", server.addr.port(), &cfg).unwrap();
    let e = Exec::start(t, "cat /etc/passwd", cfg.window, cfg.packet_size).unwrap();
    let (status, _) = e.finish().unwrap();
    assert_eq!(status, Some(127));
}

#[test]
fn every_catalog_cipher_native_to_native() {
    let _lock = support::shared();
    for c in ciphers::CIPHERS.iter().filter(|c| c.name != "none") {
        let mac = (!c.is_aead()).then_some("hmac-sha2-256-etm@openssh.com");
        upload_download(c.name, mac, Options::default());
    }
}

#[test]
fn every_mac_native_to_native() {
    let _lock = support::shared();
    for m in ciphers::MACS {
        upload_download("aes128-ctr", Some(m.name), Options::default());
    }
}

#[test]
fn rekeying_mid_transfer_with_64_bit_block_ciphers() {
    let _lock = support::shared();
    for c in [
        "3des-cbc",
        "blowfish-cbc",
        "aes128-gcm@openssh.com",
        "chacha20-poly1305@openssh.com",
    ] {
        let mac = (!ciphers::cipher(c).unwrap().is_aead()).then_some("hmac-sha1");
        let rekeys = upload_download(
            c,
            mac,
            Options {
                rekey_bytes: Some(256 * 1024),
                ..Options::default()
            },
        );
        assert!(rekeys >= 10, "{c}: only {rekeys} rekeys");
    }
}

#[test]
fn diffie_hellman_group14_native_to_native() {
    let _lock = support::shared();
    for kex in [
        "diffie-hellman-group14-sha256",
        "diffie-hellman-group14-sha1",
    ] {
        upload_download(
            "aes128-ctr",
            Some("hmac-sha2-256"),
            Options {
                kex: Some(vec![kex.into()]),
                rekey_bytes: Some(1 << 20),
                ..Options::default()
            },
        );
    }
}

#[test]
fn tcp_ceiling_through_a_token_guarded_one_shot_port() {
    let _lock = support::shared();
    use sshtune::bench::native::{NativeEngine, Peer};
    let server = InProcessServer::start(Preferences::modern(), Options::default()).unwrap();
    let n = NativeEngine::new(
        "127.0.0.1".into(),
        server.addr.port(),
        server.client.clone(),
        Peer::Sshtune,
    );
    let run = n.tcp_ceiling(8 << 20).unwrap();
    assert!(run.mib_s > 0.0);
    // The server reports its CPU over the send, so a ceiling held down by a quota is known.
    let cpu = run.server_cpu_pct.expect("server CPU reported");
    assert!(cpu > 0.0 && cpu < 400.0, "server CPU {cpu}%");

    // Regression: the port served only its first connection, so a port scan in the window
    // broke the measurement. A silent connection, a wrong token and a half token that hangs
    // up get no data; the right token afterwards still gets all of it.
    let t = connect("127.0.0.1", server.addr.port(), &server.client).unwrap();
    let mut e = Exec::start(t, "tcp-ceiling 1M", 1 << 20, 32768).unwrap();
    let line = e.read_line().unwrap().unwrap();
    let field = |name: &str| support::native::field(&line, name);
    let (port, token): (u16, String) = (field("port=").parse().unwrap(), field("token="));
    use std::io::{Read, Write};
    let data = || std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let silent = data();
    let mut wrong = data();
    wrong.write_all(&[b'0'; 32]).unwrap();
    let mut buf = Vec::new();
    let _ = wrong.read_to_end(&mut buf);
    assert!(buf.is_empty());
    let mut half = data();
    half.write_all(&token.as_bytes()[..16]).unwrap();
    drop(half);
    let mut right = data();
    right.write_all(token.as_bytes()).unwrap();
    let _ = right.read_to_end(&mut buf);
    assert_eq!(buf.len(), 1 << 20);
    assert_eq!(e.finish().unwrap().0, Some(0));
    drop(silent);

    // Nobody sends the token: the command fails once the window closes.
    let t = connect("127.0.0.1", server.addr.port(), &server.client).unwrap();
    let mut e = Exec::start(t, "tcp-ceiling 1M", 1 << 20, 32768).unwrap();
    e.read_line().unwrap().unwrap();
    assert_eq!(e.finish().unwrap().0, Some(127));
}
