//! The embedded default: a private OpenSSH `sshd` on 127.0.0.1 with throwaway keys, so
//! `sshtune bench` with no host measures this machine without touching any real config.

use crate::process::{find_program, last_line, run_capture, ChildGuard};
use crate::target::{ssh_query, SshTarget};
use anyhow::{bail, Context, Result};
use std::fs;
use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INSTALL_HINT: &str = "no OpenSSH server (sshd) found: install it (Debian/Ubuntu: \
    apt-get install openssh-server; Fedora: dnf install openssh-server) or pass a HOST";

/// How to start the private sshd when the loopback default does not fit (tests put it in a
/// network namespace or a CPU-limited cgroup).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Extra sshd_config lines.
    pub extra: String,
    /// Environment for the sessions. sshd honours only its first `SetEnv` line, so variables
    /// go here rather than into `extra`, where they would silently replace ours.
    pub env: Vec<(String, String)>,
    /// Address to listen on (127.0.0.1 when None).
    pub listen: Option<IpAddr>,
    /// A command prefix that starts sshd elsewhere, e.g. `ip netns exec NS`; it must end by
    /// exec-ing its arguments so the pid we hold stays sshd's. With a wrapper the address may be
    /// unreachable from here, so readiness is taken from the pid file sshd writes after binding.
    pub wrapper: Vec<String>,
}

/// A running private sshd. Dropping it stops the server and deletes every file it used.
pub struct EmbeddedSshd {
    // Field order matters: the server stops before its directory disappears.
    child: ChildGuard,
    dir: tempfile::TempDir,
    pub port: u16,
    pub target: SshTarget,
}

impl EmbeddedSshd {
    /// Starts sshd with every cipher and MAC the local OpenSSH supports. `extra` config lines
    /// come first, so they win over the defaults (sshd keeps the first value of a keyword);
    /// tests use it to change one setting.
    pub fn start(extra: &str) -> Result<Self> {
        Self::start_with(&Options {
            extra: extra.to_string(),
            ..Options::default()
        })
    }

    /// Like `start`, with a listen address and a command wrapper.
    pub fn start_with(opts: &Options) -> Result<Self> {
        let listen = opts.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let sshd = find_program("sshd").context(INSTALL_HINT)?;
        let dir = tempfile::Builder::new()
            .prefix("sshtune-sshd-")
            .tempdir()
            .context("creating a temporary directory for the embedded sshd")?;
        let host_key = keygen(dir.path(), "host_ed25519")?;
        let client_key = keygen(dir.path(), "client_ed25519")?;
        fs::copy(
            client_key.with_extension("pub"),
            dir.path().join("authorized_keys"),
        )
        .context("writing authorized_keys")?;
        let user = nix::unistd::User::from_uid(nix::unistd::getuid())
            .ok()
            .flatten()
            .map(|u| u.name)
            .context("cannot find the current user's name")?;
        ensure_privsep_dir()?;
        let ciphers = ssh_query("cipher")?.join(",");
        let macs = ssh_query("mac")?.join(",");

        let mut last_error = String::new();
        for _attempt in 0..5 {
            let port = free_port()?;
            let config = dir.path().join("sshd_config");
            let _ = fs::remove_file(dir.path().join("sshd.pid"));
            let mut text = opts.extra.clone();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&config_text(
                dir.path(),
                listen,
                port,
                &host_key,
                &ciphers,
                &macs,
                account_locked(&user),
            ));
            text.push_str(&setenv_line(&opts.env));
            fs::write(&config, &text)?;
            let log = dir.path().join("sshd.log");
            let mut cmd = match opts.wrapper.split_first() {
                Some((prog, args)) => {
                    let mut c = Command::new(prog);
                    c.args(args).arg(&sshd);
                    c
                }
                None => Command::new(&sshd),
            };
            cmd.args(["-D", "-e", "-f"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(&log)?)
                .process_group(0);
            let mut child = ChildGuard::spawn_group_kept(&mut cmd, "the embedded sshd")?;
            let ready = if opts.wrapper.is_empty() {
                wait_ready(&mut child, listen, port, &log)
            } else {
                wait_pidfile(&mut child, &dir.path().join("sshd.pid"), &log)
            };
            match ready {
                Ok(()) => {
                    let known_hosts = dir.path().join("known_hosts");
                    let pubkey = fs::read_to_string(host_key.with_extension("pub"))?;
                    let key: Vec<&str> = pubkey.split_whitespace().take(2).collect();
                    fs::write(
                        &known_hosts,
                        format!("[{listen}]:{port} {}\n", key.join(" ")),
                    )?;
                    let mut target = client_target(port, &user, &client_key, &known_hosts);
                    target.destination = listen.to_string();
                    return Ok(Self {
                        child,
                        dir,
                        port,
                        target,
                    });
                }
                Err(e) => {
                    child.stop();
                    last_error = e.to_string();
                    if !last_error.contains("Address already in use") {
                        break;
                    }
                }
            }
        }
        bail!("the embedded sshd did not start: {last_error}")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops the server and every session it serves now (tests use it to simulate a server
    /// dying mid-run).
    pub fn kill(&mut self) {
        self.child.stop();
    }
}

impl Drop for EmbeddedSshd {
    fn drop(&mut self) {
        self.child.stop();
    }
}

fn keygen(dir: &Path, name: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    run_capture(
        Command::new("ssh-keygen")
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "sshtune-embedded",
                "-f",
            ])
            .arg(&path),
    )
    .context("generating a temporary key with ssh-keygen")?;
    Ok(path)
}

