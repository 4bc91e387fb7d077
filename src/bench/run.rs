//! The measurement loop: warm up and size each transfer, take the samples, summarise them.
//! This is the thorough mode (a fixed count of samples of a fixed least length); the default
//! mode, samples sized by stability and racing, is `adaptive`, which reuses its sizing and
//! summary.

use super::executor::{Executor, Job, Pairs, Sample};
use super::model::{Direction, ResultRow};
use super::stats;
use super::verdict::{self, Evidence};
use crate::process;
use crate::progress::Progress;
use crate::target::SshError;
use anyhow::Result;

const MIB: u64 = 1024 * 1024;
/// Adaptive sizing never asks for more than this per transfer.
pub const MAX_SIZE: u64 = 16 * 1024 * MIB;
/// Bound on sizing rounds, so a peer whose speed keeps changing cannot stall the run.
const MAX_SIZING_ROUNDS: u32 = 8;

/// What to measure and how often: the pairs, directions, repeats, warm-ups and sizing.
#[derive(Debug, Clone)]
pub struct Sampling {
    /// (cipher, MAC) pairs; MAC None for AEAD ciphers.
    pub pairs: Pairs,
    pub directions: Vec<Direction>,
    pub repeat: u32,
    pub warmup: u32,
    pub fixed_size: Option<u64>,
    pub initial_size: u64,
    pub min_duration_s: f64,
    /// The default mode stops sampling once the engine's loop has run this long (every row
    /// still gets its first round).
    pub max_time_s: Option<f64>,
}

/// What the verdict needs beyond the samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// CPU available to the client, cores (None = at least one core).
    pub client_quota_cores: Option<f64>,
    /// The ceiling uploads are judged against (and downloads, unless measured apart).
    pub ceiling_mib_s: Option<f64>,
    /// The download direction's own ceiling, when the receiver could send.
    pub ceiling_download_mib_s: Option<f64>,
    /// The ceiling run of (upload, download) was bound by this end's CPU.
    pub ceiling_cpu_bound: [Option<verdict::Side>; 2],
    /// Both ends on one machine with this many cores.
    pub shared_cores: Option<f64>,
}

/// Runs the sampling plan. Errors that concern one cipher become rows; a fatal error aborts.
pub fn run(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    ctx: Context,
    progress: &dyn Progress,
) -> Result<Vec<ResultRow>> {
    progress.begin((sampling.pairs.len() * sampling.directions.len()) as u64);
    let mut rows = Vec::new();
    for (cipher, mac) in &sampling.pairs {
        let mut refused: Option<String> = None;
        for &direction in &sampling.directions {
            process::check_interrupted()?;
            let row = match &refused {
                Some(why) => ResultRow::failed(
                    exec.engine(),
                    cipher,
                    mac.as_deref(),
                    direction,
                    why.clone(),
                ),
                None => {
                    progress.status(&format!("{cipher} {direction}"));
                    match measure(exec, sampling, ctx, cipher, mac.as_deref(), direction) {
                        Ok(row) => row,
                        Err(SshError::Fatal(e)) => return Err(e),
                        Err(SshError::Refused(why)) => {
                            refused = Some(why.clone());
                            ResultRow::failed(exec.engine(), cipher, mac.as_deref(), direction, why)
                        }
                        Err(SshError::Failed(why)) => {
                            ResultRow::failed(exec.engine(), cipher, mac.as_deref(), direction, why)
                        }
                    }
                }
            };
            progress.step(&super::progress::row_line(&row));
            rows.push(row);
        }
    }
    progress.finish();
    Ok(rows)
}

