//! `report OLD.json NEW.json --fail-on-drop 10%`: a nightly check over a fleet's saved runs. A
//! row fails the check when a later run is slower than the first by more than the threshold
//! *and* the change is significant (the two runs' sample ranges do not overlap): a drop inside
//! the noise is not a regression anyone can act on.

use super::model::{Comparison, Row};

/// A row that dropped past the threshold in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Drop {
    /// The row's identity as printed (`openssh aes128-ctr upload`).
    pub row: String,
    /// The run's label.
    pub run: String,
    pub pct: f64,
}

/// Every significant drop larger than `threshold_pct` (a positive number of percent).
pub fn drops(c: &Comparison, threshold_pct: f64) -> Vec<Drop> {
    let mut out = Vec::new();
    for row in &c.rows {
        for (i, change) in row.changes.iter().enumerate() {
            let Some(ch) = change else { continue };
            if ch.significant && ch.pct < -threshold_pct {
                out.push(Drop {
                    row: identity(row),
                    run: c.runs[i].label.clone(),
                    pct: ch.pct,
                });
            }
        }
    }
    out
}

fn identity(row: &Row) -> String {
    row.key
        .iter()
        .filter(|k| !k.is_empty() && k.as_str() != "-")
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The one-line summary of a failed check, the rows after it.
pub fn message(found: &[Drop], threshold_pct: f64) -> String {
    let rows: Vec<String> = found
        .iter()
        .map(|d| format!("{} {:+.1}% in {}", d.row, d.pct, d.run))
        .collect();
    format!(
        "{} row(s) dropped by more than {threshold_pct}% (significant: sample ranges apart): {}",
        found.len(),
        rows.join("; ")
    )
}

/// `10%`, `10` or `2.5%` as a positive number of percent.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (e.g. 10%)"))?;
    if v.is_finite() && v > 0.0 && v < 100.0 {
        Ok(v)
    } else {
        Err(format!("{s:?}: the drop must be between 0 and 100%"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{Change, Run};
    use super::*;

    fn run(label: &str) -> Run {
        Run {
            label: label.into(),
            file: format!("{label}.json"),
        }
    }

    fn row(name: &str, change: Option<Change>) -> Row {
        Row {
            key: vec!["openssh".into(), name.into(), "upload".into()],
            figures: vec![None, None],
            changes: vec![None, change],
        }
    }

    #[test]
    fn only_significant_drops_past_the_threshold_count() {
        let c = Comparison {
            schema: String::new(),
            kind: "bench".into(),
            key_columns: vec![],
            runs: vec![run("old"), run("new")],
            rows: vec![
                row(
                    "big",
                    Some(Change {
                        pct: -40.0,
                        significant: true,
                    }),
                ),
                row(
                    "noise",
                    Some(Change {
                        pct: -40.0,
                        significant: false,
                    }),
                ),
                row(
                    "small",
                    Some(Change {
                        pct: -5.0,
                        significant: true,
                    }),
                ),
                row(
                    "faster",
                    Some(Change {
                        pct: 30.0,
                        significant: true,
                    }),
                ),
                row("absent", None),
            ],
        };
        let d = drops(&c, 10.0);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].row, "openssh big upload");
        assert!(message(&d, 10.0).contains("openssh big upload -40.0% in new"));
    }

    #[test]
    fn thresholds_parse_with_or_without_percent() {
        assert_eq!(parse_threshold("10%"), Ok(10.0));
        assert_eq!(parse_threshold("2.5"), Ok(2.5));
        assert!(parse_threshold("0%").is_err());
        assert!(parse_threshold("ten").is_err());
    }
}
