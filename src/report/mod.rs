//! Presentation of bench results. Every format renders the same `BenchReport`; none of them
//! computes anything new.

mod csv;
mod json;
mod markdown;
mod table;

use crate::bench::model::{BenchReport, Direction, ResultRow};
use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
}

pub trait Exporter {
    fn render(&self, report: &BenchReport) -> anyhow::Result<String>;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
        Format::Markdown => Box::new(markdown::Markdown),
    }
}

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

/// `327.1 (320.4–331.0)`, or the error.
pub(crate) fn rate_cell(r: Option<&ResultRow>) -> String {
    match r {
        None => "-".into(),
        Some(r) => match (r.median_mib_s, r.min_mib_s, r.max_mib_s) {
            (Some(m), Some(lo), Some(hi)) => format!("{m:.1} ({lo:.1}–{hi:.1})"),
            _ => "n/a".into(),
        },
    }
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

/// Evidence lines behind each verdict (`--explain`).
pub fn explain(report: &BenchReport) -> String {
    let mut out = String::from("Evidence behind each verdict:\n");
    for r in &report.results {
        let what = match (&r.verdict, &r.verdict_reason, &r.error) {
            (_, _, Some(e)) => format!("error: {e}"),
            (Some(v), Some(why), None) => format!("{v}: {why}"),
            _ => "no verdict".into(),
        };
        out.push_str(&format!(
            "  {:<8} {:<30} {:<8} {what}\n",
            r.engine, r.cipher, r.direction
        ));
    }
    out
}

pub(crate) fn footer(report: &BenchReport) -> Vec<String> {
    let samples = report.settings.repeat;
    let mut out = vec![format!(
        "MiB/s: median (min–max) of {samples} samples per direction after {} warm-up; CPU: % of one core, upload/download.",
        report.settings.warmup.max(1)
    )];
    match &report.ceiling {
        Some(c) => out.push(format!(
            "Raw-TCP ceiling: {:.1} MiB/s ({}).",
            c.mib_s, c.method
        )),
        None => {
            out.push("Raw-TCP ceiling: not measured, so no row can be called network-bound.".into())
        }
    }
    out.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    out
}
