//! One running `ssh` of the OpenSSH engine: its stdin and stdout as the transfer driver's
//! `DataPipe`, its CPU from `/proc/PID/stat`, the watchdog that kills a login that never
//! answers, and the one line that names why it failed.

use super::executor::Job;
use super::placement::{self, Pin, Watch, Watched};
use super::transfer::{DataPipe, Step};
use crate::process::{self, drain_stderr, ChildGuard, StderrDrain};
use crate::sysinfo::process_cpu_seconds;
use crate::target::error::classify;
use crate::target::SshError;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// How long the remote side may take to say it is ready (login included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// One running `ssh` and its pipes.
pub(super) struct Session {
    pub cipher: String,
    pub mac: Option<String>,
    pub child: ChildGuard,
    pub stderr: StderrDrain,
    pub pipe: ChildPipe,
    /// Opened ahead of its turn (`prepare`), its HELLO not read yet.
    pub logging_in: bool,
}

impl Session {
    /// Starts `cmd` (an `ssh` with `job`'s cipher and MAC) with its login watchdog armed,
    /// pinned with `pin`, its CPU counted with this process's when `shared_quota`, its server
    /// session watched when `local_server`.
    pub fn start(
        mut cmd: Command,
        job: &Job,
        framed: bool,
        shared_quota: bool,
        local_server: bool,
        pin: Option<&Pin>,
    ) -> Result<Session, SshError> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh")?;
        let pid = child.id();
        if let Some(pin) = pin {
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
            shared_quota,
            watchdog: Some(Watchdog::arm(pid, READY_TIMEOUT)),
            stalled: false,
            framed,
            local_server,
            pin: pin.cloned(),
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

    /// Stops the session after a failed transfer and names the cause in one line.
    pub fn fail(mut self, e: Step<std::io::Error>, dest: &str) -> SshError {
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
    pub fn close(mut self) {
        self.pipe.on_ready();
        drop(self.pipe);
        let _ = self.child.wait_timeout(Duration::from_secs(5));
    }
}

/// The `ssh` child's stdin and stdout as a data pipe; its CPU from `/proc/PID/stat`.
pub(super) struct ChildPipe {
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
pub(super) struct Watchdog {
    cancel: std::sync::mpsc::Sender<()>,
    /// Set when the timeout killed ssh, so the error names the stall instead of a bare signal.
    fired: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Watchdog {
    pub fn arm(pid: u32, timeout: Duration) -> Self {
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

    pub fn fired(&self) -> bool {
        self.fired.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn disarm(self) {
        let _ = self.cancel.send(());
    }
}
