//! One timed run of N rsync jobs started together.
//!
//! The jobs are children of one `sh` (in its own process group), so the client's sampler,
//! which charges a process to `rsync-sender` or `ssh` when it descends from the pid it is
//! given, counts every job's rsync and ssh when given the shell's. The shell writes each
//! job's output into a FIFO of its own; a thread per FIFO notes when the job's first
//! progress line came and when its output ended, as `rsync::run` does for one rsync. The
//! server's sampler finds every job's receiver by the run directory in its command line.

use super::jobs::Plan;
use super::model::JobsRow;
use super::rsync::Variant;
use super::rsync::{self, quote, RunError, Stats};
use super::MIB;
use crate::process::{self, ChildGuard};
use crate::stats;
use anyhow::{anyhow, Context};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One job's run: from its first progress line to its exit.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    pub first: Instant,
    pub end: Instant,
    pub stats: Stats,
}

impl JobOutcome {
    pub fn seconds(&self) -> f64 {
        self.end.duration_since(self.first).as_secs_f64()
    }
}

/// The files of job `i` in the plan's directory.
struct JobFiles {
    fifo: PathBuf,
    err: PathBuf,
    rc: PathBuf,
}

impl JobFiles {
    fn new(dir: &Path, i: usize) -> Self {
        Self {
            fifo: dir.join(format!("job{i}.out")),
            err: dir.join(format!("job{i}.err")),
            rc: dir.join(format!("job{i}.rc")),
        }
    }
}

/// Runs every job of `plan` at once; `rsync_args(i)` is job `i`'s rsync command line (the
/// program first). `on_start` gets the shell's pid. The jobs' outcomes in job order, or the
/// first failure.
pub fn run(
    plan: &Plan,
    rsync_args: impl Fn(usize) -> Vec<String>,
    dest_label: &str,
    on_start: impl FnOnce(u32),
) -> Result<Vec<JobOutcome>, RunError> {
    process::check_interrupted().map_err(RunError::Fatal)?;
    let n = plan.parts.len();
    let files: Vec<JobFiles> = (0..n).map(|i| JobFiles::new(plan.dir.path(), i)).collect();
    for f in &files {
        for p in [&f.fifo, &f.err, &f.rc] {
            let _ = std::fs::remove_file(p);
        }
        nix::unistd::mkfifo(&f.fifo, nix::sys::stat::Mode::S_IRWXU)
            .with_context(|| format!("creating {}", f.fifo.display()))
            .map_err(RunError::Fatal)?;
    }
    let readers: Vec<JoinHandle<Seen>> = files
        .iter()
        .map(|f| {
            let fifo = f.fifo.clone();
            std::thread::spawn(move || read_output(&fifo))
        })
        .collect();
    let script = script(&files, &rsync_args);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let waited = match ChildGuard::spawn_group(&mut cmd, "the rsync jobs (sh)") {
        Ok(mut shell) => {
            on_start(shell.id());
            wait(&mut shell)
        }
        Err(e) => Err(e),
    };
    let outputs: Vec<Seen> = readers
        .into_iter()
        .zip(&files)
        .map(|(h, f)| join(h, &f.fifo))
        .collect();
    waited.map_err(RunError::Fatal)?;
    process::check_interrupted().map_err(RunError::Fatal)?;
    files
        .iter()
        .zip(outputs)
        .map(|(f, out)| outcome(f, out, dest_label))
        .collect()
}

/// The shell: each job's rsync with its output into its FIFO, its stderr and exit status
/// into files; a signal to the shell goes to every job (`kill 0`: its own process group).
fn script(files: &[JobFiles], rsync_args: &impl Fn(usize) -> Vec<String>) -> String {
    let mut s = String::from("trap 'trap - TERM INT HUP; kill 0' TERM INT HUP\n");
    for (i, f) in files.iter().enumerate() {
        let words: Vec<String> = rsync_args(i).iter().map(|w| quote(w)).collect();
        s.push_str(&format!(
            "{{ {} >{} 2>{}; echo $? >{}; }} &\n",
            words.join(" "),
            quote(&f.fifo.display().to_string()),
            quote(&f.err.display().to_string()),
            quote(&f.rc.display().to_string()),
        ));
    }
    s.push_str("wait\n");
    s
}

