//! Two or more saved runs of one kind side by side, the way the seed compares kernel 3.18 with
//! 5.8 or LUKS before and after a patch. Rows are matched by what they measured (their
//! identity), never by position; each shows every run's median and spread and the change
//! against the first run. A change is called significant only when the two runs' sample
//! ranges do not overlap — the rule bench's ranking uses (`bench::stats::ranges_overlap`) —
//! so a difference inside the noise reads "≈" instead of a percentage that invites a wrong
//! conclusion.

pub mod drops;
mod extract;
pub mod render;

use super::load::Loaded;
use crate::bench::stats;
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

/// Builds the comparison of `reports` (all of one kind, checked by the caller) with `labels`
/// (one per report; empty ones are derived from the reports).
pub fn compare(reports: &[(String, Loaded)], labels: &[String]) -> Comparison {
    let kind = reports[0].1.kind();
    let derived = extract::labels(reports);
    let runs: Vec<Run> = reports
        .iter()
        .enumerate()
        .map(|(i, (file, _))| Run {
            label: labels
                .get(i)
                .filter(|l| !l.is_empty())
                .cloned()
                .unwrap_or_else(|| derived[i].clone()),
            file: file.clone(),
        })
        .collect();
    let per_run: Vec<Vec<(Vec<String>, Option<Figure>)>> =
        reports.iter().map(|(_, r)| extract::rows(r)).collect();
    let mut keys: Vec<Vec<String>> = Vec::new();
    for run in &per_run {
        for (k, _) in run {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|key| {
            let figures: Vec<Option<Figure>> = per_run
                .iter()
                .map(|run| {
                    run.iter()
                        .find(|(k, _)| *k == key)
                        .and_then(|(_, f)| f.clone())
                })
                .collect();
            let changes = figures
                .iter()
                .enumerate()
                .map(|(i, f)| change(figures[0].as_ref(), f.as_ref()).filter(|_| i > 0))
                .collect();
            Row {
                key,
                figures,
                changes,
            }
        })
        .collect();
    let n = runs.len();
    // Stable: rows in every run keep the first run's order; partial rows follow.
    rows.sort_by_key(|r| r.present() < n);
    Comparison {
        schema: SCHEMA.into(),
        kind: kind.into(),
        key_columns: extract::key_columns(&reports[0].1)
            .iter()
            .map(|s| s.to_string())
            .collect(),
        runs,
        rows,
    }
}

fn change(first: Option<&Figure>, other: Option<&Figure>) -> Option<Change> {
    let (a, b) = (first?, other?);
    if a.median_mib_s <= 0.0 {
        return None;
    }
    Some(Change {
        pct: (b.median_mib_s - a.median_mib_s) / a.median_mib_s * 100.0,
        significant: !stats::ranges_overlap(&a.samples, &b.samples),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::{BenchReport, Direction, ResultRow};

    fn bench(rows: &[(&str, &[f64])]) -> Loaded {
        let text = include_str!("../../../tests/fixtures/config/bench-openssh-9.2.json");
        let mut r: BenchReport = serde_json::from_str(text).unwrap();
        r.results = rows
            .iter()
            .map(|(c, s)| {
                let mut x = ResultRow::failed("openssh", c, None, Direction::Upload, String::new());
                x.error = None;
                x.samples = s.to_vec();
                x.median_mib_s = stats::median(s);
                x
            })
            .collect();
        Loaded::Bench(Box::new(r))
    }

    #[test]
    fn rows_match_by_identity_and_only_separate_ranges_are_significant() {
        let a = bench(&[
            ("x", &[100.0, 102.0, 98.0]),
            ("y", &[50.0, 55.0, 52.0]),
            ("gone", &[1.0]),
        ]);
        let b = bench(&[
            ("y", &[51.0, 53.0, 60.0]),
            ("x", &[60.0, 62.0, 61.0]),
            ("new", &[2.0]),
        ]);
        let c = compare(
            &[("a".into(), a), ("b".into(), b)],
            &["before".into(), "after".into()],
        );
        let keys: Vec<&str> = c.rows.iter().map(|r| r.key[1].as_str()).collect();
        assert_eq!(keys, ["x", "y", "gone", "new"]);
        let x = c.rows[0].changes[1].as_ref().unwrap();
        assert!(x.significant && (x.pct + 39.0).abs() < 0.5, "{x:?}");
        let y = c.rows[1].changes[1].as_ref().unwrap();
        assert!(!y.significant);
        assert_eq!(change_cell(Some(y)), "≈ (+1.9%)");
        assert_eq!(presence_note(&c, &c.rows[2]), "only in before");
        assert_eq!(presence_note(&c, &c.rows[3]), "only in after");
        assert!(c.rows[0].changes[0].is_none());
    }
}
