//! Recording CPU and I/O around the measurements: one thread reads this machine's /proc, one
//! reads the remote loop's output through a session of the control connection; both tag each interval with
//! the phase the run is in. Started once the run directory exists (the remote loop is named
//! after it), stopped after the last rsync, and turned into each row's CPU breakdown and the
//! report's time series. Parsing and classifying one /proc block is `sampler.rs`.

use super::control::Control;
use super::model::{CpuShare, Row, Tick};
use super::sampler::{
    delta, groups, local_block, parse_block, Known, Side, Snapshot, QUOTA_GROUP, THROTTLED_GROUP,
    TOTALS,
};
use super::scripts;
use crate::process::ChildGuard;
use anyhow::Result;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Starts both samplers. `dm_device` is the destination's dm-crypt device whose writes are
/// counted; `token` names the remote loop so it can be told from another run's.
pub fn start(
    control: &Control,
    dm_device: Option<String>,
    interval_ms: u64,
    token: &str,
) -> Result<(Shared, Samplers)> {
    let shared = Shared::default();
    if let Ok(mut g) = shared.dm.lock() {
        *g = dm_device;
    }
    let interval = Duration::from_millis(interval_ms);
    let samplers = Samplers::start(
        shared.clone(),
        control.command(&scripts::sampler(token)),
        interval,
    )?;
    Ok((shared, samplers))
}

/// Stops both samplers and returns what they recorded; a remote sampler that failed is a
/// warning (the client side still counts).
pub fn finish(samplers: Samplers, warnings: &mut Vec<String>) -> Vec<Interval> {
    let remote_error = samplers.remote_error.lock().ok().and_then(|g| g.clone());
    let intervals = samplers.finish();
    if let Some(e) = remote_error {
        warnings.push(format!(
            "{e}: server-side CPU is missing from the breakdown"
        ));
    }
    intervals
}

/// Each row's CPU: the intervals tagged with its phases (`cipher/variant#n`), averaged.
pub fn attach(rows: &mut [Row], intervals: &[Interval]) {
    attach_tagged(rows, intervals, "");
}

/// As `attach`, for rows whose phases carry `tag` first (a LUKS setting's cells).
pub fn attach_tagged(rows: &mut [Row], intervals: &[Interval], tag: &str) {
    for row in rows {
        let prefix = format!("{tag}{}/{}#", row.cipher, row.variant);
        row.cpu = cpu_shares(intervals, &prefix);
    }
}

/// [`shares`] as the report's rows carry them: a side's name and a tenth of a percent.
pub fn cpu_shares(intervals: &[Interval], prefix: &str) -> Vec<CpuShare> {
    shares(intervals, prefix)
        .into_iter()
        .map(|(side, group, pct)| CpuShare {
            side: side.as_str().into(),
            group,
            pct: (pct * 10.0).round() / 10.0,
        })
        .collect()
}

/// One sampled interval, tagged with the phase the run was in when it ended.
#[derive(Debug, Clone)]
pub struct Interval {
    pub side: Side,
    pub end: Instant,
    pub seconds: f64,
    pub phase: Option<String>,
    pub cpu: Vec<(String, f64)>,
    pub dm_write_bytes_s: Option<f64>,
}

/// Shared state between the run and the sampler threads.
#[derive(Clone, Default)]
pub struct Shared {
    pub phase: Arc<Mutex<Option<String>>>,
    pub sender: Arc<AtomicU32>,
    pub intervals: Arc<Mutex<Vec<Interval>>>,
    pub dm: Arc<Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
}

impl Shared {
    pub fn set_phase(&self, p: Option<String>) {
        if let Ok(mut g) = self.phase.lock() {
            *g = p;
        }
    }

    fn record(&self, side: Side, prev: &Snapshot, cur: &Snapshot, tck: f64, known: &Known) {
        let dm = self.dm.lock().ok().and_then(|g| g.clone());
        if let Some(d) = delta(prev, cur, tck, known, dm.as_deref()) {
            let phase = self.phase.lock().ok().and_then(|g| g.clone());
            if let Ok(mut v) = self.intervals.lock() {
                v.push(Interval {
                    side,
                    end: Instant::now(),
                    seconds: d.seconds,
                    phase,
                    cpu: d.cpu,
                    dm_write_bytes_s: d.dm_write_bytes_s,
                });
            }
        }
    }
}

/// Both samplers; dropping stops them (the remote loop ends with its ssh session).
pub struct Samplers {
    shared: Shared,
    remote: Option<ChildGuard>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub remote_error: Arc<Mutex<Option<String>>>,
}

