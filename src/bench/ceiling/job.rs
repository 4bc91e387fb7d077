//! One remote receiver job: an `ssh` child running a receiver's script, its stdout as lines
//! arriving on a channel (so a silent remote cannot hang us past a deadline), and what one
//! timed raw-TCP run yields. Shared by every receiver method.

use crate::process::{drain_stderr, last_line, ChildGuard, StderrDrain};
use anyhow::{Context, Result};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::remote::{Fields, Line};
pub use crate::remote::{CEIL_DONE as DONE, CEIL_ERR as ERR, CEIL_LISTEN as LISTEN};

pub struct Job {
    // Dropping the guard kills ssh; the remote script sees its stdin end and stops what it
    // started (its watchdog ends it anyway once the deadline passes).
    child: ChildGuard,
    // Held open for the job's life: its end is how the remote script learns we are gone.
    _stdin: Option<std::process::ChildStdin>,
    rx: Receiver<String>,
    stderr: StderrDrain,
    what: String,
}

impl Job {
    pub fn start(mut cmd: Command, what: &str) -> Result<Self> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, format!("ssh ({what})"))?;
        let stdin = child.child_mut().stdin.take();
        let stderr = drain_stderr(child.child_mut());
        let stdout = child.child_mut().stdout.take().expect("stdout piped");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            _stdin: stdin,
            rx,
            stderr,
            what: what.to_string(),
        })
    }

    /// The fields of the next line with keyword `keyword`, within `within`. A line from the
    /// script saying it cannot run ends the wait with its reason.
    pub fn wait_line(&self, keyword: &str, within: Duration) -> Result<Fields> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(l) => match Line::parse(&l) {
                    Ok(Line::CeilErr(why)) => anyhow::bail!("{}: {why}", self.what),
                    Ok(line) if line.keyword() == keyword => {
                        return Ok(line.fields().cloned().unwrap_or_default());
                    }
                    _ => {}
                },
                Err(_) => {
                    let text = self.stderr.text(Duration::from_millis(500));
                    let why = match last_line(&text) {
                        l if l.is_empty() => "no answer".to_string(),
                        l => l,
                    };
                    anyhow::bail!("{} did not report ({why})", self.what);
                }
            }
        }
    }

    /// An error line already printed, without waiting (for loops that also poll a socket).
    pub fn poll_error(&self) -> Result<()> {
        while let Ok(l) = self.rx.try_recv() {
            if let Ok(Line::CeilErr(why)) = Line::parse(&l) {
                anyhow::bail!("{}: {why}", self.what);
            }
        }
        Ok(())
    }

    pub fn finish(mut self) {
        let _ = self.child.wait_timeout(Duration::from_secs(5));
    }
}

/// A `LISTEN` line's address.
pub fn listen_addr(t: &Fields) -> Result<std::net::SocketAddr> {
    let ip: std::net::IpAddr = t
        .get("addr")
        .and_then(|a| a.parse().ok())
        .context("the receiver did not say where it listens")?;
    let port: u16 = t
        .get("port")
        .and_then(|p| p.parse().ok())
        .context("the receiver did not say its port")?;
    Ok(std::net::SocketAddr::new(ip, port))
}

/// One timed raw-TCP run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Run {
    pub mib_s: f64,
    /// Our process's CPU during the run, % of one core.
    pub client_cpu_pct: Option<f64>,
    /// The receiver's (or sender's) processes on the server, % of one core.
    pub server_cpu_pct: Option<f64>,
    /// The whole server's busy share, 0–1 of all its cores.
    pub server_busy: Option<f64>,
}

/// Counters a `DONE` line carries, from any receiver flavour.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Done {
    pub bytes: Option<u64>,
    /// Receiver clock, seconds (uploads).
    pub seconds: Option<f64>,
    /// Server-side CPU seconds of the receiver during the run.
    pub cpu_s: Option<f64>,
    pub server_busy: Option<f64>,
    pub stranger: bool,
}

impl Done {
    pub fn parse(t: &Fields) -> Self {
        let f = |k: &str| t.get(k).and_then(|v| v.parse::<f64>().ok());
        let seconds = match (f("t0"), f("t1")) {
            (Some(a), Some(b)) if b > a => Some(b - a),
            _ => f("seconds").filter(|s| *s > 0.0),
        };
        let cpu_s = f("cpu_s").or_else(|| {
            let a = times_children(t.get("cpu0")?)?;
            let b = times_children(t.get("cpu1")?)?;
            (b >= a).then_some(b - a)
        });
        let server_busy = match (
            t.get("stat0").and_then(stat_busy),
            t.get("stat1").and_then(stat_busy),
        ) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 && b1 >= b0 => {
                Some((b1 - b0) as f64 / (t1 - t0) as f64)
            }
            _ => None,
        };
        Self {
            bytes: t.get("bytes").and_then(|v| v.parse().ok()),
            seconds,
            cpu_s,
            server_busy,
            stranger: t.has_word("STRANGER"),
        }
    }
}

/// `times`' children figures as the script passes them (`0m1.50s,0m0.25s`, user,system), in
/// seconds.
fn times_children(v: &str) -> Option<f64> {
    let one = |s: &str| -> Option<f64> {
        let s = s.trim().strip_suffix('s')?;
        let (m, sec) = s.split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + sec.parse::<f64>().ok()?)
    };
    let (u, s) = v.split_once(',')?;
    Some(one(u)? + one(s)?)
}

/// The aggregate `/proc/stat` cpu line's fields (comma-joined): (busy, total) ticks, busy being
/// everything but idle and iowait.
fn stat_busy(v: &str) -> Option<(u64, u64)> {
    let f: Vec<u64> = v.split(',').filter_map(|x| x.parse().ok()).collect();
    if f.len() < 5 {
        return None;
    }
    let total: u64 = f.iter().take(8).sum();
    Some((total - f[3] - f[4], total))
}

/// Our own CPU seconds so far (all threads).
pub fn own_cpu_s() -> Option<f64> {
    crate::sysinfo::process_cpu_seconds(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_line_of_a_shell_receiver() {
        let d = Done::parse(&Fields::parse(
            "bytes=1048576 t0=100.50 t1=102.50 cpu0=0m0.10s,0m0.20s cpu1=0m0.30s,0m1.00s \
             stat0=100,0,100,800,0,0,0,0 stat1=150,0,150,900,0,0,0,0",
        ));
        assert_eq!(d.bytes, Some(1048576));
        assert!((d.seconds.unwrap() - 2.0).abs() < 1e-9);
        assert!((d.cpu_s.unwrap() - 1.0).abs() < 1e-9);
        assert!((d.server_busy.unwrap() - 0.5).abs() < 1e-9);
        assert!(!d.stranger);
    }

    #[test]
    fn done_line_of_python_and_a_stranger() {
        let d = Done::parse(&Fields::parse(
            "bytes=10 t0=1.0 t1=1.5 cpu_s=0.25 stat0= stat1=",
        ));
        assert_eq!(d.cpu_s, Some(0.25));
        assert_eq!(d.server_busy, None);
        assert!(Done::parse(&Fields::parse("STRANGER cpu0=0m0.00s,0m0.00s")).stranger);
        assert_eq!(Done::parse(&Fields::parse("cpu0=garbage")).cpu_s, None);
    }
}
