//! The raw-TCP ceiling: what the path carries with no SSH in the way. Without it no run can
//! honestly be called network-bound.

use super::stats;
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Measures TCP throughput over loopback (the path the embedded server uses): three runs of
/// `per_run`, median in MiB/s, with min and max.
pub fn loopback_tcp(per_run: Duration) -> Result<(f64, f64, f64)> {
    let mut samples = Vec::new();
    for _ in 0..3 {
        samples.push(one_run(per_run)?);
    }
    Ok((
        stats::median(&samples).unwrap_or(0.0),
        stats::min(&samples).unwrap_or(0.0),
        stats::max(&samples).unwrap_or(0.0),
    ))
}

fn one_run(per_run: Duration) -> Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
    let addr = listener.local_addr()?;
    let reader = std::thread::spawn(move || -> std::io::Result<u64> {
        let (mut s, _) = listener.accept()?;
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0u64;
        loop {
            match s.read(&mut buf)? {
                0 => return Ok(total),
                n => total += n as u64,
            }
        }
    });
    let mut s = TcpStream::connect(addr).context("connecting over loopback")?;
    let chunk = vec![0x5au8; 256 * 1024];
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < per_run {
        s.write_all(&chunk)?;
        sent += chunk.len() as u64;
    }
    s.shutdown(std::net::Shutdown::Write)?;
    let received = reader.join().expect("reader thread")?;
    let secs = start.elapsed().as_secs_f64();
    anyhow::ensure!(
        received == sent,
        "loopback lost bytes: {received} of {sent}"
    );
    Ok(received as f64 / (1024.0 * 1024.0) / secs)
}

/// A ceiling measured against `sshtune tcp-sink` on the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RemoteCeiling {
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    /// Fastest TCP connect to the sink: about one round trip, for the window arithmetic.
    pub rtt_s: Option<f64>,
}

/// How many raw-TCP runs make one ceiling figure.
const REMOTE_RUNS: u32 = 3;

/// Measures the raw-TCP ceiling of the path to a remote host: starts `sshtune tcp-sink` there
/// through `ssh` (built by `ssh_command` from a remote command line), streams to it for
/// `per_run` three times and takes the receiver's counts. The sink listens on the address the
/// ssh connection arrived at, so the TCP stream takes the same path as the SSH one (unless a
/// ProxyJump or NAT sits in between: then the connect fails and the caller says so).
pub fn remote_tcp(
    ssh_command: impl FnOnce(&str) -> std::process::Command,
    remote_sshtune: &str,
    per_run: Duration,
) -> Result<RemoteCeiling> {
    use crate::cmd::tcp_sink::{DONE, LISTENING};
    use crate::process::{drain_stderr, last_line, ChildGuard};
    use std::io::BufRead;
    use std::process::Stdio;

    anyhow::ensure!(
        !remote_sshtune.contains('\''),
        "the remote sshtune path contains a single quote"
    );
    let token: String = {
        use rand::{distributions::Alphanumeric, Rng};
        rand::thread_rng()
            .sample_iter(&Alphanumeric)
            .take(32)
            .map(char::from)
            .collect()
    };
    let timeout = (per_run.as_secs_f64() * f64::from(REMOTE_RUNS) + 30.0).ceil() as u64;
    let remote = format!(
        "'{remote_sshtune}' tcp-sink --token {token} --count {REMOTE_RUNS} --timeout {timeout}"
    );
    let mut cmd = ssh_command(&remote);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = ChildGuard::spawn(&mut cmd, "ssh (tcp-sink)")?;
    let stderr = drain_stderr(child.child_mut());
    let stdout = child.child_mut().stdout.take().expect("stdout piped");
    // Lines arrive on a thread so a silent remote cannot hang us past the deadline.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_line = |prefix: &str, within: Duration| -> Result<String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) => {
                    if let Some(rest) = l.strip_prefix(prefix) {
                        if rest.starts_with(' ') {
                            return Ok(rest.to_string());
                        }
                    }
                }
                Err(_) => {
                    let text = stderr.text(Duration::from_millis(500));
                    anyhow::bail!("tcp-sink did not report ({})", last_line(&text));
                }
            }
        }
    };
    let listening = wait_line(LISTENING, Duration::from_secs(30))?;
    let t = super::remote::tokens(&listening);
    let ip: std::net::IpAddr = t
        .get("addr")
        .and_then(|a| a.parse().ok())
        .context("tcp-sink did not say where it listens")?;
    let port: u16 = t
        .get("port")
        .and_then(|p| p.parse().ok())
        .context("tcp-sink did not say its port")?;
    let addr = std::net::SocketAddr::new(ip, port);
    let chunk = vec![0x5au8; 256 * 1024];
    let mut rates = Vec::new();
    let mut rtt: Option<f64> = None;
    for _ in 0..REMOTE_RUNS {
        crate::process::check_interrupted()?;
        let c0 = Instant::now();
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .with_context(|| format!("connecting to tcp-sink at {addr}"))?;
        let connect = c0.elapsed().as_secs_f64();
        rtt = Some(rtt.map_or(connect, |r: f64| r.min(connect)));
        s.write_all(format!("{token}\n").as_bytes())?;
        let start = Instant::now();
        while start.elapsed() < per_run {
            s.write_all(&chunk).context("streaming to tcp-sink")?;
        }
        s.shutdown(std::net::Shutdown::Write)?;
        let done = wait_line(DONE, per_run + Duration::from_secs(30))?;
        let t = super::remote::tokens(&done);
        let bytes: f64 = t
            .get("bytes")
            .and_then(|v| v.parse().ok())
            .context("tcp-sink sent no byte count")?;
        let secs: f64 = t
            .get("seconds")
            .and_then(|v| v.parse().ok())
            .context("tcp-sink sent no duration")?;
        anyhow::ensure!(secs > 0.0, "tcp-sink timed nothing");
        rates.push(bytes / (1024.0 * 1024.0) / secs);
    }
    let _ = child.wait_timeout(Duration::from_secs(5));
    Ok(RemoteCeiling {
        median_mib_s: stats::median(&rates).unwrap_or(0.0),
        min_mib_s: stats::min(&rates).unwrap_or(0.0),
        max_mib_s: stats::max(&rates).unwrap_or(0.0),
        rtt_s: rtt,
    })
}
