//! How our own connections reach a target: straight over TCP, or — when `ssh -G` reports a
//! `ProxyJump` or `ProxyCommand` — through the same proxy process ssh would start, so the
//! probe, the banner read and the native engine go wherever `ssh HOST` goes.

use crate::target::Resolved;
use crate::transport::stream::{ChildStream, Stream};
use anyhow::{bail, Result};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::Command;
use std::time::Duration;

/// The process that carries a proxied connection: its argument vector, ready to spawn again
/// for every connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    argv: Vec<String>,
    what: String,
}

impl Proxy {
    /// The proxy `ssh` would use for `r`, if any; `options` are the user's ssh options (a
    /// `-F` among them applies to the jump host too, as ssh passes it on). `ProxyCommand`
    /// is preferred when ssh -G somehow reports both.
    pub fn of(r: &Resolved, options: &[String], destination: &str) -> Option<Self> {
        if let Some(cmd) = &r.proxy_command {
            let original = destination.rsplit('@').next().unwrap_or(destination);
            let line = expand(cmd, &r.hostname, r.port, &r.user, original);
            return Some(Self {
                argv: vec!["sh".into(), "-c".into(), format!("exec {line}")],
                what: format!("ProxyCommand `{line}`"),
            });
        }
        let spec = r.proxy_jump.as_deref()?;
        let argv = jump_argv(spec, options, &r.hostname, r.port);
        Some(Self {
            what: format!("`{}`", argv.join(" ")),
            argv,
        })
    }

    /// Starts the process; the connection is its stdin/stdout, and it is killed when the
    /// stream (every clone of it) is dropped.
    pub fn connect(&self) -> Result<Stream> {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        Ok(Stream::Child(ChildStream::spawn(&mut cmd, &self.what)?))
    }

    pub fn describe(&self) -> &str {
        &self.what
    }
}

/// Opens a connection to the target `r` describes, through its proxy when it has one.
pub fn dial(
    r: &Resolved,
    options: &[String],
    destination: &str,
    timeout: Duration,
) -> Result<Stream> {
    match Proxy::of(r, options, destination) {
        Some(p) => p.connect(),
        None => {
            let s = tcp_in(&r.hostname, r.port, timeout, r.address_family.as_deref())?;
            s.set_write_timeout(Some(timeout))?;
            Ok(s.into())
        }
    }
}

/// A direct TCP connection, trying each address `host` resolves to.
pub fn tcp(host: &str, port: u16, timeout: Duration) -> Result<TcpStream> {
    tcp_in(host, port, timeout, None)
}

/// A direct TCP connection to the addresses of `host` in `family` (ssh's `AddressFamily`:
/// `inet`, `inet6`; None: all), each tried in turn.
fn tcp_in(host: &str, port: u16, timeout: Duration, family: Option<&str>) -> Result<TcpStream> {
    let addrs: Vec<_> = match (host, port).to_socket_addrs() {
        Ok(a) => a
            .filter(|a| match family {
                Some("inet") => a.is_ipv4(),
                Some("inet6") => a.is_ipv6(),
                _ => true,
            })
            .collect(),
        Err(e) => bail!("cannot resolve host {host:?}: {e}"),
    };
    if addrs.is_empty() && family.is_some() {
        bail!(
            "host {host:?} has no {} address",
            if family == Some("inet") {
                "IPv4"
            } else {
                "IPv6"
            }
        );
    }
    let mut last_err = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last_err = Some((addr, e)),
        }
    }
    match last_err {
        Some((addr, e)) => bail!("cannot connect to {host} port {port} ({addr}): {e}"),
        None => bail!("cannot resolve host {host:?}: no addresses"),
    }
}

/// `ProxyCommand` tokens as ssh expands them: `%h` host, `%p` port, `%r` user, `%n` the
/// host as given, `%%` a percent sign; others are left as written.
pub fn expand(cmd: &str, host: &str, port: u16, user: &str, original: &str) -> String {
    let mut out = String::new();
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('p') => out.push_str(&port.to_string()),
            Some('r') => out.push_str(user),
            Some('n') => out.push_str(original),
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `ssh -W host:port` to the last hop of a `ProxyJump` list, the earlier hops as its own
/// `-J`: the command ssh itself builds for `-J`.
fn jump_argv(spec: &str, options: &[String], host: &str, port: u16) -> Vec<String> {
    let (earlier, last) = match spec.rsplit_once(',') {
        Some((a, b)) => (Some(a), b),
        None => (None, spec),
    };
    let last = last.strip_prefix("ssh://").unwrap_or(last);
    let (user, hostport) = match last.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, last),
    };
    let (jump_host, jump_port) = split_host_port(hostport);
    let mut argv = vec!["ssh".to_string()];
    if let Some(i) = options.iter().position(|o| o == "-F") {
        if let Some(file) = options.get(i + 1) {
            argv.extend(["-F".into(), file.clone()]);
        }
    }
    if let Some(u) = user {
        argv.extend(["-l".into(), u.to_string()]);
    }
    if let Some(p) = jump_port {
        argv.extend(["-p".into(), p.to_string()]);
    }
    if let Some(e) = earlier {
        argv.extend(["-J".into(), e.to_string()]);
    }
    let forward = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    argv.extend(["-W".into(), forward, "--".into(), jump_host.to_string()]);
    argv
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(s: &str) -> (&str, Option<&str>) {
    if let Some(rest) = s.strip_prefix('[') {
        if let Some((h, tail)) = rest.split_once(']') {
            return (h, tail.strip_prefix(':'));
        }
    }
    match s.split_once(':') {
        Some((h, p)) if !p.contains(':') => (h, Some(p)),
        _ => (s, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_tokens_like_ssh() {
        assert_eq!(
            expand("nc %h %p # %r %n %% %x", "10.0.0.2", 2222, "me", "nas"),
            "nc 10.0.0.2 2222 # me nas % %x"
        );
    }

    #[test]
    fn jump_command_is_the_one_ssh_builds() {
        let opts = ["-F".to_string(), "/c".into(), "-i".into(), "/k".into()];
        assert_eq!(
            jump_argv("a,u@gw:2022", &opts, "127.0.0.1", 22).join(" "),
            "ssh -F /c -l u -p 2022 -J a -W 127.0.0.1:22 -- gw"
        );
        assert_eq!(
            jump_argv("ssh://[fe80::1]:2", &[], "::1", 22).join(" "),
            "ssh -p 2 -W [::1]:22 -- fe80::1"
        );
    }

    #[test]
    fn no_proxy_means_direct() {
        let r = Resolved {
            hostname: "h".into(),
            port: 22,
            ..Resolved::default()
        };
        assert_eq!(Proxy::of(&r, &[], "h"), None);
    }
}
