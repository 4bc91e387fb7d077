//! `sshtune tcp-sink` (hidden): the far end of the raw-TCP ceiling measurement. `bench` starts
//! it on the server over ssh, streams raw TCP to it and reads what it counted.
//!
//! The receiver counts, not the sender: a sender's clock stops when its socket buffer accepts
//! the last write, which on a slow link is long before the bytes arrive.
//!
//! Safe by default: it binds the address the ssh connection came in on (from `SSH_CONNECTION`)
//! or 127.0.0.1, never the wildcard; it only counts bytes from a peer that presents the token
//! it was given; it accepts a fixed number of connections and exits after `--timeout`.
//!
//! What it prints are `remote::Line`s (`SSHTUNE-SINK`, `SSHTUNE-SINK-DONE`), which bench's
//! ceiling reads.

use crate::cli::TcpSinkArgs;
use crate::remote::{Fields, Line};
use anyhow::{bail, Context, Result};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

pub fn run(args: TcpSinkArgs) -> Result<()> {
    if args.token.len() < 16 || !args.token.chars().all(|c| c.is_ascii_alphanumeric()) {
        bail!("--token must be at least 16 letters or digits");
    }
    let ip = match args.listen {
        Some(ip) => ip,
        None => std::env::var("SSH_CONNECTION")
            .ok()
            .and_then(|v| server_address(&v))
            .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
    };
    let listener = TcpListener::bind(SocketAddr::new(ip, 0))
        .with_context(|| format!("binding a TCP port on {ip}"))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let deadline = Instant::now() + args.timeout;
    let mut out = std::io::stdout().lock();
    let listening = Fields::new().with("addr", ip).with("port", port);
    writeln!(out, "{}", Line::SinkListening(listening))?;
    out.flush()?;
    let mut counted = 0;
    while counted < args.count {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    bail!(
                        "timed out after {:.1} s waiting for a connection",
                        args.timeout.as_secs_f64()
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(e) => return Err(e).context("accepting a connection"),
        };
        let cpu0 = crate::sysinfo::process_cpu_seconds(std::process::id());
        match count(stream, &args.token, deadline) {
            Ok(Some((bytes, seconds))) => {
                let cpu = crate::sysinfo::process_cpu_seconds(std::process::id())
                    .zip(cpu0)
                    .map(|(b, a)| (b - a).max(0.0));
                let mut done = Fields::new()
                    .with("bytes", bytes)
                    .with("seconds", format!("{seconds:.6}"));
                if let Some(cpu) = cpu {
                    done = done.with("cpu_s", format!("{cpu:.3}"));
                }
                writeln!(out, "{}", Line::SinkDone(done))?;
                out.flush()?;
                counted += 1;
            }
            // A stranger or a wrong token: not counted, keep waiting for ours.
            Ok(None) => {}
            Err(e) => return Err(e).context("receiving"),
        }
    }
    Ok(())
}

/// Reads the token line, then counts until EOF. Bytes of the first read are left out of the
/// rate, since they arrived at the instant the clock started.
fn count(mut s: TcpStream, token: &str, deadline: Instant) -> Result<Option<(u64, f64)>> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut presented = vec![0u8; token.len() + 1];
    if s.read_exact(&mut presented).is_err() || presented[..token.len()] != *token.as_bytes() {
        return Ok(None);
    }
    let left = deadline.saturating_duration_since(Instant::now());
    s.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let mut bytes = 0u64;
    loop {
        let n = s.read(&mut buf).context("reading the stream")?;
        if n == 0 {
            break;
        }
        let now = Instant::now();
        match first {
            None => first = Some(now),
            Some(_) => bytes += n as u64,
        }
        last = now;
    }
    let seconds = first.map_or(0.0, |f| (last - f).as_secs_f64());
    if seconds <= 0.0 {
        bail!("the stream was too short to time");
    }
    Ok(Some((bytes, seconds)))
}

/// `SSH_CONNECTION` is `client_ip client_port server_ip server_port`.
pub fn server_address(v: &str) -> Option<IpAddr> {
    v.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_address_from_ssh_connection() {
        assert_eq!(
            server_address("10.0.0.1 50000 10.0.0.2 22"),
            Some("10.0.0.2".parse().unwrap())
        );
        assert_eq!(
            server_address("::1 50000 fe80::1 22"),
            Some("fe80::1".parse().unwrap())
        );
        assert_eq!(server_address("garbage"), None);
    }
}
