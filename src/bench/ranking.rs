//! Which cipher is faster, and whether the run can tell. Rows fall into tiers: the fastest row
//! not yet placed leads a tier, and every slower row whose samples overlap the leader's joins
//! it. A row is compared with its tier's leader, never with its neighbour: chained ties (a ≈ b,
//! b ≈ c, so a ≈ c) would put 672 and 373 MiB/s in one tier because the rows between them each
//! overlap the next. Inside a tier the run cannot tell the rows apart.

use super::model::{Direction, RankEntry, Ranking, ResultRow};
use crate::stats;

/// Ranks the measured rows of each engine and direction, fastest median first. Engines are
/// ranked apart: the question is which cipher to pick for a given implementation.
pub fn rank(results: &[ResultRow]) -> Vec<Ranking> {
    let mut engines: Vec<&str> = Vec::new();
    for r in results {
        if !engines.contains(&r.engine.as_str()) {
            engines.push(&r.engine);
        }
    }
    let mut out = Vec::new();
    for engine in engines {
        out.extend(rank_engine(results, engine));
    }
    out
}

fn rank_engine(results: &[ResultRow], engine: &str) -> Vec<Ranking> {
    let mut out = Vec::new();
    for direction in [Direction::Upload, Direction::Download] {
        let mut rows: Vec<&ResultRow> = results
            .iter()
            .filter(|r| r.engine == engine && r.direction == direction && r.error.is_none())
            .filter(|r| r.median_mib_s.is_some() && !r.samples.is_empty())
            .collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| b.median_mib_s.unwrap().total_cmp(&a.median_mib_s.unwrap()));
        let samples: Vec<&[f64]> = rows.iter().map(|r| r.samples.as_slice()).collect();
        let placed = tiers(&samples);
        let mut entries: Vec<RankEntry> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            if i > 0 {
                let apart = !stats::ranges_overlap(&rows[i - 1].samples, &r.samples);
                entries[i - 1].ahead_of_next = Some(apart);
            }
            entries.push(RankEntry {
                rank: placed[i].rank,
                tier: placed[i].tier,
                engine: r.engine.clone(),
                cipher: r.cipher.clone(),
                mac: r.mac.clone(),
                median_mib_s: r.median_mib_s.unwrap_or(0.0),
                min_mib_s: stats::min(&r.samples).unwrap_or(0.0),
                max_mib_s: stats::max(&r.samples).unwrap_or(0.0),
                ahead_of_next: None,
            });
        }
        let significant = entries.iter().all(|e| e.ahead_of_next != Some(false));
        out.push(Ranking {
            engine: engine.to_string(),
            direction,
            entries,
            significant,
        });
    }
    out
}

/// Where a row stands: its tier (1 = the fastest) and the rank printed for it, the position of
/// its tier's leader (1, 1, 3: two rows share the first tier, the third leads the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub tier: u32,
    pub rank: u32,
}

/// Tiers by the leader over rows sorted fastest first, given as their samples.
pub fn tiers(sorted: &[&[f64]]) -> Vec<Place> {
    let mut out: Vec<Place> = Vec::with_capacity(sorted.len());
    let mut leader = 0;
    for (i, s) in sorted.iter().enumerate() {
        if i == 0 || !stats::ranges_overlap(sorted[leader], s) {
            leader = i;
            let tier = out.last().map_or(1, |p| p.tier + 1);
            out.push(Place {
                tier,
                rank: i as u32 + 1,
            });
        } else {
            out.push(out[leader]);
        }
    }
    out
}

/// A measured OpenSSH upload row with these samples: the fixture of the ranking tests here and
/// of its printing in `report::ranking`.
#[cfg(test)]
pub(crate) fn test_row(cipher: &str, samples: &[f64]) -> ResultRow {
    let mut r = ResultRow::failed("openssh", cipher, None, Direction::Upload, String::new());
    r.error = None;
    r.samples = samples.to_vec();
    r.median_mib_s = stats::median(samples);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cipher: &str, samples: &[f64]) -> ResultRow {
        test_row(cipher, samples)
    }

    #[test]
    fn overlapping_spreads_share_a_rank() {
        let rows = vec![
            row("slow", &[10.0, 11.0, 12.0]),
            row("fast", &[100.0, 101.0, 99.0]),
            row("fast-too", &[98.0, 100.5, 97.0]),
        ];
        let r = rank(&rows);
        assert_eq!(r.len(), 1);
        let e = &r[0].entries;
        assert_eq!(e[0].cipher, "fast");
        assert_eq!(
            e.iter().map(|e| e.rank).collect::<Vec<_>>(),
            vec![1, 1, 3],
            "{e:#?}"
        );
        assert_eq!(e[0].ahead_of_next, Some(false));
        assert_eq!(e[1].ahead_of_next, Some(true));
        assert_eq!(e[2].ahead_of_next, None);
        assert!(!r[0].significant);
    }

    #[test]
    fn a_row_ties_with_its_leader_not_through_a_chain() {
        // Each row overlaps the next, but the third is clear of the first.
        let rows = vec![
            row("a", &[100.0, 104.0, 110.0]),
            row("b", &[96.0, 100.0, 103.0]),
            row("c", &[90.0, 94.0, 98.0]),
            row("d", &[85.0, 88.0, 92.0]),
        ];
        let e = &rank(&rows)[0].entries;
        let got: Vec<(u32, u32)> = e.iter().map(|e| (e.tier, e.rank)).collect();
        assert_eq!(got, vec![(1, 1), (1, 1), (2, 3), (2, 3)], "{e:#?}");
    }

    #[test]
    fn clear_differences_are_significant() {
        let rows = vec![row("a", &[50.0, 52.0, 51.0]), row("b", &[20.0, 21.0, 22.0])];
        let r = rank(&rows);
        assert!(r[0].significant);
        assert_eq!(r[0].entries[1].rank, 2);
    }

    #[test]
    fn failed_rows_are_not_ranked() {
        let rows = vec![
            row("a", &[50.0]),
            ResultRow::failed("openssh", "b", None, Direction::Upload, "refused".into()),
        ];
        assert_eq!(rank(&rows)[0].entries.len(), 1);
    }

    #[test]
    fn engines_are_ranked_apart() {
        let mut native = row("a", &[500.0, 510.0, 505.0]);
        native.engine = "native".into();
        let rows = vec![
            row("a", &[50.0, 52.0, 51.0]),
            row("b", &[20.0, 21.0, 22.0]),
            native,
        ];
        let r = rank(&rows);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].engine.as_str(), r[0].entries.len()), ("openssh", 2));
        assert_eq!((r[1].engine.as_str(), r[1].entries.len()), ("native", 1));
    }
}
