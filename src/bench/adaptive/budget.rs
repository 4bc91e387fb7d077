//! The run's time: when it must stop measuring more than it needs.

use crate::bench::executor::Sample;
use std::time::Instant;

/// When the run must stop measuring more than it needs, and how long it has taken so far.
/// Time spent is the larger of the wall clock and the seconds of all transfers, so a
/// scripted executor (whose transfers take no wall time) advances it too.
pub struct Budget {
    started: Instant,
    transfer_s: f64,
    pub(super) max_s: Option<f64>,
}

impl Budget {
    pub fn new(max_s: Option<f64>) -> Self {
        Self {
            started: Instant::now(),
            transfer_s: 0.0,
            max_s,
        }
    }

    pub fn spent_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64().max(self.transfer_s)
    }

    pub fn exhausted(&self) -> bool {
        self.max_s.is_some_and(|m| self.spent_s() >= m)
    }

    pub(super) fn add(&mut self, s: &Sample) {
        self.transfer_s += s.seconds;
    }
}
