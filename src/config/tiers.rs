//! The order of the recommended ciphers: tiers from the measurement, a fixed preference inside
//! a tier. Two runs on an idle machine differ by noise; ordering by medians alone turned that
//! noise into a different `Ciphers` line each time. Here a cipher moves ahead of another only
//! when their samples do not overlap (a tier is led by its fastest cipher and holds every slower
//! one that overlaps the leader, as `bench::ranking` does for the report), and inside a tier the
//! order is the same every time: the better grade first, then AEAD before CTR before CBC (an
//! AEAD cipher needs no separate MAC), then the catalog's order, which is OpenSSH's default
//! preference. Where the link binds every row (verdict `network` or `path`), the cipher does not
//! change the throughput and every cipher is one tier.

use crate::bench::ranking::tiers;
use ciphers::{CipherKind, Grade};
use std::cmp::Ordering;

/// A recommended cipher as the order sees it: its figure and the samples behind it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub name: &'a str,
    pub grade: Grade,
    /// The median the cipher is sorted by before the tiers are drawn.
    pub score: f64,
    pub samples: &'a [f64],
}

/// The candidates in their order, as (index into `candidates`, tier), fastest tier first. With
/// `link_bound` every cipher shares tier 1.
pub fn order(candidates: &[Candidate], link_bound: bool) -> Vec<(usize, u32)> {
    let mut by_score: Vec<usize> = (0..candidates.len()).collect();
    by_score.sort_by(|&a, &b| candidates[b].score.total_cmp(&candidates[a].score));
    let placed: Vec<u32> = if link_bound {
        vec![1; by_score.len()]
    } else {
        let samples: Vec<&[f64]> = by_score.iter().map(|&i| candidates[i].samples).collect();
        tiers(&samples).into_iter().map(|p| p.tier).collect()
    };
    let mut out: Vec<(usize, u32)> = by_score.into_iter().zip(placed).collect();
    out.sort_by(|&(a, ta), &(b, tb)| {
        ta.cmp(&tb)
            .then_with(|| preference(&candidates[a], &candidates[b]))
    });
    out
}

/// The fixed order inside a tier (see the module doc).
pub fn preference(a: &Candidate, b: &Candidate) -> Ordering {
    b.grade
        .cmp(&a.grade)
        .then_with(|| kind_rank(a.name).cmp(&kind_rank(b.name)))
        .then_with(|| catalog_index(a.name).cmp(&catalog_index(b.name)))
}

fn kind_rank(name: &str) -> u8 {
    match ciphers::cipher(name).map(|c| c.kind) {
        Some(CipherKind::Aead) => 0,
        Some(CipherKind::Ctr) => 1,
        Some(CipherKind::Cbc) => 2,
        _ => 3,
    }
}

fn catalog_index(name: &str) -> usize {
    ciphers::CIPHERS
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(usize::MAX)
}

/// The names that share a tier with another, per tier, from (name, tier) in line order: where
/// the line's order is preference, not measurement.
pub fn ties<'a>(line: impl IntoIterator<Item = (&'a str, u32)>) -> Vec<Vec<&'a str>> {
    let mut out: Vec<(u32, Vec<&str>)> = Vec::new();
    for (name, tier) in line {
        match out.last_mut() {
            Some((t, names)) if *t == tier => names.push(name),
            _ => out.push((tier, vec![name])),
        }
    }
    out.into_iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|(_, names)| names)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, samples) in any order, with their median as the score.
    fn line(rows: &[(&'static str, &[f64])]) -> Vec<(&'static str, u32)> {
        let mut medians = Vec::new();
        for (_, s) in rows {
            let mut v = s.to_vec();
            v.sort_by(f64::total_cmp);
            medians.push(v[v.len() / 2]);
        }
        let cands: Vec<Candidate> = rows
            .iter()
            .zip(&medians)
            .map(|((name, samples), &score)| Candidate {
                name,
                grade: ciphers::cipher(name).map_or(Grade::Ok, |c| c.grade),
                score,
                samples,
            })
            .collect();
        order(&cands, false)
            .into_iter()
            .map(|(i, t)| (rows[i].0, t))
            .collect()
    }

    fn names(line: &[(&'static str, u32)]) -> Vec<&'static str> {
        line.iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn noise_inside_a_tier_never_reorders_the_line() {
        // The same three overlapping ciphers, their medians in two different orders.
        let one = line(&[
            ("aes128-ctr", &[100.0, 103.0, 106.0]),
            ("aes128-gcm@openssh.com", &[98.0, 101.0, 104.0]),
            ("chacha20-poly1305@openssh.com", &[97.0, 99.0, 102.0]),
        ]);
        let two = line(&[
            ("chacha20-poly1305@openssh.com", &[99.0, 104.0, 106.0]),
            ("aes128-gcm@openssh.com", &[98.0, 102.0, 105.0]),
            ("aes128-ctr", &[96.0, 100.0, 103.0]),
        ]);
        assert_eq!(one, two);
        assert_eq!(
            names(&one),
            [
                "chacha20-poly1305@openssh.com",
                "aes128-gcm@openssh.com",
                "aes128-ctr"
            ]
        );
        assert_eq!(ties(one).len(), 1);
    }

    #[test]
    fn a_clear_difference_still_leads() {
        let v = line(&[
            ("chacha20-poly1305@openssh.com", &[50.0, 51.0, 52.0]),
            ("aes128-ctr", &[200.0, 205.0, 210.0]),
        ]);
        assert_eq!(v, [("aes128-ctr", 1), ("chacha20-poly1305@openssh.com", 2)]);
        assert!(ties(v).is_empty());
    }

    #[test]
    fn a_bound_link_orders_by_preference_alone() {
        let fast = [200.0, 205.0, 210.0];
        let slow = [5.6, 5.7, 5.8];
        let cands = [
            Candidate {
                name: "aes128-ctr",
                grade: Grade::Ok,
                score: 205.0,
                samples: &fast,
            },
            Candidate {
                name: "aes128-gcm@openssh.com",
                grade: Grade::Ok,
                score: 5.7,
                samples: &slow,
            },
        ];
        assert_eq!(order(&cands, true), [(1, 1), (0, 1)]);
    }
}
