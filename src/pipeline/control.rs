//! The run's control connection: one OpenSSH master (`ControlMaster`) to the destination that
//! the destination check, the remote sampler, the `--luks` helper, the emptying and flushing
//! between copies and the clean-up share as sessions, so together they cost one login instead
//! of one each (on a small board a login costs seconds of CPU). The measured sessions — rsync
//! copies, stages alone — never use it: their ssh keeps `ControlPath=none` and logs in on its
//! own, so no measurement shares a connection with control traffic, and `-c` applies (a
//! multiplexed session rides the master's cipher).
//!
//! The master is our child: in its own process group and outside the registry Ctrl-C empties,
//! so an interrupted run still cleans up through it. `Master::close` asks it to exit
//! (`ssh -O exit`) and stops it; `ControlPersist` is not used, so nothing outlives the run. Its
//! socket lives in a private directory (mode 0700) in the temp directory, removed with it.
//! Where no master can be opened — the server refuses multiplexed sessions (`MaxSessions 1`),
//! an ssh that cannot multiplex, a socket path too long — every control command logs in on
//! its own, and a warning says why. OpenSSH's own multiplexing is used rather than a session
//! protocol of ours: the destination needs nothing but its sshd.

use crate::pipeline::model::ControlInfo;
use crate::process::{check_interrupted, drain_stderr, last_line, ChildGuard};
use crate::target::{SshLog, SshTarget};
use anyhow::Result;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the master may take to connect and log in: ssh's own `ConnectTimeout` (10 s)
/// plus a slow board's key exchange and login.
const OPEN_TIMEOUT: Duration = Duration::from_secs(40);

/// Sessions the run holds at once through the master: the sampler, the `--luks` helper and
/// one short command. Opening a master is only worth it when the server allows them all.
const SESSIONS_NEEDED: usize = 3;

/// How the control traffic reaches the destination: through the master's socket, or (none
/// open) one login per command. Cloned into every step that talks to the destination.
#[derive(Debug, Clone)]
pub struct Control {
    target: SshTarget,
    socket: Option<PathBuf>,
    logins: Arc<AtomicU32>,
    /// Logins of the measured sessions (copies, SSH alone), each on a connection of its own.
    measured: Arc<AtomicU32>,
    why_not: Option<String>,
}

/// The master process and its socket's directory; `Resources` closes it after the clean-up
/// commands that go through it.
pub struct Master {
    child: ChildGuard,
    control: Control,
    _dir: tempfile::TempDir,
}

impl Control {
    /// One login per command: the fall-back, and a run whose master was refused.
    fn direct(target: &SshTarget, why_not: String, logins: u32) -> Self {
        Control {
            target: target.clone(),
            socket: None,
            logins: Arc::new(AtomicU32::new(logins)),
            measured: Arc::default(),
            why_not: Some(why_not),
        }
    }

    /// Opens the master. Its failure is not the run's: the control commands then log in one
    /// by one, and `warnings` says why. Only Ctrl-C during the opening is an error.
    pub fn open(target: &SshTarget, warnings: &mut Vec<String>) -> Result<(Self, Option<Master>)> {
        match Master::open(target)? {
            Ok(master) => Ok((master.control.clone(), Some(master))),
            Err((why, logins)) => {
                warnings.push(format!(
                    "no shared control connection ({why}): the destination check, samplers, helper and clean-up log in one by one"
                ));
                Ok((Self::direct(target, why, logins), None))
            }
        }
    }

    /// One ssh running `remote_cmd` as control traffic: a session of the master while its
    /// socket is there, otherwise a login of its own (counted).
    pub fn command(&self, remote_cmd: &str) -> Command {
        let mut cmd = Command::new("ssh");
        match self.socket.as_deref().filter(|s| s.exists()) {
            // First on the line: ssh keeps the first value, so this wins over the
            // `ControlPath=none` every measured session carries.
            Some(s) => {
                cmd.arg("-o").arg(control_path(s));
            }
            None => {
                self.logins.fetch_add(1, Ordering::SeqCst);
            }
        }
        cmd.args(self.target.ssh_options(None, None, SshLog::ErrorsOnly))
            .arg("--")
            .arg(&self.target.destination)
            .arg(remote_cmd);
        cmd
    }

