//! `sshtune serve` as a child process for the native-server tests.

use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::hostkey::Ed25519Key;
use sshtune::wire::ident::read_ident;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `sshtune bench` with the native engine against 127.0.0.1, the user's ssh_config left out;
/// the port, key and known-hosts options follow.
pub const BENCH_LOCALHOST: [&str; 6] = [
    "bench",
    "127.0.0.1",
    "--engine",
    "native",
    "-F",
    "/dev/null",
];

/// A native client that offers `cipher` and `mac` only (an AEAD cipher: no MAC), logging in
/// as this user with `key` and checking the host key in `known_hosts`; an 8 MiB window.
pub fn one_cipher_client(
    key: std::sync::Arc<dyn sshtune::transport::userkey::UserKey>,
    known_hosts: PathBuf,
    cipher: &str,
    mac: Option<&str>,
) -> ClientConfig {
    ClientConfig {
        user: super::user_name(),
        key,
        known_hosts,
        prefs: sshtune::transport::kex::Preferences {
            ciphers: vec![cipher.into()],
            macs: mac.into_iter().map(String::from).collect(),
        },
        opts: Default::default(),
        window: 8 << 20,
        packet_size: 32768,
        connect_timeout: Duration::from_secs(10),
    }
}

/// The value of `name` (`port=`, `token=`) among a line's space-separated fields.
pub fn field(line: &str, name: &str) -> String {
    line.split_whitespace()
        .find_map(|t| t.strip_prefix(name))
        .unwrap()
        .to_string()
}

pub struct Serve {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub user_key: std::sync::Arc<Ed25519Key>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_serve(extra: &[&str]) -> Serve {
    start_serve_under(&[], extra)
}

/// `sshtune serve` started through `prefix` (e.g. a cgroup wrapper that execs its arguments).
pub fn start_serve_under(prefix: &[String], extra: &[&str]) -> Serve {
    start_serve_listing(prefix, "", extra)
}

/// `sshtune serve` whose authorized_keys has `more_keys` (lines) after the fixture's own key.
pub fn start_serve_listing(prefix: &[String], more_keys: &str, extra: &[&str]) -> Serve {
    let dir = tempfile::tempdir().unwrap();
    let user_key = Ed25519Key::generate().unwrap();
    let ak = dir.path().join("authorized_keys");
    std::fs::write(
        &ak,
        format!("{} test\n{more_keys}", user_key.public_openssh()),
    )
    .unwrap();
    let mut cmd = super::under(prefix, super::SSHTUNE);
    let mut child = cmd
        .args(["serve", "--listen", "127.0.0.1:0", "--authorized-keys"])
        .arg(&ak)
        .arg("--host-key")
        .arg(dir.path().join("host_ed25519"))
        // The user names the fixtures' clients log in as.
        .args(["--user", "tester", "--user", "u"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("serve.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("sshtune serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let port = addr.rsplit(':').next().unwrap().parse().unwrap();
    // Keep reading stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Serve {
        child,
        port,
        dir,
        user_key: std::sync::Arc::new(user_key),
    }
}

impl Serve {
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }

    pub fn raw(&self) -> (TcpStream, BufReader<TcpStream>) {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        read_ident(&mut r).unwrap();
        (s, r)
    }

    /// A native client configuration that logs in to this server as `u` (one of the names
    /// the fixture lists with `--user`), trusting its host key.
    pub fn client_cfg(&self, prefs: sshtune::transport::kex::Preferences) -> ClientConfig {
        let known = self.dir.path().join("known_hosts");
        let pubkey = std::fs::read_to_string(self.dir.path().join("host_ed25519.pub")).unwrap();
        std::fs::write(&known, format!("[127.0.0.1]:{} {pubkey}", self.port)).unwrap();
        ClientConfig {
            user: "u".into(),
            key: self.user_key.clone(),
            known_hosts: known,
            prefs,
            opts: Default::default(),
            window: 1 << 20,
            packet_size: 32768,
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// A full login and `sink` run with the none cipher: proves the server still serves.
    pub fn still_serves(&self) {
        let cfg = self.client_cfg(sshtune::transport::kex::Preferences::from_catalog(true));
        let t = connect("127.0.0.1", self.port, &cfg).unwrap();
        let e = Exec::start(t, "stat", cfg.window, cfg.packet_size).unwrap();
        assert_eq!(e.finish().unwrap().0, Some(0));
        assert!(self.child_alive());
    }

    pub fn child_alive(&self) -> bool {
        std::path::Path::new(&format!("/proc/{}", self.child.id())).exists()
    }
}

impl Serve {
    /// Writes the user key (OpenSSH format) and a known_hosts entry for the `ssh` client.
    pub fn ssh_files(&self) -> (PathBuf, PathBuf) {
        let key = self.dir.path().join("user_ed25519");
        if !key.exists() {
            self.user_key.save(&key, "test").unwrap();
        }
        let known = self.dir.path().join("known_hosts");
        let pubkey = std::fs::read_to_string(self.dir.path().join("host_ed25519.pub")).unwrap();
        std::fs::write(&known, format!("[127.0.0.1]:{} {pubkey}", self.port)).unwrap();
        (key, known)
    }

    /// This server as a destination for `ssh` and `sshtune bench` (same options both take).
    pub fn target(&self) -> sshtune::target::SshTarget {
        let (key, known) = self.ssh_files();
        let mut options: Vec<String> = vec![
            "-F".into(),
            "/dev/null".into(),
            "-p".into(),
            self.port.to_string(),
            "-i".into(),
            key.display().to_string(),
            "-l".into(),
            "tester".into(),
        ];
        for o in [
            format!("UserKnownHostsFile={}", known.display()),
            "GlobalKnownHostsFile=/dev/null".into(),
            "StrictHostKeyChecking=yes".into(),
            "IdentitiesOnly=yes".into(),
            "IdentityAgent=none".into(),
            "UpdateHostKeys=no".into(),
        ] {
            options.push("-o".into());
            options.push(o);
        }
        sshtune::target::SshTarget {
            destination: "127.0.0.1".into(),
            options,
            embedded: false,
        }
    }

    /// The real OpenSSH client, set up to trust only this server and use only our key.
    pub fn ssh(&self) -> Command {
        let (key, known) = self.ssh_files();
        openssh_client(self.port, &known, &key, "tester")
    }
}

/// The real OpenSSH client for a server on 127.0.0.1:`port`: no config file, no agent, only
/// `key`, only the host keys in `known`, never a prompt; logs in as `user`. Add the command.
pub fn openssh_client(
    port: u16,
    known: &std::path::Path,
    key: &std::path::Path,
    user: &str,
) -> Command {
    let mut c = Command::new("ssh");
    c.args(["-F", "/dev/null", "-p", &port.to_string(), "-i"])
        .arg(key)
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", known.display()))
        .args([
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            "UpdateHostKeys=no",
            "-T",
            "-l",
            user,
        ]);
    c
}
