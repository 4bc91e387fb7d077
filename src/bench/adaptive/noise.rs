//! What the run has seen of its own noise: disagreements between samples, start costs.

use super::settings::Adaptive;
use crate::bench::executor::Sample;
use crate::stats;

/// Below this relative difference two samples agree whatever noise the run has seen: finer
/// than that, a rank between ciphers is not worth the time on any machine.
pub const NOISE_FLOOR: f64 = 0.05;

/// The least gain a longer sample must show over the one before for the shorter one to count
/// as paying a start: the run learns its noise from equal-length samples, which come mostly
/// in the racing rounds after every row's first, so the first rows are judged against the
/// floor alone. Consecutive OpenSSH samples on loopback differ by 10–20%; with `NOISE_FLOOR`
/// there, rows were lengthened on noise, a second at a time. A window ramp-up on a slow
/// link or a fresh session under a CPU quota costs a short sample 30% and more.
const RAMP_FLOOR: f64 = 0.10;

/// What the run has seen so far: the disagreement between consecutive samples of one length,
/// and the start cost of a sample.
#[derive(Debug, Default)]
pub struct Noise {
    diffs: Vec<f64>,
    /// Per agreeing pair of samples of different lengths, the seconds a sample costs beyond
    /// its bytes at the pair's rate (the intercept of time over bytes): window and congestion ramp-up,
    /// the remote's start, a CPU quota's first throttled period.
    starts: Vec<f64>,
}

impl Noise {
    /// Two samples farther apart than this disagree.
    pub fn threshold(&self) -> f64 {
        stats::median(&self.diffs).unwrap_or(0.0).max(NOISE_FLOOR)
    }

    /// How much faster a longer sample must be than the one before to say the shorter one
    /// paid a start (ramp-up), not the noise: the upper decile of the disagreements seen,
    /// never below `threshold` or `RAMP_FLOOR`. At the median, half the noisy pairs disagree
    /// by more, and the longer sample is the faster in half of those by chance: a quarter of
    /// the pairs lengthened a row at every step for nothing (on loopback, where consecutive
    /// samples differ by 10–20%, one row went through six lengths). A real ramp-up (a window
    /// opening on a slow link, a fresh session under a CPU quota) makes the short sample
    /// slower by far more.
    pub fn ramp_threshold(&self) -> f64 {
        stats::upper_decile(&self.diffs)
            .unwrap_or(0.0)
            .max(self.threshold())
            .max(RAMP_FLOOR)
    }

    pub(super) fn record(&mut self, d: f64) {
        self.diffs.push(d);
    }

    /// Records the start cost two samples of different lengths imply.
    pub(super) fn record_start(&mut self, a: &Sample, b: &Sample) {
        if let Some(s) = start_cost(a, b) {
            self.starts.push(s);
        }
    }

    /// The shortest sample the run can trust: long enough that the start cost it has seen is
    /// at most `NOISE_FLOOR` of the sample, and never below `start_s` or above `longest_s`.
    /// Samples that agree with each other but are all this short and all this low are what it
    /// catches: agreement alone cannot, since every one of them pays the same start.
    ///
    /// The cost is the lower quartile over pairs, not the median: a pair's intercept is the
    /// start plus twice the shorter sample's disturbance minus the longer one's, and a
    /// disturbance only ever adds time, so most pairs read high. On loopback the median over
    /// agreeing pairs asks for tens of milliseconds, enough to lengthen every OpenSSH sample
    /// to the longest length, where samples of fixed sizes show no start at all
    /// (docs/measurements.md, "The start-cost floor").
    pub fn shortest_s(&self, a: &Adaptive) -> f64 {
        let cost = stats::lower_quartile(&self.starts).unwrap_or(0.0);
        (cost / NOISE_FLOOR).max(a.start_s).min(a.longest_s)
    }
}

/// The intercept of time over bytes through two samples of different sizes, seconds (0 when
/// the pair implies none); None for samples of one size.
pub fn start_cost(a: &Sample, b: &Sample) -> Option<f64> {
    if a.bytes == b.bytes || a.seconds <= 0.0 || b.seconds <= 0.0 {
        return None;
    }
    let (x1, x2) = (a.bytes as f64, b.bytes as f64);
    let cost = (a.seconds * x2 - b.seconds * x1) / (x2 - x1);
    Some(cost.max(0.0))
}

/// Relative difference of two rates, against their mean.
pub fn disagreement(a: f64, b: f64) -> f64 {
    let mean = (a + b) / 2.0;
    if mean <= 0.0 {
        return 0.0;
    }
    (a - b).abs() / mean
}
