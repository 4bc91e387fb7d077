//! The server end: accept connections, authenticate against authorized keys, and run only
//! the built-in commands a benchmark needs. There is no shell and no arbitrary command.

use super::fold::Fold;
use super::limits::{Gate, Limits, Refusal, SessionSlot, Startup};
use crate::transport::auth;
use crate::transport::channel::{self, Channel, Event};
use crate::transport::conn::{Options, Role, Transport};
use crate::transport::hostkey::Ed25519Key;
use crate::transport::kex::Preferences;
use crate::transport::{Error, Result};
use crate::wire::connection::ChannelOpen;
use crate::wire::numbers as n;
use crate::wire::sanitize::{peer_text, PEER_TEXT_MAX};
use crate::wire::transport::Disconnect;
use crate::wire::Message;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Kept here too for callers that name it with the server (`sshtune serve --help`).
pub use super::builtins::BUILTINS;

#[derive(Clone)]
pub struct ServerConfig {
    pub host_key: Arc<Ed25519Key>,
    /// Who may log in: authorized_keys and user names.
    pub authorized: super::authorized::Access,
    pub prefs: Preferences,
    pub opts: Options,
    /// Sessions, unauthenticated connections, per-source cap, login grace time.
    pub limits: Limits,
    /// Longest silence on a read, and longest wait for a write to make progress.
    pub idle_timeout: Duration,
    pub window: u32,
    pub packet_size: u32,
    /// Logs each session to stderr (off for the in-process bench server).
    pub verbose: bool,
}

pub struct Server {
    listener: TcpListener,
    cfg: Arc<ServerConfig>,
    gate: Arc<Gate>,
}

