//! The order of the recommended ciphers: tiers from the measurement, a fixed preference inside
//! a tier. Two runs on an idle machine differ by noise; ordering by medians alone turned that
//! noise into a different `Ciphers` line each time. Here a cipher moves ahead of another only
//! when their samples do not overlap (a tier is led by its fastest cipher and holds every slower
//! one that overlaps the leader, as `bench::ranking` does for the report), and inside a tier the
//! order is the same every time: the better grade first, then AEAD before CTR before CBC (an
//! AEAD cipher needs no separate MAC), then the catalog's order, which is OpenSSH's default
//! preference. Where the link binds every row (verdict `network` or `path`), the cipher does not
//! change the throughput and every cipher is one tier.

use super::policy::Chosen;
use crate::bench::ranking::tiers;
use ciphers::CipherKind;
use std::cmp::Ordering;

/// Sorts `chosen` (each with the samples its score came from) into tiers, fastest tier first,
/// and sets each cipher's `tier`. With `link_bound` every cipher shares tier 1.
pub fn order(chosen: &mut [Chosen], link_bound: bool) {
    chosen.sort_by(|a, b| b.score.total_cmp(&a.score));
    let placed: Vec<u32> = if link_bound {
        vec![1; chosen.len()]
    } else {
        let samples: Vec<&[f64]> = chosen.iter().map(|c| c.samples.as_slice()).collect();
        tiers(&samples).into_iter().map(|p| p.tier).collect()
    };
    for (c, t) in chosen.iter_mut().zip(placed) {
        c.tier = t;
    }
    chosen.sort_by(|a, b| a.tier.cmp(&b.tier).then_with(|| preference(a, b)));
}

/// The fixed order inside a tier (see the module doc).
pub fn preference(a: &Chosen, b: &Chosen) -> Ordering {
    b.grade
        .cmp(&a.grade)
        .then_with(|| kind_rank(&a.name).cmp(&kind_rank(&b.name)))
        .then_with(|| catalog_index(&a.name).cmp(&catalog_index(&b.name)))
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

/// The ciphers that share a tier with another, per tier, for the header: where the line's order
/// is preference, not measurement.
pub fn ties(chosen: &[Chosen]) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for (i, c) in chosen.iter().enumerate() {
        if i > 0 && chosen[i - 1].tier == c.tier {
            out.last_mut().expect("a tier started").push(&c.name);
        } else {
            out.push(vec![&c.name]);
        }
    }
    out.retain(|t| t.len() > 1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ciphers::Grade;

    fn c(name: &str, samples: &[f64]) -> Chosen {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        Chosen {
            name: name.into(),
            grade: ciphers::cipher(name).map_or(Grade::Ok, |c| c.grade),
            up: None,
            down: None,
            score: s[s.len() / 2],
            samples: samples.to_vec(),
            tier: 0,
            notes: Vec::new(),
        }
    }

    fn names(chosen: &[Chosen]) -> Vec<&str> {
        chosen.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn noise_inside_a_tier_never_reorders_the_line() {
        // The same three overlapping ciphers, their medians in two different orders.
        let mut one = vec![
            c("aes128-ctr", &[100.0, 103.0, 106.0]),
            c("aes128-gcm@openssh.com", &[98.0, 101.0, 104.0]),
            c("chacha20-poly1305@openssh.com", &[97.0, 99.0, 102.0]),
        ];
        let mut two = vec![
            c("chacha20-poly1305@openssh.com", &[99.0, 104.0, 106.0]),
            c("aes128-gcm@openssh.com", &[98.0, 102.0, 105.0]),
            c("aes128-ctr", &[96.0, 100.0, 103.0]),
        ];
        order(&mut one, false);
        order(&mut two, false);
        assert_eq!(names(&one), names(&two));
        assert_eq!(
            names(&one),
            [
                "chacha20-poly1305@openssh.com",
                "aes128-gcm@openssh.com",
                "aes128-ctr"
            ]
        );
        assert_eq!(ties(&one).len(), 1);
    }

    #[test]
    fn a_clear_difference_still_leads() {
        let mut v = vec![
            c("chacha20-poly1305@openssh.com", &[50.0, 51.0, 52.0]),
            c("aes128-ctr", &[200.0, 205.0, 210.0]),
        ];
        order(&mut v, false);
        assert_eq!(names(&v), ["aes128-ctr", "chacha20-poly1305@openssh.com"]);
        assert_eq!((v[0].tier, v[1].tier), (1, 2));
        assert!(ties(&v).is_empty());
    }

    #[test]
    fn a_bound_link_orders_by_preference_alone() {
        let mut v = vec![
            c("aes128-ctr", &[200.0, 205.0, 210.0]),
            c("aes128-gcm@openssh.com", &[5.6, 5.7, 5.8]),
        ];
        order(&mut v, true);
        assert_eq!(names(&v), ["aes128-gcm@openssh.com", "aes128-ctr"]);
    }
}
