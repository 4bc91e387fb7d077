//! The default sampling against a scripted executor: the rules, never a product number.

use super::*;
use crate::bench::executor::{Job, Sample};
use crate::bench::model::Direction;
use crate::progress::Silent as Quiet;
use crate::target::SshError;

const MIB: u64 = 1024 * 1024;

/// A scripted executor: each cipher has a true rate, and every transfer pays a fixed
/// ramp-up (seconds at no throughput) like a window opening on a slow link; `jitter`
/// alternates samples up and down by that fraction. It tests the rule, never a product
/// number.
struct Scripted {
    rates: Vec<(&'static str, f64)>,
    ramp_s: f64,
    jitter: f64,
    calls: Vec<(String, u64)>,
    /// Each cipher's session needs its own warm-up (OpenSSH); false: only the process
    /// does (native).
    kept: bool,
    /// Calls (by index) disturbed once, and by how much longer they take (1.25: a
    /// quarter).
    disturbed: Vec<(usize, f64)>,
    /// Shifts `jitter`'s alternation by one call.
    phase: usize,
    /// Downloads run at this share of the cipher's rate.
    download_share: f64,
    /// Transfers (`cipher:MiB`), `prepare:cipher` and `settle`, in order.
    events: Vec<String>,
    /// From the first transfer that returns to a cipher measured before (the first racing
    /// round) on, every transfer takes this many times longer.
    drift: Option<f64>,
    drifting: bool,
}

impl Scripted {
    fn new(rates: &[(&'static str, f64)], ramp_s: f64, jitter: f64) -> Self {
        Self {
            rates: rates.to_vec(),
            ramp_s,
            jitter,
            calls: Vec::new(),
            kept: true,
            disturbed: Vec::new(),
            phase: 0,
            download_share: 1.0,
            events: Vec::new(),
            drift: None,
            drifting: false,
        }
    }
}

impl Executor for Scripted {
    fn engine(&self) -> &'static str {
        "scripted"
    }
    fn warms_per_pair(&self) -> bool {
        self.kept
    }
    fn prepare(&mut self, next: &Job) {
        self.events.push(format!("prepare:{}", next.cipher));
    }
    fn settle(&mut self) {
        self.events.push("settle".into());
    }
    fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
        let rate = self
            .rates
            .iter()
            .find(|(c, _)| *c == job.cipher)
            .map(|(_, r)| *r)
            .ok_or_else(|| SshError::Refused("not offered".into()))?;
        let rate = match job.direction {
            Direction::Upload => rate,
            Direction::Download => rate * self.download_share,
        };
        let sign = if (self.calls.len() + self.phase) % 2 == 0 {
            1.0
        } else {
            -1.0
        };
        let disturbed = self
            .disturbed
            .iter()
            .find(|(i, _)| *i == self.calls.len())
            .map_or(1.0, |(_, f)| *f);
        let returns = self.calls.last().is_some_and(|l| l.0 != job.cipher)
            && self.calls.iter().any(|c| c.0 == job.cipher);
        self.drifting |= returns;
        let disturbed = match self.drift {
            Some(f) if self.drifting => disturbed * f,
            _ => disturbed,
        };
        self.calls.push((job.cipher.to_string(), job.bytes));
        self.events
            .push(format!("{}:{}", job.cipher, job.bytes / MIB));
        let mib = job.bytes as f64 / MIB as f64;
        Ok(Sample {
            bytes: job.bytes,
            seconds: (mib / rate + self.ramp_s) * (1.0 + sign * self.jitter) * disturbed,
            ..Sample::default()
        })
    }
}

fn plan(ciphers: &[&str]) -> Sampling {
    Sampling {
        pairs: ciphers.iter().map(|c| (c.to_string(), None)).collect(),
        directions: vec![Direction::Upload],
        repeat: 3,
        warmup: 1,
        fixed_size: None,
        initial_size: 4 * MIB,
        min_duration_s: 2.0,
        max_time_s: None,
    }
}

fn adaptive() -> Adaptive {
    Adaptive {
        start_s: 0.25,
        longest_s: 2.0,
        min_bytes: 4 * MIB,
        max_samples: 5,
        race: true,
        // The first round and racing, tested apart from the last visit (its own test).
        revisit: false,
        survey: false,
    }
}

fn run_it(ex: &mut Scripted, sampling: &Sampling) -> Vec<ResultRow> {
    run(ex, sampling, &adaptive(), Context::default(), &Quiet).unwrap()
}

mod first_round;
mod racing;
