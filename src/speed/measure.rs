//! The timing loop: adaptive duration, CPU-time clock, several samples per row.
//!
//! Seconds are the measuring thread's CPU time (user + system), because `openssl speed`
//! counts user CPU time too: a ratio of the two stays meaningful on a busy machine, where
//! wall-clock throughput would mostly measure the neighbours. The share of a core the thread
//! actually got is recorded next to each row.

use super::subject::{Op, PACKET_BYTES};
use crate::process;
use anyhow::{Context, Result};
use std::time::{Duration, Instant};

/// How long to run untimed first, so caches, key schedules and CPU frequency settle.
const WARMUP: Duration = Duration::from_millis(100);

/// One timed sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub bytes: u64,
    pub cpu_s: f64,
    pub wall_s: f64,
}

impl Sample {
    pub fn mib_s(&self) -> f64 {
        self.bytes as f64 / self.cpu_s / (1024.0 * 1024.0)
    }
    pub fn cpu_share(&self) -> f64 {
        self.cpu_s / self.wall_s
    }
}

fn thread_cpu_seconds() -> Result<f64> {
    crate::sysinfo::thread_cpu_seconds().context("reading this thread's CPU time")
}

/// Runs `op` until the thread has spent at least `min_time` seconds of CPU in it. The CPU
/// clock is a system call, so it is read only once the wall clock says the time could be up.
fn sample(op: &mut Op, min_time: f64) -> Result<Sample> {
    let (c0, w0) = (thread_cpu_seconds()?, Instant::now());
    let mut ops: u64 = 0;
    let mut next_check = Duration::from_secs_f64(min_time);
    loop {
        op()?;
        ops += 1;
        let wall = w0.elapsed();
        if wall >= next_check {
            let cpu = thread_cpu_seconds()? - c0;
            if cpu >= min_time {
                return Ok(Sample {
                    bytes: ops * PACKET_BYTES as u64,
                    cpu_s: cpu,
                    wall_s: wall.as_secs_f64(),
                });
            }
            process::check_interrupted()?;
            next_check = wall + Duration::from_secs_f64((min_time - cpu).max(0.01));
        }
    }
}

/// Where `run_adaptive` starts, CPU seconds per sample: long enough for hundreds of 32 KiB
/// calls of the slowest cipher in the catalog, short enough that a default run of every row
/// answers in about a minute.
pub const START_S: f64 = 0.1;
/// Samples whose relative spread is within this agree; wider, they are lengthened.
pub const AGREE: f64 = 0.05;

/// Adaptive duration: `samples` samples of `START_S` each (never above `longest`), all
/// taken again twice as long while they disagree by more than `AGREE`, until they agree or
/// last `longest`. A steady primitive answers in a fraction of a second; one the machine
/// disturbs gets up to the length every sample had before.
pub fn run_adaptive(op: &mut Op, longest: f64, samples: u32) -> Result<Vec<Sample>> {
    let mut len = START_S.min(longest);
    let mut taken = run(op, len, samples)?;
    loop {
        let rates: Vec<f64> = taken.iter().map(Sample::mib_s).collect();
        let agree = crate::bench::stats::relative_spread(&rates).is_some_and(|s| s <= AGREE);
        if agree || len >= longest {
            return Ok(taken);
        }
        len = (len * 2.0).min(longest);
        taken = (0..samples)
            .map(|_| sample(op, len))
            .collect::<Result<_>>()?;
    }
}

/// Warm-up, then `samples` timed samples.
pub fn run(op: &mut Op, min_time: f64, samples: u32) -> Result<Vec<Sample>> {
    let w = Instant::now();
    while w.elapsed() < WARMUP {
        op()?;
    }
    (0..samples).map(|_| sample(op, min_time)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample of an adaptive row lasts at least the start length and at most the
    /// longest asked for, and the row has its full count.
    #[test]
    fn adaptive_samples_stay_within_their_bounds() {
        let mut x = 0u64;
        let mut op: Op = Box::new(move || {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            Ok(())
        });
        let samples = run_adaptive(&mut op, 0.4, 3).unwrap();
        assert_eq!(samples.len(), 3);
        for s in &samples {
            assert!(s.cpu_s >= START_S && s.cpu_s < 0.4 + 0.2, "{s:?}");
        }
    }
}
