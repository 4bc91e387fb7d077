//! Our end of one raw-TCP run: stream to a remote receiver (upload) or drain a remote sender
//! (download) for a fixed time, presenting the token first. For a download we are the
//! receiver, so our clock gives the rate; for an upload the remote's count and clock do.

use super::job::{own_cpu_s, Done, Job, Run, DONE};
use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;
const CHUNK: usize = 256 * 1024;

/// Connects to a receiver that has just said it listens; a slow board may take a moment to
/// bind, so a refusal is retried for a few seconds.
pub fn connect(addr: SocketAddr) -> Result<(TcpStream, f64)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let c0 = Instant::now();
        match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
            Ok(s) => return Ok((s, c0.elapsed().as_secs_f64())),
            Err(e) if Instant::now() < deadline => {
                if e.kind() != std::io::ErrorKind::ConnectionRefused {
                    return Err(e).with_context(|| format!("connecting to the receiver at {addr}"));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => {
                return Err(e).with_context(|| format!("connecting to the receiver at {addr}"))
            }
        }
    }
}

/// Presents the token (when we connected), streams for `per_run`, then half-closes so the receiver sees EOF. Returns our CPU seconds.
pub fn push(s: &mut TcpStream, token: Option<&str>, per_run: Duration) -> Result<Option<f64>> {
    let chunk = vec![0x5au8; CHUNK];
    if let Some(token) = token {
        s.write_all(format!("{token}\n").as_bytes())?;
    }
    let c0 = own_cpu_s();
    let start = Instant::now();
    while start.elapsed() < per_run {
        s.write_all(&chunk).context("streaming to the receiver")?;
    }
    s.shutdown(std::net::Shutdown::Write)?;
    Ok(cpu_delta(c0))
}

/// Reads for `per_run` from the first byte on, then closes. Returns (MiB/s, our CPU seconds).
pub fn pull(
    mut s: TcpStream,
    token: Option<&str>,
    per_run: Duration,
) -> Result<(f64, Option<f64>)> {
    if let Some(token) = token {
        s.write_all(format!("{token}\n").as_bytes())?;
    }
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut buf = vec![0u8; CHUNK];
    let n = s
        .read(&mut buf)
        .context("waiting for the sender's first bytes")?;
    anyhow::ensure!(n > 0, "the sender closed without sending (wrong token?)");
    let c0 = own_cpu_s();
    let start = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < per_run {
        match s.read(&mut buf).context("reading from the sender")? {
            0 => break,
            n => bytes += n as u64,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    drop(s);
    Ok((bytes as f64 / MIB / secs, cpu_delta(c0)))
}

fn cpu_delta(c0: Option<f64>) -> Option<f64> {
    Some((own_cpu_s()? - c0?).max(0.0))
}

/// Builds a `Run` from the remote `DONE` line and what we measured. `ours` is the rate when
/// we were the receiver; otherwise the remote's count and clock give it.
pub fn finish_run(
    job: &Job,
    per_run: Duration,
    ours: Option<f64>,
    client_cpu_s: Option<f64>,
) -> Result<Run> {
    let done = Done::parse(&job.wait_line(DONE, per_run + Duration::from_secs(30))?);
    anyhow::ensure!(
        !done.stranger,
        "another peer reached the one-shot receiver first (wrong token)"
    );
    let (mib_s, secs) = match ours {
        Some(r) => (r, per_run.as_secs_f64()),
        None => {
            let bytes = done.bytes.context("the receiver sent no byte count")?;
            let secs = done.seconds.context("the receiver sent no duration")?;
            (bytes as f64 / MIB / secs, secs)
        }
    };
    anyhow::ensure!(mib_s > 0.0, "the receiver counted nothing");
    Ok(Run {
        mib_s,
        client_cpu_pct: client_cpu_s.map(|c| c / secs * 100.0),
        server_cpu_pct: done.cpu_s.map(|c| c / secs * 100.0),
        server_busy: done.server_busy,
    })
}

/// Our one listener for a receiver that connects back (bash's `/dev/tcp`): it accepts only a
/// peer whose first line is the token, until `deadline`.
pub fn accept_token(
    l: &TcpListener,
    token: &str,
    deadline: Instant,
    job: &Job,
) -> Result<TcpStream> {
    l.set_nonblocking(true)?;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(Duration::from_secs(5)))?;
                let mut line = String::new();
                let mut r = BufReader::new(s.try_clone()?).take(token.len() as u64 + 1);
                if r.read_line(&mut line).is_ok() && line.trim_end() == token {
                    return Ok(s);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                job.poll_error()?;
                anyhow::ensure!(
                    Instant::now() < deadline,
                    "the server did not connect back to {}",
                    l.local_addr()?
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e).context("accepting the server's connection"),
        }
    }
}
