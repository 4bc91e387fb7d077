//! The native client against a real OpenSSH sshd, and the real OpenSSH `ssh` client against
//! `sshtune serve`: every cipher this OpenSSH offers, several MACs, host keys checked.

use sshtune::embedded::EmbeddedSshd;
use sshtune::remote;
use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::hostkey::Ed25519Key;
use std::sync::Arc;
use std::time::Duration;

fn client_for(sshd: &EmbeddedSshd, cipher: &str, mac: Option<&str>) -> ClientConfig {
    support::native::one_cipher_client(
        Arc::new(Ed25519Key::load(&sshd.dir().join("client_ed25519")).unwrap()),
        sshd.dir().join("known_hosts"),
        cipher,
        mac,
    )
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
    let _lock = support::shared();
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
    let _lock = support::shared();
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
    let _lock = support::shared();
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
    let _lock = support::shared();
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

use crate::support;

/// The real `ssh` client logs into `sshtune serve` with every cipher it has.
#[test]
fn openssh_client_to_sshtune_serve_every_cipher() {
    let _lock = support::shared();
    use std::io::Write as _;
    use std::process::Stdio;
    let s = support::native::start_serve(&["--allow-legacy"]);
    let data = vec![0x3cu8; 2 << 20];
    for c in openssh_ciphers() {
        let aead = ciphers::cipher(&c).unwrap().is_aead();
        let mut cmd = s.ssh();
        cmd.args(["-c", &c]);
        if !aead {
            cmd.args(["-m", "hmac-sha2-256-etm@openssh.com"]);
        }
        let mut child = cmd
            .args(["127.0.0.1", "sink"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(&data);
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(&format!("bytes={}", 2 << 20)),
            "{c}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );

        let mut cmd = s.ssh();
        let out = cmd
            .args(["-c", &c, "-m", "hmac-sha1", "127.0.0.1", "source 1000000"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{c}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&[u8]> = out.stdout.splitn(2, |&b| b == b'\n').collect();
        assert!(lines[0].starts_with(b"SSHTUNE-READY"));
        let rest = lines[1];
        assert_eq!(rest.len(), 1_000_000 + rest[1_000_000..].len());
        assert!(rest[1_000_000..].starts_with(b"SSHTUNE-DONE rc=0"));
    }
}

#[test]
fn openssh_client_macs_and_no_shell() {
    let _lock = support::shared();
    let s = support::native::start_serve(&[]);
    for m in [
        "hmac-sha2-256",
        "hmac-sha2-512-etm@openssh.com",
        "umac-128-etm@openssh.com",
        "umac-128@openssh.com",
    ] {
        let out = s
            .ssh()
            .args(["-c", "aes128-ctr", "-m", m, "127.0.0.1", "stat"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("SSHTUNE-INFO cores="),
            "{m}: {text}"
        );
    }
    // Anything not graded ok is offered only with --allow-legacy.
    for c in ["3des-cbc", "aes128-cbc"] {
        let out = s
            .ssh()
            .args(["-c", c, "127.0.0.1", "stat"])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains("no matching cipher"));
    }
    for m in ["hmac-sha1", "umac-64-etm@openssh.com", "hmac-md5"] {
        let out = s
            .ssh()
            .args(["-c", "aes128-ctr", "-m", m, "127.0.0.1", "stat"])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains("no matching MAC"));
    }
    let out = s
        .ssh()
        .args([
            "-o",
            "KexAlgorithms=diffie-hellman-group14-sha1",
            "127.0.0.1",
        ])
        .arg("stat")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no matching key exchange"));
    // No command: ssh asks for a shell, which does not exist.
    let out = s
        .ssh()
        .arg("127.0.0.1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    // An arbitrary command is not run.
    let out = s.ssh().args(["127.0.0.1", "id"]).output().unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("built-ins"));
}

#[test]
fn native_client_diffie_hellman_group14_and_rsa_host_keys() {
    let _lock = support::shared();
    let keydir = tempfile::tempdir().unwrap();
    let rsa = keydir.path().join("host_rsa");
    support::keygen_with(&rsa, &["-t", "rsa", "-b", "2048"]);
    let sshd = EmbeddedSshd::start(&format!(
        "HostKey {}\nKexAlgorithms +diffie-hellman-group14-sha1\n",
        rsa.display()
    ))
    .unwrap();
    let rsa_pub = std::fs::read_to_string(rsa.with_extension("pub")).unwrap();
    let ed_known = std::fs::read_to_string(sshd.dir().join("known_hosts")).unwrap();
    let known = keydir.path().join("known_hosts");
    std::fs::write(
        &known,
        format!("{ed_known}[127.0.0.1]:{} {rsa_pub}", sshd.port),
    )
    .unwrap();
    for (kex, host_key) in [
        ("diffie-hellman-group14-sha256", "ssh-ed25519"),
        ("diffie-hellman-group14-sha1", "rsa-sha2-512"),
        ("curve25519-sha256", "rsa-sha2-256"),
        ("curve25519-sha256@libssh.org", "ssh-ed25519"),
    ] {
        let mut cfg = client_for(&sshd, "aes256-gcm@openssh.com", None);
        cfg.known_hosts = known.clone();
        cfg.opts.kex = Some(vec![kex.into()]);
        cfg.opts.host_keys = Some(vec![host_key.into()]);
        let t = connect("127.0.0.1", sshd.port, &cfg).unwrap();
        let n = t.negotiated.clone().unwrap();
        assert_eq!((n.kex.as_str(), n.host_key.as_str()), (kex, host_key));
        // Debian's OpenSSH 9.2 carries the Terrapin fix: strict KEX is in force.
        assert!(n.strict);
        let e = Exec::start(t, "true", cfg.window, cfg.packet_size).unwrap();
        assert_eq!(e.finish().unwrap().0, Some(0));
    }
}

#[test]
fn rsa_user_key_from_file_and_keys_from_ssh_agent() {
    let _lock = support::shared();
    use sshtune::transport::userkey::{self, Agent};
    let sshd = EmbeddedSshd::start("").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rsa = dir.path().join("id_rsa");
    support::keygen_with(&rsa, &["-t", "rsa", "-b", "3072"]);
    let mut ak = std::fs::read_to_string(sshd.dir().join("authorized_keys")).unwrap();
    ak.push_str(&std::fs::read_to_string(rsa.with_extension("pub")).unwrap());
    std::fs::write(sshd.dir().join("authorized_keys"), ak).unwrap();

    let run = |key: Arc<dyn userkey::UserKey>| {
        let mut cfg = client_for(&sshd, "aes128-ctr", Some("hmac-sha2-256-etm@openssh.com"));
        cfg.key = key;
        let t = connect("127.0.0.1", sshd.port, &cfg).unwrap();
        let e = Exec::start(t, "true", cfg.window, cfg.packet_size).unwrap();
        assert_eq!(e.finish().unwrap().0, Some(0));
    };
    run(userkey::load(&rsa).unwrap());

    // ssh-agent holding only the RSA key, then only the ed25519 key.
    let sock = dir.path().join("agent.sock");
    let mut agent = std::process::Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !sock.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let add = |k: &std::path::Path, flag: &str| {
        let st = std::process::Command::new("ssh-add")
            .arg(flag)
            .arg(k)
            .env("SSH_AUTH_SOCK", &sock)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    };
    add(&rsa, "-q");
    run(Arc::new(Agent::connect(&sock).unwrap()));
    add(&rsa, "-d");
    add(&sshd.dir().join("client_ed25519"), "-q");
    let a = Agent::connect(&sock).unwrap();
    assert_eq!(userkey::UserKey::identities(&a).len(), 1);
    run(Arc::new(a));
    let _ = agent.kill();
    let _ = agent.wait();
}

/// One known_hosts situation, judged by the real `ssh`, `ssh-keygen -F` and the native client.
struct HostCase {
    what: &'static str,
    user: String,
    global: String,
    strict: &'static str,
    /// What the native client decides.
    accept: bool,
    /// What ssh decides: the same, except where docs/security.md says we differ.
    ssh_accepts: bool,
}

/// What `ssh` decides for a case, in BatchMode with the files given (copies: ssh may append).
fn ssh_accepts(sshd: &EmbeddedSshd, dir: &std::path::Path, c: &HostCase) -> bool {
    let (user, global) = (dir.join("ssh_user"), dir.join("ssh_global"));
    std::fs::write(&user, &c.user).unwrap();
    std::fs::write(&global, &c.global).unwrap();
    let o = |s: String| ["-o".to_string(), s];
    let out = std::process::Command::new("ssh")
        .args(["-F", "/dev/null", "-p", &sshd.port.to_string()])
        .arg("-i")
        .arg(sshd.dir().join("client_ed25519"))
        .args(o("BatchMode=yes".into()))
        .args(o("IdentitiesOnly=yes".into()))
        .args(o("IdentityAgent=none".into()))
        .args(o("UpdateHostKeys=no".into()))
        .args(o(format!("UserKnownHostsFile={}", user.display())))
        .args(o(format!("GlobalKnownHostsFile={}", global.display())))
        .args(o(format!("StrictHostKeyChecking={}", c.strict)))
        .args(o("HashKnownHosts=no".into()))
        .args(["127.0.0.1", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    out.status.success()
}

/// What the native client decides for the same files and setting.
fn native_accepts(
    sshd: &EmbeddedSshd,
    dir: &std::path::Path,
    c: &HostCase,
) -> (bool, std::path::PathBuf) {
    use sshtune::transport::known_hosts::{Policy, Strict};
    let (user, global) = (dir.join("native_user"), dir.join("native_global"));
    std::fs::write(&user, &c.user).unwrap();
    std::fs::write(&global, &c.global).unwrap();
    let policy = Policy {
        user_files: vec![user.clone()],
        global_files: vec![global],
        strict: Strict::parse(c.strict).unwrap(),
        hash: false,
        alias: None,
    };
    let cfg = client_for(sshd, "aes128-ctr", Some("hmac-sha2-256"));
    let r = sshtune::transport::client::connect_with("127.0.0.1", sshd.port, &cfg, &policy);
    (r.is_ok(), user)
}

/// `ssh-keygen -F NAME -f FILE`: does ssh's own lookup find the name?
fn keygen_finds(file: &std::path::Path, name: &str) -> bool {
    std::process::Command::new("ssh-keygen")
        .args(["-F", name, "-f"])
        .arg(file)
        .output()
        .unwrap()
        .status
        .success()
}

/// Regression (issue: the native bench connected where ssh refused): a `@revoked` line after
/// the trusted one, `@revoked *`, and a `@cert-authority` line read as a plain key. Every case
/// is decided by the real ssh, and host lookups also by `ssh-keygen -F`.
#[test]
fn known_hosts_decisions_match_openssh() {
    let _lock = support::shared();
    let sshd = EmbeddedSshd::start("").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trusted = std::fs::read_to_string(sshd.dir().join("known_hosts")).unwrap();
    let key = trusted.split_once(' ').unwrap().1.trim().to_string();
    let name = format!("[127.0.0.1]:{}", sshd.port);
    let wrong = Ed25519Key::generate().unwrap().public_openssh();
    // A hashed line made by ssh-keygen -H itself.
    let hashed_file = dir.path().join("hashed");
    std::fs::write(&hashed_file, &trusted).unwrap();
    assert!(std::process::Command::new("ssh-keygen")
        .args(["-q", "-H", "-f"])
        .arg(&hashed_file)
        .status()
        .unwrap()
        .success());
    let hashed = std::fs::read_to_string(&hashed_file).unwrap();
    assert!(hashed.starts_with("|1|"), "{hashed}");
    let case = |what, user: String, global: String, strict, accept| HostCase {
        what,
        user,
        global,
        strict,
        accept,
        ssh_accepts: accept,
    };
    // ssh 9.2 warns of a key revoked under the bare host, then treats the host as new.
    let ssh_only = |what, user: String, strict| HostCase {
        what,
        user,
        global: String::new(),
        strict,
        accept: false,
        ssh_accepts: strict != "yes",
    };
    let none = String::new;
    let cases = [
        case("plain [host]:port", trusted.clone(), none(), "yes", true),
        case(
            "revoked after the trusted line",
            format!("{trusted}@revoked {name} {key}\n"),
            none(),
            "yes",
            false,
        ),
        case(
            "@revoked *",
            format!("{trusted}@revoked * {key}\n"),
            none(),
            "yes",
            false,
        ),
        case(
            "revoked in the global file",
            trusted.clone(),
            format!("@revoked * {key}\n"),
            "yes",
            false,
        ),
        case(
            "@cert-authority only",
            format!("@cert-authority {name} {key}\n"),
            none(),
            "yes",
            false,
        ),
        case(
            "wildcard",
            format!("[127.0.0.?]:* {key}\n"),
            none(),
            "yes",
            true,
        ),
        case(
            "negated",
            format!("[127.0.0.*]:*,!{name} {key}\n"),
            none(),
            "yes",
            false,
        ),
        case("hashed", hashed.clone(), none(), "yes", true),
        // ssh falls back to the bare host when [host]:port is not listed at all.
        case(
            "port 22 entry only",
            format!("127.0.0.1 {key}\n"),
            none(),
            "yes",
            true,
        ),
        case(
            "port 22 entry with another key",
            format!("127.0.0.1 {wrong}\n"),
            none(),
            "yes",
            false,
        ),
        // Regression: a key revoked under the bare host came out "unknown", so accept-new
        // recorded and accepted it.
        ssh_only(
            "port 22 @revoked, yes",
            format!("@revoked 127.0.0.1 {key}\n"),
            "yes",
        ),
        ssh_only(
            "port 22 @revoked, accept-new",
            format!("@revoked 127.0.0.1 {key}\n"),
            "accept-new",
        ),
        ssh_only(
            "port 22 @revoked, no",
            format!("@revoked 127.0.0.1 {key}\n"),
            "no",
        ),
        case(
            "wrong key",
            format!("{name} {wrong}\n"),
            none(),
            "yes",
            false,
        ),
        case("global file only", none(), trusted.clone(), "yes", true),
        case("unknown, yes", none(), none(), "yes", false),
        case("unknown, ask", none(), none(), "ask", false),
        case("unknown, accept-new", none(), none(), "accept-new", true),
        case("unknown, no", none(), none(), "no", true),
        case(
            "wrong key, accept-new",
            format!("{name} {wrong}\n"),
            none(),
            "accept-new",
            false,
        ),
    ];
    for c in &cases {
        let ssh = ssh_accepts(&sshd, dir.path(), c);
        let (native, user) = native_accepts(&sshd, dir.path(), c);
        assert_eq!(ssh, c.ssh_accepts, "ssh on {}", c.what);
        assert_eq!(native, c.accept, "native client on {}", c.what);
        if !c.user.contains('@') && !c.user.is_empty() {
            let ours = sshtune::transport::known_hosts::status(
                [c.user.as_str()],
                &name,
                key_blob(&key).as_slice(),
            );
            let found = ours != sshtune::transport::known_hosts::Status::Unknown;
            assert_eq!(
                keygen_finds(&dir.path().join("ssh_user"), &name),
                found,
                "ssh-keygen -F on {}",
                c.what
            );
        }
        // accept-new and no record the key as ssh does (the CLI test below checks that ssh
        // then trusts what we wrote).
        if c.user.is_empty() && c.global.is_empty() && c.accept {
            let written = std::fs::read_to_string(&user).unwrap();
            assert_eq!(written, format!("{name} {key}\n"), "{}", c.what);
        }
    }
}

fn key_blob(openssh: &str) -> Vec<u8> {
    use base64ct::Encoding as _;
    base64ct::Base64::decode_vec(openssh.split_whitespace().nth(1).unwrap()).unwrap()
}

/// Through the CLI: `ssh -G` decides the files and the policy. accept-new with HashKnownHosts
/// records a hashed line that `ssh-keygen -F` finds and a strict `ssh` then trusts; a
/// revocation in the global file stops the bench before any transfer.
#[test]
fn native_bench_follows_ssh_config_for_host_keys() {
    let _lock = support::shared();
    let sshd = EmbeddedSshd::start("").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (user, global) = (dir.path().join("user"), dir.path().join("global"));
    std::fs::write(&global, "").unwrap();
    let name = format!("[127.0.0.1]:{}", sshd.port);
    let bench = |strict: &str| {
        let mut cmd = support::sshtune();
        cmd.args(support::native::BENCH_LOCALHOST)
            .args(["-p", &sshd.port.to_string()])
            .arg("-i")
            .arg(sshd.dir().join("client_ed25519"))
            .args(["-o", &format!("UserKnownHostsFile={}", user.display())])
            .args(["-o", &format!("GlobalKnownHostsFile={}", global.display())])
            .args(["-o", &format!("StrictHostKeyChecking={strict}")])
            .args(["-o", "HashKnownHosts=yes"])
            .args(support::quick_bench("aes128-ctr", "1M"))
            .args(["--macs", "hmac-sha2-256", "--direction", "upload"])
            .args(["--format", "json", "--quiet"]);
        support::output(&mut cmd)
    };
    let o = bench("yes");
    assert!(!o.status.success());
    assert!(
        support::stderr(&o).contains("is not in"),
        "{}",
        support::stderr(&o)
    );
    let o = bench("accept-new");
    assert!(o.status.success(), "{}", support::stderr(&o));
    let written = std::fs::read_to_string(&user).unwrap();
    assert!(
        written.starts_with("|1|") && written.lines().count() == 1,
        "{written}"
    );
    assert!(keygen_finds(&user, &name), "{written}");
    let c = HostCase {
        what: "recorded by the native client",
        user: written.clone(),
        global: String::new(),
        strict: "yes",
        accept: true,
        ssh_accepts: true,
    };
    assert!(ssh_accepts(&sshd, dir.path(), &c), "ssh trusts our line");
    let key = std::fs::read_to_string(sshd.dir().join("known_hosts")).unwrap();
    let key = key.split_once(' ').unwrap().1.trim();
    std::fs::write(&global, format!("@revoked * {key}\n")).unwrap();
    let o = bench("yes");
    assert!(!o.status.success());
    let e = support::stderr(&o);
    assert!(
        e.contains("@revoked") && e.trim().lines().count() == 1,
        "{e}"
    );
}
