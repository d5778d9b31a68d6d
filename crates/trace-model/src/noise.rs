//! Comparing two runs: is a change real or noise? The one rule `spall-cli diff` gates CI on
//! and the viewer's compare mode colours by.
//!
//! A change counts when it is large against the base value ([`NoiseRules::threshold_pct`]),
//! large in time over the whole trace ([`NoiseRules::min_delta`]), and, with
//! [`MIN_SAMPLES`] or more occurrences on each side, when the per-occurrence values are
//! shifted by the Mann-Whitney U test ([`mann_whitney_p`] below [`NoiseRules::alpha`]).
//! The test is two-sided, with the normal approximation, tie correction and continuity
//! correction (as `scipy.stats.mannwhitneyu(method="asymptotic")`); it needs no
//! assumption about the shape of the durations, which are rarely normal.
//!
//! # Example
//!
//! ```
//! use trace_model::{Measure, NoiseRules, Observation, Verdict};
//!
//! let rules = NoiseRules { threshold_pct: 5.0, min_delta: 100, alpha: 0.05 };
//! // Ten calls each, every one 10% slower: a real regression.
//! let base: Vec<i64> = (0..10).map(|i| 1_000 + i).collect();
//! let new: Vec<i64> = base.iter().map(|v| v * 11 / 10).collect();
//! fn side(v: &[i64]) -> Observation<'_> {
//!     Observation { value: v.iter().sum(), count: v.len() as u64, samples: v }
//! }
//! let j = rules.judge(Measure::Sum, side(&base), side(&new));
//! assert_eq!(j.verdict, Verdict::Slower);
//! assert!(j.p_value.unwrap() < 0.001);
//! ```

/// Fewer occurrences than this on either side: no test for noise, the numbers decide.
pub const MIN_SAMPLES: usize = 5;

/// What turns two numbers into a verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseRules {
    /// A change counts from this many percent of the base value.
    pub threshold_pct: f64,
    /// ...and from this absolute change over the trace, in ns (for a per-call value, its
    /// change times its calls).
    pub min_delta: i64,
    /// With [`MIN_SAMPLES`] or more occurrences on each side, a change also needs a
    /// Mann-Whitney p-value below this.
    pub alpha: f64,
}

impl NoiseRules {
    /// `spall-cli diff`'s defaults against `base`: 5%, 0.1% of its duration, p < 0.05.
    pub fn for_base(base: &crate::Trace) -> NoiseRules {
        NoiseRules::new((base.duration_ns() / 1000).max(1))
    }

    /// `spall-cli diff`'s defaults (5%, p < 0.05) with this minimum change, in ns.
    pub fn new(min_delta: i64) -> NoiseRules {
        NoiseRules {
            threshold_pct: 5.0,
            min_delta,
            alpha: 0.05,
        }
    }
}

/// What kind of number is compared; it decides the absolute test and when the
/// per-occurrence test applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// A sum over occurrences (total or self time). When the count changed past the
    /// threshold, the change is real without a shift in the per-occurrence values.
    Sum,
    /// A per-occurrence value (mean, a percentile): its change counts once per call.
    PerCall,
    /// The number of occurrences: no absolute test, no per-occurrence test.
    Count,
}

/// One trace's side of a comparison: the compared number and what it was observed over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation<'a> {
    /// The compared number.
    pub value: i64,
    /// Occurrences behind it.
    pub count: u64,
    /// Every occurrence's value, sorted ascending (empty: no test).
    pub samples: &'a [i64],
}

/// Which way a change went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Larger in NEW, past the rules.
    Slower,
    /// Smaller in NEW, past the rules.
    Faster,
    /// Within what counts as noise.
    Unchanged,
}

/// A verdict and the numbers behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// NEW's value less BASE's.
    pub delta: i64,
    /// The Mann-Whitney p-value of the samples; `None` when not tested.
    pub p_value: Option<f64>,
}

