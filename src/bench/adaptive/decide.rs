//! When a row's sampling can end.

use super::noise::{disagreement, Noise};
use super::row::Row;
use super::settings::Adaptive;
use crate::bench::model::Direction;
use crate::stats;

/// Visits a row below the leader needs before its figure alone may order it (as many as the
/// thorough mode takes): samples of one visit share one state of the machine and count once.
pub(super) const ORDERED_AFTER: usize = 3;

/// After `ORDERED_AFTER` visits, a row whose median lies within this share of the run's noise
/// of the leader's is tied with it and stops (`decide`).
const TIED_WITHIN: f64 = 0.5;

/// Marks the rows whose sampling can end: below the leader of their engine and direction
/// with agreeing samples (`decided`), in the thorough count of visits and a figure behind
/// the leader's by more than the noise (`ordered`), every row of a group once only its leader
/// is left, and rows that had every sample they are due.
pub(super) fn decide(rows: &mut [Row], a: &Adaptive, noise: &Noise) {
    for r in rows.iter_mut() {
        if !r.done && r.samples.len() as u32 >= a.max_samples {
            r.done = true;
        }
    }
    if !a.race {
        return;
    }
    let threshold = noise.threshold();
    // A row's samples are stable when they disagree by no more than the noise explains in all
    // but its worst tenth (the bound a ramp-up must pass too). Against the median noise half
    // of all rows fail by chance alone: on loopback, 3des-cbc at 1/30 of the leader took a
    // third sample for two that differed by 8%, and 13 of 20 rows in one run did so.
    let stable_within = noise.ramp_threshold();
    for direction in [Direction::Upload, Direction::Download] {
        let group: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].direction == direction && rows[i].error.is_none())
            .filter(|&i| !rows[i].samples.is_empty())
            .collect();
        let Some(&leader) = group.iter().max_by(|&&x, &&y| {
            let m = |i: usize| rows[i].figure().unwrap_or(0.0);
            m(x).total_cmp(&m(y))
        }) else {
            continue;
        };
        let leader_min = stats::min(&rows[leader].rates()).unwrap_or(0.0);
        let leader_median = rows[leader].figure().unwrap_or(0.0);
        for &i in &group {
            if i == leader || rows[i].done {
                continue;
            }
            let rates = rows[i].rates();
            let below = stats::max(&rates).is_some_and(|m| m < leader_min);
            let stable = stats::relative_spread(&rates).is_some_and(|s| s <= stable_within);
            if below && stable {
                rows[i].done = true;
                rows[i].stopped = Some("decided");
                continue;
            }
            // A range that overlaps the leader's never comes apart from it: more samples only
            // widen both. What more samples do is steady the medians, and once a row has the
            // thorough count and its median trails the leader's by more than the noise, its
            // place is clear; the rows within the noise of the leader are the ones worth them.
            let m = rows[i].figure().unwrap_or(0.0);
            let gap = disagreement(m, leader_median);
            let visited = rows[i].visit_count() >= ORDERED_AFTER;
            if visited && gap > threshold {
                rows[i].done = true;
                rows[i].stopped = Some("ordered");
            }
            // A median within half the noise of the leader's after three visits is a tie
            // more samples do not break: on loopback the two GCM ciphers raced to five samples
            // in every run (484–1008 MiB/s within one row) and `--thorough` never told them
            // apart, while their extra rounds cost about 0.7 s each.
            if visited && gap <= threshold * TIED_WITHIN {
                rows[i].done = true;
                rows[i].stopped = Some("tied");
            }
        }
        let others_open = group.iter().any(|&i| i != leader && !rows[i].done);
        if !others_open && !rows[leader].done {
            let tied = group.iter().any(|&i| rows[i].stopped == Some("tied"));
            rows[leader].done = true;
            rows[leader].stopped = Some(if tied { "tied" } else { "decided" });
        }
    }
}
