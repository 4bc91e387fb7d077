//! The cells and footer every speed table is built of.

use crate::report::rate_unit::RateUnit;
use crate::speed::model::{SpeedReport, SpeedRow};

/// The columns every speed table shows, rates in `unit`.
pub(crate) fn header(unit: RateUnit) -> Vec<String> {
    vec![
        "kind".to_string(),
        "algorithm".into(),
        "grade".into(),
        "backend".into(),
        unit.label().into(),
        format!("openssl speed {}", unit.label()),
        "ratio".into(),
    ]
}

/// One row's cells under [`header`].
pub(crate) fn row(r: &SpeedRow, unit: RateUnit) -> Vec<String> {
    vec![
        r.kind.to_string(),
        what(r),
        r.grade.clone(),
        backend_cell(r),
        rate_cell(r, unit),
        reference_cell(r, unit),
        ratio_cell(r),
    ]
}

/// `cipher`, `mac` or `cipher + mac`.
pub(crate) fn what(r: &SpeedRow) -> String {
    match (&r.cipher, &r.mac) {
        (Some(c), Some(m)) => format!("{c} + {m}"),
        (Some(c), None) => c.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) => String::new(),
    }
}

/// `openssl*`: the star marks the backend the native pair uses on this CPU.
pub(crate) fn backend_cell(r: &SpeedRow) -> String {
    format!("{}{}", r.backend, if r.default_backend { "*" } else { "" })
}

/// `4583.2 (4501.0–4601.9)` in `unit`, or the error.
pub(crate) fn rate_cell(r: &SpeedRow, unit: RateUnit) -> String {
    match (&r.stats, &r.error) {
        (Some(s), _) => format!(
            "{:.1} ({:.1}–{:.1})",
            unit.of(s.median_mib_s),
            unit.of(s.min_mib_s),
            unit.of(s.max_mib_s)
        ),
        (None, Some(e)) => format!("error: {e}"),
        (None, None) => "n/a".into(),
    }
}

pub(crate) fn reference_cell(r: &SpeedRow, unit: RateUnit) -> String {
    match &r.reference {
        Some(x) => format!(
            "{:.1} ({:.1}–{:.1})",
            unit.of(x.stats.median_mib_s),
            unit.of(x.stats.min_mib_s),
            unit.of(x.stats.max_mib_s)
        ),
        None => "-".into(),
    }
}

pub(crate) fn ratio_cell(r: &SpeedRow) -> String {
    r.ratio.map_or("-".into(), |x| format!("{x:.2}×"))
}

pub(crate) fn footer(report: &SpeedReport, unit: RateUnit) -> Vec<String> {
    let s = &report.settings;
    let mut out = vec![format!(
        "{} per CPU-second of one thread: median (min–max) of {} samples of ≥{} s, {} KiB per call; * = the backend the native pair uses on this CPU.",
        unit.label(),
        s.samples,
        s.min_time_s,
        s.packet_bytes / 1024
    )];
    if let Some(b) = &report.backend_choice {
        out.push(format!("Backends (*): {}.", b.reason));
    }
    match (&report.openssl.version, &report.openssl.note) {
        (_, Some(note)) => out.push(format!("Reference: {note}.")),
        (Some(v), None) => out.push(format!(
            "Reference: `openssl speed -evp`/`-hmac` of the same primitive, same run ({v}); ratio = ours / openssl."
        )),
        (None, None) => {}
    }
    let mut notes: Vec<String> = Vec::new();
    for r in &report.rows {
        if let Some(n) = &r.reference_note {
            let line = format!("{}: {n}", what(r));
            if r.reference.is_none() && !notes.contains(&line) && report.openssl.note.is_none() {
                notes.push(line);
            }
        }
    }
    out.extend(notes.into_iter().map(|n| format!("No reference for {n}.")));
    out.push(crate::report::GRADE_LEGEND.to_string());
    out.extend(report.warnings.iter().map(|w| format!("warning: {w}")));
    out
}
