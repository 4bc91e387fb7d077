//! The `native` engine: our own SSH client in this process, against `sshtune serve` (built-in
//! `sink`/`source`) or any OpenSSH/Dropbear server (the same shell scripts as the openssh
//! engine). No `cat` pipe on our side: bytes go from memory straight into packets. It reaches
//! the target (through its proxy when `ssh -G` names one) or an in-process server, finds host
//! keys and the user key as ssh would, logs in once for the server's facts, and takes the
//! raw-TCP ceiling a remote `sshtune serve` measures itself; no ssh, sshd or OpenSSH probe is
//! needed.
//!
//! Every transfer of one (cipher, MAC) pair runs in a channel of its own on one connection,
//! so key exchange and login (and, through a jump host, its process and second handshake) are
//! paid once per pair; only the pair measured last keeps its connection, so the engine never
//! holds more than one of the server's session slots.

use super::ceiling::serve::{self, TcpRun};
use super::ceiling::{step, Outcome};
use super::executor::{pairs, Engine, Executor, Facts, Job, Pairs, Sample};
use super::model::{Direction, EngineKind, ServerInfo};
use super::options::Options;
use super::placement::{self, Pin, Placement, Watch};
use super::reach::{is_loopback, Reach, FORWARDED, SHARED_CPUS};
use super::transfer::{self, DataPipe, Step};
use crate::probe::probe_target;
use crate::process;
use crate::proxy::Proxy;
use crate::remote;
use crate::serve::in_process::InProcessServer;
use crate::sysinfo::{thread_cpu, thread_cpu_seconds};
use crate::target::{Resolved, SshError};
use crate::transport::client::{connect_over, connect_with, ClientConfig, Exec};
use crate::transport::conn::{self, Options as ConnOptions, Transport};
use crate::transport::kex::Preferences;
use crate::transport::known_hosts::{Policy, Strict};
use crate::transport::stream::Stream;
use crate::transport::userkey::{self, Agent, UserKey};
use crate::transport::Error;
use anyhow::{anyhow, Context, Result};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

