//! The header, row cells and legend every comparison format shows (terminal, Markdown, CSV
//! and HTML alike).

use super::model::{change_cell, figure_cell, presence_note, Comparison, Row};

pub(crate) fn header(c: &Comparison) -> Vec<String> {
    let mut h = c.key_columns.clone();
    for (i, name) in short_names(c).iter().enumerate() {
        h.push(format!("{name} MiB/s"));
        if i > 0 {
            h.push(format!("Δ {name}"));
        }
    }
    if has_notes(c) {
        h.push("note".into());
    }
    h
}

/// Whether any row is missing from a run (the `note` column says which).
fn has_notes(c: &Comparison) -> bool {
    c.rows.iter().any(|r| r.present() < c.runs.len())
}

pub(crate) fn cells(c: &Comparison, r: &Row) -> Vec<String> {
    let mut v = r.key.clone();
    for i in 0..c.runs.len() {
        v.push(figure_cell(r.figures[i].as_ref()));
        if i > 0 {
            v.push(change_cell(r.changes[i].as_ref()));
        }
    }
    if has_notes(c) {
        v.push(presence_note(c, r));
    }
    v
}

/// The lines under the table: which run is which, and the rule behind "significant".
pub fn legend(c: &Comparison) -> Vec<String> {
    let mut out: Vec<String> = c
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| format!("#{}: {} ({})", i + 1, r.label, r.file))
        .collect();
    out.push(format!(
        "MiB/s: median (min–max) of each run's samples. Δ: change of the median against {}; \
         shown as a % only when the two runs' sample ranges do not overlap, \"≈\" otherwise.",
        c.runs[0].label
    ));
    out
}

/// What names a run in a column header: its label when every label is short, else `#N`
/// (the legend under the table maps numbers to labels), so the table stays narrow.
fn short_names(c: &Comparison) -> Vec<String> {
    let short = c.runs.iter().all(|r| r.label.chars().count() <= 16);
    c.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if short {
                r.label.clone()
            } else {
                format!("#{}", i + 1)
            }
        })
        .collect()
}