impl Samplers {
    /// `ssh` is the full ssh command that runs the remote loop.
    pub fn start(shared: Shared, mut ssh: Command, interval: Duration) -> Result<Self> {
        // The remote loop prints a block per line on its stdin, so it needs no `sleep` of its
        // own (scripts::SAMPLER): the reader asks for the next one an interval after a block
        // ends, the pace a loop that slept after each block had.
        ssh.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = ChildGuard::spawn(&mut ssh, "the remote /proc sampler (ssh)")?;
        let mut ticks = child.child_mut().stdin.take();
        let mut threads = Vec::new();
        let local = shared.clone();
        threads.push(std::thread::spawn(move || {
            let tck = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
                .ok()
                .flatten()
                .unwrap_or(100) as f64;
            let me = std::process::id();
            let mut prev = parse_block(&local_block());
            while !local.stop.load(Ordering::SeqCst) {
                std::thread::sleep(interval);
                let cur = parse_block(&local_block());
                let sender = local.sender.load(Ordering::SeqCst);
                let known = Known {
                    sender: (sender != 0).then_some(sender),
                    exclude: vec![me],
                    exclude_children_of: Vec::new(),
                    marked: Vec::new(),
                };
                local.record(Side::Client, &prev, &cur, tck, &known);
                prev = cur;
            }
        }));
        let out = child.child_mut().stdout.take().expect("stdout piped");
        let remote = shared.clone();
        let remote_error = Arc::new(Mutex::new(None));
        let err_slot = Arc::clone(&remote_error);
        threads.push(std::thread::spawn(move || {
            let mut known = Known::default();
            let mut tck = 100.0;
            let mut prev: Option<Snapshot> = None;
            let mut block = String::new();
            let mut got_any = false;
            tick(&mut ticks);
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let Some(v) = line.strip_prefix("@SELF ") {
                    let w: Vec<u32> = v
                        .split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    known.exclude = w.iter().take(3).copied().collect();
                    known.exclude_children_of = w.iter().take(1).copied().collect();
                    tck = w.get(3).copied().unwrap_or(100) as f64;
                } else if line == "@E" {
                    got_any = true;
                    let cur = parse_block(&block);
                    block.clear();
                    if let Some(p) = &prev {
                        remote.record(Side::Server, p, &cur, tck, &known);
                    }
                    prev = Some(cur);
                    std::thread::sleep(interval);
                    if remote.stop.load(Ordering::SeqCst) {
                        // Closing its stdin ends the loop.
                        break;
                    }
                    tick(&mut ticks);
                } else {
                    block.push_str(&line);
                    block.push('\n');
                }
            }
            if !got_any && !remote.stop.load(Ordering::SeqCst) {
                if let Ok(mut e) = err_slot.lock() {
                    *e = Some("the remote /proc sampler printed nothing".into());
                }
            }
        }));
        Ok(Self {
            shared,
            remote: Some(child),
            threads,
            remote_error,
        })
    }

    /// Stops both samplers and returns every interval they recorded.
    pub fn finish(mut self) -> Vec<Interval> {
        self.stop_all();
        self.shared
            .intervals
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    fn stop_all(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(mut c) = self.remote.take() {
            c.stop();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Samplers {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Asks the remote loop for one block; once it is gone, stops asking.
fn tick(ticks: &mut Option<std::process::ChildStdin>) {
    use std::io::Write;
    if let Some(t) = ticks {
        if t.write_all(b"\n").and_then(|_| t.flush()).is_err() {
            *ticks = None;
        }
    }
}

/// Intervals as the JSON time series, seconds since `t0`.
pub fn series(intervals: &[Interval], t0: Instant) -> Vec<Tick> {
    let mut out: Vec<Tick> = intervals
        .iter()
        .map(|i| Tick {
            t: (i.end.saturating_duration_since(t0).as_secs_f64() * 1000.0).round() / 1000.0,
            side: i.side.as_str().into(),
            phase: i.phase.clone(),
            cpu: i
                .cpu
                .iter()
                .filter(|(g, _)| {
                    groups(i.side).contains(&g.as_str())
                        || TOTALS.contains(&g.as_str())
                        || g == QUOTA_GROUP
                        || g == THROTTLED_GROUP
                })
                .map(|(g, v)| (g.clone(), (v * 10.0).round() / 10.0))
                .collect(),
            dm_write_bytes_s: i.dm_write_bytes_s.map(f64::round),
        })
        .collect();
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

/// Average CPU per reported group over the intervals whose phase starts with `prefix`,
/// weighted by interval length: (side, group, % of one core).
pub fn shares(intervals: &[Interval], prefix: &str) -> Vec<(Side, String, f64)> {
    let mut out = Vec::new();
    for side in [Side::Client, Side::Server] {
        let mine: Vec<&Interval> = intervals
            .iter()
            .filter(|i| i.side == side)
            .filter(|i| i.phase.as_deref().is_some_and(|p| p.starts_with(prefix)))
            .collect();
        let total: f64 = mine.iter().map(|i| i.seconds).sum();
        if total <= 0.0 {
            continue;
        }
        for g in groups(side).iter().chain(TOTALS) {
            let sum = mine
                .iter()
                .filter_map(|i| {
                    i.cpu
                        .iter()
                        .find(|(n, _)| n == g)
                        .map(|(_, v)| v * i.seconds)
                })
                .fold(0.0, |a, b| a + b);
            out.push((side, g.to_string(), sum / total));
        }
        // A side's quota, when it has one: a limit, not a use, so the largest seen.
        let quota = mine
            .iter()
            .flat_map(|i| i.cpu.iter().filter(|(n, _)| n == QUOTA_GROUP))
            .map(|(_, v)| *v)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        if let Some(q) = quota {
            out.push((side, QUOTA_GROUP.to_string(), q));
            // Throttling, weighted by interval length as the groups are.
            let (sum, secs) = mine
                .iter()
                .filter_map(|i| {
                    let (_, v) = i.cpu.iter().find(|(n, _)| n == THROTTLED_GROUP)?;
                    Some((v * i.seconds, i.seconds))
                })
                .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
            if secs > 0.0 {
                out.push((side, THROTTLED_GROUP.to_string(), sum / secs));
            }
        }
    }
    out
}
