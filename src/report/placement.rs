//! What a bench report says about placement: how the run placed the two ends on the CPUs (a
//! line under the table) and, for `--explain`, whether the samples' placement and the
//! machine's other load explain the spread of the figures.

use crate::bench::model::BenchReport;
use crate::stats;

/// Samples that saw `ssh` and the session process on one CPU in at least this share of their
/// readings count as sharing a core.
const SHARED_FROM: f64 = 0.5;

/// Samples during which the rest of the machine kept at least this many cores busy count as
/// loaded.
const LOADED_FROM: f64 = 0.5;

/// `Placement: openssh pinned: ssh and its feeder → cpu0, sshd and its session → cpu1.`
pub fn line(report: &BenchReport) -> Option<String> {
    let parts: Vec<String> = report
        .settings
        .placement
        .iter()
        .map(|p| format!("{} {}", p.engine, p.note))
        .collect();
    (!parts.is_empty()).then(|| format!("Placement: {}.", parts.join("; ")))
}

/// One sample: its rate against its row's median, and what its placement recorded.
struct Seen {
    relative: f64,
    shared: Option<bool>,
    loaded: Option<bool>,
}

/// `--explain`'s placement section: per engine, the samples that shared a core against those
/// that did not, and the loaded against the quiet, each as the median of the samples' rates
/// relative to their row's median; empty when no sample recorded its placement.
pub fn explain(report: &BenchReport) -> String {
    let mut out = String::new();
    let mut engines: Vec<&str> = report.results.iter().map(|r| r.engine.as_str()).collect();
    engines.dedup();
    for engine in engines {
        let mut seen = Vec::new();
        let mut spreads = Vec::new();
        for r in report.results.iter().filter(|r| r.engine == engine) {
            let (Some(m), false) = (r.median_mib_s, r.sample_placement.is_empty()) else {
                continue;
            };
            spreads.extend(stats::relative_spread(&r.samples));
            for (s, p) in r.samples.iter().zip(&r.sample_placement) {
                seen.push(Seen {
                    relative: s / m.max(1e-9),
                    shared: p.ssh_sshd_shared.map(|x| x >= SHARED_FROM),
                    loaded: p.other_load_cores.map(|x| x >= LOADED_FROM),
                });
            }
        }
        if seen.is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push_str(
                "Placement and load behind the spread (each sample's rate ÷ its row's median):\n",
            );
        }
        if let Some(l) = line(report) {
            out.push_str(&format!("  {l}\n"));
        }
        let spread = stats::median(&spreads).unwrap_or(0.0);
        out.push_str(&format!(
            "  {engine}: {} samples; the rows' median spread (max−min)/median {:.0}%\n",
            seen.len(),
            spread * 100.0
        ));
        out.push_str(&split(
            &seen,
            |s| s.shared,
            "ssh and sshd on one core",
            "on two",
            spread,
        ));
        out.push_str(&split(
            &seen,
            |s| s.loaded,
            &format!("other load ≥ {LOADED_FROM} cores"),
            "below",
            spread,
        ));
    }
    out
}

/// One comparison line: the samples where `which` holds against those where it does not.
fn split(
    seen: &[Seen],
    which: impl Fn(&Seen) -> Option<bool>,
    yes: &str,
    no: &str,
    spread: f64,
) -> String {
    let part = |want: bool| -> Vec<f64> {
        seen.iter()
            .filter(|s| which(s) == Some(want))
            .map(|s| s.relative)
            .collect()
    };
    let (a, b) = (part(true), part(false));
    let m = |v: &[f64]| stats::median(v).map_or("-".into(), |x| format!("{x:.2}×"));
    let said = match (stats::median(&a), stats::median(&b)) {
        (Some(x), Some(y)) => {
            let gap = (x / y.max(1e-9) - 1.0).abs();
            if gap * 2.0 > spread {
                format!(
                    "explains the spread: {:.0}% apart, more than half the rows' spread",
                    gap * 100.0
                )
            } else {
                format!(
                    "does not explain it: {:.0}% apart, within half the rows' spread",
                    gap * 100.0
                )
            }
        }
        (None, None) => "unknown (not recorded)".into(),
        _ => "cannot tell: every sample alike (what lasts the whole run moves every row together; compare runs)".into(),
    };
    format!(
        "    {yes}: {} samples at {}; {no}: {} at {}; {said}\n",
        a.len(),
        m(&a),
        b.len(),
        m(&b)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::placement::{Placement, SamplePlacement};
    use crate::bench::ranking::test_row;

    fn placed(shared: f64, load: f64) -> SamplePlacement {
        SamplePlacement {
            ssh_sshd_shared: Some(shared),
            other_load_cores: Some(load),
            readings: 10,
            ..SamplePlacement::default()
        }
    }

    #[test]
    fn samples_sharing_a_core_are_set_against_the_others() {
        let mut r: BenchReport =
            serde_json::from_str(include_str!("../../examples/reports/bench.json")).unwrap();
        let mut row = test_row("aes128-ctr", &[80.0, 100.0, 100.0, 82.0]);
        row.sample_placement = vec![
            placed(1.0, 0.0),
            placed(0.0, 0.0),
            placed(0.0, 0.0),
            placed(0.9, 0.0),
        ];
        r.results = vec![row];
        r.settings.placement = vec![Placement {
            engine: "openssh".into(),
            note: "not pinned: remote server".into(),
            ..Placement::default()
        }];
        let text = explain(&r);
        assert!(text.contains("openssh not pinned: remote server"), "{text}");
        assert!(
            text.contains("on one core: 2 samples at 0.89×; on two: 2 at 1.10×; explains"),
            "{text}"
        );
        assert!(text.contains("cannot tell: every sample alike"), "{text}");
        r.results[0].sample_placement.clear();
        assert_eq!(explain(&r), "");
    }
}
