//! The pieces every bench table is built of: a line per cipher with both directions, the rate,
//! CPU and verdict cells, and the legends printed under a table.

use super::rate_unit::RateUnit;
use crate::bench::model::{BenchReport, Direction, ResultRow};

/// One line of the human-readable tables: a cipher (+MAC, engine) with both directions.
pub(crate) struct Line<'a> {
    pub engine: &'a str,
    pub cipher: &'a str,
    pub mac: Option<&'a str>,
    pub grade: &'a str,
    pub up: Option<&'a ResultRow>,
    pub down: Option<&'a ResultRow>,
}

pub(crate) fn lines(report: &BenchReport) -> Vec<Line<'_>> {
    let mut out: Vec<Line> = Vec::new();
    for r in &report.results {
        let pos = out.iter().position(|l| {
            l.engine == r.engine && l.cipher == r.cipher && l.mac == r.mac.as_deref()
        });
        let i = match pos {
            Some(i) => i,
            None => {
                out.push(Line {
                    engine: &r.engine,
                    cipher: &r.cipher,
                    mac: r.mac.as_deref(),
                    grade: r.grade.as_deref().unwrap_or("?"),
                    up: None,
                    down: None,
                });
                out.len() - 1
            }
        };
        match r.direction {
            Direction::Upload => out[i].up = Some(r),
            Direction::Download => out[i].down = Some(r),
        }
    }
    out
}

/// What a grade means, where grades are printed.
pub const GRADE_LEGEND: &str = "grade: ok = recommended; weak = allowed with a warning (a 64-bit \
     or SHA-1 MAC, CBC, a Terrapin exposure); broken = measured, never recommended; a cipher+MAC \
     pair takes the weaker grade of the two.";

/// What each verdict means, where verdicts are printed.
pub const VERDICT_LEGEND: &str = "verdict: what bounds the row: client-cpu or server-cpu (that \
     end's core or quota is saturated), cpu (shared) (both ends on one machine whose cores are \
     busy), network (near the raw-TCP ceiling), path (the link or the SSH window), unclear (no \
     limit reached; --explain shows the figures).";

/// The legends under a bench table: grades (when the grade column is shown) and verdicts.
pub(crate) fn legends(grade_shown: bool) -> Vec<String> {
    let mut out = Vec::new();
    if grade_shown {
        out.push(GRADE_LEGEND.to_string());
    }
    out.push(VERDICT_LEGEND.to_string());
    out
}

/// `327.1 (320.4–331.0)` in `unit`, or the error.
pub(crate) fn rate_cell(r: Option<&ResultRow>, unit: RateUnit) -> String {
    match r {
        None => "-".into(),
        Some(r) => match (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
            (Some(m), Some(lo), Some(hi)) => {
                format!("{:.1} ({:.1}–{:.1})", unit.of(m), unit.of(lo), unit.of(hi))
            }
            _ => "n/a".into(),
        },
    }
}

/// A figure in a CSV cell: three decimals, empty when there is none.
pub(crate) fn csv_figure(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_default()
}

pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or("?".into(), |v| format!("{v:.0}"))
}

/// `up/down` pair of a per-direction figure.
pub(crate) fn pair(l: &Line, f: impl Fn(&ResultRow) -> Option<f64>) -> String {
    // "-" for a direction not run, "?" for one run without a CPU figure.
    let one = |r: Option<&ResultRow>| r.map_or("-".to_string(), |r| pct(f(r)));
    format!("{}/{}", one(l.up), one(l.down))
}

pub(crate) fn verdict_cell(l: &Line) -> String {
    let one = |r: Option<&ResultRow>| match r {
        None => "-".to_string(),
        Some(r) => match (&r.verdict, &r.error) {
            (_, Some(e)) => format!("error: {e}"),
            (Some(v), None) => v.to_string(),
            (None, None) => "-".into(),
        },
    };
    let (u, d) = (one(l.up), one(l.down));
    if u == d {
        u
    } else {
        format!("{u} / {d}")
    }
}