/// sshd started as root insists on its privilege-separation directory. It is
/// openssh-server's own (its service creates it at boot), so it is left in place: removing it
/// would break any other sshd on the machine, including a concurrent embedded one.
fn ensure_privsep_dir() -> Result<()> {
    let dir = Path::new("/run/sshd");
    if nix::unistd::getuid().is_root() && !dir.is_dir() {
        fs::create_dir_all(dir)
            .context("creating sshd's privilege separation directory /run/sshd")?;
    }
    Ok(())
}

/// Whether `user`'s password is locked (`!` in /etc/shadow, as for root on Ubuntu and in many
/// VMs). Without PAM sshd refuses a locked account even for a key; with PAM the key is enough,
/// but PAM's session modules are slower and can fail in containers, so PAM is used only then.
/// An unreadable shadow file (not root) means sshd cannot check it either.
fn account_locked(user: &str) -> bool {
    fs::read_to_string("/etc/shadow")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.strip_prefix(user)?
                    .strip_prefix(':')
                    .map(|rest| rest.starts_with('!'))
            })
        })
        .unwrap_or(false)
}

/// Asks the kernel for a free port. Another process may grab it before sshd binds; the
/// caller retries on "Address already in use".
fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(l.local_addr()?.port())
}

fn config_text(
    dir: &Path,
    listen: IpAddr,
    port: u16,
    host_key: &Path,
    ciphers: &str,
    macs: &str,
    locked: bool,
) -> String {
    let d = dir.display();
    let pam = if locked { "yes" } else { "no" };
    format!(
        "# private sshd started by sshtune bench; deleted when the run ends\n\
         Port {port}\n\
         ListenAddress {listen}\n\
         HostKey {}\n\
         PidFile {d}/sshd.pid\n\
         AuthorizedKeysFile {d}/authorized_keys\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM {pam}\n\
         StrictModes no\n\
         PermitRootLogin prohibit-password\n\
         Ciphers {ciphers}\n\
         MACs {macs}\n\
         Compression no\n\
         X11Forwarding no\n\
         AllowTcpForwarding no\n\
         AllowAgentForwarding no\n\
         PermitTunnel no\n\
         PrintMotd no\n\
         MaxStartups 100:30:200\n\
         MaxSessions 100\n\
         LogLevel ERROR\n",
        host_key.display()
    )
}

/// The session environment. `SHLVL=1` makes the user's bash see itself as a nested shell, so
/// it does not source ~/.bashrc for the remote command as it otherwise does under sshd: the
/// measuring scripts need no interactive setup, and rc files that stall (a version manager
/// waiting on a stale lock, a prompt asking a question) made sessions hang before READY.
fn setenv_line(env: &[(String, String)]) -> String {
    let mut words = vec!["SHLVL=1".to_string()];
    words.extend(
        env.iter()
            .filter(|(k, _)| k != "SHLVL")
            .map(|(k, v)| format!("\"{k}={v}\"")),
    );
    format!("SetEnv {}\n", words.join(" "))
}

fn client_target(port: u16, user: &str, key: &Path, known_hosts: &Path) -> SshTarget {
    let o = |s: String| ["-o".to_string(), s];
    let mut options = vec![
        "-F".into(),
        "/dev/null".into(),
        "-p".into(),
        port.to_string(),
        "-l".into(),
        user.to_string(),
        "-i".into(),
        key.display().to_string(),
    ];
    for opt in [
        "IdentitiesOnly=yes".to_string(),
        "IdentityAgent=none".to_string(),
        format!("UserKnownHostsFile={}", known_hosts.display()),
        "GlobalKnownHostsFile=/dev/null".to_string(),
        "StrictHostKeyChecking=yes".to_string(),
        "UpdateHostKeys=no".to_string(),
    ] {
        options.extend(o(opt));
    }
    SshTarget {
        destination: "127.0.0.1".into(),
        options,
        embedded: true,
    }
}

/// Ready means: sshd accepts a connection and sends its identification.
fn wait_ready(child: &mut ChildGuard, addr: IpAddr, port: u16, log: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(status) = child.child_mut().try_wait()? {
            let text = fs::read_to_string(log).unwrap_or_default();
            bail!("sshd exited ({status}): {}", last_line(&text));
        }
        if let Ok(s) = TcpStream::connect((addr, port)) {
            s.set_read_timeout(Some(Duration::from_secs(2)))?;
            let mut line = String::new();
            if BufReader::new(s).read_line(&mut line).is_ok() && line.starts_with("SSH-") {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("sshd did not accept connections on {addr}:{port} within 10 s")
}

/// sshd (without -d) writes its pid file only once its listeners are bound.
fn wait_pidfile(child: &mut ChildGuard, pidfile: &Path, log: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(status) = child.child_mut().try_wait()? {
            let text = fs::read_to_string(log).unwrap_or_default();
            bail!("sshd exited ({status}): {}", last_line(&text));
        }
        let pid = fs::read_to_string(pidfile).unwrap_or_default();
        if pid.trim().parse::<u32>().is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("sshd did not write its pid file within 10 s")
}

use std::os::unix::process::CommandExt as _;
