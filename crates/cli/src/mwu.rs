//! The Mann-Whitney U test: is one sample's distribution shifted from the other's?
//!
//! Two-sided, with the normal approximation, tie correction and continuity correction (as
//! `scipy.stats.mannwhitneyu(method="asymptotic")`). It needs no assumption about the shape
//! of the durations, which are rarely normal.

/// The two-sided p-value for samples `a` and `b`, both sorted ascending; `None` when either
/// is empty or every value is equal.
pub fn p_value(a: &[i64], b: &[i64]) -> Option<f64> {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    // Merge the sorted samples, giving tied values their average rank.
    let (mut i, mut j) = (0, 0);
    let mut rank_sum_a = 0.0;
    let mut ties = 0.0;
    let mut next_rank = 1.0;
    while i < a.len() || j < b.len() {
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => unreachable!(),
        };
        let (i0, j0) = (i, j);
        while a.get(i) == Some(&v) {
            i += 1;
        }
        while b.get(j) == Some(&v) {
            j += 1;
        }
        let (in_a, t) = ((i - i0) as f64, (i - i0 + j - j0) as f64);
        let avg = next_rank + (t - 1.0) / 2.0;
        rank_sum_a += in_a * avg;
        ties += t * t * t - t;
        next_rank += t;
    }
    let n = n1 + n2;
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return None;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// The complementary error function (Numerical Recipes' Chebyshev fit; relative error
/// below 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from scipy 1.17.1:
    /// `scipy.stats.mannwhitneyu(x, y, method="asymptotic").pvalue`.
    #[test]
    fn p_values_match_the_reference() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let p = p_value(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10]).unwrap();
        assert!(close(p, 0.012_185_780), "{p}");
        let p = p_value(&[1, 2, 2, 3, 5, 8], &[2, 3, 4, 4, 9, 10, 11]).unwrap();
        assert!(close(p, 0.149_727_98), "{p}");
        // Identical samples: no evidence of a shift.
        assert_eq!(p_value(&[1, 2, 3], &[1, 2, 3]), Some(1.0));
        assert_eq!(p_value(&[4, 4], &[4, 4, 4]), None);
        assert_eq!(p_value(&[], &[1]), None);
    }

    #[test]
    fn a_clear_shift_in_many_samples_is_significant_and_noise_is_not() {
        // A deterministic ±2% jitter around 1000, and the same shifted up by 10%.
        let jitter = |i: i64| 1000 + (i * 37 % 41) - 20;
        let mut a: Vec<i64> = (0..200).map(jitter).collect();
        let mut b: Vec<i64> = (0..200).map(|i| jitter(i + 7)).collect();
        let mut c: Vec<i64> = (0..200).map(|i| jitter(i) * 11 / 10).collect();
        a.sort_unstable();
        b.sort_unstable();
        c.sort_unstable();
        assert!(p_value(&a, &b).unwrap() > 0.05);
        assert!(p_value(&a, &c).unwrap() < 1e-6);
    }
}
