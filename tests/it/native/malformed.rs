//! Hostile input against `sshtune serve` over raw TCP: every case must end in a DISCONNECT
//! (or a close, before the version exchange), a log line, and a server that keeps serving.

use crate::support;

use sshtune::wire::codec::NameList;
use sshtune::wire::kexinit::KexInit;
use sshtune::wire::plain::{read_packet, write_packet};
use sshtune::wire::Writer;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::native::start_serve;

/// Reads packets until the server's DISCONNECT; returns its reason code.
fn expect_disconnect(r: &mut BufReader<TcpStream>) -> u32 {
    for _ in 0..4 {
        let p = read_packet(r).expect("a DISCONNECT before the connection closes");
        if p[0] == 1 {
            return u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
        }
    }
    panic!("no DISCONNECT");
}

fn client_kexinit() -> Vec<u8> {
    let l = |s: &str| s.split(',').collect::<NameList>();
    // The same offer both ways.
    let ciphers = l("aes128-ctr,chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,none");
    let (macs, compression) = (l("hmac-sha2-256"), l("none"));
    KexInit {
        cookie: [1; 16],
        kex: l("curve25519-sha256,kex-strict-c-v00@openssh.com"),
        host_key: l("ssh-ed25519"),
        ciphers_c2s: ciphers.clone(),
        ciphers_s2c: ciphers,
        macs_c2s: macs.clone(),
        macs_s2c: macs,
        compression_c2s: compression.clone(),
        compression_s2c: compression,
        languages_c2s: NameList::default(),
        languages_s2c: NameList::default(),
        first_kex_follows: false,
    }
    .encode()
}

#[test]
fn malformed_input_gets_disconnect_and_server_keeps_serving() {
    let _lock = support::shared();
    let s = start_serve(&["--allow-legacy"]);

    // Not SSH at all.
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);

    // Absurd packet length.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n\xff\xff\xff\xf0aaaaaaaaaaaa")
        .unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    // Oversized but plausible packet (1 MiB).
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n\x00\x10\x00\x00\x04")
        .unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    // Garbage KEXINIT: right number, truncated lists.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n").unwrap();
    write_packet(&mut c, &[20, 1, 2, 3, 0xff, 0xff, 0xff, 0xff]).unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    // Wrong order: CHANNEL_OPEN instead of the key exchange.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n").unwrap();
    write_packet(&mut c, &client_kexinit()).unwrap();
    let mut w = Writer::new();
    w.u8(90).string(b"session").u32(0).u32(1000).u32(1000);
    write_packet(&mut c, &w.into_bytes()).unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    // Strict KEX: an IGNORE before KEXINIT is refused.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n").unwrap();
    write_packet(&mut c, &[2, 0, 0, 0, 0]).unwrap();
    write_packet(&mut c, &client_kexinit()).unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    // No common algorithm.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n").unwrap();
    let init = client_kexinit();
    let mut k = KexInit::decode(&init).unwrap();
    k.kex = ["diffie-hellman-group1-sha1"].into_iter().collect();
    write_packet(&mut c, &k.encode()).unwrap();
    assert_eq!(expect_disconnect(&mut r), 3);

    // Bad ephemeral key in KEX_ECDH_INIT.
    let (mut c, mut r) = s.raw();
    c.write_all(b"SSH-2.0-evil\r\n").unwrap();
    write_packet(&mut c, &client_kexinit()).unwrap();
    let mut w = Writer::new();
    w.u8(30).string(&[0u8; 31]);
    write_packet(&mut c, &w.into_bytes()).unwrap();
    assert_eq!(expect_disconnect(&mut r), 2);

    std::thread::sleep(Duration::from_millis(100));
    let log = s.log();
    assert!(!log.contains("panicked"), "{log}");
    assert!(log.matches("key exchange failed").count() >= 6, "{log}");
    s.still_serves();
}

/// Forwards one connection to `port`, flipping one bit of the client's stream at `offset`.
fn tampering_proxy(port: u16, offset: usize) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (client, _) = l.accept().unwrap();
        let server = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || {
            let (mut s_in, mut c_out) = (server, client);
            let _ = std::io::copy(&mut s_in, &mut c_out);
        });
        let mut buf = vec![0u8; 65536];
        let mut seen = 0usize;
        loop {
            let n = match c_in.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if seen <= offset && offset < seen + n {
                buf[offset - seen] ^= 0x20;
            }
            seen += n;
            if s_out.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    proxy_port
}

#[test]
fn corrupted_packet_fails_the_mac_and_server_keeps_serving() {
    let _lock = support::shared();
    let s = start_serve(&[]);
    for cipher in [
        "aes128-gcm@openssh.com",
        "aes128-ctr",
        "chacha20-poly1305@openssh.com",
    ] {
        let proxy = tampering_proxy(s.port, 300_000);
        let known = s.dir.path().join("known_hosts_proxy");
        let pubkey = std::fs::read_to_string(s.dir.path().join("host_ed25519.pub")).unwrap();
        std::fs::write(&known, format!("[127.0.0.1]:{proxy} {pubkey}")).unwrap();
        let cfg = sshtune::transport::client::ClientConfig {
            user: "u".into(),
            key: s.user_key.clone(),
            known_hosts: known,
            prefs: sshtune::transport::kex::Preferences {
                ciphers: vec![cipher.into()],
                macs: vec!["hmac-sha2-256".into()],
            },
            opts: Default::default(),
            window: 8 << 20,
            packet_size: 32768,
            connect_timeout: Duration::from_secs(5),
        };
        let t = sshtune::transport::client::connect("127.0.0.1", proxy, &cfg).unwrap();
        let mut e = sshtune::transport::client::Exec::start(t, "sink", cfg.window, cfg.packet_size)
            .unwrap();
        let data = vec![9u8; 1 << 20];
        let result = e.write_all(&data).and_then(|_| e.send_eof()).and_then(|_| {
            // The server hangs up instead of reporting a count.
            e.read_line().map(|_| ())
        });
        let err = match result {
            Err(err) => err.to_string(),
            Ok(()) => e.finish().err().map(|e| e.to_string()).unwrap_or_default(),
        };
        assert!(!err.is_empty(), "{cipher}: the corruption went unnoticed");
    }
    std::thread::sleep(Duration::from_millis(200));
    let log = s.log();
    assert_eq!(
        log.matches("message authentication failed").count(),
        3,
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    s.still_serves();
}

#[test]
fn max_sessions_and_idle_timeout() {
    let _lock = support::exclusive();
    let s = start_serve(&["--max-sessions", "1", "--idle-timeout", "1"]);
    // A silent connection is not logged in: it holds no session slot...
    let (_silent, _r) = s.raw();
    // ...so a login takes the only one...
    let cfg = s.client_cfg(sshtune::transport::kex::Preferences::recommended());
    let mut held = sshtune::transport::client::connect("127.0.0.1", s.port, &cfg).unwrap();
    // A channel round trip: the server has counted the login once it answers.
    sshtune::transport::channel::Channel::open_session(&mut held, 1 << 20, 32768).unwrap();
    // ...and the next connection is refused with TOO_MANY_CONNECTIONS (12).
    let (_c, mut r) = s.raw();
    assert_eq!(expect_disconnect(&mut r), 12);
    drop(held);
    // Both are dropped after the idle timeout.
    std::thread::sleep(Duration::from_millis(2500));
    let log = s.log();
    assert!(log.contains("max sessions"), "{log}");
    assert!(log.contains("(idle timeout)"), "{log}");
    s.still_serves();
}
