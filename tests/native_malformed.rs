//! Hostile input against `sshtune serve` over raw TCP: every case must end in a DISCONNECT
//! (or a close, before the version exchange), a log line, and a server that keeps serving.

mod support;

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
    let l = |s: &str| s.split(',').map(String::from).collect::<Vec<_>>();
    KexInit {
        cookie: [1; 16],
        kex: l("curve25519-sha256,kex-strict-c-v00@openssh.com"),
        host_key: l("ssh-ed25519"),
        ciphers_c2s: l("aes128-ctr,chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,none"),
        ciphers_s2c: l("aes128-ctr,chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,none"),
        macs_c2s: l("hmac-sha2-256"),
        macs_s2c: l("hmac-sha2-256"),
        compression_c2s: l("none"),
        compression_s2c: l("none"),
        languages_c2s: vec![],
        languages_s2c: vec![],
        first_kex_follows: false,
    }
    .encode()
}

#[test]
fn malformed_input_gets_disconnect_and_server_keeps_serving() {
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
    let mut k = KexInit::decode(&client_kexinit()).unwrap();
    k.kex = vec!["diffie-hellman-group1-sha1".into()];
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
