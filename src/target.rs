//! Who we talk to: a destination as `ssh` takes it, resolved by `ssh -G` so aliases, ports and
//! users from the user's own config apply.

pub mod error;

pub use error::SshError;

use crate::process::run_capture;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;

/// A destination plus the ssh options the user passed through.
#[derive(Debug, Clone, Default)]
pub struct SshTarget {
    /// `host`, `user@host` or an alias.
    pub destination: String,
    /// Options placed before the destination on every ssh command line (`-p`, `-l`, `-i`, `-F`,
    /// `-o ...`).
    pub options: Vec<String>,
    /// Set for our private loopback server; never for a user's host.
    pub embedded: bool,
}

/// What `ssh -G` says the client will do.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub hostname: String,
    pub port: u16,
    pub user: String,
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    /// `KexAlgorithms`, in the client's order of preference.
    pub kex_algorithms: Vec<String>,
    /// `UserKnownHostsFile`, `~` expanded: the native client checks host keys where ssh would.
    pub known_hosts: Vec<PathBuf>,
    /// `GlobalKnownHostsFile`, read after the user files.
    pub global_known_hosts: Vec<PathBuf>,
    /// `StrictHostKeyChecking` as printed (`true`, `false`, `ask`, `accept-new`).
    pub strict_host_key_checking: Option<String>,
    /// `HashKnownHosts`: names ssh records are hashed.
    pub hash_known_hosts: bool,
    /// `HostKeyAlias`: the name looked up in known_hosts instead of host and port.
    pub host_key_alias: Option<String>,
    /// `IdentityFile` entries (`-i` first), `~` expanded; ssh lists its defaults here too.
    pub identity_files: Vec<PathBuf>,
    /// `ProxyJump`, as given (`[user@]host[:port]`, comma-separated hops).
    pub proxy_jump: Option<String>,
    /// `ProxyCommand`, its `%` tokens not yet expanded.
    pub proxy_command: Option<String>,
    /// `AddressFamily`: `inet` or `inet6` restricts our own connections as it does ssh's;
    /// `any` (or nothing) takes every address.
    pub address_family: Option<String>,
}

/// Options that make every `ssh` we start measurable and non-interactive whatever the user's
/// config says; bench, ceiling and pipeline share them. Host-key checking is deliberately not
/// among them: that stays the user's decision.
#[rustfmt::skip]
const FIXED_OPTIONS: &[&str] = &[
    "-o", "BatchMode=yes",
    "-o", "Compression=no",
    // A multiplexed master connection would ignore -c: every run needs its own connection.
    "-o", "ControlMaster=no",
    "-o", "ControlPath=none",
    "-o", "ConnectTimeout=10",
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=3",
    "-o", "ClearAllForwardings=yes",
    "-o", "RequestTTY=no",
    "-x", "-a",
];

/// How chatty the ssh we start may be on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SshLog {
    /// ssh's default level: bench reads warnings too when it classifies a failure.
    Default,
    /// `LogLevel=ERROR`: pipeline's ssh runs under rsync, whose stderr we show as is.
    ErrorsOnly,
}

impl SshTarget {
    /// The ssh options of every run: the user's, then ours, then `-c`/`-m` when given.
    pub fn ssh_options(&self, cipher: Option<&str>, mac: Option<&str>, log: SshLog) -> Vec<String> {
        let mut v: Vec<String> = self.options.clone();
        v.extend(FIXED_OPTIONS.iter().map(|s| s.to_string()));
        if log == SshLog::ErrorsOnly {
            v.extend(["-o".to_string(), "LogLevel=ERROR".to_string()]);
        }
        if let Some(c) = cipher {
            v.extend(["-c".to_string(), c.to_string()]);
        }
        if let Some(m) = mac {
            v.extend(["-m".to_string(), m.to_string()]);
        }
        v
    }

    /// One `ssh` process running `remote_cmd` on the target.
    pub fn ssh_command(
        &self,
        cipher: Option<&str>,
        mac: Option<&str>,
        log: SshLog,
        remote_cmd: &str,
    ) -> Command {
        let mut cmd = Command::new("ssh");
        cmd.args(self.ssh_options(cipher, mac, log))
            .arg("--")
            .arg(&self.destination)
            .arg(remote_cmd);
        cmd
    }

    pub fn resolve(&self) -> Result<Resolved> {
        let mut cmd = Command::new("ssh");
        cmd.arg("-G").args(&self.options).arg(&self.destination);
        let out = run_capture(&mut cmd).context("resolving the destination with `ssh -G`")?;
        parse_ssh_g(&out)
    }

