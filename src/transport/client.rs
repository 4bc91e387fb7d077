//! The client end: connect, check the host key, log in, run one command and move bytes.

use super::auth;
use super::channel::{Channel, Event};
use super::conn::{HostKeyCheck, Options, Role, Transport};
use super::error::{Error, Result};
use super::hostkey;
use super::kex::Preferences;
use super::known_hosts::{self, Decision, Policy, Status};
use super::stream::Stream;
use super::userkey::UserKey;
use crate::wire::connection::Request;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct ClientConfig {
    pub user: String,
    pub key: Arc<dyn UserKey>,
    /// known_hosts file the server's key must be listed in.
    pub known_hosts: PathBuf,
    pub prefs: Preferences,
    pub opts: Options,
    pub window: u32,
    pub packet_size: u32,
    pub connect_timeout: Duration,
}

/// Checks the server key as ssh would under `policy` (see `known_hosts.rs`); with accept-new
/// (or no) an unknown key is appended to the first user file.
pub fn host_key_check(policy: Policy, host: String, port: u16) -> HostKeyCheck {
    Box::new(move |blob: &[u8]| {
        let name = known_hosts::lookup_name(&host, port, policy.alias.as_deref());
        let mut texts = Vec::new();
        for path in policy.files() {
            match std::fs::read_to_string(path) {
                Ok(t) => texts.push(t),
                // ssh skips files that do not exist; an unreadable one might hold a revocation.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(Error::HostKey(format!(
                        "cannot read known_hosts {}: {e}",
                        path.display()
                    )))
                }
            }
        }
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let status = known_hosts::lookup(&texts, &host, port, policy.alias.as_deref(), blob);
        let fp = hostkey::fingerprint(blob);
        let files = || {
            policy
                .files()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (known_hosts::decide(status, policy.strict), status) {
            (Decision::Accept, _) => Ok(()),
            (Decision::Record, _) => {
                record(&policy, &name, blob);
                Ok(())
            }
            (Decision::Refuse, Status::Revoked) => Err(Error::HostKey(format!(
                "the host key of {name} ({fp}) is marked @revoked in {}: refusing to connect",
                files()
            ))),
            (Decision::Refuse, Status::Changed) => Err(Error::HostKey(format!(
                "the host key of {name} ({fp}) differs from the one in {}: refusing to connect",
                files()
            ))),
            (Decision::Refuse, _) => Err(Error::HostKey(format!(
                "{name} is not in {} (its key is {fp}) and StrictHostKeyChecking is yes: \
                 connect once with ssh to check and accept it",
                files()
            ))),
        }
    })
}

/// Appends the new key to the first user file, as ssh does; a failure is reported and the
/// connection goes on, as with ssh.
fn record(policy: &Policy, name: &str, blob: &[u8]) {
    use std::io::Write as _;
    let Some(path) = policy.user_files.first() else {
        return;
    };
    let mut salt = [0u8; 20];
    let salt = (policy.hash
        && ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut salt).is_ok())
    .then_some(&salt[..]);
    let written = known_hosts::entry_line(name, blob, salt).map(|line| {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
    });
    match written {
        Some(Ok(())) => eprintln!(
            "sshtune: permanently added {name} ({}) to {}",
            hostkey::fingerprint(blob),
            path.display()
        ),
        Some(Err(e)) => eprintln!("sshtune: could not add {name} to {}: {e}", path.display()),
        None => {}
    }
}

/// Connects, exchanges keys and authenticates; the host key must be in `cfg.known_hosts`.
pub fn connect(host: &str, port: u16, cfg: &ClientConfig) -> Result<Transport> {
    let policy = Policy::strict_file(cfg.known_hosts.clone());
    connect_with(host, port, cfg, &policy)
}

/// [`connect`] with the host key checked under `policy` (the user's ssh configuration).
pub fn connect_with(
    host: &str,
    port: u16,
    cfg: &ClientConfig,
    policy: &Policy,
) -> Result<Transport> {
    use std::net::ToSocketAddrs;
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| Error::protocol(format!("cannot resolve {host}")))?;
    let stream = TcpStream::connect_timeout(&addr, cfg.connect_timeout)?;
    connect_over(stream.into(), host, port, cfg, policy)
}

/// [`connect_with`] over a connection already open (a jump host's proxy process); `host`
/// and `port` name the server for the host-key check.
pub fn connect_over(
    stream: Stream,
    host: &str,
    port: u16,
    cfg: &ClientConfig,
    policy: &Policy,
) -> Result<Transport> {
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let check = host_key_check(policy.clone(), host.to_string(), port);
    let mut t = Transport::handshake(
        stream,
        Role::Client(check),
        cfg.prefs.clone(),
        cfg.opts.clone(),
    )?;
    auth::client(&mut t, &cfg.user, cfg.key.as_ref())?;
    Ok(t)
}

