//! The ranking as a person reads it: a short ordered list per engine and direction. Which rows
//! share a tier is decided in `bench::ranking`; this only prints it.

use super::rate_unit::RateUnit;
use crate::bench::model::{BenchReport, RankEntry, Ranking};

/// Per direction a heading and a short ordered list, medians in `unit`, e.g.
///
/// ```text
/// Ranking, upload:
///   1. aes128-gcm@openssh.com 327.1
///   2. aes128-ctr 221.0
///   2. ≈ chacha20-poly1305@openssh.com 219.5
/// ```
///
/// `≈` marks a row in the tier of the row above: its samples overlap the tier leader's (the first
/// row of the tier, without `≈`), so the run cannot tell the two apart.
pub fn lines(report: &BenchReport, unit: RateUnit) -> Vec<String> {
    let several = |r: &Ranking| report.ranking.iter().any(|o| o.engine != r.engine);
    let mut out = Vec::new();
    for r in report.ranking.iter().filter(|r| r.entries.len() > 1) {
        out.push(if several(r) {
            format!("Ranking, {} {}:", r.engine, r.direction)
        } else {
            format!("Ranking, {}:", r.direction)
        });
        for (i, e) in r.entries.iter().enumerate() {
            let tie = i > 0 && same_tier(&r.entries[i - 1], e);
            let name = match &e.mac {
                Some(m) => format!("{}+{m}", e.cipher),
                None => e.cipher.clone(),
            };
            out.push(format!(
                "  {}. {}{name} {:.1}",
                e.rank,
                if tie { "≈ " } else { "" },
                unit.of(e.median_mib_s)
            ));
        }
    }
    if report
        .ranking
        .iter()
        .any(|r| !r.significant && r.entries.len() > 1)
    {
        out.push(format!("  ({TIE_LEGEND})"));
    }
    out
}

/// What `≈` means, in every format that prints a ranking.
pub const TIE_LEGEND: &str = "≈: same tier as its leader, the row above it without ≈: their \
     samples overlap, so this run cannot tell them apart";

/// Whether `e` is in the tier of the row above it. Reports written before tiers existed carry
/// tier 0: there the shared rank says it.
pub fn same_tier(above: &RankEntry, e: &RankEntry) -> bool {
    if e.tier == 0 {
        above.rank == e.rank
    } else {
        above.tier == e.tier
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ranking::{rank, test_row as row};

    #[test]
    fn rankings_print_as_a_short_list_per_direction() {
        let text = include_str!("../../tests/fixtures/config/bench-openssh-9.2.json");
        let mut report: BenchReport = serde_json::from_str(text).unwrap();
        report.results = vec![
            row("slow", &[10.0, 11.0, 12.0]),
            row("fast", &[100.0, 101.0, 99.0]),
            row("fast-too", &[98.0, 100.5, 97.0]),
        ];
        report.ranking = rank(&report.results);
        assert_eq!(
            lines(&report, RateUnit::MibS),
            [
                "Ranking, upload:",
                "  1. fast 100.0",
                "  1. ≈ fast-too 98.0",
                "  3. slow 11.0",
                "  (≈: same tier as its leader, the row above it without ≈: their samples overlap, so \
                 this run cannot tell them apart)",
            ]
        );
        assert!(lines(&report, RateUnit::MibS)
            .iter()
            .all(|l| l.chars().count() < 120));
    }
}