    /// What `ssh -G` says with no config file and none of the user's options: the client's
    /// built-in defaults, against which `resolve` shows what a config or `-o` chose.
    pub fn resolve_defaults(&self) -> Result<Resolved> {
        let mut cmd = Command::new("ssh");
        cmd.args(["-G", "-F", "/dev/null", "--"])
            .arg(&self.destination);
        let out = run_capture(&mut cmd).context("asking `ssh -G` for the client's defaults")?;
        parse_ssh_g(&out)
    }
}

/// Parses `ssh -G` output: one lowercase `keyword value` per line.
pub fn parse_ssh_g(text: &str) -> Result<Resolved> {
    let mut r = Resolved::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(' ') else {
            continue;
        };
        let list = || v.split(',').map(String::from).collect::<Vec<_>>();
        match k {
            "hostname" => r.hostname = v.to_string(),
            "port" => {
                r.port = v
                    .parse()
                    .with_context(|| format!("bad port {v:?} from ssh -G"))?
            }
            "user" => r.user = v.to_string(),
            "ciphers" => r.ciphers = list(),
            "macs" => r.macs = list(),
            "kexalgorithms" => r.kex_algorithms = list(),
            "userknownhostsfile" => {
                r.known_hosts = v.split_whitespace().map(expand_tilde).collect()
            }
            "globalknownhostsfile" => {
                r.global_known_hosts = v.split_whitespace().map(expand_tilde).collect()
            }
            "stricthostkeychecking" => r.strict_host_key_checking = Some(v.to_string()),
            "hashknownhosts" => r.hash_known_hosts = v == "yes",
            "hostkeyalias" => r.host_key_alias = Some(v.to_string()),
            "identityfile" => r.identity_files.push(expand_tilde(v)),
            "proxyjump" if v != "none" => r.proxy_jump = Some(v.to_string()),
            "proxycommand" if v != "none" => r.proxy_command = Some(v.to_string()),
            "addressfamily" if v != "any" => r.address_family = Some(v.to_string()),
            _ => {}
        }
    }
    if r.hostname.is_empty() || r.port == 0 {
        bail!("`ssh -G` gave no hostname/port");
    }
    Ok(r)
}

/// `ssh -G` prints paths as configured, `~/.ssh/...` included.
fn expand_tilde(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

/// Algorithms the local `ssh` supports (`ssh -Q cipher|mac`).
pub fn ssh_query(what: &str) -> Result<Vec<String>> {
    let out = run_capture(Command::new("ssh").args(["-Q", what]))
        .with_context(|| format!("asking the local ssh for its {what} list"))?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// The `OpenSSH_9.2p1, OpenSSL 3.0.19 ...` line of `ssh -V`.
pub fn ssh_version() -> Result<String> {
    let out = Command::new("ssh").arg("-V").output().context(
        "running `ssh -V` (is the OpenSSH client installed? apt-get install openssh-client)",
    )?;
    Ok(String::from_utf8_lossy(&out.stderr).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ssh_g() {
        let r =
            parse_ssh_g("user root\nhostname 127.0.0.1\nport 2222\nciphers a,b\nmacs m\n").unwrap();
        assert_eq!(
            (r.hostname.as_str(), r.port, r.user.as_str()),
            ("127.0.0.1", 2222, "root")
        );
        assert_eq!(r.ciphers, ["a", "b"]);
        let r = parse_ssh_g("hostname h\nport 22\nkexalgorithms k1,k2\n").unwrap();
        assert_eq!(r.kex_algorithms, ["k1", "k2"]);
        assert!(parse_ssh_g("user x\n").is_err());
        let r = parse_ssh_g(
            "hostname h\nport 22\nidentityfile /k/one\nidentityfile /k/two\n\
             userknownhostsfile /a/known /b/known2\n\
             globalknownhostsfile /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2\n\
             stricthostkeychecking accept-new\nhashknownhosts yes\nhostkeyalias nas\n",
        )
        .unwrap();
        assert_eq!(r.identity_files, [PathBuf::from("/k/one"), "/k/two".into()]);
        assert_eq!(
            r.known_hosts,
            [PathBuf::from("/a/known"), "/b/known2".into()]
        );
        assert_eq!(r.global_known_hosts.len(), 2);
        assert_eq!(r.strict_host_key_checking.as_deref(), Some("accept-new"));
        assert!(r.hash_known_hosts);
        assert_eq!(r.host_key_alias.as_deref(), Some("nas"));
        assert_eq!(r.proxy_jump, None);
        let r = parse_ssh_g("hostname h\nport 22\nproxyjump gw,u@x:2\nproxycommand nc %h %p\n")
            .unwrap();
        assert_eq!(r.proxy_jump.as_deref(), Some("gw,u@x:2"));
        assert_eq!(r.proxy_command.as_deref(), Some("nc %h %p"));
    }
}