/// A running remote command.
pub struct Exec {
    pub t: Transport,
    pub ch: Channel,
    /// Stdout that arrived while we were doing something else.
    stash: Vec<u8>,
    pub exit_status: Option<u32>,
    pub stderr: Vec<u8>,
    eof_sent: bool,
}

impl Exec {
    pub fn start(mut t: Transport, command: &str, window: u32, packet_size: u32) -> Result<Self> {
        let ch = Channel::open_session(&mut t, window, packet_size)?;
        ch.request(
            &mut t,
            Request::Exec {
                command: command.as_bytes(),
            },
            true,
        )?;
        let mut e = Self {
            t,
            ch,
            stash: Vec::new(),
            exit_status: None,
            stderr: Vec::new(),
            eof_sent: false,
        };
        loop {
            match e.event()? {
                Some(true) => return Ok(e),
                Some(false) => {
                    return Err(Error::protocol(format!(
                        "server refused to run {command:?}"
                    )))
                }
                None => {}
            }
        }
    }

    /// Handles one event; returns Some(ok) for a reply to our request.
    fn event(&mut self) -> Result<Option<bool>> {
        let ev = self.ch.next_event(&mut self.t)?;
        Ok(self.absorb(ev))
    }

    fn absorb(&mut self, ev: Event) -> Option<bool> {
        absorb(
            &self.t,
            ev,
            &mut self.stash,
            &mut self.stderr,
            &mut self.exit_status,
        )
    }

    /// The next line of stdout, or None at EOF.
    pub fn read_line(&mut self) -> Result<Option<String>> {
        loop {
            if let Some(i) = self.stash.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.stash.drain(..=i).collect();
                return Ok(Some(String::from_utf8_lossy(&line).trim_end().to_string()));
            }
            if self.ch.eof_received || self.ch.closed {
                return Ok(None);
            }
            self.event()?;
        }
    }

    pub fn write_all(&mut self, data: &[u8]) -> Result<()> {
        let Self {
            t,
            ch,
            stash,
            stderr,
            exit_status,
            ..
        } = self;
        ch.write(t, data, &mut |t, ev| {
            absorb(t, ev, stash, stderr, exit_status);
            Ok(())
        })
    }

    /// Reads and discards exactly `n` bytes of stdout; anything after them is kept.
    pub fn drain(&mut self, mut n: u64) -> Result<()> {
        let take = (self.stash.len() as u64).min(n) as usize;
        self.stash.drain(..take);
        n -= take as u64;
        while n > 0 {
            match self.ch.next_event(&mut self.t)? {
                Event::Data(r) => {
                    let len = r.len() as u64;
                    if len > n {
                        let keep = r.start + n as usize..r.end;
                        self.stash.extend_from_slice(&self.t.payload()[keep]);
                        n = 0;
                    } else {
                        n -= len;
                    }
                }
                Event::Eof | Event::Close => {
                    return Err(Error::protocol(format!(
                        "stream ended {n} bytes before the expected count"
                    )))
                }
                ev => {
                    self.absorb(ev);
                }
            }
        }
        Ok(())
    }

    pub fn send_eof(&mut self) -> Result<()> {
        if !self.eof_sent {
            self.eof_sent = true;
            self.ch.send_eof(&mut self.t)?;
        }
        Ok(())
    }

    /// Sends EOF, waits for the command to finish and closes; returns its exit status.
    pub fn finish(mut self) -> Result<(Option<u32>, Transport)> {
        self.send_eof()?;
        while !self.ch.closed {
            self.event()?;
        }
        self.ch.send_close(&mut self.t)?;
        Ok((self.exit_status, self.t))
    }
}

fn absorb(
    t: &Transport,
    ev: Event,
    stash: &mut Vec<u8>,
    stderr: &mut Vec<u8>,
    exit: &mut Option<u32>,
) -> Option<bool> {
    match ev {
        Event::Data(r) => stash.extend_from_slice(&t.payload()[r]),
        Event::ExtendedData(r) => {
            if stderr.len() < 64 * 1024 {
                stderr.extend_from_slice(&t.payload()[r]);
            }
        }
        Event::ExitStatus(c) => *exit = Some(c),
        Event::Reply(ok) => return Some(ok),
        Event::Eof | Event::Close | Event::Request(_) | Event::Exec { .. } | Event::Window => {}
    }
    None
}
