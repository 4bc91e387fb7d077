//! Dropbear interop: the native client against `dropbear`, and `dbclient` against
//! `sshtune serve`. Dropbear reads keys only from the user's home, so each peer runs in a
//! private mount namespace with a temporary directory mounted over that home: the real
//! ~/.ssh is never read or written.

use crate::support;

use sshtune::remote;
use sshtune::transport::client::{connect, Exec};
use sshtune::transport::hostkey::Ed25519Key;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn home_dir() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir
        .display()
        .to_string()
}

/// `cmd` with `home` mounted over the user's home directory, in a private mount namespace.
fn in_private_home(home: &Path, cmd: &[&str]) -> Command {
    let mut c = Command::new("unshare");
    c.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount --bind "$1" "$2" && shift 2 && exec "$@""#)
        .arg("sh")
        .arg(home)
        .arg(home_dir())
        .args(cmd);
    c
}

fn private_home() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join(".ssh")).unwrap();
    for p in [d.path().to_path_buf(), d.path().join(".ssh")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    d
}

struct Dropbear(Child);

impl Drop for Dropbear {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_port(port: u16) {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("dropbear did not listen on {port}");
}

#[test]
fn native_client_to_dropbear() {
    let _lock = support::shared();
    let home = private_home();
    let key = Arc::new(Ed25519Key::generate().unwrap());
    std::fs::write(
        home.path().join(".ssh/authorized_keys"),
        format!("{} me\n", key.public_openssh()),
    )
    .unwrap();
    let hostkey = home.path().join("hostkey");
    let out = Command::new("dropbearkey")
        .args(["-t", "ed25519", "-f"])
        .arg(&hostkey)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let host_pub = text
        .lines()
        .find(|l| l.starts_with("ssh-ed25519 "))
        .expect("dropbearkey prints the public key");
    let port = support::free_port();
    let _server = Dropbear(
        in_private_home(
            home.path(),
            &[
                "dropbear",
                "-F",
                "-E",
                "-s",
                "-p",
                &format!("127.0.0.1:{port}"),
                "-r",
                hostkey.to_str().unwrap(),
                "-P",
                home.path().join("pid").to_str().unwrap(),
            ],
        )
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    wait_port(port);
    let known = home.path().join("known_hosts_native");
    std::fs::write(&known, format!("[127.0.0.1]:{port} {host_pub}\n")).unwrap();
    for (cipher, mac) in [
        ("chacha20-poly1305@openssh.com", None),
        ("aes128-ctr", Some("hmac-sha1")),
        ("aes256-ctr", Some("hmac-sha2-256")),
    ] {
        let cfg = support::native::one_cipher_client(key.clone(), known.clone(), cipher, mac);
        let t = connect("127.0.0.1", port, &cfg).unwrap();
        let mut e = Exec::start(t, &remote::upload_script(), cfg.window, cfg.packet_size).unwrap();
        let ready = e.read_line().unwrap().unwrap();
        assert!(ready.contains("comm=dropbear"), "{ready}");
        e.write_all(&vec![1u8; 2 << 20]).unwrap();
        e.send_eof().unwrap();
        let done = e.read_line().unwrap().unwrap();
        assert!(
            done.contains(&format!("bytes={}", 2 << 20)),
            "{cipher}: {done}"
        );
        assert_eq!(e.finish().unwrap().0, Some(0));

        let t = connect("127.0.0.1", port, &cfg).unwrap();
        let mut e = Exec::start(
            t,
            &remote::download_script(1_500_000),
            cfg.window,
            cfg.packet_size,
        )
        .unwrap();
        assert!(e.read_line().unwrap().unwrap().starts_with("SSHTUNE-READY"));
        e.drain(1_500_000).unwrap();
        assert!(e.read_line().unwrap().unwrap().contains("rc=0"));
        assert_eq!(e.finish().unwrap().0, Some(0));
    }
}

#[test]
fn dbclient_to_sshtune_serve() {
    let _lock = support::shared();
    let s = support::native::start_serve(&[]);
    let home = private_home();
    let (key, _) = s.ssh_files();
    let db_key = home.path().join("id_dropbear");
    let st = Command::new("dropbearconvert")
        .args(["openssh", "dropbear"])
        .arg(&key)
        .arg(&db_key)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    for (cipher, mac) in [
        ("chacha20-poly1305@openssh.com", "hmac-sha2-256"),
        ("aes128-ctr", "hmac-sha2-256"),
        ("aes256-ctr", "hmac-sha2-256"),
    ] {
        let mut child = in_private_home(
            home.path(),
            &[
                "dbclient",
                "-y",
                "-p",
                &s.port.to_string(),
                "-l",
                "tester",
                "-i",
                db_key.to_str().unwrap(),
                "-c",
                cipher,
                "-m",
                mac,
                "127.0.0.1",
                "sink",
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let _ = child.stdin.take().unwrap().write_all(&vec![2u8; 2 << 20]);
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("bytes={}", 2 << 20)),
            "{cipher}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
