//! A hash of short byte strings, inline, for the tables a load fills: interned names
//! (trace-model's `Strings`), a profile's lines read once. Not keyed against flooding: a
//! trace's strings are the user's own, and a collision costs a comparison, never a wrong
//! answer.

/// The high and low halves of `a * b` xored: every bit of the product mixed into both.
#[inline(always)]
pub fn fold_mul(a: u64, b: u64) -> u64 {
    let (hi, lo) = crate::time::mul_wide(a, b);
    hi ^ lo
}

/// A hash of a short byte string (a name, a line), inline: a general hasher's call and
/// setup cost as much as the hashing. Pairs of 8-byte words, each pair folded with one multiply, two
/// pairs at a time and independent of each other; the last words overlap the ones before
/// them, and strings under 8 bytes are read as two halves.
#[inline(always)]
pub fn hash(s: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xa076_1d64_78bd_642f;
    let n = s.len();
    let word = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let half = |i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap()) as u64;
    let h = seed ^ (n as u64).wrapping_mul(K);
    let (a, b) = if n > 16 {
        let (mut a, mut b) = (h, h.rotate_left(32));
        let mut i = 0;
        while i + 32 < n {
            a = fold_mul(a ^ word(i), K2 ^ word(i + 8));
            b = fold_mul(b ^ word(i + 16), K ^ word(i + 24));
            i += 32;
        }
        // The last 32 bytes, or the first and last 16 of a shorter string.
        let (p, q) = (n.saturating_sub(32), n - 16);
        (
            fold_mul(a ^ word(p), K2 ^ word(p + 8)),
            fold_mul(b ^ word(q), K ^ word(q + 8)),
        )
    } else if n >= 8 {
        (h ^ word(0), word(n - 8))
    } else if n >= 4 {
        (h ^ half(0), half(n - 4))
    } else if n > 0 {
        (h ^ s[0] as u64, (s[n / 2] as u64) << 8 | s[n - 1] as u64)
    } else {
        (h, 0)
    };
    fold_mul(a ^ K2, b ^ seed)
}

/// `a == b`, inline: the strings are short, and a call to `memcmp` per lookup costs more
/// than the comparison (spall.h's names are of 3 and 4 bytes).
/// Under 8 bytes, two words of half the length that overlap.
#[inline(always)]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if b.len() != n {
        return false;
    }
    if n < 8 {
        let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap());
        let quarter = |s: &[u8], i: usize| u16::from_le_bytes(s[i..i + 2].try_into().unwrap());
        return match n {
            4.. => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
            2.. => quarter(a, 0) == quarter(b, 0) && quarter(a, n - 2) == quarter(b, n - 2),
            _ => a == b,
        };
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash reads every byte: strings that differ in any one byte, at every length
    /// around its words and pairs of words, hash apart.
    #[test]
    fn hash_sees_every_byte() {
        let seed = 0x2545_f491_4f6c_dd1d;
        for len in 1..=80usize {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let h = hash(&base, seed);
            for i in 0..len {
                let mut v = base.clone();
                v[i] = b'_';
                assert_ne!(hash(&v, seed), h, "length {len}, byte {i}");
            }
            assert_ne!(hash(&base[..len - 1], seed), h, "length {len}");
        }
    }

    /// The comparison alone (a lookup reaches it only where hashes agree), at every length
    /// around the words it reads: equal slices, and slices differing in any one byte.
    #[test]
    fn same_compares_every_byte() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "length {len}");
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!same(&a, &b), "length {len}, byte {i}");
            }
            assert!(!same(&a, &[a.as_slice(), b"x"].concat()), "length {len}");
        }
    }
}
