//! Which cipher is faster, and whether the run can tell. A ranking is only worth printing when
//! the samples support it: when the spread of two rows overlaps, the difference between their
//! medians is within the noise of the run and they share a rank.

use super::model::{Direction, RankEntry, Ranking, ResultRow};
use super::stats;

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
        let mut entries: Vec<RankEntry> = Vec::new();
        let mut rank = 1;
        for (i, r) in rows.iter().enumerate() {
            if i > 0 {
                let apart = !stats::ranges_overlap(&rows[i - 1].samples, &r.samples);
                entries[i - 1].ahead_of_next = Some(apart);
                if apart {
                    rank = i as u32 + 1;
                }
            }
            entries.push(RankEntry {
                rank,
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
