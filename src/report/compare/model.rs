//! What a comparison is: runs, rows matched by identity, each run's figure and the change
//! against the first run; and the cells every format shows them with.

use crate::stats;
use serde::Serialize;

pub const SCHEMA: &str = "sshtune.compare/1";

/// A figure of one row in one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Figure {
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    pub samples: Vec<f64>,
}

/// A run's figure against the first run's.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// (median − first median) / first median, in %.
    pub pct: f64,
    /// The two sample ranges do not overlap.
    pub significant: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Run {
    pub label: String,
    pub file: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    /// The identity, one value per `Comparison::key_columns`.
    pub key: Vec<String>,
    /// One per run, null when the row is absent from (or failed in) that run.
    pub figures: Vec<Option<Figure>>,
    /// One per run; null for the first run and wherever either figure is missing.
    pub changes: Vec<Option<Change>>,
}

impl Row {
    /// The runs that have a figure for this row.
    pub fn present(&self) -> usize {
        self.figures.iter().filter(|f| f.is_some()).count()
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Comparison {
    pub schema: String,
    /// `bench`, `speed`, `storage` or `pipeline`.
    pub kind: String,
    pub key_columns: Vec<String>,
    pub runs: Vec<Run>,
    /// Rows present in every run first (in the first run's order), then the others.
    pub rows: Vec<Row>,
}

impl Figure {
    pub fn from_samples(samples: &[f64]) -> Option<Figure> {
        Some(Figure {
            median_mib_s: stats::median(samples)?,
            min_mib_s: stats::min(samples)?,
            max_mib_s: stats::max(samples)?,
            samples: samples.to_vec(),
        })
    }
}

/// `+12.3%` when significant, `≈ (+1.2%)` when the ranges overlap.
pub fn change_cell(c: Option<&Change>) -> String {
    match c {
        None => "-".into(),
        Some(c) if c.significant => format!("{:+.1}%", c.pct),
        Some(c) => format!("≈ ({:+.1}%)", c.pct),
    }
}

/// `327.1 (320.4–331.0)`, or `-` when the run has no figure.
pub fn figure_cell(f: Option<&Figure>) -> String {
    f.map_or("-".into(), |f| {
        format!(
            "{:.1} ({:.1}–{:.1})",
            f.median_mib_s, f.min_mib_s, f.max_mib_s
        )
    })
}

/// `only in A, B` for a row missing from some runs, else empty.
pub fn presence_note(c: &Comparison, r: &Row) -> String {
    if r.present() == c.runs.len() {
        return String::new();
    }
    let names: Vec<&str> = r
        .figures
        .iter()
        .zip(&c.runs)
        .filter(|(f, _)| f.is_some())
        .map(|(_, run)| run.label.as_str())
        .collect();
    if names.is_empty() {
        "no figure in any run".into()
    } else {
        format!("only in {}", names.join(", "))
    }
}
