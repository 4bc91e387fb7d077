//! The `openssh` engine: every transfer is a real `ssh` client process, so the user's config,
//! agent, keys and known_hosts apply exactly as they would by hand.

use super::executor::{Executor, Job, Sample};
use super::model::Direction;
use super::placement::{self, Pin, Placement, Watch, Watched};
use super::transfer::{self, DataPipe, Step};
use crate::process::{self, drain_stderr, last_line, ChildGuard, StderrDrain};
use crate::remote;
use crate::sysinfo::process_cpu_seconds;
use crate::target::error::classify;
use crate::target::SshError;
use crate::target::{SshLog, SshTarget};
use anyhow::anyhow;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// How long the remote side may take to say it is ready (login included).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct OpenSsh {
    target: SshTarget,
    /// Random data written on upload; incompressible so no layer can cheat.
    payload: Vec<u8>,
    /// Set when a CPU quota below one core holds both `ssh` and this process: they then draw
    /// from one budget, and the client CPU figure must count our own feeding/draining too.
    shared_quota: bool,
    /// Whether transfers share one `ssh` per cipher (the server's `head -c` stops at its
    /// count; set from the preflight's `exact_head`).
    pub reuse: bool,
    sessions: Vec<Session>,
    /// The (cipher, MAC) pairs a session has been opened for, so one opened again is warmed.
    opened: Vec<(String, Option<String>)>,
    /// The server runs on this machine (same kernel boot id): its session process can be
    /// watched and pinned.
    local_server: bool,
    /// The two CPUs the ends are held to, when the server is this machine.
    pin: Option<Pin>,
    /// What `pin` says in the report, once the preflight knows.
    placement: Option<Placement>,
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
            reuse: false,
            sessions: Vec::new(),
            opened: Vec::new(),
            local_server: false,
            pin: None,
            placement: None,
        }
    }

    /// Another client of the same target with sessions of its own, for one of `--streams`
    /// concurrent transfers: not pinned (the streams' processes go where the scheduler puts
    /// them), not watched, and counting only its own `ssh` (the streams count this process
    /// once for all of them).
    pub fn another(&self) -> Self {
        Self {
            target: self.target.clone(),
            payload: self.payload.clone(),
            shared_quota: false,
            reuse: self.reuse,
            sessions: Vec::new(),
            opened: Vec::new(),
            local_server: false,
            pin: None,
            placement: None,
        }
    }

    pub fn command(&self, cipher: Option<&str>, mac: Option<&str>, remote_cmd: &str) -> Command {
        self.target
            .ssh_command(cipher, mac, SshLog::Default, remote_cmd)
    }

    /// Logs in once with default algorithms: any failure here is fatal for the whole run and
    /// is reported in one line. Returns the `SSHTUNE-INFO` facts about the server.
    pub fn preflight(&mut self) -> anyhow::Result<remote::Info> {
        let info = self.log_in_once()?;
        let same_boot = remote::same_boot(&info);
        self.local_server = same_boot == Some(true);
        let (pin, placement) = placement::plan(self.engine(), same_boot);
        self.pin = pin;
        self.placement = Some(placement);
        Ok(info)
    }

    fn log_in_once(&self) -> anyhow::Result<remote::Info> {
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
        if !remote::said_ok(&stdout) {
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
                    SshError::Fatal(e) => e,
                    other => anyhow!(
                        "cannot run commands on {}: {other}",
                        self.target.destination
                    ),
                },
            );
        }
        let missing = remote::missing(&stdout);
        if !missing.is_empty() {
            anyhow::bail!(
                "the remote side lacks {} (needed for the sink/source commands)",
                missing.join(", ")
            );
        }
        Ok(remote::Info::parse(&stdout))
    }
}

