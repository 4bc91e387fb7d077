//! What the person waiting sees of the run, and `--json-stream`'s sample events.

use super::budget::Budget;
use crate::bench::executor::Sample;
use crate::bench::model::Direction;
use crate::progress::Progress;
use crate::stats;

/// The progress status: what is measured and, under `--max-time`, how much of it is left (the
/// progress display's own ETA comes from the steps).
pub(super) fn status(cipher: &str, direction: Direction, budget: &Budget) -> String {
    match budget.max_s {
        Some(m) => format!(
            "{cipher} {direction} (max-time: {:.0} s left)",
            (m - budget.spent_s()).max(0.0)
        ),
        None => format!("{cipher} {direction}"),
    }
}

/// `aes128-ctr upload: racing, 412.3 MiB/s median of 3 samples`.
fn sample_line(cipher: &str, direction: Direction, phase: &str, samples: &[Sample]) -> String {
    let mib: Vec<f64> = samples.iter().map(|s| s.mib_s()).collect();
    let median = stats::median(&mib).unwrap_or(0.0);
    format!(
        "{cipher} {direction}: {phase}, {median:.1} MiB/s median of {} samples",
        samples.len()
    )
}

/// A step for the person waiting, and for `--json-stream` one event per sample of the
/// `new` last ones.
pub(super) fn sampled(
    progress: &dyn Progress,
    engine: &str,
    (cipher, mac, direction): (&str, Option<&str>, Direction),
    phase: &str,
    samples: &[Sample],
    new: usize,
) {
    progress.step(&sample_line(cipher, direction, phase, samples));
    for s in &samples[samples.len().saturating_sub(new)..] {
        progress.record(&serde_json::json!({
            "event": "sample",
            "engine": engine,
            "cipher": cipher,
            "mac": mac,
            "direction": direction,
            "phase": phase,
            "bytes": s.bytes,
            "seconds": s.seconds,
            "mib_s": s.mib_s(),
        }));
    }
}
