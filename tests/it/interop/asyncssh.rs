//! Legacy ciphers and MACs that OpenSSH no longer has, proven against an independent SSH
//! implementation (AsyncSSH, from PyPI: see tests/requirements.txt) in both directions,
//! including rekeying mid-transfer with 64-bit-block ciphers.

use crate::support;

use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::hostkey::Ed25519Key;
use sshtune::transport::kex::Preferences;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// The AsyncSSH peer script.
fn peer() -> std::path::PathBuf {
    support::repo_root().join("tests/peers/asyncssh_peer.py")
}

/// Every legacy cipher, each with a MAC OpenSSH dropped or never had by default.
const LEGACY: &[(&str, &str)] = &[
    ("3des-cbc", "hmac-md5"),
    ("blowfish-cbc", "hmac-sha1-96"),
    ("cast128-cbc", "hmac-md5-96"),
    ("arcfour", "hmac-sha1"),
    ("arcfour128", "umac-64@openssh.com"),
    ("arcfour256", "hmac-md5-etm@openssh.com"),
    ("aes128-cbc", "hmac-md5-96-etm@openssh.com"),
    ("aes256-ctr", "hmac-sha1-96-etm@openssh.com"),
];

fn asyncssh_available() {
    let ok = Command::new("python3")
        .args(["-c", "import asyncssh"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "AsyncSSH is required for these tests: pip install -r tests/requirements.txt"
    );
}

struct PySrv {
    child: Child,
    port: u16,
}

impl Drop for PySrv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_asyncssh_server(
    dir: &std::path::Path,
    user_key: &Ed25519Key,
    rekey: Option<u64>,
) -> PySrv {
    let ak = dir.join("authorized_keys");
    std::fs::write(&ak, format!("{} me\n", user_key.public_openssh())).unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg(peer())
        .arg("server")
        .arg("--host-key-pub")
        .arg(dir.join("peer_host.pub"))
        .arg("--authorized-keys")
        .arg(&ak)
        .stdout(Stdio::piped());
    if let Some(r) = rekey {
        cmd.args(["--rekey-bytes", &r.to_string()]);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap().parse().unwrap();
    PySrv { child, port }
}

fn native_to_asyncssh(cipher: &str, mac: &str, rekey: Option<u64>) -> u32 {
    let dir = tempfile::tempdir().unwrap();
    let key = Arc::new(Ed25519Key::generate().unwrap());
    let srv = start_asyncssh_server(dir.path(), &key, rekey);
    let host_pub = std::fs::read_to_string(dir.path().join("peer_host.pub")).unwrap();
    let known = dir.path().join("known_hosts");
    std::fs::write(&known, format!("[127.0.0.1]:{} {host_pub}", srv.port)).unwrap();
    let cfg = ClientConfig {
        user: "tester".into(),
        key,
        known_hosts: known,
        prefs: Preferences {
            ciphers: vec![cipher.into()],
            macs: vec![mac.into()],
        },
        opts: sshtune::transport::conn::Options {
            rekey_bytes: rekey,
            ..Default::default()
        },
        window: 2 << 20,
        packet_size: 32768,
        connect_timeout: Duration::from_secs(10),
    };
    let size = 3 << 20;
    let t = connect("127.0.0.1", srv.port, &cfg).unwrap();
    let mut e = Exec::start(t, "sink", cfg.window, cfg.packet_size).unwrap();
    assert!(e.read_line().unwrap().unwrap().starts_with("SSHTUNE-READY"));
    e.write_all(&vec![0x11u8; size]).unwrap();
    e.send_eof().unwrap();
    let done = e.read_line().unwrap().unwrap();
    assert!(done.contains(&format!("bytes={size}")), "{cipher}: {done}");
    let (status, t) = e.finish().unwrap();
    assert_eq!(status, Some(0));
    let mut rekeys = t.rekeys;

    let t = connect("127.0.0.1", srv.port, &cfg).unwrap();
    let mut e = Exec::start(t, &format!("source {size}"), cfg.window, cfg.packet_size).unwrap();
    assert!(e.read_line().unwrap().unwrap().starts_with("SSHTUNE-READY"));
    e.drain(size as u64).unwrap();
    assert!(e
        .read_line()
        .unwrap()
        .unwrap()
        .starts_with("SSHTUNE-DONE rc=0"));
    let (status, t) = e.finish().unwrap();
    assert_eq!(status, Some(0));
    rekeys += t.rekeys;
    rekeys
}

fn asyncssh_to_serve(s: &support::native::Serve, cipher: &str, mac: &str, rekey: Option<u64>) {
    let (key, known) = s.ssh_files();
    let mut cmd = Command::new("python3");
    cmd.arg(peer())
        .args(["client", "--port", &s.port.to_string(), "--known-hosts"])
        .arg(&known)
        .arg("--key")
        .arg(&key)
        .args([
            "--cipher",
            cipher,
            "--mac",
            mac,
            "--bytes",
            &(3 << 20).to_string(),
        ]);
    if let Some(r) = rekey {
        cmd.args(["--rekey-bytes", &r.to_string()]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("OK"),
        "{cipher}/{mac}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn native_client_to_asyncssh_every_legacy_cipher() {
    let _lock = support::shared();
    asyncssh_available();
    for (c, m) in LEGACY {
        native_to_asyncssh(c, m, None);
    }
}

#[test]
fn asyncssh_client_to_serve_every_legacy_cipher() {
    let _lock = support::shared();
    asyncssh_available();
    let s = support::native::start_serve(&["--allow-legacy"]);
    for (c, m) in LEGACY {
        asyncssh_to_serve(&s, c, m, None);
    }
}

#[test]
fn rekeying_mid_transfer_with_asyncssh_both_directions() {
    let _lock = support::shared();
    asyncssh_available();
    for c in ["3des-cbc", "blowfish-cbc"] {
        // Our side rekeys every 512 KiB by RFC 4344 for 64-bit blocks; AsyncSSH is told to
        // rekey too, so exchanges start from both ends.
        let rekeys = native_to_asyncssh(c, "hmac-sha1", Some(400_000));
        assert!(rekeys >= 4, "{c}: {rekeys} rekeys");
    }
    let s = support::native::start_serve(&["--allow-legacy", "--rekey-limit", "300K"]);
    for c in ["3des-cbc", "blowfish-cbc"] {
        asyncssh_to_serve(&s, c, "hmac-sha1", Some(400_000));
    }
    std::thread::sleep(Duration::from_millis(200));
    let log = s.log();
    let rekeys: Vec<u32> = log
        .lines()
        .filter_map(|l| l.split(" rekeys:").next()?.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(rekeys.len(), 2, "{log}");
    assert!(rekeys.iter().all(|&r| r >= 10), "{log}");
}