pub struct NativeEngine {
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
    /// The ciphers the server offered (the catalog's, for our own server).
    offered: Vec<String>,
    /// Kept alive while the engine is used; dropping it stops the in-process server.
    embedded: Option<InProcessServer>,
    /// The server is another machine behind a loopback address (`Reach::Forwarded`).
    forwarded: bool,
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

impl NativeEngine {
    /// A client of `host:port` with `cfg`, checking the server's key in `cfg.known_hosts`.
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
            offered: Vec::new(),
            embedded: None,
            forwarded: false,
            pin: None,
            placement: None,
            in_process: false,
        }
    }

    /// The target, or an in-process server on loopback when there is none.
    pub fn open(opts: &Options) -> Result<Self> {
        let window = opts.native.window();
        let packet_size = opts.native.packet_size();
        // Both ends of the in-process pair seal with the same number of threads.
        let conn_opts = ConnOptions {
            threads: opts.native.threads,
            ..ConnOptions::default()
        };
        let Some(target) = &opts.target else {
            let server =
                InProcessServer::start(Preferences::from_catalog(true), conn_opts.clone())?;
            let mut client = server.client.clone();
            client.window = window;
            client.packet_size = packet_size;
            let mut engine = Self::new(
                "127.0.0.1".into(),
                server.addr.port(),
                client,
                Peer::Sshtune,
            );
            engine.offered = Preferences::from_catalog(true).ciphers;
            engine.embedded = Some(server);
            return Ok(engine);
        };
        let resolved = target.resolve()?;
        let identity = opts.ssh_args.identity.as_deref().map(Path::new);
        let key = user_key(identity, &resolved.identity_files)?;
        let host_keys = host_key_policy(opts.native.known_hosts.as_deref(), &resolved)?;
        let offer = probe_target(target, &resolved, Duration::from_secs(10))?;
        let peer = if offer.software.starts_with("sshtune") {
            Peer::Sshtune
        } else {
            Peer::Shell
        };
        let cfg = ClientConfig {
            user: resolved.user.clone(),
            key,
            known_hosts: host_keys.user_files[0].clone(),
            // Only ok-graded algorithms to log in; each transfer offers just its own.
            prefs: preflight_offer(),
            opts: conn_opts,
            window,
            packet_size,
            connect_timeout: Duration::from_secs(10),
        };
        let mut engine = Self::new(resolved.hostname.clone(), resolved.port, cfg, peer);
        engine.host_keys = host_keys;
        engine.proxy = Proxy::of(&resolved, &target.options, &target.destination);
        engine.offered = offer.ciphers();
        Ok(engine)
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
    /// only accepts this SSH session's token and sends `bytes` bytes.
    pub fn tcp_ceiling(&self, bytes: u64) -> Result<TcpRun> {
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
        let mut server_cpu_pct = None;
        while let Some(line) = e.read_line()? {
            if let Ok(remote::Line::Done(f)) = remote::Line::parse(&line) {
                let num = |k: &str| f.get(k).and_then(|v| v.parse::<f64>().ok());
                server_cpu_pct = num("cpu_s")
                    .zip(num("seconds").filter(|s| *s > 0.0))
                    .map(|(c, s)| c / s * 100.0);
                break;
            }
        }
        e.finish()?;
        Ok(TcpRun {
            mib_s: bytes as f64 / (1024.0 * 1024.0) / seconds.max(1e-9),
            server_cpu_pct,
        })
    }

    /// Logs in once with default algorithms (fatal on failure) and runs `stat` (or the
    /// openssh preflight script on a shell server): facts about the server, and the
    /// identification line it sent (its banner).
    fn log_in_once(&self) -> Result<(remote::Info, String)> {
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

impl Executor for NativeEngine {
    fn engine(&self) -> &'static str {
        EngineKind::Native.as_str()
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

impl Engine for NativeEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Native
    }

    fn preflight(&mut self, opts: &Options) -> Result<Facts> {
        let (info, banner) = self.log_in_once()?;
        let mut warnings = Vec::new();
        // Behind a jump host, 127.0.0.1 is the far side's loopback, not ours.
        let embedded = self.embedded.is_some();
        let same_boot = remote::same_boot(&info);
        let reach = match embedded {
            true => Reach::Loopback,
            false => Reach::of(self.proxy.is_none() && is_loopback(&self.host), same_boot),
        };
        let loopback = reach == Reach::Loopback;
        self.place(embedded, reach.same_machine(same_boot));
        self.forwarded = reach == Reach::Forwarded;
        if loopback {
            warnings.push(SHARED_CPUS.into());
        }
        let server = ServerInfo {
            banner: Some(banner),
            openssh_version: None,
            strict_kex: Some(true),
            offered_ciphers: self.offered.clone(),
            offered_macs: Preferences::from_catalog(true).macs,
            machine: remote::machine(&info),
            cpu_quota_cores: info.get("quota").and_then(|q| remote::parse_quota(&q)),
            same_machine: reach.same_machine(same_boot),
        };
        Ok(Facts {
            host_label: match &opts.target {
                Some(t) => t.destination.clone(),
                None => "embedded native server".into(),
            },
            server,
            client_version: Some(conn::OUR_IDENT.to_string()),
            info,
            loopback,
            forwarded: self.forwarded,
            // The native engine measures no RTT of its own.
            infers_path: false,
            rtt: None,
            tick_cpu: false,
            // The in-process server's CPU is not a separate process's: no shared rule.
            shared_cores: None,
            warnings,
        })
    }

    /// Every cipher both ends have except `none`, with the first MAC in OpenSSH's default
    /// order (or each `--macs` name).
    fn default_pairs(&self, facts: &Facts, opts: &Options) -> Result<Pairs> {
        let ciphers: Vec<String> = if opts.ciphers.is_empty() {
            facts
                .server
                .offered_ciphers
                .iter()
                .filter(|c| *c != "none" && ::ciphers::cipher(c).is_some())
                .cloned()
                .collect()
        } else {
            opts.ciphers.clone()
        };
        Ok(pairs(
            &ciphers,
            &opts.macs,
            Some(::ciphers::MACS[0].name.to_string()),
        ))
    }

    fn ceiling(&mut self, facts: &Facts, opts: &Options) -> Result<Outcome> {
        let ceiling = if self.embedded.is_some() {
            (!opts.ceiling.skipped()).then(step::loopback).transpose()?
        } else if self.forwarded {
            return Ok(Outcome::none(FORWARDED));
        } else if self.proxy.is_none() && self.peer == Peer::Sshtune && !opts.ceiling.skipped() {
            // A remote `sshtune serve` measures the raw-TCP ceiling itself (median of three).
            let runs: Vec<TcpRun> = (0..3)
                .filter_map(|_| self.tcp_ceiling(64 << 20).ok())
                .collect();
            serve::ceiling(&runs, facts.server.cpu_quota_cores)
        } else {
            None
        };
        Ok(match ceiling {
            Some(c) => Outcome::found(c),
            None => Outcome::none(
                "raw-TCP ceiling unknown: pass --ceiling MIB/s (e.g. measured with iperf3) so a \
                 network-bound row can be recognised",
            ),
        })
    }

    fn window(&self) -> Option<u64> {
        Some(u64::from(self.cfg.window))
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set: pass --identity and --known-hosts")
}

/// Host keys are checked where and as ssh would (`ssh -G`): `UserKnownHostsFile` (or
/// `--known-hosts`), `GlobalKnownHostsFile`, `StrictHostKeyChecking`, `HashKnownHosts`,
/// `HostKeyAlias`.
fn host_key_policy(known_hosts: Option<&Path>, resolved: &Resolved) -> Result<Policy> {
    let user_files = match known_hosts {
        Some(p) => vec![p.to_path_buf()],
        None if !resolved.known_hosts.is_empty() => resolved.known_hosts.clone(),
        None => vec![home()?.join(".ssh/known_hosts")],
    };
    let strict = match resolved.strict_host_key_checking.as_deref() {
        None => Strict::Yes,
        Some(v) => Strict::parse(v)
            .with_context(|| format!("StrictHostKeyChecking {v:?} (from ssh -G) is not known"))?,
    };
    Ok(Policy {
        user_files,
        global_files: resolved.global_known_hosts.clone(),
        strict,
        hash: resolved.hash_known_hosts,
        alias: resolved.host_key_alias.clone(),
    })
}

/// `-i FILE` if given, else the ssh-agent, else the first `IdentityFile` ssh would try that
/// exists (its defaults ~/.ssh/id_ed25519, id_rsa, ... or what the user's config names).
fn user_key(identity: Option<&Path>, identity_files: &[PathBuf]) -> Result<Arc<dyn UserKey>> {
    if let Some(p) = identity {
        return userkey::load(p);
    }
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").filter(|s| !s.is_empty()) {
        if let Ok(agent) = Agent::connect(Path::new(&sock)) {
            if !agent.identities().is_empty() {
                return Ok(Arc::new(agent));
            }
        }
    }
    let defaults = match home() {
        Ok(h) => vec![h.join(".ssh/id_ed25519"), h.join(".ssh/id_rsa")],
        Err(_) => Vec::new(),
    };
    for p in identity_files.iter().chain(&defaults) {
        if p.exists() {
            return userkey::load(p);
        }
    }
    anyhow::bail!(
        "the native engine found no key: pass -i FILE (ed25519 or RSA, unencrypted) or start ssh-agent"
    )
}
