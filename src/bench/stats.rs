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

pub fn min(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().min_by(f64::total_cmp)
}

pub fn max(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().max_by(f64::total_cmp)
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
        assert!((relative_spread(&[90.0, 100.0, 110.0]).unwrap() - 0.2).abs() < 1e-9);
        assert!(ranges_overlap(&[1.0, 3.0], &[2.0, 4.0]));
        assert!(!ranges_overlap(&[1.0, 2.0], &[3.0, 4.0]));
    }
}