    /// Counts a login `command` did not foresee: a multiplexed session the server refused,
    /// which ssh then opened on a connection of its own (`stderr` says so).
    pub fn note_fallback(&self, stderr: &str) {
        if stderr.contains(MUX_REFUSED) {
            self.logins.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Counts one login of a measured session (an rsync copy, SSH alone): these never go
    /// through the master, so `-c` applies and no measurement shares a connection.
    pub fn measured_login(&self) {
        self.measured.fetch_add(1, Ordering::SeqCst);
    }

    /// What the report says of the control traffic.
    pub fn info(&self) -> ControlInfo {
        ControlInfo {
            multiplexed: self.socket.is_some(),
            logins: self.logins.load(Ordering::SeqCst),
            measured_logins: self.measured.load(Ordering::SeqCst),
            not_multiplexed_because: self.why_not.clone(),
        }
    }
}

/// `ControlPath=…` for `socket`, `%` escaped (ssh expands `%` tokens in it).
fn control_path(socket: &Path) -> String {
    format!(
        "ControlPath={}",
        socket.display().to_string().replace('%', "%%")
    )
}

impl Master {
    /// Starts the master and waits until it has logged in and its socket is there, then
    /// checks the server lets the run hold its sessions at once. `Ok(Err((why, logins)))`: no
    /// master (nothing of it left), after `logins` logins; `Err`: interrupted.
    fn open(target: &SshTarget) -> Result<std::result::Result<Master, (String, u32)>> {
        check_interrupted()?;
        let dir = match private_dir() {
            Ok(d) => d,
            Err(e) => {
                return Ok(Err((
                    format!("no private directory for its socket: {e}"),
                    0,
                )))
            }
        };
        let socket = dir.path().join("s");
        let mut cmd = Command::new("ssh");
        cmd.args(["-o", "ControlMaster=yes", "-o"])
            .arg(control_path(&socket))
            .args(["-o", "ControlPersist=no", "-N"])
            .args(target.ssh_options(None, None, SshLog::ErrorsOnly))
            .arg("--")
            .arg(&target.destination)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own group: a terminal's Ctrl-C reaches our group, not the connection the
            // clean-up goes through.
            .process_group(0);
        let mut child = match ChildGuard::spawn_group_kept(&mut cmd, "the ssh control master") {
            Ok(c) => c,
            Err(e) => return Ok(Err((format!("{e:#}"), 0))),
        };
        let stderr = drain_stderr(child.child_mut());
        let logins = Arc::new(AtomicU32::new(0));
        let t0 = Instant::now();
        while !socket.exists() {
            if let Ok(Some(st)) = child.child_mut().try_wait() {
                let why = last_line(&stderr.text(Duration::from_secs(2)));
                return Ok(Err((
                    format!("the master connection ended ({st}): {why}"),
                    0,
                )));
            }
            if crate::process::interrupted() || t0.elapsed() > OPEN_TIMEOUT {
                child.stop();
                check_interrupted()?;
                let why = format!(
                    "the master did not log in within {} s",
                    OPEN_TIMEOUT.as_secs()
                );
                return Ok(Err((why, 0)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        logins.store(1, Ordering::SeqCst);
        let master = Master {
            child,
            control: Control {
                target: target.clone(),
                socket: Some(socket),
                logins,
                measured: Arc::default(),
                why_not: None,
            },
            _dir: dir,
        };
        match probe(&master.control) {
            Ok(()) => Ok(Ok(master)),
            // The refused master's login and the probe's own count: the fall-back goes on.
            Err(why) => Ok(Err((why, master.close().logins.load(Ordering::SeqCst)))),
        }
    }

    /// Asks the master to exit (it closes its sessions and removes its socket), stops it if it
    /// has not within 2 s, and removes the socket's directory. Returns the control handle,
    /// now logging in one by one, with the count so far.
    pub fn close(mut self) -> Control {
        let c = &self.control;
        if let Some(socket) = c.socket.as_deref().filter(|s| s.exists()) {
            let _ = Command::new("ssh")
                .args(["-o", &control_path(socket), "-O", "exit"])
                .args(c.target.ssh_options(None, None, SshLog::ErrorsOnly))
                .arg("--")
                .arg(&c.target.destination)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.child_mut().try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child.stop();
        let mut control = self.control.clone();
        control.socket = None;
        control
    }

    /// The handle the steps share.
    pub fn control(&self) -> &Control {
        &self.control
    }
}

/// A directory only we can enter, in the temp directory, for the socket.
fn private_dir() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new().prefix("sshtune-ctl-").tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// What an ssh multiplexing client prints when the master's server refused it a session;
/// the client then logs in on its own (OpenSSH falls back to a connection of its own).
const MUX_REFUSED: &str = "mux_client_request_session";

/// Holds `SESSIONS_NEEDED - 1` sessions open and runs one more: a server that refuses
/// multiplexed sessions (`MaxSessions 1`) fails here, before the run depends on them. A
/// refused session still ran — on a login of its own, counted.
fn probe(control: &Control) -> std::result::Result<(), String> {
    let mut held = Vec::new();
    let mut refused = Vec::new();
    for _ in 1..SESSIONS_NEEDED {
        let mut cmd = control.command("echo SSHTUNE-UP; cat > /dev/null");
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = ChildGuard::spawn(&mut cmd, "ssh").map_err(|e| format!("{e:#}"))?;
        let stderr = drain_stderr(child.child_mut());
        let mut line = String::new();
        if let Some(out) = child.child_mut().stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        held.push((child, stderr));
        if line.trim() != "SSHTUNE-UP" {
            break;
        }
    }
    let mut ran = held.len() == SESSIONS_NEEDED - 1;
    if ran {
        let out = control
            .command("echo SSHTUNE-UP")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        ran = String::from_utf8_lossy(&out.stdout).trim() == "SSHTUNE-UP";
        refused.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    for (mut child, stderr) in held {
        drop(child.child_mut().stdin.take());
        let _ = child.wait_timeout(Duration::from_secs(5));
        refused.push(stderr.text(Duration::from_secs(2)));
    }
    refused.retain(|e| e.contains(MUX_REFUSED));
    control
        .logins
        .fetch_add(refused.len() as u32, Ordering::SeqCst);
    match refused.first() {
        None if ran => Ok(()),
        None => Err("a session through it printed nothing".into()),
        Some(e) => Err(format!(
            "the destination refused {SESSIONS_NEEDED} sessions on one connection: {}",
            last_line(e)
        )),
    }
}
