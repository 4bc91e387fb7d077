//! The `--jobs` section of `sshtune.pipeline/1` (docs/pipeline.md, "Parallel rsync"): optional,
//! so reports without it, and older readers, stay the same schema.

use super::model::CpuShare;
use super::rsync::Variant;
use crate::bench::model::Gain;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobsSection {
    /// As asked: a count or `auto`.
    pub asked: String,
    /// rsync processes run at once.
    pub count: u32,
    /// Why `count` is not what was typed (`auto`, fewer files than jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The dataset's parts, one per job: largest file first into the lightest part.
    pub parts: Vec<JobPart>,
    /// One row per cipher, beside that cipher's one-rsync `whole-file` row in `rows`.
    pub rows: Vec<JobsRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobPart {
    pub files: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobsRow {
    pub cipher: String,
    pub variant: Variant,
    /// MiB/s of each timed run: all the dataset's bytes over the time from the first job's
    /// first progress line to the last job's exit, plus the destination's flush after it.
    pub samples: Vec<f64>,
    /// Seconds each timed run took (the same window).
    pub sample_seconds: Vec<f64>,
    pub flush_s: Vec<f64>,
    pub median_mib_s: Option<f64>,
    pub min_mib_s: Option<f64>,
    pub max_mib_s: Option<f64>,
    /// Each job's rate (its part's bytes over its own first progress line to its exit),
    /// median over the runs, in job order.
    pub per_job_mib_s: Vec<f64>,
    /// CPU of every job's processes together, as `rows[].cpu` counts one rsync's.
    pub cpu: Vec<CpuShare>,
    /// The N jobs over the one rsync of the same cipher and variant.
    pub gain: Option<Gain>,
    /// Whether N jobs pay, in words (`2 jobs: ×1.6 (1.3–1.9)` or `no gain from 2 jobs ...`).
    pub note: Option<String>,
    /// A shell line that copies the same way (`xargs -P`), with `SRC` and `HOST:DIR` where the
    /// run's own source or destination is of no use to the reader.
    pub command: String,
    pub error: Option<String>,
}
