//! `pipeline --jobs N` in the pipeline CSV: the `jobs_*` columns after the others, `jobs` 1 on
//! every one-rsync line, and one line per cipher for its N jobs in the same columns as a
//! one-rsync line (docs/pipeline.md, "CSV"). Figures only as `pipeline::jobs_gain` made them.

use super::cells::csv_figure as figure;
use crate::pipeline::model::{JobsRow, JobsSection, Row};

/// The columns a report with a `jobs` section adds.
pub(crate) const HEAD: [&str; 8] = [
    "jobs",
    "per_job_mib_s",
    "jobs_gain",
    "jobs_gain_min",
    "jobs_gain_max",
    "jobs_gain_significant",
    "jobs_note",
    "jobs_command",
];

/// The `jobs_*` cells of a line measured with one rsync.
pub(crate) fn one() -> Vec<String> {
    let mut v = vec![String::new(); HEAD.len()];
    v[0] = "1".into();
    v
}

/// Each cipher's N jobs: a `Row` holding what the one-rsync columns show, and its `jobs_*` cells.
pub(crate) fn lines(s: &JobsSection) -> Vec<(Row, Vec<String>)> {
    let bytes = s.parts.iter().map(|p| p.bytes).sum();
    s.rows
        .iter()
        .map(|j| (as_row(j, bytes), cells(s.count, j)))
        .collect()
}

fn as_row(j: &JobsRow, bytes: u64) -> Row {
    Row {
        cipher: j.cipher.clone(),
        variant: j.variant,
        rsync_flags: Vec::new(),
        bytes,
        samples: j.samples.clone(),
        flush_s: j.flush_s.clone(),
        median_mib_s: j.median_mib_s,
        min_mib_s: j.min_mib_s,
        max_mib_s: j.max_mib_s,
        wire_bytes: None,
        literal_bytes: None,
        cpu: j.cpu.clone(),
        error: j.error.clone(),
    }
}

fn cells(count: u32, j: &JobsRow) -> Vec<String> {
    let gain = j.gain.as_ref();
    vec![
        count.to_string(),
        j.per_job_mib_s
            .iter()
            .map(|r| format!("{r:.3}"))
            .collect::<Vec<_>>()
            .join(" "),
        figure(gain.map(|g| g.median)),
        figure(gain.map(|g| g.min)),
        figure(gain.map(|g| g.max)),
        gain.map(|g| g.significant.to_string()).unwrap_or_default(),
        j.note.clone().unwrap_or_default(),
        j.command.clone(),
    ]
}
