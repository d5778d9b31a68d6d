//! A stable least-significant-digit radix sort, for the load's large sorts by time.
//!
//! A comparison sort of a few hundred thousand time stamps costs 18 or more comparisons an
//! item, each through a key closure; a radix sort reads each item twice a pass, one pass
//! for each 11 bits in which the keys differ (a trace's times span 30-40 bits: 3-4 passes).
//! Being stable, it sorts by several keys when called for each, least significant first.

/// Bits of the key a pass sorts by.
const BITS: u32 = 11;

/// Below this many items a pass's 2,048 counts, cleared and summed, outnumber the items.
const SMALL: usize = 512;

/// Sorts `v` by `key`, keeping equal keys in their order, as `v.sort_by_key(key)` does.
pub(crate) fn sort_by_key<T: Copy>(v: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    if v.len() < SMALL {
        return v.sort_by_key(key);
    }
    // Only the bits in which some keys differ need a pass.
    let (mut or, mut and) = (0u64, !0u64);
    for x in v.iter() {
        let k = key(x);
        (or, and) = (or | k, and & k);
    }
    let differ = or ^ and;
    if differ == 0 {
        return;
    }
    let (low, high) = (differ.trailing_zeros(), 64 - differ.leading_zeros());
    // Each pass writes every item of `out` (the counts' prefix sums give each its own
    // place), then the two swap.
    let mut out: Vec<T> = v.clone();
    let mut counts = vec![0usize; 1 << BITS];
    let mut shift = low;
    while shift < high {
        let digit = |x: &T| ((key(x) >> shift) & ((1 << BITS) - 1)) as usize;
        counts.fill(0);
        for x in v.iter() {
            counts[digit(x)] += 1;
        }
        let mut at = 0;
        for c in counts.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        for x in v.iter() {
            let d = digit(x);
            out[counts[d]] = *x;
            counts[d] += 1;
        }
        std::mem::swap(v, &mut out);
        shift += BITS;
    }
}

/// A signed time as a key that sorts as the time does.
pub(crate) fn time_key(ts: i64) -> u64 {
    (ts as u64) ^ (1 << 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every order the standard library's stable sort gives, on keys of few and many
    /// bits, negative times, equal keys in runs, and lists on both sides of SMALL.
    #[test]
    fn sorts_as_the_stable_sort_does() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (n, bits) in [
            (10, 64),
            (SMALL, 3),
            (5000, 1),
            (5000, 12),
            (20000, 40),
            (20000, 64),
        ] {
            let v: Vec<(i64, u32)> = (0..n as u32)
                .map(|i| {
                    (
                        ((next() >> (64 - bits)) as i64).wrapping_sub(1 << (bits - 1)),
                        i,
                    )
                })
                .collect();
            let (mut a, mut b) = (v.clone(), v);
            sort_by_key(&mut a, |x| time_key(x.0));
            b.sort_by_key(|x| x.0);
            assert_eq!(a, b, "{n} items, keys of {bits} bits");
        }
    }

    /// Two keys, the less significant first, sort as a pair does.
    #[test]
    fn two_passes_sort_by_both_keys() {
        let v: Vec<(u32, i64, u32)> = (0..3000u32)
            .map(|i| (i * 7 % 5, (i as i64 * 7919) % 1000 - 500, i))
            .collect();
        let (mut a, mut b) = (v.clone(), v);
        sort_by_key(&mut a, |x| time_key(x.1));
        sort_by_key(&mut a, |x| x.0 as u64);
        b.sort_by_key(|x| (x.0, x.1));
        assert_eq!(a, b);
    }

    #[test]
    fn already_equal_keys_stay_put() {
        let mut v: Vec<(u64, u32)> = (0..1000).map(|i| (7, i)).collect();
        let w = v.clone();
        sort_by_key(&mut v, |x| x.0);
        assert_eq!(v, w);
    }
}
