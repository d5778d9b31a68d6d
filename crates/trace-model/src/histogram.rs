//! A histogram of durations on a logarithmic axis (Tracy's Find Zone): span durations
//! run over many orders of magnitude, so equal ratios get equal widths.
//!
//! # Example
//!
//! ```
//! use trace_model::DurationHistogram;
//!
//! // Ten spans of 1 µs and one of 1 ms, on 32 buckets: one bucket at each end.
//! let mut d = vec![1_000i64; 10];
//! d.push(1_000_000);
//! let h = DurationHistogram::new(&d, 32);
//! assert_eq!((h.counts[0], h.counts[31]), (10, 1));
//! assert_eq!(h.bounds(0).0, 1_000);
//! ```

/// Counts of durations per bucket of a log axis from the shortest to the longest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DurationHistogram {
    /// How many durations fall in each bucket.
    pub counts: Vec<u64>,
    /// The natural logarithms of the axis' ends (durations under 1 ns count as 1 ns);
    /// `None` without durations.
    ln: Option<(f64, f64)>,
}

impl DurationHistogram {
    /// The histogram of `sorted` (ascending) on `buckets` buckets (at least one).
    pub fn new(sorted: &[i64], buckets: usize) -> DurationHistogram {
        let ln = |d: i64| (d.max(1) as f64).ln();
        let mut h = DurationHistogram {
            counts: vec![0; buckets.max(1)],
            ln: sorted
                .first()
                .zip(sorted.last())
                .map(|(&lo, &hi)| (ln(lo), ln(hi))),
        };
        let n = h.counts.len();
        for &d in sorted {
            let i = ((h.axis(d) * n as f32) as usize).min(n - 1);
            h.counts[i] += 1;
        }
        h
    }

    /// Where `d` falls on the axis, 0..=1 (0.5 when all durations are equal).
    pub fn axis(&self, d: i64) -> f32 {
        let Some((lo, hi)) = self.ln else {
            return 0.0;
        };
        if hi <= lo {
            return 0.5;
        }
        let x = ((d.max(1) as f64).ln() - lo) / (hi - lo);
        x.clamp(0.0, 1.0) as f32
    }

    /// The durations bucket `i` covers, rounded to whole nanoseconds.
    pub fn bounds(&self, i: usize) -> (i64, i64) {
        let n = self.counts.len() as f64;
        let (lo, hi) = self.ln.unwrap_or((0.0, 0.0));
        let at = |k: usize| {
            let x = lo + (hi - lo) * k as f64 / n;
            x.exp().round() as i64
        };
        (at(i), at(i + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_logarithmic() {
        let mut d = vec![1_000i64; 10];
        d.push(1_000_000);
        let h = DurationHistogram::new(&d, 32);
        assert_eq!((h.counts[0], h.counts[31]), (10, 1));
        assert_eq!(h.counts.iter().sum::<u64>(), 11);
        // 31.6 µs is half way on a log axis from 1 µs to 1 ms.
        assert!((h.axis(31_623) - 0.5).abs() < 0.01);
        assert_eq!(h.bounds(0).0, 1_000);
        assert_eq!(h.bounds(31).1, 1_000_000);
        // Out of the axis: at its ends.
        assert_eq!((h.axis(1), h.axis(1 << 40)), (0.0, 1.0));
    }

    #[test]
    fn equal_zero_and_no_durations() {
        // All equal: one bucket in the middle holds them.
        let h = DurationHistogram::new(&[7, 7, 7], 4);
        assert_eq!(h.counts, [0, 0, 3, 0]);
        // Zero-length spans count as 1 ns, on the axis' start.
        let h = DurationHistogram::new(&[0, 0, 1_000], 4);
        assert_eq!(h.counts, [2, 0, 0, 1]);
        let h = DurationHistogram::new(&[], 4);
        assert_eq!(h.counts, [0, 0, 0, 0]);
        assert_eq!(h.axis(5), 0.0);
    }
}
