//! The `native` engine: our own SSH client in this process, against `sshtune serve` (built-in
//! `sink`/`source`) or any OpenSSH/Dropbear server (the same shell scripts as the openssh
//! engine). No `cat` pipe on our side: bytes go from memory straight into packets.
//!
//! Every transfer of one (cipher, MAC) pair runs in a channel of its own on one connection,
//! so key exchange and login (and, through a jump host, its process and second handshake) are
//! paid once per pair; only the pair measured last keeps its connection, so the engine never
//! holds more than one of the server's session slots.

use super::executor::{Executor, Job, Sample};
use super::model::Direction;
use super::placement::{self, Pin, Placement, Watch};
use super::transfer::{self, DataPipe, Step};
use crate::process;
use crate::proxy::Proxy;
use crate::remote;
use crate::sysinfo::{thread_cpu, thread_cpu_seconds};
use crate::target::SshError;
use crate::transport::client::{connect_over, connect_with, ClientConfig, Exec};
use crate::transport::conn::Transport;
use crate::transport::kex::Preferences;
use crate::transport::known_hosts::Policy;
use crate::transport::stream::Stream;
use crate::transport::Error;
use anyhow::anyhow;
use std::io::ErrorKind;
use std::time::{Duration, Instant};

/// How long a logged-in connection may give nothing (no byte from the server, none of ours
/// accepted) before it counts as lost. The openssh engine's `ssh` gives up after 15–20 s of
/// silence (`ServerAliveInterval=5`, `ServerAliveCountMax=3`, `target.rs`); without a bound
/// a link that drops for good held a native upload in `write` until TCP's own retries ran out
/// (over 200 s seen, ~15 min by the kernel's default).
pub const STALL: Duration = Duration::from_secs(20);

/// What runs on the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// `sshtune serve`: built-in commands.
    Sshtune,
    /// A POSIX shell behind sshd or dropbear.
    Shell,
}

pub struct Native {
    pub host: String,
    pub port: u16,
    pub cfg: ClientConfig,
    pub peer: Peer,
    /// How the server's key is checked: `cfg.known_hosts` strictly, unless the caller sets the
    /// user's ssh configuration (`ssh -G`).
    pub host_keys: Policy,
    /// MACs offered when the job names none: the ok-graded ones.
    pub default_macs: Vec<String>,
    /// The jump host's (or `ProxyCommand`'s) process every connection goes through, if any.
    pub proxy: Option<Proxy>,
    payload: Vec<u8>,
    /// The logged-in connection of the pair measured last.
    kept: Option<Kept>,
    /// Where our client's thread and the in-process server's session threads run (`place`).
    pin: Option<Pin>,
    placement: Option<Placement>,
    /// The server runs in this process (the embedded default): its threads can be watched.
    in_process: bool,
}

/// A connection negotiated for one (cipher, MAC) pair, between two of its transfers.
struct Kept {
    cipher: String,
    mac: Option<String>,
    t: Transport,
}

impl Native {
    pub fn new(host: String, port: u16, cfg: ClientConfig, peer: Peer) -> Self {
        use rand::{RngCore, SeedableRng};
        let mut payload = vec![0u8; 1 << 20];
        rand::rngs::SmallRng::from_entropy().fill_bytes(&mut payload);
        let default_macs = preflight_offer().macs;
        Self {
            host,
            port,
            host_keys: Policy::strict_file(cfg.known_hosts.clone()),
            cfg,
            peer,
            default_macs,
            proxy: None,
            payload,
            kept: None,
            pin: None,
            placement: None,
            in_process: false,
        }
    }

    /// Plans the run's placement once the preflight knows where the server runs: with the
    /// server in this process, our client's thread and its session threads are pinned to two
    /// distinct CPUs (`placement::plan_threads`), as the openssh engine pins `ssh` and `sshd`.
    pub fn place(&mut self, in_process: bool, same_machine: Option<bool>) {
        let (pin, placement) = placement::plan_threads(self.engine(), in_process, same_machine);
        self.in_process = in_process;
        self.pin = pin;
        self.placement = Some(placement);
    }

    /// One logged-in connection, through the proxy when there is one, its stalls bounded by
    /// `STALL` (a proxy's writes are bounded by that `ssh`'s own keepalive).
    fn connect(&self, cfg: &ClientConfig) -> Result<Transport, Error> {
        let t = match &self.proxy {
            None => connect_with(&self.host, self.port, cfg, &self.host_keys)?,
            Some(p) => {
                let stream = p.connect().map_err(|e| Error::protocol(format!("{e:#}")))?;
                connect_over(stream, &self.host, self.port, cfg, &self.host_keys)?
            }
        };
        t.stream().set_read_timeout(Some(STALL))?;
        if let Stream::Tcp(s) = t.stream() {
            s.set_write_timeout(Some(STALL))?;
        }
        Ok(t)
    }

