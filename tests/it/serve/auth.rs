//! Authentication on `sshtune serve` against the real OpenSSH: one authorized_keys file read
//! by a private sshd and by serve, the real `ssh` logging in with each listed key, the same
//! accept/refuse expected from both (docs/security.md lists the deliberate
//! differences); user names; and the native client's ECDSA and RSA keys from files and from
//! a real ssh-agent.

use crate::support;

use sshtune::embedded::EmbeddedSshd;
use sshtune::transport::client::{connect, ClientConfig, Exec};
use sshtune::transport::userkey::{self, Agent, UserKey};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::native::{start_serve_listing, Serve};

fn keygen(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    support::keygen_with(&dir.join(name), &[&["-C", name], args].concat())
}

fn public(key: &Path) -> String {
    std::fs::read_to_string(key.with_extension("pub"))
        .unwrap()
        .trim()
        .to_string()
}

/// Whether the real `ssh` gets a session (any exit status but ssh's own 255 "denied").
fn ssh_logs_in(port: u16, known: &Path, key: &Path, user: &str, extra: &[&str]) -> bool {
    let out = support::native::openssh_client(port, known, key, user)
        .args(extra)
        .args(["127.0.0.1", "sink"])
        .stdin(Stdio::null())
        .output()
        .expect("ssh runs");
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(255) {
        assert!(
            err.contains("Permission denied"),
            "ssh failed otherwise: {err}"
        );
        return false;
    }
    true
}

struct Case {
    what: &'static str,
    key: PathBuf,
    user: String,
    client: &'static [&'static str],
    /// Expected on sshd, expected on serve.
    expect: (bool, bool),
}

