//! Builds a `Comparison` from loaded reports: rows matched by identity, each change called
//! significant only when the two runs' sample ranges do not overlap.

use super::extract;
use super::model::{Change, Comparison, Figure, Row, Run, SCHEMA};
use crate::report::load::Loaded;
use crate::stats;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::{BenchReport, Direction, ResultRow};
    use crate::report::compare::model::{change_cell, presence_note};

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
