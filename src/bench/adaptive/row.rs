//! One row as the run measures it: its samples, size, latest round and why it stopped.

use crate::bench::executor::Sample;
use crate::bench::model::Direction;

/// One row being measured.
pub(super) struct Row {
    pub(super) cipher: String,
    pub(super) mac: Option<String>,
    pub(super) direction: Direction,
    pub(super) size: u64,
    pub(super) samples: Vec<Sample>,
    pub(super) error: Option<String>,
    pub(super) stopped: Option<&'static str>,
    /// No more samples: decided, budget used, or failed.
    pub(super) done: bool,
    /// The round of its latest sample: 0 for its first round, then the racing round's number.
    pub(super) last_round: u32,
}

impl Row {
    pub(super) fn rates(&self) -> Vec<f64> {
        self.samples.iter().map(Sample::mib_s).collect()
    }
}
