//! How finely a query looks, and the grid of zoom steps the stored levels sit on.

/// How finely to look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detail {
    /// Nanoseconds per pixel.
    pub ns_per_px: f64,
    /// Spans at least this many pixels wide are returned as themselves (default 2).
    pub min_px: f64,
    /// Gaps at least this many pixels wide stay visible between boxes (default 1).
    pub gap_px: f64,
    /// Round the resolution down to the grid of stored levels, `√2` apart (default on): the
    /// answer is then at least as detailed as asked (up to `√2` finer), the same for every
    /// resolution in one step of the grid, and with the default `min_px` and `gap_px` it is
    /// a stored level's records as they are, copied rather than merged.
    pub snap: bool,
}

impl Detail {
    /// `ns_per_px` nanoseconds per pixel, with the default thresholds.
    pub fn new(ns_per_px: f64) -> Detail {
        Detail {
            ns_per_px,
            min_px: 2.0,
            gap_px: 1.0,
            snap: true,
        }
    }

    /// The resolution the thresholds come from: `ns_per_px`, rounded down to the nearest
    /// step of the grid when snapping and at least 1.
    pub fn resolution(&self) -> f64 {
        match level_of(self.ns_per_px as i64) {
            Some(k) if self.snap => tau(k) as f64,
            _ => self.ns_per_px,
        }
    }

    /// The narrowest duration returned as a span, in ns (at least 1).
    pub fn min_dur(&self) -> i64 {
        self.thresholds().0
    }

    /// The smallest gap left visible between boxes, in ns (at least 1).
    pub fn min_gap(&self) -> i64 {
        self.thresholds().1
    }

    /// [`min_dur`](Detail::min_dur) and [`min_gap`](Detail::min_gap), from one rounding of
    /// the resolution.
    pub fn thresholds(&self) -> (i64, i64) {
        let r = self.resolution();
        let ns = |px: f64| ((r * px).ceil() as i64).max(1);
        (ns(self.min_px), ns(self.gap_px))
    }
}

/// Number of levels: two per power of two of nanoseconds, up to 2^63.
pub(crate) const LEVELS: usize = 126;

/// The threshold of level `k` (below [`LEVELS`]): 1, 2, 2, 3, 4, 6, 8, 12, 16, 23, ... ns,
/// two steps per power of two.
#[inline]
pub(crate) fn tau(k: usize) -> i64 {
    TAUS[k]
}

/// [`tau`] of every level, computed at compile time (a query needs it for every lane).
const TAUS: [i64; LEVELS] = {
    let mut t = [0; LEVELS];
    let mut k = 0;
    while k < LEVELS {
        let m = (k / 2) as u32;
        t[k] = if k % 2 == 0 {
            1i64 << m
        } else {
            // ceil(2^m * sqrt 2), the smallest s with s^2 >= 2^(2m+1).
            let x = 1u128 << (2 * m + 1);
            let r = x.isqrt();
            (if r * r < x { r + 1 } else { r }) as i64
        };
        k += 1;
    }
    t
};

/// The highest level whose threshold is at most `s`, if any (`s` at least 1).
#[inline]
pub(crate) fn level_of(s: i64) -> Option<usize> {
    if s < 1 {
        return None;
    }
    let m = (63 - s.leading_zeros()) as usize;
    // s² ≥ 2^(2m+1) exactly when s ≥ τ(2m + 1), the smallest such s: a comparison, where
    // the square is a 128-bit multiply (a call in WebAssembly) on a build's every span.
    Some(2 * m + (s >= TAUS[2 * m + 1]) as usize)
}

/// Counts a boundary whose gap is `gap` and whose longer neighbour lasts `longer` in a
/// lane's histogram: how many boundaries have each strength level ([`LEVELS`] counts). The
/// number of items at level `k` is one plus the boundaries at levels `k` and up. Counted as
/// the pyramid is built
/// ([`Pyramid::build_counting`](crate::pyramid::Pyramid::build_counting)): one pass over
/// the lane for both.
#[inline(always)]
pub(crate) fn count_boundary(h: &mut [u32], gap: i64, longer: i64) {
    if let Some(l) = level_of(gap.max(longer / 2)) {
        if let Some(c) = h.get_mut(l) {
            *c += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_levels_agree() {
        // Every level from 2 up has a distinct threshold, and level_of inverts tau.
        for k in 2..LEVELS {
            assert!(k == 2 || tau(k) > tau(k - 1), "level {k}");
            assert_eq!(level_of(tau(k)), Some(k), "level {k}");
            assert_eq!(
                level_of(tau(k) - 1),
                Some(k - 1 - (k == 2) as usize),
                "level {k}"
            );
        }
        assert_eq!(level_of(0), None);
        assert_eq!(level_of(i64::MAX), Some(LEVELS - 1));
        assert_eq!(
            (0..8).map(tau).collect::<Vec<_>>(),
            [1, 2, 2, 3, 4, 6, 8, 12]
        );
    }

    #[test]
    fn level_of_is_the_square_comparison() {
        // The definition: the level's upper half starts where s² reaches 2^(2m+1).
        let by_square = |s: i64| {
            let m = 63 - s.leading_zeros();
            let upper = (s as u128) * (s as u128) >= 1u128 << (2 * m + 1);
            2 * m as usize + upper as usize
        };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values: Vec<i64> = (0..20_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 1) >> (i % 63)) as i64
            })
            .collect();
        values.extend((0..LEVELS).flat_map(|k| [tau(k) - 1, tau(k), tau(k) + 1]));
        values.extend([1, 2, 3, i64::MAX, i64::MAX - 1]);
        for s in values.into_iter().filter(|&s| s >= 1) {
            assert_eq!(level_of(s), Some(by_square(s)), "{s}");
        }
    }

    #[test]
    fn thresholds_follow_the_pixel_widths() {
        // Spans of `min_px` pixels or more stand alone; gaps of `gap_px` pixels or more stay.
        let mut d = Detail::new(1000.0);
        d.snap = false;
        assert_eq!((d.min_dur(), d.min_gap()), (2000, 1000));
        (d.min_px, d.gap_px) = (3.0, 0.5);
        assert_eq!(d.thresholds(), (3000, 500));
        // Snapped, 1000 ns per pixel rounds down to the level threshold ceil(512 √2) = 725.
        let d = Detail::new(1000.0);
        assert_eq!(d.resolution(), 725.0);
        assert_eq!(d.thresholds(), (1450, 725));
        // Below a nanosecond per pixel, both stay at least 1.
        assert_eq!(Detail::new(0.1).thresholds(), (1, 1));
    }
}
