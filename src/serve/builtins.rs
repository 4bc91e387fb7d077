//! The only commands `sshtune serve` runs. Their output lines are `remote::Line`s, the same
//! `SSHTUNE-READY`/`SSHTUNE-DONE` lines the shell scripts the openssh engine sends print, so
//! the bench parses both alike. Server CPU is the session thread's own CPU time, in
//! microseconds (`tck=1000000`). `tcp-ceiling BYTES` measures the raw-TCP path without
//! iperf3; its DONE line carries the send's `seconds` and the whole server's CPU time over it
//! (`cpu_s`), so a ceiling held down by a CPU quota is recognised as such.

use crate::remote::{Fields, Line};
use crate::transport::channel::{Channel, Event};
use crate::transport::conn::Transport;
use crate::transport::Result;
use rand::{RngCore, SeedableRng};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The built-ins as `--help` and refusals list them.
pub const BUILTINS: &str = "sink, source BYTES, stat, tcp-ceiling BYTES";

const US: u64 = 1_000_000;

/// Runs `cmd`; returns its exit status. `idle` is the longest a write may wait for the client
/// (`--idle-timeout`), on the data port of `tcp-ceiling` as on the connection.
pub fn run(t: &mut Transport, ch: &mut Channel, cmd: &str, idle: Duration) -> Result<u32> {
    let mut words = cmd.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("sink"), None, None) => sink(t, ch),
        (Some("source"), Some(n), None) => match crate::units::parse_size(n) {
            Ok(bytes) => source(t, ch, bytes),
            Err(e) => refuse(t, ch, &format!("source: {e}\n")),
        },
        (Some("stat"), None, None) => stat(t, ch),
        (Some("tcp-ceiling"), Some(n), None) => match crate::units::parse_size(n) {
            Ok(bytes) => tcp_ceiling(t, ch, bytes, idle),
            Err(e) => refuse(t, ch, &format!("tcp-ceiling: {e}\n")),
        },
        _ => refuse(
            t,
            ch,
            &format!(
                "sshtune serve runs no shell and no other command; built-ins: {}\n",
                BUILTINS
            ),
        ),
    }
}

/// Whether `cmd` names a built-in with valid arguments: an authorized_keys `command="…"`
/// may force only these (see `authorized.rs`).
pub fn is_builtin(cmd: &str) -> bool {
    let mut words = cmd.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("sink" | "stat"), None, None) => true,
        (Some("source" | "tcp-ceiling"), Some(n), None) => crate::units::parse_size(n).is_ok(),
        _ => false,
    }
}

fn refuse(t: &mut Transport, ch: &mut Channel, msg: &str) -> Result<u32> {
    ch.write_stderr(t, msg.as_bytes())?;
    Ok(127)
}

fn say(t: &mut Transport, ch: &mut Channel, line: &Line) -> Result<()> {
    ch.write(t, format!("{line}\n").as_bytes(), &mut |_, _| Ok(()))
}

/// Session thread CPU as `user,system` microseconds.
fn thread_cpu() -> String {
    crate::sysinfo::thread_cpu()
        .map(|t| format!("{},{}", t.user.as_micros(), t.system.as_micros()))
        .unwrap_or_default()
}

/// The aggregate /proc/stat line, scaled from clock ticks to microseconds.
fn machine_stat() -> String {
    let tck = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100)
        .max(1) as u64;
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().next() else {
        return String::new();
    };
    line.split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse::<u64>().ok())
        .map(|v| (v * (US / tck)).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn ready(t: &mut Transport, ch: &mut Channel) -> Result<()> {
    let line = Line::Ready(
        Fields::new()
            .with("pid", std::process::id())
            .with("comm", "sshtune")
            .with("tck", US)
            .with("cpu", thread_cpu())
            .with("stat", machine_stat())
            .with("quota", quota_field()),
    );
    say(t, ch, &line)
}

/// This process's cgroup CPU quota as `quota_us,period_us`, as the shell scripts report it.
fn quota_field() -> String {
    crate::cgroup::quota_cores("self")
        .map(|c| format!("{},{}", (c * 100_000.0) as u64, 100_000))
        .unwrap_or_default()
}

fn sink(t: &mut Transport, ch: &mut Channel) -> Result<u32> {
    ready(t, ch)?;
    let mut bytes = 0u64;
    loop {
        match ch.next_event(t)? {
            Event::Data(r) => bytes += r.len() as u64,
            Event::Eof | Event::Close => break,
            _ => {}
        }
    }
    let line = Line::Done(
        Fields::new()
            .with("bytes", bytes)
            .with("cpu", thread_cpu())
            .with("stat", machine_stat()),
    );
    if !ch.closed {
        say(t, ch, &line)?;
    }
    Ok(0)
}

fn source(t: &mut Transport, ch: &mut Channel, bytes: u64) -> Result<u32> {
    let mut block = vec![0u8; 1 << 20];
    rand::rngs::SmallRng::from_entropy().fill_bytes(&mut block);
    ready(t, ch)?;
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        ch.write(t, &block[..n], &mut |_, _| Ok(()))?;
        left -= n as u64;
    }
    let line = Line::Done(
        Fields::new()
            .with("rc", 0)
            .with("cpu", thread_cpu())
            .with("stat", machine_stat()),
    );
    say(t, ch, &line)?;
    Ok(0)
}

/// How long the one-shot data port waits for a client that proves the token.
const TCP_ACCEPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections the data port reads tokens from at once; an older one is dropped for a newer.
const TOKEN_CANDIDATES: usize = 8;

