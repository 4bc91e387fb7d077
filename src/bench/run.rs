//! What both sampling modes share: the plan (`Sampling`), what the verdict needs beyond the
//! samples (`Context`), the sizing step and a row's summary. The thorough mode's loop is
//! `thorough`, the default mode's `adaptive`.

use super::executor::{Job, Pairs, Sample};
use super::model::{Direction, ResultRow};
use super::verdict::{self, Evidence};
use crate::stats;

const MIB: u64 = 1024 * 1024;
/// Adaptive sizing never asks for more than this per transfer.
pub const MAX_SIZE: u64 = 16 * 1024 * MIB;

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

/// Aims 25% past the target so the next round usually suffices; grows at least 1.5× and at
/// most 16× per round, rounded to whole MiB.
pub fn next_size(size: u64, seconds: f64, target: f64) -> u64 {
    let factor = (target * 1.25 / seconds.max(1e-3)).clamp(1.5, 16.0);
    let next = (size as f64 * factor) as u64;
    next.div_ceil(MIB).saturating_mul(MIB).min(MAX_SIZE)
}

/// A row whose transfer failed after some samples: the samples stay, the error stands beside
/// them, and no verdict is drawn from a row cut short.
pub fn keep_late_error(row: &mut ResultRow, error: Option<String>) {
    if error.is_some() {
        row.error = error;
        row.verdict = None;
        row.verdict_reason = None;
        row.verdict_rule = None;
    }
}

/// A row's timed samples and the visit each was taken in (`ResultRow::sample_visits`).
#[derive(Debug, Clone, Copy)]
pub struct Taken<'a> {
    pub samples: &'a [Sample],
    pub visits: &'a [u32],
}

/// A row's report from its samples: the median over visits (`stats::median_of_visits`), the
/// range over every sample, the pooled CPU shares, and the verdict on that median. `row` names
/// the row and its sample size.
pub fn summarise(engine: &str, row: &Job, taken: Taken, ctx: Context) -> ResultRow {
    let &Job {
        cipher,
        mac,
        direction,
        bytes,
    } = row;
    let samples = taken.samples;
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
    let median = stats::median_of_visits(&rates, taken.visits);
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
        sample_visits: if taken.visits.len() == samples.len() {
            taken.visits.to_vec()
        } else {
            Vec::new()
        },
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

    #[test]
    fn next_size_grows_within_bounds() {
        assert_eq!(next_size(MIB, 0.1, 2.0), 16 * MIB);
        assert_eq!(next_size(10 * MIB, 1.9, 2.0), 15 * MIB);
        assert!(next_size(MAX_SIZE, 0.1, 2.0) <= MAX_SIZE);
    }
}
