//! Counter series at pixel resolution: the minimum and maximum over any range of samples,
//! in time logarithmic in the range, so a zoomed-out counter track keeps one-sample spikes
//! at the cost of one pixel column each.

/// Samples per block at each level.
const FANOUT: usize = 16;

/// Minimum and maximum of a counter's values over sample ranges.
#[derive(Clone, Debug, Default)]
pub struct SeriesIndex {
    /// `levels[k][i]`: (min, max) of level-`k-1` blocks `i*16 .. i*16+16` (level 0 being the
    /// values themselves).
    levels: Vec<Vec<(f64, f64)>>,
}

impl SeriesIndex {
    /// Builds the summary of `values` (about 1 byte per value). NaNs are ignored.
    pub fn build(values: &[f64]) -> SeriesIndex {
        fn fold(c: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
            c.fold((f64::INFINITY, f64::NEG_INFINITY), |a, b| {
                (a.0.min(b.0), a.1.max(b.1))
            })
        }
        let mut levels = Vec::new();
        if values.len() <= FANOUT {
            return SeriesIndex { levels };
        }
        let mut level: Vec<(f64, f64)> = values
            .chunks(FANOUT)
            .map(|c| fold(c.iter().map(|&v| (v, v))))
            .collect();
        // Up to the first level a query can scan whole.
        while level.len() > FANOUT {
            let up = level
                .chunks(FANOUT)
                .map(|c| fold(c.iter().copied()))
                .collect();
            levels.push(std::mem::replace(&mut level, up));
        }
        levels.push(level);
        SeriesIndex { levels }
    }

    /// (min, max) of `values[a..b]`, where `values` is what the index was built from;
    /// `None` for an empty range (or one of NaNs only).
    pub fn min_max(&self, values: &[f64], a: usize, b: usize) -> Option<(f64, f64)> {
        let b = b.min(values.len());
        let (mut a, mut b) = (a.min(b), b);
        let mut acc = (f64::INFINITY, f64::NEG_INFINITY);
        let take = |acc: &mut (f64, f64), v: (f64, f64)| {
            *acc = (acc.0.min(v.0), acc.1.max(v.1));
        };
        let mut level = 0;
        loop {
            let get = |i: usize| {
                if level == 0 {
                    (values[i], values[i])
                } else {
                    self.levels[level - 1][i]
                }
            };
            if b - a >= 2 * FANOUT && level < self.levels.len() {
                while a % FANOUT != 0 {
                    take(&mut acc, get(a));
                    a += 1;
                }
                while b % FANOUT != 0 {
                    b -= 1;
                    take(&mut acc, get(b));
                }
                a /= FANOUT;
                b /= FANOUT;
                level += 1;
            } else {
                for i in a..b {
                    take(&mut acc, get(i));
                }
                break;
            }
        }
        (acc.0 <= acc.1).then_some(acc)
    }

    /// Bytes the summary holds on the heap (its capacity, not its length).
    pub fn heap_bytes(&self) -> usize {
        self.levels.iter().map(|l| l.capacity() * 16).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_match_a_scan() {
        // Deterministic values with spikes, over several levels.
        let values: Vec<f64> = (0..5000u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                if i % 997 == 3 {
                    1e9
                } else {
                    (h % 1000) as f64 - 500.0
                }
            })
            .collect();
        let ix = SeriesIndex::build(&values);
        assert!(ix.levels.len() >= 2);
        for (a, b) in [
            (0, 5000),
            (3, 4),
            (5, 400),
            (17, 4099),
            (255, 257),
            (1000, 1000),
        ] {
            let scan = values[a..b]
                .iter()
                .fold(None, |acc: Option<(f64, f64)>, &v| {
                    Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                });
            assert_eq!(ix.min_max(&values, a, b), scan, "range {a}..{b}");
        }
    }
}
