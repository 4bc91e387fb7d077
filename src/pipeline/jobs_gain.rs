//! What `--jobs N` measured, judged: each cipher's N-job runs beside its one-rsync
//! `whole-file` row, the gain with its range (as `bench::streams_gain` judges streams: the
//! medians' ratio, the range from the samples' extremes, significant only when the ranges do
//! not overlap), the line that says whether N jobs pay, and the suggestion that names
//! parallel transfer when they do. Pure: measures nothing.

use super::model::{JobsRow, JobsSection, Row, Suggestion};
use super::recording::{self, Interval};
use super::rsync::Variant;
use crate::bench::model::Gain;
use crate::bench::verdict::CPU_SATURATED;

/// The cores of both ends, for the note's "whole CPU busy".
#[derive(Debug, Clone, Copy)]
pub struct Cores {
    pub client: Option<u32>,
    pub server: Option<u32>,
    /// Both ends on one machine: its totals are read on both sides, the same figures.
    pub same_machine: bool,
}

/// Each jobs row's CPU (its `jobs:` phases), gain over the one-rsync row and note.
pub fn judge(section: &mut JobsSection, rows: &[Row], intervals: &[Interval], cores: Cores) {
    let count = section.count;
    for j in &mut section.rows {
        let prefix = format!("{}{}/{}#", super::cells::JOBS_TAG, j.cipher, j.variant);
        j.cpu = recording::cpu_shares(intervals, &prefix);
        let one = rows
            .iter()
            .find(|r| r.cipher == j.cipher && r.variant == j.variant);
        j.gain = one.and_then(|one| gain(one, j));
        let enough = one.is_some_and(|o| o.samples.len() >= 2) && j.samples.len() >= 2;
        let busy = whole_busy(j, cores);
        j.note = j.gain.map(|g| note(count, &g, enough, busy));
    }
}

/// The N jobs' aggregate over the one rsync, None when either lacks figures. Significant
/// only with two runs or more on each side: one run each cannot tell a gain from noise.
pub fn gain(one: &Row, n: &JobsRow) -> Option<Gain> {
    let (o, o_lo, o_hi) = (one.median_mib_s?, one.min_mib_s?, one.max_mib_s?);
    let (m, lo, hi) = (n.median_mib_s?, n.min_mib_s?, n.max_mib_s?);
    let enough = one.samples.len() >= 2 && n.samples.len() >= 2;
    (o > 0.0 && o_lo > 0.0 && o_hi > 0.0).then(|| Gain {
        median: m / o,
        min: lo / o_hi,
        max: hi / o_lo,
        significant: enough && lo > o_hi,
    })
}

/// `2 jobs: ×1.6 (1.3–1.9), beyond the spread`, or `no gain from 2 jobs: ...` and why.
pub fn note(count: u32, g: &Gain, enough: bool, busy: Option<String>) -> String {
    let times = format!("×{:.1} ({:.1}–{:.1})", g.median, g.min, g.max);
    if g.significant {
        return format!("{count} jobs: {times}, beyond the spread of both");
    }
    let outcome = if !enough {
        "one run each cannot tell a gain from noise"
    } else if g.max < 1.0 {
        "slower than one rsync beyond the spread"
    } else {
        "within noise"
    };
    match busy {
        Some(b) => format!("no gain from {count} jobs: {times}, {outcome}; {b}"),
        None => format!("no gain from {count} jobs: {times}, {outcome}"),
    }
}

/// `the destination's whole CPU is busy (190% of 200%)` when the N jobs filled it, else the
/// client's, when they filled that.
fn whole_busy(j: &JobsRow, cores: Cores) -> Option<String> {
    let busy = |side: &str, n: Option<u32>, whose: &str| {
        let cap = f64::from(n?) * 100.0;
        let used: f64 = j
            .cpu
            .iter()
            .filter(|s| s.side == side)
            .filter(|s| {
                matches!(
                    s.group.as_str(),
                    "total-user" | "total-system" | "total-softirq"
                )
            })
            .map(|s| s.pct)
            .sum();
        (used >= CPU_SATURATED * cap)
            .then(|| format!("{whose} whole CPU is busy ({used:.0}% of {}%)", cap.round()))
    };
    if cores.same_machine {
        return busy("server", cores.server, "this machine's (both ends')");
    }
    busy("server", cores.server, "the destination's")
        .or_else(|| busy("client", cores.client, "the client's"))
}

