//! Everything under a bench table: how the figures were obtained (as many samples as the rows
//! actually have), the rankings, the native ÷ OpenSSH ratios and the run's warnings.

use super::ranking;
use super::rate_unit::RateUnit;
use crate::bench::model::{BenchReport, Direction, EngineKind, ResultRow};

/// Everything under the table: how the figures were obtained, the rankings, the engine ratios
/// and the warnings.
pub(crate) fn footer(report: &BenchReport, unit: RateUnit) -> Vec<String> {
    let mut out = how(report, unit);
    out.extend(ranking::lines(report, unit));
    out.extend(engine_ratios(&report.results));
    out.extend(report.warnings.iter().map(|w| warning(report, w)));
    out
}

/// How the figures were obtained: samples (as many as the rows actually have), warm-up, the
/// ceiling.
pub(crate) fn how(report: &BenchReport, unit: RateUnit) -> Vec<String> {
    let mut out = vec![format!(
        "{}: median (min–max) of {} after {} warm-up; CPU: % of one core, upload/download.",
        unit.label(),
        sample_counts(&report.results),
        report.settings.warmup.max(1)
    )];
    match &report.ceiling {
        Some(c) => out.push(format!(
            "Raw-TCP ceiling: {:.1} {} ({}).",
            unit.of(c.mib_s),
            unit.label(),
            c.method
        )),
        None => {
            out.push("Raw-TCP ceiling: not measured, so no row can be called network-bound.".into())
        }
    }
    out.extend(super::placement::line(report));
    out
}

/// `5 samples per direction`, or `2–3 samples per row and direction` when rows differ: the
/// counts of the rows that have figures.
fn sample_counts(results: &[ResultRow]) -> String {
    let counts = results
        .iter()
        .filter(|r| r.median_mib_s.is_some())
        .map(|r| r.samples.len());
    match (counts.clone().min(), counts.max()) {
        (Some(lo), Some(hi)) if lo == hi => {
            format!(
                "{lo} sample{} per direction",
                if lo == 1 { "" } else { "s" }
            )
        }
        (Some(lo), Some(hi)) => format!("{lo}–{hi} samples per row and direction"),
        _ => "the samples (no row has figures)".to_string(),
    }
}

/// A warning as it applies to this run: an adaptive run already sized its samples, so the
/// advice to use the adaptive default becomes the one that does apply.
fn warning(report: &BenchReport, w: &str) -> String {
    const ADVICE: &str = "; use a larger --size or the adaptive default";
    match w.strip_suffix(ADVICE) {
        Some(head) if report.settings.fixed_size_bytes.is_none() => {
            format!("warning: {head}; --thorough takes longer samples")
        }
        _ => format!("warning: {w}"),
    }
}

/// The native ÷ OpenSSH line, when one run measured both engines.
pub(crate) fn ratios(report: &BenchReport) -> Vec<String> {
    engine_ratios(&report.results)
}

/// Native engine ÷ OpenSSH engine per cipher and direction, when one run measured both: the
/// reference sits next to the figure, taken minutes apart at most.
fn engine_ratios(results: &[ResultRow]) -> Vec<String> {
    let median = |engine: &str, cipher: &str, mac: &Option<String>, d: Direction| {
        results
            .iter()
            .find(|r| r.engine == engine && r.cipher == cipher && &r.mac == mac && r.direction == d)
            .and_then(|r| r.median_mib_s)
    };
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    let (native, openssh) = (EngineKind::Native.as_str(), EngineKind::Openssh.as_str());
    for r in results.iter().filter(|r| r.engine == native) {
        if seen.contains(&(&r.cipher, &r.mac)) {
            continue;
        }
        seen.push((&r.cipher, &r.mac));
        let ratio = |d| {
            Some(median(native, &r.cipher, &r.mac, d)? / median(openssh, &r.cipher, &r.mac, d)?)
        };
        let (up, down) = (ratio(Direction::Upload), ratio(Direction::Download));
        if up.is_none() && down.is_none() {
            continue;
        }
        let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}×"));
        parts.push(format!("{} {}/{}", r.cipher, f(up), f(down)));
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "native ÷ openssh engine, same run (up/down medians): {}.",
        parts.join(", ")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &str, cipher: &str, d: Direction, median: Option<f64>) -> ResultRow {
        let mut r = ResultRow::failed(engine, cipher, None, d, String::new());
        r.error = None;
        r.median_mib_s = median;
        r
    }

    fn sampled(n: usize) -> ResultRow {
        let mut r = row("openssh", "a", Direction::Upload, Some(1.0));
        r.samples = vec![1.0; n];
        r
    }

    #[test]
    fn the_footer_counts_the_samples_the_rows_have() {
        assert_eq!(
            sample_counts(&[sampled(3), sampled(3)]),
            "3 samples per direction"
        );
        assert_eq!(
            sample_counts(&[sampled(2), sampled(3), sampled(2)]),
            "2–3 samples per row and direction"
        );
        // A failed row has no figures and no say.
        let failed = row("openssh", "b", Direction::Upload, None);
        assert_eq!(
            sample_counts(&[sampled(1), failed]),
            "1 sample per direction"
        );
    }

    #[test]
    fn native_over_openssh_per_cipher_and_direction() {
        let rows = vec![
            row("openssh", "a", Direction::Upload, Some(100.0)),
            row("openssh", "a", Direction::Download, Some(200.0)),
            row("native", "a", Direction::Upload, Some(250.0)),
            row("native", "a", Direction::Download, Some(300.0)),
            // Only one engine measured it, or the OpenSSH row failed: no ratio.
            row("native", "arcfour", Direction::Upload, Some(90.0)),
            row("openssh", "b", Direction::Upload, None),
            row("native", "b", Direction::Upload, Some(80.0)),
        ];
        assert_eq!(
            engine_ratios(&rows),
            ["native ÷ openssh engine, same run (up/down medians): a 2.50×/1.50×."]
        );
        assert!(engine_ratios(&rows[..2]).is_empty());
    }
}
