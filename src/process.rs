//! Child processes: stderr in errors, a registry so Ctrl-C can stop them, and guards that make
//! sure nothing we started outlives us.

use anyhow::{bail, Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CHILDREN: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Installs SIGINT/SIGTERM/SIGHUP handling once: the first signal marks the run as interrupted
/// and terminates every registered child, so blocked reads return and guards run their cleanup.
pub fn install_signal_handlers() -> Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(mut signals) => {
                std::thread::spawn(move || {
                    for _ in signals.forever() {
                        INTERRUPTED.store(true, Ordering::SeqCst);
                        terminate_children();
                    }
                });
            }
            Err(e) => result = Err(e).context("installing signal handlers"),
        }
    });
    result
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Fails with a uniform message when the user asked us to stop.
pub fn check_interrupted() -> Result<()> {
    if interrupted() {
        bail!(Interrupted);
    }
    Ok(())
}

/// Marker error so `main` can exit 130 like a shell does after Ctrl-C.
#[derive(Debug, thiserror::Error)]
#[error("interrupted; everything started by this run was stopped and removed")]
pub struct Interrupted;

fn terminate_children() {
    let pids = CHILDREN.lock().map(|v| v.clone()).unwrap_or_default();
    for pid in pids {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
}

/// A child that is killed and reaped when dropped.
pub struct ChildGuard {
    child: Option<Child>,
    what: String,
}

impl ChildGuard {
    pub fn spawn(cmd: &mut Command, what: impl Into<String>) -> Result<Self> {
        let what = what.into();
        let child = cmd.spawn().with_context(|| format!("starting {what}"))?;
        CHILDREN
            .lock()
            .expect("child registry")
            .push(child.id() as i32);
        Ok(Self {
            child: Some(child),
            what,
        })
    }

    pub fn id(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    pub fn child_mut(&mut self) -> &mut Child {
        self.child.as_mut().expect("child present until drop")
    }

    pub fn what(&self) -> &str {
        &self.what
    }

    /// Waits for exit, giving up (and killing) after `timeout`.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        let child = self.child_mut();
        loop {
            if let Some(st) = child.try_wait()? {
                return Ok(st);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let st = child.wait()?;
                return Ok(st);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, a grace period, then SIGKILL; always reaps.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            unregister(child.id());
            if let Ok(None) = child.try_wait() {
                let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
                let deadline = Instant::now() + Duration::from_secs(2);
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

fn unregister(pid: u32) {
    if let Ok(mut v) = CHILDREN.lock() {
        v.retain(|p| *p != pid as i32);
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs a command to completion and returns stdout; a failure carries the command's stderr.
pub fn run_capture(cmd: &mut Command) -> Result<String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{program}` (is it installed?)"))?;
    if !out.status.success() {
        bail!(
            "`{program}` failed ({}): {}",
            out.status,
            last_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The most informative single line of a tool's stderr (the last non-empty one).
pub fn last_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("(no error output)")
        .to_string()
}

/// Collects a child's stderr on a thread so a chatty child can never block on a full pipe.
pub fn drain_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    if let Some(mut err) = child.stderr.take() {
        let sink = Arc::clone(&buf);
        std::thread::spawn(move || {
            use std::io::Read;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = err.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut s) = sink.lock() {
                    if s.len() < 64 * 1024 {
                        s.push_str(&String::from_utf8_lossy(&chunk[..n]));
                    }
                }
            }
        });
    }
    buf
}

/// Finds a program in PATH and the usual sbin directories (sshd is often outside a user's PATH).
pub fn find_program(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(Into::into))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
