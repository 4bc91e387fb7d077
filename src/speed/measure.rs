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

/// Calls run untimed first, so caches, buffers and key schedules settle: a 32 KiB buffer is
/// warm after one call. A 100 ms warm-up per row cost 9 s of a default run (88 rows); a first
/// sample still disturbed is what the outlier rule of `run_adaptive` sets aside.
const WARMUP_CALLS: u32 = 16;

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

/// Where `run_adaptive` starts, CPU seconds per sample: long enough for dozens of 32 KiB
/// calls of the slowest cipher in the catalog (3des-cbc), and the thread's CPU clock counts
/// nanoseconds; short, because a longer sample costs only the short ones it adds (a default
/// run's wall time: docs/measurements.md).
pub const START_S: f64 = 0.05;
/// Samples whose relative spread is within this agree; wider, they are lengthened.
pub const AGREE: f64 = 0.05;
/// Samples added at one length when the first ones disagree, before the length doubles.
pub const EXTRA: u32 = 2;

/// Adaptive duration. Samples of `START_S` each (never above `longest`) are taken back to
/// back, and a longer sample is two consecutive shorter ones added up: the same stream of
/// calls timed over twice the CPU time, so lengthening costs only the samples it adds, never
/// the ones already taken.
///
/// At each length `samples` samples are judged first; when they disagree by more than
/// `AGREE`, `EXTRA` more are taken, and the row is done if the samples left after setting
/// aside the highest and lowest agree: one disturbed sample is a neighbour's burst, not a
/// reason to lengthen, and it stays in the row's range. Otherwise the length doubles, the
/// last step only up to `longest` (`--min-time`), where the row takes what it has.
///
/// Taking every sample again at twice the length whenever three disagree measures the same
/// calls twice and lengthens rows for one neighbour's burst: on the project's 2-core machine
/// such a default run took 103 s against 58.7–65.2 s with these rules at 0.1 s samples
/// (docs/measurements.md, "The sampling rules").
pub fn run_adaptive(op: &mut Op, longest: f64, samples: u32) -> Result<Vec<Sample>> {
    warm_up(op)?;
    let short = START_S.min(longest);
    let n = samples as usize;
    let mut taken: Vec<Sample> = Vec::new();
    // Short samples per sample at the longest length.
    let most = ((longest / short) - 1e-9).ceil().max(1.0) as usize;
    let mut group = 1usize;
    let mut before = f64::INFINITY;
    loop {
        let merged = merged(op, &mut taken, short, group, n)?;
        if agree(&merged, 0) || group >= most {
            return Ok(merged);
        }
        let merged = self::merged(op, &mut taken, short, group, n + EXTRA as usize)?;
        let spread = trimmed_spread(&merged, 1);
        if spread <= AGREE || spread > before * AVERAGES_OUT {
            return Ok(merged);
        }
        before = spread;
        group = (group * 2).min(most);
    }
}

/// Lengthening goes on only while doubling the length cut the trimmed spread to this share
/// of what it was or less. Noise that longer samples average out shrinks by about 1/√2 per
/// doubling; a drift slower than the samples (on the project's machine a cipher read 3183
/// and 4187 MiB/s in consecutive samples of a whole CPU-second each) does not shrink, and
/// chasing it only costs time: such a row keeps the samples it has, and its range says so.
pub const AVERAGES_OUT: f64 = 0.8;

/// The first `n` samples of `group` consecutive short ones each, taking short samples until
/// there are enough.
fn merged(
    op: &mut Op,
    taken: &mut Vec<Sample>,
    short: f64,
    group: usize,
    n: usize,
) -> Result<Vec<Sample>> {
    while taken.len() < n * group {
        taken.push(sample(op, short)?);
    }
    Ok(taken[..n * group]
        .chunks(group)
        .map(|c| Sample {
            bytes: c.iter().map(|s| s.bytes).sum(),
            cpu_s: c.iter().map(|s| s.cpu_s).sum(),
            wall_s: c.iter().map(|s| s.wall_s).sum(),
        })
        .collect())
}