/// Raw-TCP ceiling of the path: a one-shot port on the address the client reached us at,
/// opened only for a client that proves the session's random token, sending `bytes` bytes.
/// A client that stops reading the data port ends the connection after `idle`, as one that
/// stops reading the session does.
fn tcp_ceiling(t: &mut Transport, ch: &mut Channel, bytes: u64, idle: Duration) -> Result<u32> {
    let local = t.stream().local_addr()?;
    let listener = TcpListener::bind((local.ip(), 0))?;
    let port = listener.local_addr()?.port();
    let mut token = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut token);
    let token: String = token.iter().map(|b| format!("{b:02x}")).collect();
    let fields = Fields::new().with("port", port).with("token", &token);
    say(t, ch, &Line::Tcp(fields))?;
    let deadline = Instant::now() + TCP_ACCEPT_TIMEOUT;
    let Some(mut conn) = await_token(&listener, token.as_bytes(), deadline)? else {
        let why = "tcp-ceiling: no connection to the data port sent the token in time\n";
        return refuse(t, ch, why);
    };
    drop(listener);
    conn.set_nonblocking(false)?;
    conn.set_write_timeout(Some(idle))?;
    let mut block = vec![0u8; 1 << 20];
    rand::rngs::SmallRng::from_entropy().fill_bytes(&mut block);
    let (cpu0, t0) = (process_cpu_seconds(), Instant::now());
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        conn.write_all(&block[..n])?;
        left -= n as u64;
    }
    drop(conn);
    let mut done = Fields::new()
        .with("rc", 0)
        .with("seconds", format!("{:.6}", t0.elapsed().as_secs_f64()));
    if let Some(cpu) = process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a) {
        done = done.with("cpu_s", format!("{cpu:.6}"));
    }
    say(t, ch, &Line::Done(done))?;
    Ok(0)
}

/// This whole server's CPU time (every connection's threads), user and system, to the
/// microsecond: a CPU quota holds the whole process, so the ceiling run's CPU is compared with
/// it as a whole. `getrusage` rather than `/proc`'s 10 ms ticks, which a 64 MiB send under a
/// small quota spans only one or two of.
fn process_cpu_seconds() -> Option<f64> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Some(s(u.user_time()) + s(u.system_time()))
}

/// Accepts connections on the data port until one sends `token` or `deadline` passes, so a
/// port scan or a stray connection in the window does not break the measurement. Up to
/// `TOKEN_CANDIDATES` connections are read at once without blocking; each is judged only once
/// it has sent as many bytes as the token has (a prefix check would tell a prober each right
/// byte), and dropped if they differ or it closes first.
fn await_token(
    listener: &TcpListener,
    token: &[u8],
    deadline: Instant,
) -> std::io::Result<Option<TcpStream>> {
    listener.set_nonblocking(true)?;
    let mut waiting: Vec<(TcpStream, Vec<u8>)> = Vec::new();
    while Instant::now() < deadline {
        while let Ok((c, _)) = listener.accept() {
            c.set_nonblocking(true)?;
            if waiting.len() == TOKEN_CANDIDATES {
                waiting.remove(0);
            }
            waiting.push((c, Vec::new()));
        }
        let mut i = 0;
        while i < waiting.len() {
            let (c, got) = &mut waiting[i];
            match token_from(c, got, token) {
                Token::Proven => return Ok(Some(waiting.swap_remove(i).0)),
                Token::Waiting => i += 1,
                Token::Wrong => drop(waiting.swap_remove(i)),
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(None)
}

enum Token {
    Proven,
    Waiting,
    Wrong,
}

/// Reads what `c` has sent of its token so far (non-blocking) and judges it once complete.
fn token_from(c: &mut TcpStream, got: &mut Vec<u8>, token: &[u8]) -> Token {
    let mut buf = [0u8; 64];
    let want = (token.len() - got.len()).min(buf.len());
    match c.read(&mut buf[..want]) {
        Ok(0) => Token::Wrong,
        Ok(n) => {
            got.extend_from_slice(&buf[..n]);
            if got.len() < token.len() {
                Token::Waiting
            } else if bool::from(subtle::ConstantTimeEq::ct_eq(&got[..], token)) {
                Token::Proven
            } else {
                Token::Wrong
            }
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
            Token::Waiting
        }
        Err(_) => Token::Wrong,
    }
}

fn stat(t: &mut Transport, ch: &mut Channel) -> Result<u32> {
    let m = crate::sysinfo::local();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let facts = [
        ("kernel", m.kernel.unwrap_or_default()),
        ("cores", m.cores.map(|c| c.to_string()).unwrap_or_default()),
        ("cpu", m.cpu_model.unwrap_or_default()),
        ("arch", m.arch.unwrap_or_default()),
        ("cpu_flags", crate::sysinfo::cpu_flags(&cpuinfo)),
        ("boot_id", crate::sysinfo::boot_id().unwrap_or_default()),
        ("proc", "yes".to_string()),
        ("quota", quota_field()),
        ("crypto", crypto_summary()),
    ];
    let info = facts.into_iter().map(|(key, value)| Line::Info {
        key: key.to_string(),
        value,
    });
    let lines = std::iter::once(Line::Ok).chain(info);
    for l in lines {
        say(t, ch, &l)?;
    }
    Ok(0)
}

/// Highest-priority driver per algorithm in /proc/crypto, e.g. `aes:aesni_intel`.
fn crypto_summary() -> String {
    use crate::sysinfo::proc_crypto;
    const SHOWN: &[&str] = &[
        "aes", "cbc(aes)", "ctr(aes)", "gcm(aes)", "sha256", "xts(aes)",
    ];
    let text = std::fs::read_to_string("/proc/crypto").unwrap_or_default();
    proc_crypto::best_per_name(proc_crypto::parse(&text))
        .iter()
        .filter(|a| SHOWN.contains(&a.name.as_str()))
        .map(|a| format!("{}:{}", a.name, a.driver))
        .collect::<Vec<_>>()
        .join(",")
}