/// Parallel transfer, for every cipher whose N jobs beat its one rsync beyond the spread;
/// `e` is the verdict's figure (the baseline row's MiB/s) the gain is counted from.
pub fn suggestions(section: Option<&JobsSection>, base: &Row, e: f64) -> Vec<Suggestion> {
    let Some(s) = section else {
        return Vec::new();
    };
    s.rows
        .iter()
        .filter(|j| j.variant == Variant::WholeFile)
        .filter_map(|j| {
            let g = j.gain.filter(|g| g.significant)?;
            let m = j.median_mib_s?;
            let with = if j.cipher == base.cipher {
                String::new()
            } else {
                format!(" with ssh cipher {}", j.cipher)
            };
            Some(Suggestion {
                change: format!(
                    "parallel transfer: {} rsync jobs at once over disjoint parts of the data{with}",
                    s.count
                ),
                expected_mib_s: Some((m * 10.0).round() / 10.0),
                gain_pct: (e > 0.0).then(|| ((m / e - 1.0) * 1000.0).round() / 10.0),
                basis: "measured".into(),
                why: format!(
                    "{} jobs reached {m:.1} MiB/s against one rsync's {:.1} with {} (×{:.1}, \
                     {:.1}–{:.1}); to copy this way: {}",
                    s.count,
                    m / g.median,
                    j.cipher,
                    g.median,
                    g.min,
                    g.max,
                    j.command
                ),
            })
        })
        .collect()
}

/// The line the report gives when parallel transfer of the verdict's cipher does not pay.
pub fn no_gain(section: Option<&JobsSection>, cipher: Option<&str>) -> Option<String> {
    let s = section?;
    let j = s.rows.iter().find(|j| Some(j.cipher.as_str()) == cipher)?;
    j.gain
        .filter(|g| !g.significant)
        .and(j.note.clone())
        .map(|n| format!("Parallel transfer ({}): {n}", j.cipher))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::model::CpuShare;
    use crate::stats;

    fn row(rates: &[f64]) -> Row {
        Row {
            cipher: "c".into(),
            variant: Variant::WholeFile,
            rsync_flags: Vec::new(),
            bytes: 1,
            samples: rates.to_vec(),
            flush_s: Vec::new(),
            median_mib_s: stats::median(rates),
            min_mib_s: stats::min(rates),
            max_mib_s: stats::max(rates),
            wire_bytes: None,
            literal_bytes: None,
            cpu: Vec::new(),
            error: None,
        }
    }

    fn jobs(rates: &[f64]) -> JobsRow {
        JobsRow {
            cipher: "c".into(),
            variant: Variant::WholeFile,
            samples: rates.to_vec(),
            sample_seconds: Vec::new(),
            flush_s: Vec::new(),
            median_mib_s: stats::median(rates),
            min_mib_s: stats::min(rates),
            max_mib_s: stats::max(rates),
            per_job_mib_s: Vec::new(),
            cpu: Vec::new(),
            gain: None,
            note: None,
            command: "xargs -P 2".into(),
            error: None,
        }
    }

    #[test]
    fn a_gain_beyond_the_spread_is_suggested_with_its_command() {
        let one = row(&[20.0, 21.0, 22.0]);
        let mut j = jobs(&[33.0, 34.0, 36.0]);
        let g = gain(&one, &j).unwrap();
        assert!(g.significant);
        assert!((g.median - 34.0 / 21.0).abs() < 1e-9);
        assert!((g.min - 33.0 / 22.0).abs() < 1e-9);
        assert_eq!(
            note(2, &g, true, None),
            "2 jobs: ×1.6 (1.5–1.8), beyond the spread of both"
        );
        j.gain = Some(g);
        let section = JobsSection {
            asked: "2".into(),
            count: 2,
            reason: None,
            parts: Vec::new(),
            rows: vec![j],
        };
        let s = suggestions(Some(&section), &one, 21.0);
        assert_eq!(s.len(), 1);
        assert!(s[0].change.starts_with("parallel transfer: 2 rsync jobs"));
        assert_eq!(s[0].gain_pct, Some(61.9));
        assert!(
            s[0].why.ends_with("to copy this way: xargs -P 2"),
            "{}",
            s[0].why
        );
        assert!(no_gain(Some(&section), Some("c")).is_none());
    }

    #[test]
    fn overlapping_ranges_or_one_run_are_no_gain() {
        let one = row(&[20.0, 21.0, 22.0]);
        let g = gain(&one, &jobs(&[21.0, 21.5, 23.0])).unwrap();
        assert!(!g.significant);
        let n = note(
            2,
            &g,
            true,
            Some("the destination's whole CPU is busy (190% of 200%)".into()),
        );
        assert!(n.starts_with("no gain from 2 jobs: ×1.0"), "{n}");
        assert!(
            n.contains("within noise; the destination's whole CPU"),
            "{n}"
        );
        let mut busy = jobs(&[21.0]);
        busy.cpu = [
            ("client", "total-user", 120.0),
            ("client", "total-system", 70.0),
        ]
        .map(|(side, group, pct)| CpuShare {
            side: side.into(),
            group: group.into(),
            pct,
        })
        .to_vec();
        let cores = Cores {
            client: Some(2),
            server: Some(2),
            same_machine: false,
        };
        assert_eq!(
            whole_busy(&busy, cores).unwrap(),
            "the client's whole CPU is busy (190% of 200%)"
        );
        let g = gain(&row(&[20.0]), &jobs(&[30.0])).unwrap();
        assert!(!g.significant);
        assert!(note(2, &g, false, None).contains("one run each"));
    }
}
