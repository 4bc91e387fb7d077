//! One row as the run measures it: its samples and their visits, size, latest round and why
//! it stopped.

use crate::bench::executor::{Job, Sample};
use crate::bench::model::Direction;
use crate::stats;

/// One row being measured.
pub(super) struct Row {
    pub(super) cipher: String,
    pub(super) mac: Option<String>,
    pub(super) direction: Direction,
    pub(super) size: u64,
    pub(super) samples: Vec<Sample>,
    /// The visit each sample was taken in (`Race::visit`), in the order of `samples`.
    pub(super) visits: Vec<u32>,
    pub(super) error: Option<String>,
    pub(super) stopped: Option<&'static str>,
    /// No more samples: decided, budget used, or failed.
    pub(super) done: bool,
}

impl Row {
    /// Its next sample: the row at its current size.
    pub(super) fn job(&self) -> Job<'_> {
        Job {
            cipher: &self.cipher,
            mac: self.mac.as_deref(),
            direction: self.direction,
            bytes: self.size,
        }
    }

    pub(super) fn rates(&self) -> Vec<f64> {
        self.samples.iter().map(Sample::mib_s).collect()
    }

    /// The row's figure: the median over its visits of each visit's median
    /// (`stats::median_of_visits`), what it is ranked and raced by.
    pub(super) fn figure(&self) -> Option<f64> {
        stats::median_of_visits(&self.rates(), &self.visits)
    }

    /// How many visits its samples come from.
    pub(super) fn visit_count(&self) -> usize {
        stats::visit_count(&self.visits)
    }

    /// Whether its visits read apart by more than `noise` (relative spread of the visits'
    /// medians).
    pub(super) fn visits_disagree(&self, noise: f64) -> bool {
        let per_visit = stats::visit_medians(&self.rates(), &self.visits);
        stats::relative_spread(&per_visit).is_some_and(|s| s > noise)
    }
}