fn measure(
    exec: &mut dyn Executor,
    sampling: &Sampling,
    ctx: Context,
    cipher: &str,
    mac: Option<&str>,
    direction: Direction,
) -> Result<ResultRow, SshError> {
    let job = |bytes| Job {
        cipher,
        mac,
        direction,
        bytes,
    };
    let mut size = sampling.fixed_size.unwrap_or(sampling.initial_size).max(1);
    match sampling.fixed_size {
        Some(_) => {
            for _ in 0..sampling.warmup {
                exec.transfer(&job(size))?;
            }
        }
        None => {
            // Warm-up doubles as sizing: grow until one transfer lasts long enough.
            let mut rounds = 0;
            loop {
                let s = exec.transfer(&job(size))?;
                rounds += 1;
                let long_enough = s.seconds >= sampling.min_duration_s;
                if (long_enough && rounds >= sampling.warmup.max(1))
                    || rounds >= MAX_SIZING_ROUNDS
                    || size >= MAX_SIZE
                {
                    break;
                }
                if !long_enough {
                    size = next_size(size, s.seconds, sampling.min_duration_s);
                }
            }
        }
    }
    let mut samples: Vec<Sample> = Vec::new();
    for _ in 0..sampling.repeat.max(1) {
        match exec.transfer(&job(size)) {
            Ok(s) => samples.push(s),
            Err(SshError::Failed(why)) if !samples.is_empty() => {
                let mut row = summarise(exec.engine(), cipher, mac, direction, size, &samples, ctx);
                row.error = Some(format!("after {} samples: {why}", samples.len()));
                row.verdict = None;
                row.verdict_reason = None;
                row.verdict_rule = None;
                return Ok(row);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(summarise(
        exec.engine(),
        cipher,
        mac,
        direction,
        size,
        &samples,
        ctx,
    ))
}

/// Aims 25% past the target so the next round usually suffices; grows at least 1.5× and at
/// most 16× per round, rounded to whole MiB.
pub fn next_size(size: u64, seconds: f64, target: f64) -> u64 {
    let factor = (target * 1.25 / seconds.max(1e-3)).clamp(1.5, 16.0);
    let next = (size as f64 * factor) as u64;
    next.div_ceil(MIB).saturating_mul(MIB).min(MAX_SIZE)
}

pub fn summarise(
    engine: &str,
    cipher: &str,
    mac: Option<&str>,
    direction: Direction,
    bytes: u64,
    samples: &[Sample],
    ctx: Context,
) -> ResultRow {
    let rates: Vec<f64> = samples.iter().map(Sample::mib_s).collect();
    // A row's CPU share is its samples' CPU seconds over their wall seconds, pooled: the
    // figures count 10 ms scheduler ticks, and pooled they add up across samples, so two short
    // samples count as many ticks as one long one (a median of per-sample shares would keep
    // each short sample's coarseness).
    let pcts = |f: &dyn Fn(&Sample) -> Option<f64>| -> Option<f64> {
        let cpu: Option<f64> = samples.iter().map(f).sum();
        let wall: f64 = samples.iter().map(|s| s.seconds).sum();
        (!samples.is_empty())
            .then(|| Sample::pct(cpu, wall))
            .flatten()
    };
    let client = pcts(&|s| s.client_cpu_s);
    let client_user = pcts(&|s| s.client_user_cpu_s);
    let server = pcts(&|s| s.server_cpu_s);
    let total = pcts(&|s| s.server_busy_s);
    let server_quota = samples.iter().find_map(|s| s.server_quota_cores);
    let median = stats::median(&rates);
    let cap = |q: Option<f64>| q.map_or(100.0, |q| (q * 100.0).min(100.0));
    let (ceiling, cpu_bound) = match direction {
        Direction::Upload => (ctx.ceiling_mib_s, ctx.ceiling_cpu_bound[0]),
        Direction::Download => match ctx.ceiling_download_mib_s {
            Some(d) => (Some(d), ctx.ceiling_cpu_bound[1]),
            None => (ctx.ceiling_mib_s, ctx.ceiling_cpu_bound[0]),
        },
    };
    let (verdict, reason, rule) = match median {
        Some(m) => {
            let j = verdict::judge(&Evidence {
                mib_s: m,
                client_cpu_pct: client,
                client_cap_pct: cap(ctx.client_quota_cores),
                server_cpu_pct: server,
                server_cap_pct: cap(server_quota),
                ceiling_mib_s: ceiling,
                ceiling_cpu_bound: cpu_bound,
                shared_cores: ctx.shared_cores,
                // On one machine the server's whole-machine figure is this machine's.
                machine_busy_pct: ctx.shared_cores.and(total),
            });
            (
                Some(j.verdict),
                Some(j.reason),
                Some(j.rule.as_str().to_string()),
            )
        }
        None => (None, None, None),
    };
    ResultRow {
        engine: engine.to_string(),
        cipher: cipher.to_string(),
        mac: mac.map(String::from),
        grade: ciphers::grade_of(cipher, mac).map(|g| g.to_string()),
        direction,
        bytes,
        median_mib_s: median,
        min_mib_s: stats::min(&rates),
        max_mib_s: stats::max(&rates),
        samples: rates,
        client_cpu_pct: client,
        client_user_cpu_pct: client_user,
        server_cpu_pct: server,
        server_total_cpu_pct: total,
        verdict,
        verdict_reason: reason,
        verdict_rule: rule,
        transport_overhead: None,
        error: None,
        sample_seconds: samples.iter().map(|s| s.seconds).collect(),
        stopped: None,
        // All or nothing, so that the n-th entry is the n-th sample's.
        sample_placement: samples
            .iter()
            .map(|s| s.placement.clone())
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default(),
        streams: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::Verdict;
    use std::cell::RefCell;

    /// A scripted executor: it tests the loop's bookkeeping, never a product number.
    struct Scripted {
        rate_mib_s: f64,
        refuse: &'static str,
        sizes: RefCell<Vec<u64>>,
    }

    impl Executor for Scripted {
        fn engine(&self) -> &'static str {
            "scripted"
        }
        fn transfer(&mut self, job: &Job) -> Result<Sample, SshError> {
            if job.cipher == self.refuse {
                return Err(SshError::Refused("cipher not offered by the server".into()));
            }
            self.sizes.borrow_mut().push(job.bytes);
            Ok(Sample {
                bytes: job.bytes,
                seconds: job.bytes as f64 / MIB as f64 / self.rate_mib_s,
                client_cpu_s: Some(job.bytes as f64 / MIB as f64 / self.rate_mib_s * 0.99),
                server_cpu_s: Some(0.0),
                ..Sample::default()
            })
        }
    }

    fn plan(fixed: Option<u64>) -> Sampling {
        Sampling {
            pairs: vec![
                ("aes128-ctr".into(), Some("hmac-sha2-256".into())),
                ("x".into(), None),
            ],
            directions: vec![Direction::Upload, Direction::Download],
            repeat: 3,
            warmup: 1,
            fixed_size: fixed,
            initial_size: 8 * MIB,
            min_duration_s: 2.0,
            max_time_s: None,
        }
    }

    #[test]
    fn adaptive_sizing_reaches_the_minimum_duration() {
        let mut ex = Scripted {
            rate_mib_s: 100.0,
            refuse: "x",
            sizes: RefCell::new(vec![]),
        };
        let rows = run(
            &mut ex,
            &plan(None),
            Context::default(),
            &crate::progress::Silent,
        )
        .unwrap();
        assert_eq!(rows.len(), 4);
        let up = &rows[0];
        assert_eq!(up.samples.len(), 3);
        assert!(
            up.bytes as f64 / MIB as f64 / 100.0 >= 2.0,
            "size {}",
            up.bytes
        );
        assert_eq!(up.verdict, Some(Verdict::ClientCpu));
        assert!(rows[2].error.as_deref().unwrap().contains("not offered"));
        assert!(
            rows[3].error.is_some(),
            "download row of a refused cipher says so too"
        );
    }

    #[test]
    fn fixed_size_is_respected() {
        let mut ex = Scripted {
            rate_mib_s: 100.0,
            refuse: "x",
            sizes: RefCell::new(vec![]),
        };
        run(
            &mut ex,
            &plan(Some(3 * MIB)),
            Context::default(),
            &crate::progress::Silent,
        )
        .unwrap();
        assert!(ex.sizes.borrow().iter().all(|&s| s == 3 * MIB));
        // 1 warm-up + 3 samples, two directions.
        assert_eq!(ex.sizes.borrow().len(), 8);
    }

    #[test]
    fn next_size_grows_within_bounds() {
        assert_eq!(next_size(MIB, 0.1, 2.0), 16 * MIB);
        assert_eq!(next_size(10 * MIB, 1.9, 2.0), 15 * MIB);
        assert!(next_size(MAX_SIZE, 0.1, 2.0) <= MAX_SIZE);
    }
}
