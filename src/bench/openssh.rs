//! The `openssh` engine: every transfer is a real `ssh` client process, so the user's config,
//! agent, keys and known_hosts apply exactly as they would by hand.

use super::executor::{Executor, Job, Sample, TransferError};
use super::model::Direction;
use super::remote::{self, Ready};
use crate::process::{self, drain_stderr, last_line, ChildGuard};
use crate::sysinfo::process_cpu_seconds;
use crate::target::{SshLog, SshTarget};
use anyhow::anyhow;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the remote side may take to say it is ready (login included).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct OpenSsh {
    target: SshTarget,
    /// Random data written on upload; incompressible so no layer can cheat.
    payload: Vec<u8>,
    /// Set when a CPU quota below one core holds both `ssh` and this process: they then draw
    /// from one budget, and the client CPU figure must count our own feeding/draining too.
    shared_quota: bool,
}

impl OpenSsh {
    pub fn new(target: SshTarget) -> Self {
        use rand::{RngCore, SeedableRng};
        let mut payload = vec![0u8; 1 << 20];
        rand::rngs::SmallRng::from_entropy().fill_bytes(&mut payload);
        let shared_quota = crate::cgroup::quota_cores("self").is_some_and(|q| q < 1.0);
        Self {
            target,
            payload,
            shared_quota,
        }
    }

    pub fn command(&self, cipher: Option<&str>, mac: Option<&str>, remote_cmd: &str) -> Command {
        self.target
            .ssh_command(cipher, mac, SshLog::Default, remote_cmd)
    }

    /// Logs in once with default algorithms: any failure here is fatal for the whole run and
    /// is reported in one line. Returns the `SSHTUNE-INFO` facts about the server.
    pub fn preflight(&self) -> anyhow::Result<Vec<(String, String)>> {
        let mut cmd = self.command(None, None, &remote::preflight_script());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh")
            .map_err(|e| anyhow!("cannot run ssh (apt-get install openssh-client): {e}"))?;
        let drain = drain_stderr(child.child_mut());
        let watchdog = Watchdog::arm(child.id(), READY_TIMEOUT);
        let mut stdout = String::new();
        if let Some(mut out) = child.child_mut().stdout.take() {
            let _ = std::io::Read::read_to_string(&mut out, &mut stdout);
        }
        let status = child.wait_timeout(Duration::from_secs(5))?;
        let stalled = watchdog.fired();
        watchdog.disarm();
        process::check_interrupted()?;
        let stderr = drain.text(Duration::from_secs(5));
        if !stdout.contains("SSHTUNE-OK") {
            if stalled {
                anyhow::bail!(
                    "{}: no answer within {} s of starting ssh (a slow login, or a shell \
                     startup file on the server that waits?)",
                    self.target.destination,
                    READY_TIMEOUT.as_secs()
                );
            }
            return Err(
                match classify(&stderr, status.code(), &self.target.destination) {
                    TransferError::Fatal(e) => e,
                    other => anyhow!(
                        "cannot run commands on {}: {other}",
                        self.target.destination
                    ),
                },
            );
        }
        let missing: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("SSHTUNE-MISSING "))
            .collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "the remote side lacks {} (needed for the sink/source commands)",
                missing.join(", ")
            );
        }
        Ok(stdout
            .lines()
            .filter_map(|l| l.strip_prefix("SSHTUNE-INFO "))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect())
    }
}

impl Executor for OpenSsh {
    fn engine(&self) -> &'static str {
        "openssh"
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, TransferError> {
        process::check_interrupted()?;
        let script = match job.direction {
            Direction::Upload => remote::upload_script(),
            Direction::Download => remote::download_script(job.bytes),
        };
        let mut cmd = self.command(Some(job.cipher), job.mac, &script);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh")?;
        let stderr = drain_stderr(child.child_mut());
        let result = run_transfer(&mut child, job, &self.payload, self.shared_quota);
        let result = match result {
            Ok(s) => Ok(s),
            Err(e) => {
                let status = child.wait_timeout(Duration::from_secs(5)).ok();
                process::check_interrupted()?;
                let text = stderr.text(Duration::from_secs(5));
                let code = status.and_then(|s| s.code());
                Err(match e {
                    Step::NotReady => classify(&text, code, &self.target.destination),
                    Step::Lost(detail) => match classify(&text, code, &self.target.destination) {
                        TransferError::Failed(msg) => {
                            TransferError::Failed(format!("{detail}; {msg}"))
                        }
                        other => other,
                    },
                    Step::Bad(msg) => TransferError::Failed(msg),
                })
            }
        };
        let sample = result?;
        let status = child
            .wait_timeout(Duration::from_secs(30))
            .map_err(|e| TransferError::Failed(format!("waiting for ssh: {e}")))?;
        if !status.success() {
            let text = stderr.text(Duration::from_secs(5));
            return Err(TransferError::Failed(format!(
                "ssh exited with {status} after the transfer: {}",
                last_line(&text)
            )));
        }
        Ok(sample)
    }
}