    fn command(&self, job: &Job) -> String {
        match (self.peer, job.direction) {
            (Peer::Sshtune, Direction::Upload) => "sink".into(),
            (Peer::Sshtune, Direction::Download) => format!("source {}", job.bytes),
            (Peer::Shell, Direction::Upload) => remote::upload_script(),
            (Peer::Shell, Direction::Download) => remote::download_script(job.bytes),
        }
    }

    /// Raw-TCP throughput to an `sshtune serve` host: the server opens a one-shot port that
    /// only accepts this SSH session's token and sends `bytes` bytes. Returns MiB/s.
    pub fn tcp_ceiling(&self, bytes: u64) -> anyhow::Result<f64> {
        use std::io::{Read, Write};
        let t = self.connect(&self.cfg)?;
        let mut e = Exec::start(
            t,
            &format!("tcp-ceiling {bytes}"),
            self.cfg.window,
            self.cfg.packet_size,
        )?;
        let line = e
            .read_line()?
            .ok_or_else(|| anyhow!("the server did not open a data port"))?;
        let Ok(remote::Line::Tcp(fields)) = remote::Line::parse(&line) else {
            anyhow::bail!("unexpected answer to tcp-ceiling: {line}");
        };
        let (Some(port), Some(token)) = (
            fields.get("port").and_then(|p| p.parse::<u16>().ok()),
            fields.get("token"),
        ) else {
            anyhow::bail!("unexpected answer to tcp-ceiling: {line}");
        };
        let mut data = std::net::TcpStream::connect((self.host.as_str(), port))?;
        data.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
        data.write_all(token.as_bytes())?;
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0u64;
        let t0 = Instant::now();
        while got < bytes {
            match data.read(&mut buf)? {
                0 => anyhow::bail!("data port closed after {got} of {bytes} bytes"),
                n => got += n as u64,
            }
        }
        let seconds = t0.elapsed().as_secs_f64();
        e.finish()?;
        Ok(bytes as f64 / (1024.0 * 1024.0) / seconds.max(1e-9))
    }

    /// Logs in once with default algorithms (fatal on failure) and runs `stat` (or the
    /// openssh preflight script on a shell server): facts about the server, and the
    /// identification line it sent (its banner).
    pub fn preflight(&self) -> anyhow::Result<(remote::Info, String)> {
        let t = self.connect(&self.cfg).map_err(|e| {
            anyhow!(
                "native client cannot log in to {}:{}: {e}",
                self.host,
                self.port
            )
        })?;
        let cmd = match self.peer {
            Peer::Sshtune => "stat".to_string(),
            Peer::Shell => remote::preflight_script(),
        };
        let banner = t.peer_ident().to_string();
        let mut e = Exec::start(t, &cmd, self.cfg.window, self.cfg.packet_size)?;
        let mut text = String::new();
        while let Some(line) = e.read_line()? {
            text.push_str(&line);
            text.push('\n');
        }
        e.finish()?;
        Ok((remote::Info::parse(&text), banner))
    }
}

/// What the client offers to log in for facts (preflight, raw-TCP ceiling) on a server that is
/// not ours: the ok-graded ciphers and MACs this build runs. Never a legacy cipher or `none`:
/// a peer (or anyone on the path) must not be able to steer the session onto them.
pub fn preflight_offer() -> Preferences {
    let ok = |g: Option<ciphers::Grade>| g == Some(ciphers::Grade::Ok);
    let modern = Preferences::modern();
    Preferences {
        ciphers: modern
            .ciphers
            .into_iter()
            .filter(|c| ok(ciphers::cipher(c).map(|s| s.grade)))
            .collect(),
        macs: modern
            .macs
            .into_iter()
            .filter(|m| ok(ciphers::mac(m).map(|s| s.grade)))
            .collect(),
    }
}

/// What one timed transfer offers: the job's cipher and MAC, nothing else. With no MAC named
/// (AEAD ciphers carry their own integrity) the MAC list is `default_macs`.
pub fn transfer_offer(job: &Job, default_macs: &[String]) -> Preferences {
    Preferences {
        ciphers: vec![job.cipher.to_string()],
        macs: match job.mac {
            Some(m) => vec![m.to_string()],
            None => default_macs.to_vec(),
        },
    }
}

fn classify(e: Error) -> SshError {
    match e {
        Error::NoCommonAlgorithm { what, theirs, .. } => SshError::Refused(format!(
            "{what} not offered by the server (it offers {theirs})"
        )),
        e @ (Error::HostKey(_) | Error::Auth(_)) => SshError::Fatal(anyhow!(e)),
        Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
            SshError::Fatal(anyhow!("connection refused: {io}"))
        }
        other => lost(other),
    }
}

/// A new connection that could not be made: a server that cannot be reached ends the run, as
/// the openssh engine's does (no later row could reach it either).
fn connect_failed(e: Error, host: &str, port: u16) -> SshError {
    match e {
        Error::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            SshError::Fatal(anyhow!("{host}:{port} is unreachable: no answer in time"))
        }
        Error::Io(io)
            if matches!(
                io.kind(),
                ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable
            ) =>
        {
            SshError::Fatal(anyhow!("{host}:{port} is unreachable: {io}"))
        }
        other => classify(other),
    }
}