impl Executor for OpenSsh {
    fn engine(&self) -> &'static str {
        super::model::EngineKind::Openssh.as_str()
    }

    /// One `ssh` per pair when the server's `head -c` allows it, else one per transfer.
    fn warms_per_pair(&self) -> bool {
        self.reuse
    }

    /// Starts the next pair's session, so that its login runs during this pair's warm-up. A
    /// session that cannot start is left to the next pair's own first transfer, which reports
    /// why in its row.
    fn prepare(&mut self, next: &Job) {
        let key = (next.cipher.to_string(), next.mac.map(String::from));
        if !self.reuse || self.opened.contains(&key) {
            return;
        }
        while self.sessions.len() >= MAX_SESSIONS {
            self.sessions.remove(0).close();
        }
        if let Ok(mut session) = self.spawn(next, &remote::session_script(), true) {
            session.logging_in = true;
            self.opened.push(key);
            self.sessions.push(session);
        }
    }

    /// Reads each session opened ahead up to its HELLO: its login is then over, and its login
    /// watchdog is disarmed (it waits idle for its turn, which may be longer than a login may
    /// take). A session that ended instead is left as it is: its first transfer reads the end
    /// and reports why, as any failed login does.
    fn placement(&self) -> Option<Placement> {
        self.placement.clone()
    }

    fn settle(&mut self) {
        for s in self.sessions.iter_mut().filter(|s| s.logging_in) {
            s.logging_in = false;
            loop {
                match s.pipe.read_line() {
                    Ok(Some(line)) if line == remote::HELLO => {
                        s.pipe.on_ready();
                        break;
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }

    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        process::check_interrupted()?;
        // This thread feeds and drains ssh: it runs beside ssh, on the client's CPU.
        let _feeder = self.pin.as_ref().map(Pin::feeder);
        if self.reuse {
            return self.transfer_in_session(job);
        }
        let script = match job.direction {
            Direction::Upload => remote::upload_script(),
            Direction::Download => remote::download_script(job.bytes),
        };
        let mut session = self.spawn(job, &script, false)?;
        let result = transfer::drive(&mut session.pipe, job, &self.payload);
        let sample = match result {
            Ok(s) => s,
            Err(e) => return Err(session.fail(e, &self.target.destination)),
        };
        let Session {
            mut child,
            stderr,
            pipe,
            ..
        } = session;
        drop(pipe);
        let status = child
            .wait_timeout(Duration::from_secs(30))
            .map_err(|e| SshError::Failed(format!("waiting for ssh: {e}")))?;
        if !status.success() {
            let text = stderr.text(Duration::from_secs(5));
            return Err(SshError::Failed(format!(
                "ssh exited with {status} after the transfer: {}",
                last_line(&text)
            )));
        }
        Ok(sample)
    }
}

impl OpenSsh {
    /// Starts `ssh` with `job`'s cipher and MAC running `script`; its login watchdog armed.
    fn spawn(&self, job: &Job, script: &str, framed: bool) -> Result<Session, SshError> {
        let mut cmd = self.command(Some(job.cipher), job.mac, script);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh")?;
        let pid = child.id();
        if let Some(pin) = &self.pin {
            pin.client_process(pid);
        }
        process::widen_pipes(child.child_mut());
        let stderr = drain_stderr(child.child_mut());
        let pipe = ChildPipe {
            out: BufReader::with_capacity(
                256 * 1024,
                child.child_mut().stdout.take().expect("stdout piped"),
            ),
            stdin: child.child_mut().stdin.take(),
            pid,
            shared_quota: self.shared_quota,
            watchdog: Some(Watchdog::arm(pid, READY_TIMEOUT)),
            stalled: false,
            framed,
            local_server: self.local_server,
            pin: self.pin.clone(),
            session: None,
        };
        Ok(Session {
            cipher: job.cipher.to_string(),
            mac: job.mac.map(String::from),
            child,
            stderr,
            pipe,
            logging_in: false,
        })
    }

    /// One `ssh` per (cipher, MAC) carries its warm-up and every sample of both directions:
    /// the handshake and login happen before the first READY, so they stay outside every
    /// figure, and are paid once instead of once per transfer. The few most recently used
    /// sessions stay open for the racing rounds; a failed one is closed and the next transfer
    /// of its cipher starts afresh.
    fn transfer_in_session(&mut self, job: &Job) -> Result<Sample, SshError> {
        let found = self
            .sessions
            .iter()
            .position(|s| s.cipher == job.cipher && s.mac.as_deref() == job.mac);
        let mut session = match found {
            // One opened ahead and not waited for (`settle`): its transfer reads past HELLO.
            Some(i) => {
                let mut s = self.sessions.remove(i);
                s.logging_in = false;
                s
            }
            None => {
                while self.sessions.len() >= MAX_SESSIONS {
                    self.sessions.remove(0).close();
                }
                let mut fresh = self.spawn(job, &remote::session_script(), true)?;
                // The sampling loop warmed the first session of a pair up; one opened again
                // after it was closed starts cold, and a cold session reads low (under a CPU
                // quota for seconds): it gets an untimed transfer of its own first.
                let key = (job.cipher.to_string(), job.mac.map(String::from));
                if self.opened.contains(&key) {
                    if let Err(e) = transfer::drive(&mut fresh.pipe, job, &self.payload) {
                        return Err(fresh.fail(e, &self.target.destination));
                    }
                } else {
                    self.opened.push(key);
                }
                fresh
            }
        };
        match transfer::drive(&mut session.pipe, job, &self.payload) {
            Ok(s) => {
                self.sessions.push(session);
                Ok(s)
            }
            Err(e) => Err(session.fail(e, &self.target.destination)),
        }
    }

    /// Ends every open session (also done on drop).
    pub fn close_sessions(&mut self) {
        for s in self.sessions.drain(..) {
            s.close();
        }
    }
}

impl Drop for OpenSsh {
    fn drop(&mut self) {
        self.close_sessions();
    }
}

/// Sessions kept open at once: one per cipher of OpenSSH's default list (10) and a few more,
/// so the racing rounds, which visit every contender in turn, do not close the session the
/// next round needs (each reopened one costs an untimed warm-up). An idle session is an `ssh`
/// and a remote shell waiting on a line; a server's MaxStartups counts only logins, not these.
const MAX_SESSIONS: usize = 12;

/// One running `ssh` and its pipes.
struct Session {
    cipher: String,
    mac: Option<String>,
    child: ChildGuard,
    stderr: StderrDrain,
    pipe: ChildPipe,
    /// Opened ahead of its turn (`prepare`), its HELLO not read yet.
    logging_in: bool,
}

impl Session {
    /// Stops the session after a failed transfer and names the cause in one line.
    fn fail(mut self, e: Step<std::io::Error>, dest: &str) -> SshError {
        let stalled = self.pipe.stalled();
        self.pipe.on_ready();
        drop(self.pipe);
        let status = self.child.wait_timeout(Duration::from_secs(5)).ok();
        if let Err(e) = process::check_interrupted() {
            return e.into();
        }
        let text = self.stderr.text(Duration::from_secs(5));
        let code = status.and_then(|s| s.code());
        match e {
            Step::NotReady(_) if stalled => SshError::Failed(format!(
                "no answer from the remote command within {} s of starting ssh (a \
                 slow login, or a shell startup file on the server that waits?)",
                READY_TIMEOUT.as_secs()
            )),
            Step::NotReady(_) => classify(&text, code, dest),
            Step::Lost(e) => lost(e.to_string(), &text, code, dest),
            Step::Ended(detail) => lost(detail, &text, code, dest),
            Step::Bad(msg) => SshError::Failed(msg),
        }
    }

    /// Ends the remote loop by closing its input; a session that does not leave in time is
    /// killed when its guard drops.
    fn close(mut self) {
        self.pipe.on_ready();
        drop(self.pipe);
        let _ = self.child.wait_timeout(Duration::from_secs(5));
    }
}

/// The `ssh` child's stdin and stdout as a data pipe; its CPU from `/proc/PID/stat`.
struct ChildPipe {
    out: BufReader<ChildStdout>,
    stdin: Option<ChildStdin>,
    pid: u32,
    shared_quota: bool,
    /// Kills a login that never reaches READY; disarmed when it does.
    watchdog: Option<Watchdog>,
    stalled: bool,
    /// Carries many transfers (`remote::session_script`).
    framed: bool,
    local_server: bool,
    pin: Option<Pin>,
    /// The server's session process and its children, once a READY named it (pinned then,
    /// with `pin`): found once per connection, later children inherit the pin.
    session: Option<(u32, Vec<u32>)>,
}

impl DataPipe for ChildPipe {
    type Error = std::io::Error;

    fn read_line(&mut self) -> std::io::Result<Option<String>> {
        let mut line = String::new();
        match self.out.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(line.trim_end().to_string())),
            Err(e) => Err(e),
        }
    }

    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        match &mut self.stdin {
            Some(s) => s.write_all(data),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn close_input(&mut self) -> std::io::Result<()> {
        drop(self.stdin.take());
        Ok(())
    }

    fn drain(&mut self, bytes: u64) -> std::io::Result<u64> {
        let mut left = bytes;
        let mut scratch = vec![0u8; 256 * 1024];
        while left > 0 {
            if process::interrupted() {
                return Err(std::io::Error::other("interrupted"));
            }
            let want = left.min(scratch.len() as u64) as usize;
            match self.out.read(&mut scratch[..want])? {
                0 => break,
                n => left -= n as u64,
            }
        }
        Ok(bytes - left)
    }

    fn client_cpu_s(&self) -> Option<f64> {
        let own = self
            .shared_quota
            .then(|| process_cpu_seconds(std::process::id()))
            .flatten()
            .unwrap_or(0.0);
        process_cpu_seconds(self.pid).map(|c| c + own)
    }

    fn on_ready(&mut self) {
        if let Some(w) = self.watchdog.take() {
            self.stalled = w.fired();
            w.disarm();
        }
    }

    fn framed(&self) -> bool {
        self.framed
    }

    fn watch(&mut self, server_pid: Option<u32>) -> Option<Watch> {
        let sshd = server_pid.filter(|&p| self.local_server && placement::is_local_session(p));
        if let Some(p) = sshd {
            if self.session.as_ref().map(|s| s.0) != Some(p) {
                let children = match &self.pin {
                    Some(pin) => pin.server_session(p),
                    None => placement::session_children(p),
                };
                self.session = Some((p, children));
            }
        }
        Some(Watch::start(Watched {
            ssh: self.pid,
            sshd,
            session: self.session.as_ref().map_or_else(Vec::new, |s| s.1.clone()),
        }))
    }
}

impl ChildPipe {
    /// Whether the login watchdog killed ssh before READY.
    fn stalled(&self) -> bool {
        self.stalled || self.watchdog.as_ref().is_some_and(Watchdog::fired)
    }
}

/// A stream that broke mid-transfer: what broke, and ssh's own account when it has one.
fn lost(detail: String, stderr: &str, code: Option<i32>, dest: &str) -> SshError {
    match classify(stderr, code, dest) {
        SshError::Failed(msg) => SshError::Failed(format!("{detail}; {msg}")),
        other => other,
    }
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