enum Step {
    /// The remote never said ready: a login/negotiation failure, classified from stderr.
    NotReady,
    /// The stream broke mid-transfer.
    Lost(String),
    /// The remote answered but the answer is wrong (byte count, exit code).
    Bad(String),
}

fn run_transfer(
    child: &mut ChildGuard,
    job: &Job,
    payload: &[u8],
    shared_quota: bool,
) -> Result<Sample, Step> {
    let pid = child.id();
    let stdout = child.child_mut().stdout.take().expect("stdout piped");
    let mut out = BufReader::with_capacity(256 * 1024, stdout);
    let watchdog = Watchdog::arm(pid, READY_TIMEOUT);
    let mut line = String::new();
    let ready = loop {
        line.clear();
        match out.read_line(&mut line) {
            Ok(0) | Err(_) if watchdog.fired() => {
                return Err(Step::Bad(format!(
                    "no answer from the remote command within {} s of starting ssh (a slow \
                     login, or a shell startup file on the server that waits?)",
                    READY_TIMEOUT.as_secs()
                )))
            }
            Ok(0) | Err(_) => return Err(Step::NotReady),
            Ok(_) => {
                if let Some(r) = Ready::parse(line.trim_end()) {
                    break r;
                }
            }
        }
    };
    watchdog.disarm();
    let t0 = Instant::now();
    let own = || {
        shared_quota
            .then(|| process_cpu_seconds(std::process::id()))
            .flatten()
            .unwrap_or(0.0)
    };
    let c0 = process_cpu_seconds(pid).map(|c| c + own());

    let (seconds, c1, done) = match job.direction {
        Direction::Upload => {
            let mut stdin = child.child_mut().stdin.take().expect("stdin piped");
            let mut left = job.bytes;
            while left > 0 {
                if process::interrupted() {
                    return Err(Step::Lost("interrupted".into()));
                }
                let n = left.min(payload.len() as u64) as usize;
                stdin
                    .write_all(&payload[..n])
                    .map_err(|e| Step::Lost(e.to_string()))?;
                left -= n as u64;
            }
            drop(stdin);
            let done = read_done(&mut out)?;
            let seconds = t0.elapsed().as_secs_f64();
            let c1 = process_cpu_seconds(pid).map(|c| c + own());
            let t = remote::tokens(&done);
            let counted: Option<u64> = t.get("bytes").and_then(|v| v.parse().ok());
            if counted != Some(job.bytes) {
                return Err(Step::Bad(format!(
                    "remote counted {} bytes, {} were sent",
                    counted.map_or("no".into(), |c| c.to_string()),
                    job.bytes
                )));
            }
            (seconds, c1, done)
        }
        Direction::Download => {
            drop(child.child_mut().stdin.take());
            let mut left = job.bytes;
            let mut scratch = vec![0u8; 256 * 1024];
            while left > 0 {
                if process::interrupted() {
                    return Err(Step::Lost("interrupted".into()));
                }
                let want = left.min(scratch.len() as u64) as usize;
                match out.read(&mut scratch[..want]) {
                    Ok(0) => {
                        return Err(Step::Lost(format!(
                            "stream ended after {} of {} bytes",
                            job.bytes - left,
                            job.bytes
                        )))
                    }
                    Ok(n) => left -= n as u64,
                    Err(e) => return Err(Step::Lost(e.to_string())),
                }
            }
            let seconds = t0.elapsed().as_secs_f64();
            let c1 = process_cpu_seconds(pid).map(|c| c + own());
            let done = read_done(&mut out)?;
            if remote::tokens(&done).get("rc") != Some(&"0") {
                return Err(Step::Bad(format!("remote source failed: {done}")));
            }
            (seconds, c1, done)
        }
    };
    Ok(remote::sample(
        job.bytes,
        seconds,
        c0.zip(c1).map(|(a, b)| b - a),
        &ready,
        &done,
    ))
}

