//! Summary statistics for a handful of samples. Medians, not means: one disturbed run on a
//! shared machine should not move the headline figure.

/// Median; for an even count, the mean of the middle two.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The lower quartile (nearest rank): a start cost estimated from pairs of samples, where a
/// disturbance can only inflate the shorter sample's time, is best read low.
pub fn lower_quartile(xs: &[f64]) -> Option<f64> {
    nearest_rank(xs, |n| (n - 1) / 4)
}

/// The upper decile (nearest rank): how far apart samples of one length come in all but the
/// worst tenth of pairs.
pub fn upper_decile(xs: &[f64]) -> Option<f64> {
    nearest_rank(xs, |n| (n * 9).div_ceil(10) - 1)
}

/// The value at index `rank(n)` of the `n` values sorted, None for none.
fn nearest_rank(xs: &[f64], rank: impl Fn(usize) -> usize) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Some(v[rank(v.len())])
}

/// A row's figure from samples taken in visits (`visits[i]` is sample `i`'s): the median over
/// visits of each visit's median (`visit_medians`), so that samples taken back to back in one
/// visit count once. Two back-to-back samples share one state of the machine, and a median
/// over samples then reads whichever state that visit met. Without one visit per sample (none
/// given, or a count that does not match), the median of the samples.
pub fn median_of_visits(xs: &[f64], visits: &[u32]) -> Option<f64> {
    if visits.len() != xs.len() {
        return median(xs);
    }
    median(&visit_medians(xs, visits))
}

/// Each visit's median, in the order of the visits' numbers; none when `visits` does not name
/// one visit per sample.
pub fn visit_medians(xs: &[f64], visits: &[u32]) -> Vec<f64> {
    if visits.len() != xs.len() {
        return Vec::new();
    }
    let mut ids: Vec<u32> = visits.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids.iter()
        .filter_map(|&v| {
            let of: Vec<f64> = xs
                .iter()
                .zip(visits)
                .filter(|(_, &w)| w == v)
                .map(|(&x, _)| x)
                .collect();
            median(&of)
        })
        .collect()
}

/// How many distinct visits `visits` names.
pub fn visit_count(visits: &[u32]) -> usize {
    let mut ids: Vec<u32> = visits.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

pub fn min(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().min_by(f64::total_cmp)
}

pub fn max(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().max_by(f64::total_cmp)
}

/// The samples' (min, max); None for none.
pub fn range(xs: &[f64]) -> Option<(f64, f64)> {
    Some((min(xs)?, max(xs)?))
}

/// Relative spread (max − min) / median, used to say when a ranking is not significant.
pub fn relative_spread(xs: &[f64]) -> Option<f64> {
    let m = median(xs)?;
    if m <= 0.0 {
        return None;
    }
    Some((max(xs)? - min(xs)?) / m)
}

/// Two results are distinguishable only when their min–max ranges do not overlap.
pub fn ranges_overlap(a: &[f64], b: &[f64]) -> bool {
    match (min(a), max(a), min(b), max(b)) {
        (Some(amin), Some(amax), Some(bmin), Some(bmax)) => amin <= bmax && bmin <= amax,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(lower_quartile(&[0.5, 0.0, 0.1, 0.3, 0.2]), Some(0.1));
        assert_eq!(lower_quartile(&[0.4]), Some(0.4));
        assert_eq!(lower_quartile(&[]), None);
        let tenths: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(upper_decile(&tenths), Some(9.0));
        assert_eq!(upper_decile(&[0.2, 0.1]), Some(0.2));
        assert_eq!(upper_decile(&[0.3]), Some(0.3));
        assert_eq!(upper_decile(&[]), None);
        assert_eq!(min(&[2.0, 1.0]), Some(1.0));
        assert_eq!(max(&[2.0, 1.0]), Some(2.0));
        assert_eq!(range(&[2.0, 3.0, 1.0]), Some((1.0, 3.0)));
        assert_eq!(range(&[]), None);
        assert!((relative_spread(&[90.0, 100.0, 110.0]).unwrap() - 0.2).abs() < 1e-9);
        assert!(ranges_overlap(&[1.0, 3.0], &[2.0, 4.0]));
        assert_eq!(visit_count(&[0, 0, 2, 5, 5]), 3);
        assert!(!ranges_overlap(&[1.0, 2.0], &[3.0, 4.0]));
    }

    /// Two back-to-back samples of one low visit count once: the row reads what its other
    /// visits read, not the low state its first visit met twice.
    #[test]
    fn samples_of_one_visit_count_once() {
        let rates = [494.0, 541.0, 650.0, 652.0];
        assert_eq!(median(&rates), Some(595.5));
        assert_eq!(median_of_visits(&rates, &[0, 0, 1, 2]), Some(650.0));
        // One visit: the median of its samples.
        assert_eq!(median_of_visits(&[1.0, 3.0], &[0, 0]), Some(2.0));
        // No visits given, or a count that does not match: the plain median.
        assert_eq!(median_of_visits(&rates, &[]), Some(595.5));
        assert_eq!(median_of_visits(&rates, &[0, 1]), Some(595.5));
        assert_eq!(median_of_visits(&[], &[]), None);
        assert_eq!(visit_medians(&rates, &[2, 0, 0, 1]), [595.5, 652.0, 494.0]);
        assert!(visit_medians(&rates, &[0]).is_empty());
    }
}