/// A connection that broke while in use, named in one line as the openssh engine names it.
fn lost(e: Error) -> SshError {
    SshError::Failed(match e {
        Error::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            format!(
                "connection lost: no progress for {} s (the link or the server stopped \
                 answering)",
                STALL.as_secs()
            )
        }
        Error::Io(io) => format!("connection lost: {io}"),
        e @ (Error::Closed | Error::PeerDisconnected { .. }) => format!("connection lost: {e}"),
        other => format!("transfer failed: {other}"),
    })
}

/// Our client's channel as a data pipe. Client CPU is this thread's plus its keystream
/// helpers' (`--threads 2`): the client work happens on the calling thread and its helpers,
/// and the in-process server's threads must not count as client CPU.
struct ChannelPipe<'a> {
    exec: &'a mut Exec,
    /// The run's pin, applied to the server's session threads once a READY arrives.
    pin: Option<&'a Pin>,
    /// Whether the server's threads are this process's, so that they can be watched.
    in_process: bool,
}

impl DataPipe for ChannelPipe<'_> {
    type Error = Error;

    fn read_line(&mut self) -> Result<Option<String>, Error> {
        self.exec.read_line()
    }

    fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        self.exec.write_all(data)
    }

    fn close_input(&mut self) -> Result<(), Error> {
        self.exec.send_eof()
    }

    fn drain(&mut self, bytes: u64) -> Result<u64, Error> {
        self.exec.drain(bytes).map(|()| bytes)
    }

    fn client_cpu_s(&self) -> Option<f64> {
        thread_cpu_seconds().map(|s| s + self.exec.t.helper_cpu_seconds())
    }

    /// The keystream helpers' CPU counts as user time: their loop computes and hands over
    /// blocks, and their clock is not split.
    fn client_user_cpu_s(&self) -> Option<f64> {
        thread_cpu().map(|c| c.user.as_secs_f64() + self.exec.t.helper_cpu_seconds())
    }

    /// With the server in this process: pins its session threads (when the run pins) and
    /// watches our thread and the newest session thread, the one serving this connection.
    fn watch(&mut self, _server_pid: Option<u32>) -> Option<Watch> {
        if !self.in_process {
            return None;
        }
        let sessions = match self.pin {
            Some(pin) => pin.server_threads(),
            None => placement::session_threads(),
        };
        Some(Watch::start_threads(sessions.into_iter().max()))
    }
}

impl Executor for Native {
    fn engine(&self) -> &'static str {
        super::model::EngineKind::Native.as_str()
    }

    /// Nothing of a pair's own needs warming: its connection carries no process of ours, a
    /// fresh channel's window opens at full size, and this process is warm after its first
    /// transfer. (On a real path a new connection's TCP ramp-up is what the stability rule
    /// lengthens samples for; the pair's later transfers reuse the opened connection.)
    fn warms_per_pair(&self) -> bool {
        false
    }

    fn placement(&self) -> Option<Placement> {
        self.placement.clone()
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        process::check_interrupted()?;
        let mut cfg = self.cfg.clone();
        cfg.prefs = transfer_offer(job, &self.default_macs);
        let command = self.command(job);
        let same_pair = |k: &Kept| k.cipher == job.cipher && k.mac.as_deref() == job.mac;
        // The pair's connection when it is still open; a server may have closed it while it
        // sat idle (an idle timeout, a restart), so a refused channel there means a new login,
        // not a failed transfer.
        let reused = match self.kept.take().filter(same_pair) {
            Some(k) => Exec::start(k.t, &command, cfg.window, cfg.packet_size).ok(),
            None => None,
        };
        let mut e = match reused {
            Some(e) => e,
            None => {
                let t = self
                    .connect(&cfg)
                    .map_err(|e| connect_failed(e, &self.host, self.port))?;
                Exec::start(t, &command, cfg.window, cfg.packet_size).map_err(classify)?
            }
        };
        // The timed transfer runs on this thread: on the client's CPU when the run pins.
        let pinned = self.pin.as_ref().map(Pin::feeder);
        let mut pipe = ChannelPipe {
            exec: &mut e,
            pin: self.pin.as_ref(),
            in_process: self.in_process,
        };
        let sample = transfer::drive(&mut pipe, job, &self.payload);
        drop(pinned);
        let sample = sample.map_err(|step| match step {
            Step::NotReady(Some(err)) => classify(err),
            Step::NotReady(None) => SshError::Failed(format!(
                "the remote command ended before it was ready: {}",
                String::from_utf8_lossy(&e.stderr).trim()
            )),
            Step::Lost(err) => lost(err),
            Step::Ended(msg) | Step::Bad(msg) => SshError::Failed(msg),
        })?;
        let (status, t) = e.finish().map_err(lost)?;
        if status.is_some_and(|s| s != 0) {
            return Err(SshError::Failed(format!(
                "remote command exited with {}",
                status.unwrap_or(0)
            )));
        }
        self.kept = Some(Kept {
            cipher: job.cipher.to_string(),
            mac: job.mac.map(String::from),
            t,
        });
        Ok(sample)
    }
}