fn read_done<R: BufRead>(out: &mut R) -> Result<String, Step> {
    let mut line = String::new();
    loop {
        line.clear();
        match out.read_line(&mut line) {
            Ok(0) => {
                return Err(Step::Lost(
                    "connection closed before the remote reported".into(),
                ))
            }
            Err(e) => return Err(Step::Lost(e.to_string())),
            Ok(_) => {
                if let Some(rest) = line.trim_end().strip_prefix("SSHTUNE-DONE") {
                    return Ok(rest.to_string());
                }
            }
        }
    }
}

/// Turns ssh's stderr into one line that names the cause.
pub fn classify(stderr: &str, code: Option<i32>, dest: &str) -> TransferError {
    let has = |s: &str| stderr.contains(s);
    let line = last_line(stderr);
    if has("no matching cipher found") {
        return TransferError::Refused("cipher not offered by the server".into());
    }
    if has("no matching MAC found") {
        return TransferError::Refused("MAC not offered by the server".into());
    }
    if has("Unknown cipher")
        || has("Bad SSH2 cipher spec")
        || has("Unknown mac")
        || has("Bad SSH2 mac spec")
    {
        return TransferError::Refused(format!("not supported by the local ssh: {line}"));
    }
    if has("Unable to negotiate") {
        return TransferError::Refused(format!("negotiation failed: {line}"));
    }
    let fatal = |msg: String| TransferError::Fatal(anyhow!(msg));
    if has("Could not resolve hostname") {
        return fatal(format!("cannot resolve host {dest}: {line}"));
    }
    if has("Connection refused") {
        return fatal(format!(
            "{dest}: connection refused (is an SSH server listening on that port?)"
        ));
    }
    if has("timed out") || has("No route to host") || has("Network is unreachable") {
        return fatal(format!("{dest} is unreachable: {line}"));
    }
    if has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return fatal(format!(
            "the host key of {dest} has changed: refusing to connect (verify it, then fix known_hosts)"
        ));
    }
    if has("Host key verification failed") {
        return fatal(format!(
            "host key of {dest} could not be verified (unknown host: connect once with ssh to check and accept it)"
        ));
    }
    if has("Permission denied") || has("Too many authentication failures") {
        return fatal(format!(
            "authentication to {dest} refused ({line}); bench logs in non-interactively: use a key or ssh-agent"
        ));
    }
    if code == Some(127) || has("not found") {
        return fatal(format!("a command is missing on {dest}: {line}"));
    }
    if has("Connection closed")
        || has("Connection reset")
        || has("Broken pipe")
        || has("not responding")
        || code == Some(255)
    {
        return TransferError::Failed(format!("connection lost: {line}"));
    }
    TransferError::Failed(format!(
        "ssh failed ({}): {line}",
        code.map_or("signal".into(), |c| c.to_string())
    ))
}

/// Kills a child that does not reach the next step in time.
struct Watchdog {
    cancel: std::sync::mpsc::Sender<()>,
    /// Set when the timeout killed ssh, so the error names the stall instead of a bare signal.
    fired: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Watchdog {
    fn arm(pid: u32, timeout: Duration) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let fired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = fired.clone();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(timeout) {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        });
        Self { cancel: tx, fired }
    }

    fn fired(&self) -> bool {
        self.fired.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn disarm(self) {
        let _ = self.cancel.send(());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_common_failures() {
        let r = |s: &str| classify(s, Some(255), "h");
        assert!(matches!(r("Unable to negotiate with 127.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr"), TransferError::Refused(_)));
        assert!(matches!(
            r("ssh: Could not resolve hostname nope: Name or service not known"),
            TransferError::Fatal(_)
        ));
        assert!(matches!(
            r("ssh: connect to host 127.0.0.1 port 1: Connection refused"),
            TransferError::Fatal(_)
        ));
        assert!(matches!(
            r("root@127.0.0.1: Permission denied (publickey)."),
            TransferError::Fatal(_)
        ));
        assert!(matches!(
            r("Host key verification failed."),
            TransferError::Fatal(_)
        ));
        assert!(matches!(
            r("Connection closed by 127.0.0.1 port 22"),
            TransferError::Failed(_)
        ));
        assert!(matches!(
            r("Unknown cipher type 'arcfour'"),
            TransferError::Refused(_)
        ));
    }
}