/// Waits for the shell; Ctrl-C stops it and every job.
fn wait(shell: &mut ChildGuard) -> anyhow::Result<()> {
    loop {
        if process::interrupted() {
            shell.stop();
            return Ok(());
        }
        match shell.child_mut().try_wait() {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(anyhow!("waiting for the rsync jobs: {e}")),
        }
    }
}

/// A reader's result. A job that never opened its FIFO (its shell stopped first) leaves the
/// reader waiting in `open`: opening the other end for a moment lets it go.
fn join(h: JoinHandle<Seen>, fifo: &Path) -> Seen {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !h.is_finished() && Instant::now() < deadline {
        let _ = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo);
        std::thread::sleep(Duration::from_millis(10));
    }
    if h.is_finished() {
        h.join().unwrap_or_default()
    } else {
        Seen::default()
    }
}

/// What a reader saw of one job's output.
#[derive(Debug, Default)]
struct Seen {
    first: Option<Instant>,
    end: Option<Instant>,
    text: String,
}

fn read_output(fifo: &Path) -> Seen {
    let mut r = Seen::default();
    let Ok(mut f) = File::open(fifo) else {
        return r;
    };
    let mut buf = [0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                r.first.get_or_insert_with(Instant::now);
                if r.text.len() < 1 << 20 {
                    r.text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        }
    }
    r.end = Some(Instant::now());
    r
}

/// One job's outcome from its reader and the files the shell wrote.
fn outcome(f: &JobFiles, out: Seen, dest_label: &str) -> Result<JobOutcome, RunError> {
    let rc: Option<i32> = std::fs::read_to_string(&f.rc)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    if rc != Some(0) {
        let err = std::fs::read_to_string(&f.err).unwrap_or_default();
        // A shell reports death by a signal as 128 + its number; rsync's own codes are lower.
        let code = rc.filter(|c| *c < 128);
        return Err(rsync::classify(&err, code, dest_label));
    }
    let end = out.end.unwrap_or_else(Instant::now);
    Ok(JobOutcome {
        first: out.first.unwrap_or(end),
        end,
        stats: rsync::parse_output(&out.text),
    })
}

/// A cipher's `--repeat` timed runs of N jobs, each added as it ends.
pub struct Runs {
    pub row: JobsRow,
    bytes: Vec<u64>,
    per_job: Vec<Vec<f64>>,
}

impl Runs {
    pub fn new(plan: &Plan, cipher: &str, command: String) -> Self {
        let n = plan.parts.len();
        Self {
            row: JobsRow {
                cipher: cipher.to_string(),
                variant: Variant::WholeFile,
                samples: Vec::new(),
                sample_seconds: Vec::new(),
                flush_s: Vec::new(),
                median_mib_s: None,
                min_mib_s: None,
                max_mib_s: None,
                per_job_mib_s: Vec::new(),
                cpu: Vec::new(),
                gain: None,
                note: None,
                command,
                error: None,
            },
            bytes: plan.parts.iter().map(|p| p.bytes).collect(),
            per_job: vec![Vec::new(); n],
        }
    }

    /// One run's jobs and the flush after them (seconds): the rate of all bytes over the
    /// first job's first progress line to the last job's exit, plus the flush.
    pub fn add(&mut self, jobs: &[JobOutcome], flush: f64) -> f64 {
        let first = jobs.iter().map(|j| j.first).min();
        let last = jobs.iter().map(|j| j.end).max();
        let window = match (first, last) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let secs = window + flush;
        let total: u64 = self.bytes.iter().sum();
        let rate = total as f64 / MIB / secs.max(1e-6);
        for ((j, bytes), rates) in jobs.iter().zip(&self.bytes).zip(&mut self.per_job) {
            rates.push(*bytes as f64 / MIB / j.seconds().max(1e-6));
        }
        self.row.samples.push(rate);
        self.row.sample_seconds.push(secs);
        self.row.flush_s.push(flush);
        rate
    }

    /// The row with its median, range and each job's median.
    pub fn finish(mut self) -> JobsRow {
        let r = &mut self.row;
        r.median_mib_s = stats::median(&r.samples);
        r.min_mib_s = stats::min(&r.samples);
        r.max_mib_s = stats::max(&r.samples);
        r.per_job_mib_s = self
            .per_job
            .iter()
            .filter_map(|v| stats::median(v))
            .collect();
        self.row
    }
}