impl NoiseRules {
    /// The verdict on `new` against `base`.
    pub fn judge(&self, m: Measure, base: Observation<'_>, new: Observation<'_>) -> Judgement {
        let (bv, nv) = (base.value, new.value);
        let delta = nv - bv;
        let rel = |d: i64, base: i64| {
            if base == 0 {
                if d == 0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                d.unsigned_abs() as f64 / base.unsigned_abs() as f64
            }
        };
        // The absolute test is on time over the whole trace: a per-call value's change
        // counts once per call.
        let impact = match m {
            Measure::Count => None,
            Measure::Sum => Some(delta.unsigned_abs()),
            Measure::PerCall => Some(
                delta
                    .unsigned_abs()
                    .saturating_mul(base.count.max(new.count)),
            ),
        };
        let big = delta != 0
            && rel(delta, bv) * 100.0 >= self.threshold_pct
            && impact.is_none_or(|d| d >= self.min_delta.unsigned_abs());
        let p_value = (m != Measure::Count
            && base.samples.len() >= MIN_SAMPLES
            && new.samples.len() >= MIN_SAMPLES)
            .then(|| mann_whitney_p(base.samples, new.samples))
            .flatten();
        // A sum can change because the count did; then no shift in the per-occurrence
        // values is needed for the change to be real.
        let count_delta = new.count as i64 - base.count as i64;
        let count_changed = rel(count_delta, base.count as i64) * 100.0 >= self.threshold_pct;
        let gated = match m {
            Measure::Count => false,
            Measure::Sum => !count_changed,
            Measure::PerCall => true,
        };
        let real = !gated || p_value.is_none_or(|p| p < self.alpha);
        let verdict = match (big && real, delta > 0) {
            (true, true) => Verdict::Slower,
            (true, false) => Verdict::Faster,
            (false, _) => Verdict::Unchanged,
        };
        Judgement {
            verdict,
            delta,
            p_value,
        }
    }
}

impl Judgement {
    /// Whether the per-occurrence test could still overturn this verdict, reached on the
    /// numbers alone: it counts a change and each side has [`MIN_SAMPLES`] occurrences or
    /// more (`base_count`, `new_count`). Callers that gather the per-occurrence values only
    /// for such changes (the viewer's compare mode) judge again with them.
    pub fn wants_test(&self, base_count: u64, new_count: u64) -> bool {
        self.verdict != Verdict::Unchanged
            && base_count as usize >= MIN_SAMPLES
            && new_count as usize >= MIN_SAMPLES
    }
}

/// The two-sided p-value for samples `a` and `b`, both sorted ascending; `None` when either
/// is empty or every value is equal.
pub fn mann_whitney_p(a: &[i64], b: &[i64]) -> Option<f64> {
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
        let p = mann_whitney_p(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10]).unwrap();
        assert!(close(p, 0.012_185_780), "{p}");
        let p = mann_whitney_p(&[1, 2, 2, 3, 5, 8], &[2, 3, 4, 4, 9, 10, 11]).unwrap();
        assert!(close(p, 0.149_727_98), "{p}");
        // Identical samples: no evidence of a shift.
        assert_eq!(mann_whitney_p(&[1, 2, 3], &[1, 2, 3]), Some(1.0));
        assert_eq!(mann_whitney_p(&[4, 4], &[4, 4, 4]), None);
        assert_eq!(mann_whitney_p(&[], &[1]), None);
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
        assert!(mann_whitney_p(&a, &b).unwrap() > 0.05);
        assert!(mann_whitney_p(&a, &c).unwrap() < 1e-6);
    }

    #[test]
    fn a_sum_whose_count_changed_needs_no_shift_but_a_noisy_mean_does() {
        let rules = NoiseRules {
            threshold_pct: 5.0,
            min_delta: 1,
            alpha: 0.05,
        };
        // The same per-call values, twice as many calls: real without a shift.
        let once: Vec<i64> = (0..10).map(|i| 100 + i).collect();
        let mut twice = [once.clone(), once.clone()].concat();
        twice.sort_unstable();
        fn side(v: &[i64]) -> Observation<'_> {
            Observation {
                value: v.iter().sum(),
                count: v.len() as u64,
                samples: v,
            }
        }
        let j = rules.judge(Measure::Sum, side(&once), side(&twice));
        assert_eq!(j.verdict, Verdict::Slower);
        // The mean up 10% from one outlier among wide noise: not a shift.
        let noisy: Vec<i64> = (0..20).map(|i| 100 + (i * 53 % 97)).collect();
        let mut louder = noisy.clone();
        louder[0] += 300;
        let (mut a, mut b) = (noisy, louder);
        a.sort_unstable();
        b.sort_unstable();
        fn mean(v: &[i64]) -> Observation<'_> {
            Observation {
                value: v.iter().sum::<i64>() / v.len() as i64,
                count: v.len() as u64,
                samples: v,
            }
        }
        let j = rules.judge(Measure::PerCall, mean(&a), mean(&b));
        assert!(j.delta * 100 >= 5 * mean(&a).value, "{j:?}");
        assert_eq!(j.verdict, Verdict::Unchanged, "{j:?}");
        assert!(j.p_value.unwrap() > 0.5);
    }
}