#[test]
fn authorized_keys_same_verdicts_as_sshd() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ed = |n: &str| keygen(d, n, &["-t", "ed25519"]);
    let mut lines = Vec::new();
    let mut cases = Vec::new();
    let mut add = |what: &'static str, line: String, key: PathBuf, expect: (bool, bool)| {
        lines.push(line);
        cases.push(Case {
            what,
            key,
            user: support::user_name(),
            client: &[],
            expect,
        });
    };
    // Ed25519 keys behind each option: what the case is, the key's file name, what stands
    // before the key on its line, and the verdicts expected of sshd and of serve.
    for (what, name, options, expect) in [
        ("plain key", "plain", "", (true, true)),
        ("commented out", "commented", "# ", (false, false)),
        (
            "from other host",
            "from_other",
            "from=\"10.9.9.9\" ",
            (false, false),
        ),
        (
            "from 127.0.0.1",
            "from_lo",
            "from=\"127.0.0.1\" ",
            (true, true),
        ),
        (
            "from !127.0.0.1,*",
            "from_neg",
            "from=\"!127.0.0.1,*\" ",
            (false, false),
        ),
        (
            "from 127.0.0.0/8",
            "from_cidr",
            "from=\"127.0.0.0/8\" ",
            (true, true),
        ),
        (
            "expired",
            "expired",
            "expiry-time=\"20200101\" ",
            (false, false),
        ),
        (
            "expires in 2099",
            "future",
            "expiry-time=\"20991231\" ",
            (true, true),
        ),
        ("restrict", "restrict", "restrict ", (true, true)),
        // The one deliberate difference: sshd runs /bin/false, serve runs only built-ins and
        // refuses the key rather than ignore the restriction.
        (
            "command=/bin/false",
            "false",
            "command=\"/bin/false\" ",
            (true, false),
        ),
        ("command=sink", "sink", "command=\"sink\" ", (true, true)),
        ("cert-authority", "ca", "cert-authority ", (false, false)),
    ] {
        let k = ed(name);
        add(what, format!("{options}{}", public(&k)), k, expect);
    }
    let k = keygen(d, "p256", &["-t", "ecdsa", "-b", "256"]);
    add("ecdsa-sha2-nistp256", public(&k), k, (true, true));
    let k = keygen(d, "p384", &["-t", "ecdsa", "-b", "384"]);
    add("ecdsa-sha2-nistp384", public(&k), k, (true, true));
    let rsa = keygen(d, "rsa2048", &["-t", "rsa", "-b", "2048"]);
    add("rsa 2048", public(&rsa), rsa.clone(), (true, true));
    let k = keygen(d, "rsa1024", &["-t", "rsa", "-b", "1024"]);
    add("rsa 1024", public(&k), k, (false, false));
    // Lines that are no key come first: they must not stop the lines after them.
    let ak = format!(
        "this is not a key\nssh-ed25519 AAAA!!!notbase64 broken\n{}\n",
        lines.join("\n")
    );
    let plain = cases[0].key.clone();
    cases.push(Case {
        what: "ssh-rsa (SHA-1) signature",
        key: rsa,
        user: support::user_name(),
        client: &["-o", "PubkeyAcceptedAlgorithms=ssh-rsa"],
        expect: (false, false),
    });
    cases.push(Case {
        what: "another user name",
        key: plain,
        user: "nobodyatall".into(),
        client: &[],
        expect: (false, false),
    });

    // sshd with OpenSSH's defaults except RequiredRSASize, raised to serve's fixed floor.
    let sshd = EmbeddedSshd::start("RequiredRSASize 2048\n").unwrap();
    std::fs::write(sshd.dir().join("authorized_keys"), &ak).unwrap();
    let sshd_known = sshd.dir().join("known_hosts");
    let me = support::user_name();
    let serve = start_serve_listing(&[], &ak, &["--user", &me]);
    let (_, serve_known) = serve.ssh_files();

    let run = |port: u16, known: &Path| -> Vec<bool> {
        cases
            .iter()
            .map(|c| ssh_logs_in(port, known, &c.key, &c.user, c.client))
            .collect()
    };
    let (by_sshd, by_serve) = std::thread::scope(|s| {
        let a = s.spawn(|| run(sshd.port, &sshd_known));
        let b = run(serve.port, &serve_known);
        (a.join().unwrap(), b)
    });
    let mut wrong = Vec::new();
    for ((c, got_sshd), got_serve) in cases.iter().zip(by_sshd).zip(by_serve) {
        if (got_sshd, got_serve) != c.expect {
            wrong.push(format!(
                "{}: sshd {got_sshd} serve {got_serve}, expected {:?}",
                c.what, c.expect
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}\nserve log:\n{}", serve.log());
    let log = serve.log();
    for why in [
        "from=\"10.9.9.9\" does not allow 127.0.0.1",
        "forced command \"/bin/false\" is not a serve built-in",
        "key expired",
        "cert-authority",
        "fewer than 2048",
        "invalid user \"nobodyatall\"",
    ] {
        assert!(log.contains(why), "no log line with {why:?}:\n{log}");
    }
}

/// A real ssh-agent on a private socket, stopped on drop.
struct AgentProc {
    child: std::process::Child,
    sock: PathBuf,
}

impl AgentProc {
    fn start(dir: &Path) -> Self {
        let sock = dir.join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !sock.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, sock }
    }

    fn add(&self, key: &Path) {
        let st = Command::new("ssh-add")
            .arg("-q")
            .arg(key)
            .env("SSH_AUTH_SOCK", &self.sock)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn native_login(serve: &Serve, user: &str, key: Arc<dyn UserKey>) -> Result<(), String> {
    let (_, known) = serve.ssh_files();
    let cfg = ClientConfig {
        user: user.into(),
        key,
        known_hosts: known,
        prefs: sshtune::transport::kex::Preferences::from_catalog(false),
        opts: Default::default(),
        window: 1 << 20,
        packet_size: 32768,
        connect_timeout: Duration::from_secs(10),
    };
    let t = connect("127.0.0.1", serve.port, &cfg).map_err(|e| e.to_string())?;
    let e = Exec::start(t, "stat", cfg.window, cfg.packet_size).map_err(|e| e.to_string())?;
    assert_eq!(e.finish().unwrap().0, Some(0));
    Ok(())
}

#[test]
fn native_client_ecdsa_and_rsa_keys_from_files_and_agent() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = [
        keygen(d, "p256", &["-t", "ecdsa", "-b", "256"]),
        keygen(d, "p384", &["-t", "ecdsa", "-b", "384"]),
        keygen(d, "rsa", &["-t", "rsa", "-b", "2048"]),
    ];
    let listed: String = keys.iter().map(|k| public(k) + "\n").collect();
    let serve = start_serve_listing(&[], &listed, &[]);
    let agent = AgentProc::start(d);
    for k in &keys {
        native_login(&serve, "u", userkey::load(k).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", k.display(), serve.log()));
        agent.add(k);
    }
    let a = Agent::connect(&agent.sock).unwrap();
    // RSA appears twice (rsa-sha2-512 and -256).
    assert_eq!(a.identities().len(), 4);
    native_login(&serve, "u", Arc::new(a)).unwrap();

    // The native ECDSA signature is one the real sshd accepts too.
    let sshd = EmbeddedSshd::start("").unwrap();
    std::fs::write(sshd.dir().join("authorized_keys"), &listed).unwrap();
    for k in &keys[..2] {
        let cfg = ClientConfig {
            user: support::user_name(),
            key: userkey::load(k).unwrap(),
            known_hosts: sshd.dir().join("known_hosts"),
            prefs: sshtune::transport::kex::Preferences::from_catalog(false),
            opts: Default::default(),
            window: 1 << 20,
            packet_size: 32768,
            connect_timeout: Duration::from_secs(10),
        };
        let t = connect("127.0.0.1", sshd.port, &cfg).unwrap();
        let e = Exec::start(t, "true", cfg.window, cfg.packet_size).unwrap();
        assert_eq!(e.finish().unwrap().0, Some(0));
    }
}

#[test]
fn login_as_an_unlisted_user_is_refused_and_logged_sanitised() {
    let _lock = support::shared();
    let serve = start_serve_listing(&[], "", &[]);
    let err = native_login(&serve, "evil\x1b[2J", serve.user_key.clone()).unwrap_err();
    assert!(err.contains("no key accepted"), "{err}");
    native_login(&serve, "tester", serve.user_key.clone()).unwrap();
    // The refusal is logged as its connection ends, which may come after the next login.
    let log = wait_for_log(&serve, "invalid user");
    assert!(log.contains("invalid user \"evil\\x1b[2J\""), "{log}");
    assert!(!log.contains('\x1b'));
}

/// Regression: a refused user name was logged on each of a stranger's attempts and an
/// unknown key not at all. The real `ssh` offering three unknown keys, as a listed user and
/// as an unlisted one: each connection gets one line, naming the keys or the user alike.
#[test]
fn a_strangers_attempts_fold_into_one_log_line() {
    let _lock = support::shared();
    let serve = start_serve_listing(&[], "", &[]);
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<PathBuf> = (0..3)
        .map(|i| keygen(dir.path(), &format!("stranger{i}"), &["-t", "ed25519"]))
        .collect();
    let (_, known) = serve.ssh_files();
    for user in ["u", "root"] {
        let mut ssh = support::native::openssh_client(serve.port, &known, &keys[0], user);
        for k in &keys[1..] {
            ssh.arg("-i").arg(k);
        }
        let out = ssh.args(["127.0.0.1", "stat"]).output().unwrap();
        assert_eq!(out.status.code(), Some(255), "{out:?}");
    }
    let log = wait_for_log(&serve, "\"root\"");
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("refused")).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("3 login attempts refused: failed publickey for \"u\": key SHA256:"));
    assert_eq!(
        lines[0].matches("is not in authorized_keys").count(),
        3,
        "{log}"
    );
    assert!(lines[1].ends_with(
        "3 login attempts refused: invalid user \"root\" (serve accepts only tester, u; see --user) (3 times)"
    ), "{log}");
}

/// The server log once it mentions `what` (the line is written as the connection ends).
fn wait_for_log(serve: &Serve, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !serve.log().contains(what) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    serve.log()
}

#[test]
fn serve_refuses_a_user_name_that_cannot_be_one() {
    let _lock = support::shared();
    let o = support::output(support::sshtune().args(["serve", "--user", "a b"]));
    assert_eq!(o.status.code(), Some(2));
    let err = support::stderr(&o);
    assert!(err.contains("\"a b\" is not a user name"), "{err}");
}

/// serve reads the same keys out of an authorized_keys file as `ssh-keygen -l` does:
/// comments, leading blanks, tabs, quoted options holding spaces, commas and `#`.
#[test]
fn same_keys_as_ssh_keygen_reads() {
    let _lock = support::shared();
    use sshtune::serve::authorized::AuthorizedKeys;
    use sshtune::transport::hostkey::fingerprint;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let k: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|n| public(&keygen(d, n, &["-t", "ed25519"])))
        .collect();
    let tabbed = k[5].replacen(' ', "\t", 2);
    let text = format!(
        "# {}\n   #{}\ncommand=\"echo #x, y\",no-pty {}\n \t{}\ngarbage line\n\
         from=\"1.2.3.4\"\t{}\nrestrict {}\n{tabbed}\n",
        k[0], k[1], k[2], k[3], k[4], k[1]
    );
    let file = d.join("ak");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new("ssh-keygen")
        .arg("-lf")
        .arg(&file)
        .output()
        .unwrap();
    let mut theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .collect();
    let mut ours: Vec<String> = AuthorizedKeys::parse(&text)
        .entries()
        .iter()
        .map(|e| fingerprint(&e.blob))
        .collect();
    theirs.sort();
    ours.sort();
    assert_eq!(theirs.len(), 5, "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(ours, theirs);
}

/// A key with `command="stat"` runs `stat` whatever the client asks for.
#[test]
fn forced_builtin_replaces_the_requested_command() {
    let _lock = support::shared();
    let dir = tempfile::tempdir().unwrap();
    let k = keygen(dir.path(), "forced", &["-t", "ed25519"]);
    let line = format!("restrict,command=\"stat\" {}\n", public(&k));
    let serve = start_serve_listing(&[], &line, &[]);
    let (_, known) = serve.ssh_files();
    let out = Command::new("ssh")
        .args(["-F", "/dev/null", "-p", &serve.port.to_string(), "-i"])
        .arg(&k)
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", known.display()))
        .args(["-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes"])
        .args(["-o", "IdentityAgent=none", "-T", "-l", "tester"])
        .args(["127.0.0.1", "source 1M"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = support::ok(&out);
    assert!(text.contains("SSHTUNE-INFO cores="), "{text}");
    assert!(!text.contains("SSHTUNE-READY"), "{text}");
}