/// Whether the samples agree once the `trim` highest and lowest are set aside.
fn agree(taken: &[Sample], trim: usize) -> bool {
    trimmed_spread(taken, trim) <= AGREE
}

/// The relative spread of the samples once the `trim` highest and lowest are set aside
/// (infinite when fewer than two are left).
fn trimmed_spread(taken: &[Sample], trim: usize) -> f64 {
    let mut rates: Vec<f64> = taken.iter().map(Sample::mib_s).collect();
    rates.sort_by(f64::total_cmp);
    let core = rates
        .get(trim..rates.len().saturating_sub(trim))
        .unwrap_or(&[]);
    if core.len() < 2 {
        return f64::INFINITY;
    }
    crate::stats::relative_spread(core).unwrap_or(f64::INFINITY)
}

fn take(op: &mut Op, len: f64, n: u32) -> Result<Vec<Sample>> {
    (0..n).map(|_| sample(op, len)).collect()
}

fn warm_up(op: &mut Op) -> Result<()> {
    (0..WARMUP_CALLS).try_for_each(|_| op())
}

/// Warm-up, then `samples` timed samples.
pub fn run(op: &mut Op, min_time: f64, samples: u32) -> Result<Vec<Sample>> {
    warm_up(op)?;
    take(op, min_time, samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample of an adaptive row lasts at least the start length and at most the
    /// longest asked for, and the row has its count, or its count plus the extra samples.
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
        assert!(
            [3, 3 + EXTRA as usize].contains(&samples.len()),
            "{samples:?}"
        );
        for s in &samples {
            assert!(s.cpu_s >= START_S && s.cpu_s < 0.4 + 0.2, "{s:?}");
        }
    }

    /// Lengthening adds samples to the ones taken: two consecutive short samples are one
    /// long one, and nothing already measured is measured again.
    #[test]
    fn a_longer_sample_is_two_consecutive_shorter_ones() {
        let mut op: Op = Box::new(|| {
            std::hint::black_box((0..2_000u64).sum::<u64>());
            Ok(())
        });
        let mut taken = Vec::new();
        let short = merged(&mut op, &mut taken, 0.01, 1, 4).unwrap();
        let long = merged(&mut op, &mut taken, 0.01, 2, 2).unwrap();
        assert_eq!(taken.len(), 4);
        for (l, pair) in long.iter().zip(short.chunks(2)) {
            assert_eq!(l.bytes, pair[0].bytes + pair[1].bytes);
            assert!((l.cpu_s - pair[0].cpu_s - pair[1].cpu_s).abs() < 1e-9);
        }
        merged(&mut op, &mut taken, 0.01, 2, 3).unwrap();
        assert_eq!(taken.len(), 6);
    }

    fn at(rates: &[f64]) -> Vec<Sample> {
        let mib = 1024.0 * 1024.0;
        rates
            .iter()
            .map(|r| Sample {
                bytes: (r * mib) as u64,
                cpu_s: 1.0,
                wall_s: 1.0,
            })
            .collect()
    }

    /// One disturbed sample among five is set aside; two are not, and neither is one among
    /// the first three, which get their extra samples instead.
    #[test]
    fn one_outlier_is_set_aside_only_among_the_extra_samples() {
        assert!(agree(&at(&[100.0, 101.0, 99.0]), 0));
        assert!(!agree(&at(&[100.0, 101.0, 80.0]), 0));
        assert!(agree(&at(&[100.0, 101.0, 80.0, 100.5, 99.5]), 1));
        assert!(!agree(&at(&[100.0, 120.0, 80.0, 100.5, 90.0]), 1));
        assert!(!agree(&at(&[100.0, 80.0, 81.0, 120.0, 121.0]), 1));
    }
}
