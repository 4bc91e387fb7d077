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

/// Interrupted, and the cleanup after it failed: says what is left (also exit 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted; {0}")]
pub struct InterruptedUnclean(pub String);

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
    /// The child leads its own process group (spawned with `process_group(0)`); stopping it
    /// signals the whole group, so grandchildren such as sshd's session processes go too.
    group: bool,
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
            group: false,
        })
    }

    /// Like `spawn`, for a command set up with `process_group(0)`.
    pub fn spawn_group(cmd: &mut Command, what: impl Into<String>) -> Result<Self> {
        let mut g = Self::spawn(cmd, what)?;
        g.group = true;
        Ok(g)
    }

    /// Like `spawn_group`, for a server the cleanup itself goes through: Ctrl-C leaves it
    /// running (it is not in the registry a signal empties), so an interrupted run can still
    /// remove what it made on the far side; it stops when the guard is dropped.
    pub fn spawn_group_kept(cmd: &mut Command, what: impl Into<String>) -> Result<Self> {
        let what = what.into();
        let child = cmd.spawn().with_context(|| format!("starting {what}"))?;
        Ok(Self {
            child: Some(child),
            what,
            group: true,
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
            let pid = child.id() as i32;
            let target = if self.group { -pid } else { pid };
            // Daemons such as sshd put each connection in its own session, out of reach of
            // the group signal: find them by parentage before the leader goes.
            let descendants = if self.group {
                descendants(pid)
            } else {
                Vec::new()
            };
            for d in &descendants {
                let _ = kill(Pid::from_raw(*d), Signal::SIGTERM);
            }
            if self.group {
                // The leader may be gone while its group lives on.
                let _ = kill(Pid::from_raw(target), Signal::SIGTERM);
            }
            if let Ok(None) = child.try_wait() {
                let _ = kill(Pid::from_raw(target), Signal::SIGTERM);
                let deadline = Instant::now() + Duration::from_secs(2);
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                let _ = kill(Pid::from_raw(target), Signal::SIGKILL);
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Every process whose parent chain leads to `root`, from /proc.
pub fn descendants(root: i32) -> Vec<i32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 2..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(child, parent) in &parent_of {
            if parent == p && !out.contains(&child) {
                out.push(child);
                frontier.push(child);
            }
        }
    }
    out
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

/// A child's stderr, collected on a thread so a chatty child can never block on a full pipe.
pub struct StderrDrain {
    buf: Arc<Mutex<String>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl StderrDrain {
    /// Everything the child wrote, once its stderr closed (after it exited), or what arrived
    /// within `timeout` if a grandchild keeps the pipe open. Waiting on the reader itself, not
    /// on a fixed sleep, keeps error messages complete on a loaded machine.
    pub fn text(&self, timeout: Duration) -> String {
        let _ = self.done.recv_timeout(timeout);
        self.buf.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

pub fn drain_stderr(child: &mut Child) -> StderrDrain {
    let buf = Arc::new(Mutex::new(String::new()));
    let (tx, done) = std::sync::mpsc::channel();
    if let Some(err) = child.stderr.take() {
        let sink = Arc::clone(&buf);
        std::thread::spawn(move || {
            if RELAY_SSH_DEBUG.load(Ordering::Relaxed) {
                relay_debug_lines(err, &sink);
            } else {
                collect(err, &sink);
            }
            let _ = tx.send(());
        });
    }
    StderrDrain { buf, done }
}

/// Set by `-v`: the `debug…` lines of the ssh processes we start are passed on to our stderr.
static RELAY_SSH_DEBUG: AtomicBool = AtomicBool::new(false);

/// Passes ssh's `debug…` lines (from `-v`) on to our stderr from now on; what is collected for
/// error messages stays the other lines.
pub fn relay_ssh_debug(on: bool) {
    RELAY_SSH_DEBUG.store(on, Ordering::Relaxed);
}

/// What a drain keeps for error messages; more is dropped.
const DRAIN_KEEPS: usize = 64 * 1024;

fn collect(mut err: impl std::io::Read, sink: &Mutex<String>) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = err.read(&mut chunk) {
        if n == 0 {
            break;
        }
        if let Ok(mut s) = sink.lock() {
            if s.len() < DRAIN_KEEPS {
                s.push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        }
    }
}

fn relay_debug_lines(err: impl std::io::Read, sink: &Mutex<String>) {
    use std::io::BufRead;
    for line in std::io::BufReader::new(err)
        .split(b'\n')
        .map_while(|l| l.ok())
    {
        let line = String::from_utf8_lossy(&line);
        if line.starts_with("debug") {
            let shown: String = line
                .trim_end()
                .chars()
                .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
                .collect();
            eprintln!("{shown}");
        } else if let Ok(mut s) = sink.lock() {
            if s.len() < DRAIN_KEEPS {
                s.push_str(&line);
                s.push('\n');
            }
        }
    }
}

/// Finds a program in PATH and the usual sbin directories (sshd is often outside a user's PATH).
pub fn find_program(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(Into::into))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The pipe capacity the OpenSSH engine asks for around `ssh`: Linux's default limit for an
/// unprivileged process (`/proc/sys/fs/pipe-max-size`).
pub const WIDE_PIPE_BYTES: i32 = 1 << 20;

/// Widens the pipe from a child's stdout to `WIDE_PIPE_BYTES`, where the kernel allows it
/// (Linux only; elsewhere, or over the user's pipe budget, it stays as it was). Its stdin is
/// left at the kernel's default width, the pipe `cmd | ssh` feeds: an upload is measured
/// through the pipe a user's own command gives it (docs/measurements.md, "Figures a user can
/// reproduce").
///
/// Why stdout: with the default 64 KiB pipe an `ssh` client that starts receiving bulk data
/// stalls for 70–150 ms before the first MiB reaches us (seen on loopback, OpenSSH 9.2), and
/// the first download of a session read a third to a half of the rate of the next; with 1 MiB
/// pipes it read that rate from its first transfer. What that means for the figures is in
/// docs/bench-json.md.
pub fn widen_pipes(child: &Child) {
    use std::os::fd::AsRawFd;
    let fds = [child.stdout.as_ref().map(|p| p.as_raw_fd())];
    for fd in fds.into_iter().flatten() {
        #[cfg(target_os = "linux")]
        let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(WIDE_PIPE_BYTES));
        #[cfg(not(target_os = "linux"))]
        let _ = fd;
    }
}
