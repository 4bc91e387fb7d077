//! The hidden `sshtune tcp-sink` behind the remote raw-TCP ceiling, on loopback: it reports
//! where it listens, ignores a peer without the token, counts exactly what the right peer
//! sends, and refuses a weak token.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Stdio;

const TOKEN: &str = "abcdefghijklmnop0123456789";

#[test]
fn counts_only_the_peer_with_the_token() {
    let _lock = support::shared();
    let mut child = support::sshtune()
        .args(["tcp-sink", "--listen", "127.0.0.1", "--token", TOKEN])
        .args(["--count", "1", "--timeout", "20"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("sshtune starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(
        first.starts_with("SSHTUNE-SINK addr=127.0.0.1 port="),
        "{first}"
    );
    let port: u16 = first.rsplit('=').next().unwrap().parse().unwrap();

    let mut stranger = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = stranger.write_all(b"wrong-token-wrong-token!!!\nxxxxxxxx");
    drop(stranger);

    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(format!("{TOKEN}\n").as_bytes()).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    for _ in 0..160 {
        s.write_all(&chunk).unwrap();
    }
    drop(s);
    let done = lines.next().unwrap().unwrap();
    let bytes: u64 = done
        .split_whitespace()
        .find_map(|t| t.strip_prefix("bytes="))
        .and_then(|b| b.parse().ok())
        .unwrap_or_else(|| panic!("{done}"));
    // The first read starts the clock and is left out of the count; nothing else is lost.
    let sent = 160 * 64 * 1024;
    assert!(bytes < sent && bytes >= sent - 2 * 1024 * 1024, "{done}");
    assert!(child.wait().unwrap().success());
}

#[test]
fn weak_token_is_a_one_line_error() {
    let _lock = support::shared();
    let out = support::output(support::sshtune().args(["tcp-sink", "--token", "short"]));
    assert!(!out.status.success());
    let err = support::stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--token"), "{err}");
}

#[test]
fn is_hidden_from_help() {
    let _lock = support::shared();
    let out = support::output(support::sshtune().arg("--help"));
    assert!(!support::stdout(&out).contains("tcp-sink"));
}