impl Server {
    pub fn bind(addr: SocketAddr, cfg: ServerConfig) -> std::io::Result<Self> {
        Ok(Self {
            listener: TcpListener::bind(addr)?,
            gate: Gate::new(cfg.limits.clone()),
            cfg: Arc::new(cfg),
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts forever; one thread per connection, so a failing session never stops others.
    pub fn serve(self) {
        for stream in self.listener.incoming() {
            let stream = match stream {
                Ok(s) => s,
                Err(e) => {
                    log(&format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let Some(startup) = self.admit(&stream) else {
                continue;
            };
            let cfg = self.cfg.clone();
            let spawned = std::thread::Builder::new()
                .name("sshtune-session".into())
                .spawn(move || {
                    handle(stream, &cfg, startup);
                    super::memory::give_back();
                });
            if let Err(e) = spawned {
                log(&format!("cannot start a session thread: {e}"));
            }
        }
    }

    /// Runs `serve` on a background thread (the bench's in-process server).
    pub fn spawn(self) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || self.serve())
    }
}

impl Server {
    /// A place among the unauthenticated connections, or a refusal sent and logged.
    fn admit(&self, stream: &TcpStream) -> Option<Startup> {
        let peer = stream.peer_addr().ok()?;
        let refusal = match stream.try_clone() {
            Ok(clone) => match self.gate.admit(peer.ip(), clone) {
                Ok(s) => return Some(s),
                Err(r) => r,
            },
            Err(e) => {
                log(&format!("{peer}: {e}"));
                return None;
            }
        };
        refuse(stream, refusal);
        let why = match refusal {
            Refusal::Sessions => "max sessions reached".to_string(),
            Refusal::PerSource => format!(
                "per-source max startups ({}) reached",
                self.cfg.limits.per_source
            ),
            Refusal::Startups => {
                let (unauth, _) = self.gate.counts();
                format!("max startups: {unauth} unauthenticated, random early drop")
            }
        };
        log(&format!("{peer}: refused: {why}"));
        None
    }
}

/// Every line goes through `terminal_safe`: errors may quote what a peer sent.
fn log(msg: &str) {
    eprintln!(
        "sshtune serve: {}",
        crate::wire::sanitize::terminal_safe(msg)
    );
}

/// A log line about the peer of `t`.
fn log_peer(t: &Transport, msg: &str) {
    let peer = t.stream().peer_addr().map(|a| a.to_string());
    log(&format!("{}: {msg}", peer.unwrap_or_default()));
}

/// Version line and DISCONNECT, without waiting for the peer: it must not hold us up.
fn refuse(stream: &TcpStream, why: Refusal) {
    let bye = Disconnect::new(n::reason::TOO_MANY_CONNECTIONS, why.text());
    let mut out = format!("{}\r\n", crate::transport::conn::OUR_IDENT).into_bytes();
    let _ = crate::wire::plain::write_packet(&mut out, &bye.encode());
    let _ = stream.set_nonblocking(true);
    let _ = (&*stream).write(&out);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// One connection, start to end. Every error ends in a log line and, when the peer can
/// still hear it, a DISCONNECT.
fn handle(stream: TcpStream, cfg: &ServerConfig, startup: Startup) {
    let peer_addr = stream.peer_addr().ok();
    let peer = peer_addr
        .map(|a| a.to_string())
        .unwrap_or_else(|| "?".into());
    let timeouts = stream
        .set_read_timeout(Some(cfg.idle_timeout))
        .and_then(|_| stream.set_write_timeout(Some(cfg.idle_timeout)));
    if let Err(e) = timeouts {
        log(&format!("{peer}: {e}"));
        return;
    }
    let grace = cfg.limits.login_grace.as_secs();
    let raw = stream.try_clone().ok();
    let mut t = match Transport::handshake(
        stream,
        Role::Server(cfg.host_key.clone()),
        cfg.prefs.clone(),
        cfg.opts.clone(),
    ) {
        Ok(t) => t,
        Err(_) if startup.expired() => {
            log(&format!(
                "{peer}: login grace time ({grace} s) ran out during key exchange, dropped"
            ));
            return;
        }
        Err(e) if is_idle(&e) => {
            log(&format!(
                "{peer}: silent for {} s during key exchange (idle timeout), dropped",
                cfg.idle_timeout.as_secs()
            ));
            return;
        }
        Err(e) => {
            log(&format!("{peer}: key exchange failed: {e}"));
            if let (Some(code), Some(mut s)) = (e.disconnect_reason(), raw) {
                // Before NEWKEYS the packet is unencrypted, which is what the peer expects.
                let text = e.to_string();
                let mut out = Vec::new();
                let _ = crate::wire::plain::write_packet(
                    &mut out,
                    &Disconnect::new(code, &text).encode(),
                );
                let _ = s.write_all(&out);
            }
            return;
        }
    };
    let mut startup = Some(startup);
    match session(&mut t, cfg, peer_addr.map(|a| a.ip()), &mut startup) {
        Ok(summary) => {
            if cfg.verbose {
                log(&format!("{peer}: {summary}"));
            }
        }
        Err(_) if startup.as_ref().is_some_and(Startup::expired) => {
            log(&format!(
                "{peer}: login grace time ({grace} s) ran out before authentication, dropped"
            ));
        }
        Err(Error::Closed) => {}
        Err(e) if is_idle(&e) => {
            log(&format!(
                "{peer}: silent or not reading for {} s (idle timeout), disconnected",
                cfg.idle_timeout.as_secs()
            ));
            t.disconnect(n::reason::BY_APPLICATION, "idle timeout");
        }
        Err(e) => {
            log(&format!("{peer}: {e}"));
            if let Some(code) = e.disconnect_reason() {
                t.disconnect(code, &e.to_string());
            }
        }
    }
}

/// A read that hit the socket timeout we set from `--idle-timeout`.
fn is_idle(e: &Error) -> bool {
    let io = match e {
        Error::Io(io) => io,
        Error::Ident(crate::wire::ident::IdentError::Timeout) => return true,
        Error::Ident(crate::wire::ident::IdentError::Io(io)) => io,
        _ => return false,
    };
    matches!(
        io.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Authenticates, then serves session channels one after another until the client leaves
/// (clients such as AsyncSSH reuse one connection for several commands).
fn session(
    t: &mut Transport,
    cfg: &ServerConfig,
    peer: Option<IpAddr>,
    startup: &mut Option<Startup>,
) -> Result<String> {
    let gate = super::gate::Gate::new(&cfg.authorized, peer, cfg.verbose);
    let login = auth::server(t, &gate);
    gate.log_refusals();
    let login = login?;
    let user = &login.user;
    let algs = t
        .negotiated
        .as_ref()
        .map(|n| format!("{}/{}", n.cipher_c2s, n.mac_c2s.unwrap_or("aead")))
        .unwrap_or_default();
    let _slot = logged_in(t, cfg, startup)?;
    let mut commands = Fold::new(COMMANDS_LOGGED);
    loop {
        let mut ch = match open_channel(t, cfg) {
            Ok(ch) => ch,
            Err(Error::Closed) | Err(Error::PeerDisconnected { .. }) => break,
            Err(e) => return Err(e),
        };
        let forced = login.forced_command.as_deref();
        if let Some(done) = run_channel(t, &mut ch, forced, cfg.idle_timeout)? {
            commands.push(done);
        }
    }
    Ok(format!(
        "user {}, client {}, {algs}, {} rekeys: {}",
        peer_text(user.as_bytes(), PEER_TEXT_MAX),
        peer_text(t.peer_ident().as_bytes(), PEER_TEXT_MAX),
        t.rekeys,
        commands.text()
    ))
}

/// How many distinct commands a connection's closing log line names. A client may run any
/// number of channels one after another on one connection (the native bench engine runs every
/// transfer of a cipher in one): a logged-in peer must not grow the server's memory, or one
/// log line, without bound.
pub(crate) const COMMANDS_LOGGED: usize = 8;

/// One command as the log line shows it: the peer's bytes sanitised and cut.
pub(crate) fn command_entry(command: &[u8], code: u32) -> String {
    format!("\"{}\" exit {code}", peer_text(command, PEER_TEXT_MAX))
}

/// After authentication: the connection leaves the unauthenticated count for a session slot
/// (or is told that none is free), and the transport lifts its limits for strangers (packet
/// size, re-exchanges, what may queue during a rekey).
fn logged_in(
    t: &mut Transport,
    cfg: &ServerConfig,
    startup: &mut Option<Startup>,
) -> Result<SessionSlot> {
    let Some(s) = startup.take() else {
        return Err(Error::protocol("authenticated twice"));
    };
    if s.expired() {
        *startup = Some(s);
        return Err(Error::Closed);
    }
    match s.promote() {
        Ok(slot) => {
            t.authenticated(cfg.window);
            Ok(slot)
        }
        Err(r) => {
            log_peer(t, &format!("logged in, but refused: {}", r.text()));
            t.disconnect(n::reason::TOO_MANY_CONNECTIONS, r.text());
            Err(Error::Closed)
        }
    }
}

pub(crate) fn open_channel(t: &mut Transport, cfg: &ServerConfig) -> Result<Channel> {
    loop {
        t.recv()?;
        let p = t.payload();
        match p[0] {
            n::CHANNEL_OPEN => {
                let open = ChannelOpen::decode(p)?;
                let (sender, window) = (open.sender, open.window as u64);
                if open.kind != channel::SESSION {
                    let kind = peer_text(open.kind, PEER_TEXT_MAX);
                    log_peer(t, &format!("refused a channel of type \"{kind}\""));
                    let why = "only session channels";
                    channel::refuse_open_as(t, sender, channel::OPEN_UNKNOWN_CHANNEL_TYPE, why)?;
                    continue;
                }
                let max_packet = match channel::peer_max_packet(open.max_packet) {
                    Ok(m) => m,
                    Err(e) => {
                        log_peer(t, &format!("refused a session channel: {e}"));
                        let why = "maximum packet size too small";
                        channel::refuse_open_as(t, sender, channel::OPEN_PROHIBITED, why)?;
                        continue;
                    }
                };
                channel::accept_open(t, sender, cfg.window, cfg.packet_size)?;
                return Ok(Channel::new(
                    0,
                    sender,
                    window,
                    max_packet,
                    cfg.window,
                    cfg.packet_size,
                ));
            }
            n::GLOBAL_REQUEST => channel::reply_global(t)?,
            m => return Err(Error::protocol(format!("expected CHANNEL_OPEN, got {m}"))),
        }
    }
}

/// Runs the one command of a channel (the key's forced command instead, if it has one);
/// returns what ran, or None if none did.
fn run_channel(
    t: &mut Transport,
    ch: &mut Channel,
    forced: Option<&str>,
    idle: Duration,
) -> Result<Option<String>> {
    let Some((command, want_reply)) = next_exec(t, ch)? else {
        return Ok(None);
    };
    if want_reply {
        ch.reply(t, true)?;
    }
    let cmd = match forced {
        Some(f) => f.to_string(),
        None => String::from_utf8_lossy(&command).to_string(),
    };
    let code = super::builtins::run(t, ch, &cmd, idle)?;
    if !ch.closed {
        ch.exit_status(t, code)?;
        ch.send_eof(t)?;
    }
    ch.send_close(t)?;
    while !ch.closed {
        ch.next_event(t)?;
    }
    Ok(Some(command_entry(&command, code)))
}

/// The channel's next command and whether the peer wants a reply to it, passing over data and
/// requests; None once the peer closed the channel (our CHANNEL_CLOSE is then sent).
pub(crate) fn next_exec(t: &mut Transport, ch: &mut Channel) -> Result<Option<(Vec<u8>, bool)>> {
    loop {
        match ch.next_event(t)? {
            Event::Exec {
                command,
                want_reply,
            } => return Ok(Some((command, want_reply))),
            Event::Close => {
                ch.send_close(t)?;
                return Ok(None);
            }
            Event::Eof | Event::Data(_) | Event::ExtendedData(_) => {}
            Event::Request(_) | Event::Reply(_) | Event::ExitStatus(_) | Event::Window => {}
        }
    }
}
