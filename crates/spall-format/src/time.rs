//! Exact conversions to integer nanoseconds.
//!
//! JSON timestamps are decimal microseconds: `1712195495519689.047` must become
//! `1712195495519689047`, which an `f64` cannot hold. `.spall` timestamps are ticks times an
//! `f64` unit; we multiply the exact binary values in 128-bit integers and round once.
//! Every conversion rounds to the nearest nanosecond, ties to even.

/// Splits a finite `f64` into `(negative, mantissa, exponent)` with `value = ±mantissa × 2^exponent`.
fn decompose(x: f64) -> Option<(bool, u64, i32)> {
    if !x.is_finite() {
        return None;
    }
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    Some((neg, m, e))
}

/// `a × b` as its high and low 64 bits. WebAssembly has no 64 × 64 → 128-bit multiply: a
/// `u128` product there is a call to a general 128-bit multiply that returns through
/// memory, so there it is four 32 × 32-bit multiplies, inline (the same bits).
#[inline(always)]
pub fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let p = a as u128 * b as u128;
        ((p >> 64) as u64, p as u64)
    }
    #[cfg(target_arch = "wasm32")]
    mul_halves(a, b)
}

/// [`mul_wide`] from 32-bit halves.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(always)]
fn mul_halves(a: u64, b: u64) -> (u64, u64) {
    const LOW: u64 = 0xffff_ffff;
    let (a0, a1, b0, b1) = (a & LOW, a >> 32, b & LOW, b >> 32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    let lo = (p00 & LOW) | (mid << 32);
    (p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), lo)
}

/// `±m × 2^e`, rounded to the nearest integer (ties to even), if it fits in an `i64`.
fn round_scaled(neg: bool, m: u128, e: i32) -> Option<i64> {
    if m == 0 {
        return Some(0);
    }
    let mag: u128 = if e >= 0 {
        if e >= 64 || m.leading_zeros() < e as u32 + 1 {
            return None;
        }
        m << e
    } else {
        let s = (-e) as u32;
        if s >= 128 {
            0
        } else {
            let q = m >> s;
            let rem = m & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if rem > half || (rem == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    signed(neg, mag)
}

fn signed(neg: bool, mag: u128) -> Option<i64> {
    if neg {
        if mag <= i64::MAX as u128 + 1 {
            Some((mag as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else if mag <= i64::MAX as u128 {
        Some(mag as i64)
    } else {
        None
    }
}

/// A `.spall` timestamp scale: nanoseconds per tick, held exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickScale {
    mant: u64,
    exp: i32,
    /// The unit is a whole number of nanoseconds per tick (fast path), and the most ticks
    /// whose nanoseconds fit in an `i64`: one comparison, where an overflow-checked multiply
    /// is a 128-bit multiply on 32-bit targets (a call in WebAssembly, per event).
    whole: Option<(i64, u64)>,
}

/// `Some((unit, the most ticks that fit))` for a whole unit of nanoseconds.
fn whole(unit: Option<i64>) -> Option<(i64, u64)> {
    unit.filter(|&w| w > 0)
        .map(|w| (w, i64::MAX as u64 / w as u64))
}

impl TickScale {
    /// A scale of `ns_per_tick` nanoseconds per tick, or `None` if it is not finite and positive.
    pub fn from_ns_per_tick(ns_per_tick: f64) -> Option<TickScale> {
        if !(ns_per_tick.is_finite() && ns_per_tick > 0.0) {
            return None;
        }
        let (_, m, e) = decompose(ns_per_tick)?;
        let unit =
            (ns_per_tick.fract() == 0.0 && ns_per_tick < 9.0e15).then_some(ns_per_tick as i64);
        Some(TickScale {
            mant: m,
            exp: e,
            whole: whole(unit),
        })
    }

    /// A scale of `us_per_tick` microseconds per tick (`.spall` v1 headers), held exactly:
    /// the factor 1000 is applied to the integer mantissa, not through a rounded `f64`.
    pub fn from_us_per_tick(us_per_tick: f64) -> Option<TickScale> {
        let s = TickScale::from_ns_per_tick(us_per_tick)?;
        let unit = s.whole.and_then(|(w, _)| w.checked_mul(1000));
        Some(TickScale {
            mant: s.mant * 1000,
            exp: s.exp,
            whole: whole(unit),
        })
    }

    /// Converts unsigned integer ticks (`.spall` v3) to nanoseconds. Inlined always: once
    /// per event, and a call costs more than its fast paths.
    #[inline(always)]
    pub fn ticks_to_ns(&self, ticks: u64) -> Option<i64> {
        if let Some((w, most)) = self.whole {
            return (ticks <= most).then(|| ticks as i64 * w);
        }
        // A fraction of a nanosecond per tick (a TSC's unit): the product in two halves,
        // shifted and rounded there, as `round_scaled` does in 128 bits.
        if (-63..0).contains(&self.exp) {
            let s = (-self.exp) as u32;
            let (hi, lo) = mul_wide(ticks, self.mant);
            if hi >> s != 0 {
                return None;
            }
            let q = hi << (64 - s) | lo >> s;
            if q > i64::MAX as u64 {
                return None;
            }
            let (rem, half) = (lo & ((1 << s) - 1), 1 << (s - 1));
            let q = q + u64::from(rem > half || (rem == half && q & 1 == 1));
            return i64::try_from(q).ok();
        }
        round_scaled(false, ticks as u128 * self.mant as u128, self.exp)
    }

    /// Converts floating-point ticks (`.spall` v1) to nanoseconds: `None` for NaN, infinity,
    /// or a result outside the `i64` range.
    #[inline]
    pub fn float_ticks_to_ns(&self, ticks: f64) -> Option<i64> {
        let (neg, m, e) = decompose(ticks)?;
        round_scaled(neg, m as u128 * self.mant as u128, e + self.exp)
    }
}

const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Why a decimal number could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// Not a JSON number (or a quoted one).
    Syntax,
    /// Outside the range of `i64` nanoseconds (about ±292 years).
    OutOfRange,
}

/// Converts the decimal text of a microsecond value to nanoseconds exactly.
///
/// Accepts JSON number syntax, plus a leading `+`, and leading zeros (seen in real files).
/// Digits beyond nanosecond precision are rounded, ties to even.
pub fn micros_text_to_ns(s: &[u8]) -> Result<i64, NumberError> {
    let mut i = 0;
    let neg = match s.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    // Fast path: up to 15 integer digits and up to 3 fraction digits, no exponent.
    let start = i;
    let mut int: u64 = 0;
    while i < s.len() && s[i].is_ascii_digit() && i - start < 15 {
        int = int * 10 + (s[i] - b'0') as u64;
        i += 1;
    }
    let int_digits = i - start;
    if i == s.len() && int_digits > 0 {
        let v = (int * 1000) as i64;
        return Ok(if neg { -v } else { v });
    }
    if int_digits > 0 && s[i] == b'.' {
        let fstart = i + 1;
        let mut j = fstart;
        let mut frac: u64 = 0;
        while j < s.len() && s[j].is_ascii_digit() && j - fstart < 3 {
            frac = frac * 10 + (s[j] - b'0') as u64;
            j += 1;
        }
        if j == s.len() && j > fstart {
            let v = (int * 1000 + frac * [1000, 100, 10, 1][j - fstart]) as i64;
            return Ok(if neg { -v } else { v });
        }
    }
    slow_micros_to_ns(neg, &s[start..])
}

/// The common JSON time, `digits` or `digits.fff` with at most 16 integer digits (their
/// nanoseconds in an `i64`) and 3 fraction digits, at `b[p..]` and followed by a delimiter (`,` `}` `]` or white space): its
/// nanoseconds and where the delimiter is. `None` for anything else, which
/// [`micros_text_to_ns`] then reads; where both read a number they agree.
///
/// The integer digits are found and read 8 at a time, as a word: most timestamps are 13
/// to 16 digits, and reading them one by one, after a scan for their end, was a tenth of a
/// JSON load's time.
#[inline]
pub(crate) fn micros_number_at(b: &[u8], p: usize) -> Option<(i64, usize)> {
    let word = |i: usize| Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
    let (mut int, n) = digits8(word(p)?);
    let mut i = p + n;
    if n == 8 {
        let (more, m) = digits8(word(i)?);
        int = int * 10u64.pow(m as u32) + more;
        i += m;
        // 16 digits fit when the nanoseconds do (a 17th is not a delimiter, below).
        if m == 8 && int > (i64::MAX as u64 - 999) / 1000 {
            return None;
        }
    } else if n == 0 {
        return None;
    }
    let mut ns = int * 1000;
    if b.get(i) == Some(&b'.') {
        let mut f = 0;
        let mut k = 0;
        while k < 3 && b.get(i + 1 + k).is_some_and(u8::is_ascii_digit) {
            f = f * 10 + (b[i + 1 + k] - b'0') as u64;
            k += 1;
        }
        if k == 0 {
            return None;
        }
        ns += f * [1000, 100, 10, 1][k];
        i += 1 + k;
    }
    match b.get(i) {
        Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') => Some((ns as i64, i)),
        _ => None,
    }
}

/// The leading ASCII digits of a little-endian word (the first byte lowest): their value
/// and how many there are (0 to 8).
#[inline(always)]
fn digits8(w: u64) -> (u64, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = w ^ (ONES * b'0' as u64);
    // A byte is a digit when its high nibble was 3 and its low one is at most 9. A carry
    // out of a non-digit byte reaches only later bytes, after the first non-digit.
    let bad = (x | x.wrapping_add(ONES * 6)) & (ONES * 0xf0);
    let n = (bad.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // The digits' values, moved to the top bytes with zeros (leading zeros) below.
    let mut v = x << (8 * (8 - n));
    v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    v = (v * 10_000 + (v >> 32)) & 0xffff_ffff;
    (v, n)
}

/// The general case: any length, any exponent.
fn slow_micros_to_ns(neg: bool, s: &[u8]) -> Result<i64, NumberError> {
    let mut i = 0;
    let mut mant: u128 = 0;
    let mut digits = 0usize; // significant digits held in `mant`
    let mut exp10: i64 = 3; // micro -> nano
    let mut sticky = false; // non-zero digits dropped beyond `mant`'s precision
    let mut any = false;
    let mut take = |d: u8, frac: bool, mant: &mut u128, exp10: &mut i64| {
        if digits < 36 {
            if *mant != 0 || d != 0 {
                *mant = *mant * 10 + d as u128;
                digits += (*mant != 0) as usize;
            }
            if frac {
                *exp10 -= 1;
            }
        } else {
            sticky |= d != 0;
            if !frac {
                *exp10 += 1;
            }
        }
    };
    while i < s.len() && s[i].is_ascii_digit() {
        take(s[i] - b'0', false, &mut mant, &mut exp10);
        any = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        let f0 = i;
        while i < s.len() && s[i].is_ascii_digit() {
            take(s[i] - b'0', true, &mut mant, &mut exp10);
            i += 1;
        }
        if i == f0 {
            return Err(NumberError::Syntax);
        }
        any = true;
    }
    if !any {
        return Err(NumberError::Syntax);
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let e0 = i;
        let mut e: i64 = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            e = (e * 10 + (s[i] - b'0') as i64).min(1_000_000);
            i += 1;
        }
        if i == e0 {
            return Err(NumberError::Syntax);
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != s.len() {
        return Err(NumberError::Syntax);
    }
    if mant == 0 {
        return Ok(0);
    }
    let mag: u128 = if exp10 >= 0 {
        if exp10 > 38 {
            return Err(NumberError::OutOfRange);
        }
        mant.checked_mul(POW10[exp10 as usize])
            .ok_or(NumberError::OutOfRange)?
    } else if -exp10 > 38 {
        0
    } else {
        let p = POW10[(-exp10) as usize];
        let q = mant / p;
        let rem = mant % p;
        let half = p / 2;
        if rem > half || (rem == half && (sticky || q & 1 == 1)) {
            q + 1
        } else {
            q
        }
    };
    signed(neg, mag).ok_or(NumberError::OutOfRange)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(s: &str) -> Result<i64, NumberError> {
        micros_text_to_ns(s.as_bytes())
    }

    /// Where the word-at-a-time reader reads a number, it reads what the general one
    /// does: every length of integer and fraction, each delimiter, and the texts it must
    /// leave to the general reader.
    #[test]
    fn numbers_read_by_words_agree() {
        let mut texts = Vec::new();
        for int in 0..=17usize {
            for frac in [None, Some(0), Some(1), Some(2), Some(3), Some(4)] {
                let digits: String = (0..int)
                    .map(|i| (b'1' + (i * 7 % 9) as u8) as char)
                    .collect();
                let mut t = digits.clone();
                if let Some(f) = frac {
                    t.push('.');
                    t.extend((0..f).map(|i| (b'9' - i as u8) as char));
                }
                texts.push(t.clone());
                texts.push(format!("0{t}"));
                texts.push(format!("-{t}"));
                texts.push(format!("{t}e2"));
            }
        }
        texts.extend(
            ["00000000", "99999999", "123456789012345", "999999999999999"].map(String::from),
        );
        let mut read = 0;
        for t in &texts {
            for end in [",", "}", "]", " ", "\n", "\t", "\r", ":", "x", ""] {
                let b = format!("{t}{end}        ");
                let b = &b.as_bytes()[..t.len() + end.len() + if end.is_empty() { 0 } else { 8 }];
                if let Some((v, e)) = micros_number_at(b, 0) {
                    read += 1;
                    assert_eq!(e, t.len(), "{t:?}{end:?}");
                    assert_eq!(Ok(v), us(t), "{t:?}{end:?}");
                    assert!(matches!(end, "," | "}" | "]" | " " | "\n" | "\t" | "\r"));
                }
            }
        }
        assert!(read > 400, "{read} read by words");
    }

    #[test]
    fn decimal_text_is_exact() {
        assert_eq!(us("1712195495519689.047"), Ok(1712195495519689047));
        assert_eq!(us("0"), Ok(0));
        assert_eq!(us("1.1"), Ok(1100));
        assert_eq!(us("3.011"), Ok(3011));
        assert_eq!(us("-2.5"), Ok(-2500));
        assert_eq!(us("+7"), Ok(7000));
        assert_eq!(us("1e3"), Ok(1_000_000));
        assert_eq!(us("1.5E-3"), Ok(2)); // 1.5 ns: tie, rounds to even
        assert_eq!(us("2.5e-3"), Ok(2)); // 2.5 ns: tie, rounds to even
        assert_eq!(us("0.0035"), Ok(4)); // 3.5 ns: tie, rounds to even
        assert_eq!(us("0.00350000000000000000000000000000000000001"), Ok(4));
        assert_eq!(us("0.0025000000000000000000000000000000000000001"), Ok(3));
        assert_eq!(us("1.0004"), Ok(1000));
        assert_eq!(us("1.0006"), Ok(1001));
        assert_eq!(us("0000012"), Ok(12000));
        assert_eq!(us("123456789012345678.5"), Err(NumberError::OutOfRange));
        assert_eq!(us("9223372036854775.807"), Ok(i64::MAX));
        assert_eq!(us("-9223372036854775.808"), Ok(i64::MIN));
        assert_eq!(us("9223372036854775.808"), Err(NumberError::OutOfRange));
        assert_eq!(us("1e400"), Err(NumberError::OutOfRange));
        assert_eq!(us("1e-400"), Ok(0));
        assert_eq!(us(".5"), Ok(500)); // lenient: unambiguous
        for bad in [
            "", "-", ".", "1.", "1e", "1x", "NaN", "Infinity", "0x10", "1.2.3",
        ] {
            assert_eq!(us(bad), Err(NumberError::Syntax), "{bad:?}");
        }
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        for s in ["1", "12.3", "123456789012345", "99.999", "5.12", "0.001"] {
            let neg = false;
            assert_eq!(us(s), slow_micros_to_ns(neg, s.as_bytes()), "{s}");
        }
    }

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn the_wasm_multiply_gives_the_128_bit_product() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut cases = vec![(0, 0), (u64::MAX, u64::MAX), (u64::MAX, 1), (1 << 63, 3)];
        for _ in 0..10_000 {
            cases.push((xorshift(&mut x), xorshift(&mut x) >> (x % 64)));
        }
        for (a, b) in cases {
            let p = a as u128 * b as u128;
            assert_eq!(mul_halves(a, b), ((p >> 64) as u64, p as u64), "{a} * {b}");
        }
    }

    #[test]
    fn fractional_units_round_as_the_128_bit_path() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for unit in [
            1000.0 / 24.0,
            1.0 / 3.0,
            0.5,
            1e-3,
            3.5,
            0.299_792_458,
            1e-9,
        ] {
            let s = TickScale::from_ns_per_tick(unit).unwrap();
            assert!(s.exp < 0 && s.whole.is_none(), "{unit}");
            // Small and large ticks, exact halves, and the edges of the range.
            let mut ticks = vec![0, 1, 2, 3, u64::MAX, u64::MAX >> 1, 1 << 63];
            for _ in 0..20_000 {
                ticks.push(xorshift(&mut x) >> (x % 64));
            }
            for k in 0..64 {
                ticks.push(1 << k);
                ticks.push((1u64 << k) - 1);
            }
            for t in ticks {
                let exact = round_scaled(false, t as u128 * s.mant as u128, s.exp);
                assert_eq!(s.ticks_to_ns(t), exact, "{t} ticks of {unit} ns");
            }
        }
    }

    #[test]
    fn ticks_are_exact() {
        let ns = TickScale::from_ns_per_tick(1.0).unwrap();
        assert_eq!(ns.ticks_to_ns(u64::MAX >> 1), Some(i64::MAX));
        assert_eq!(ns.ticks_to_ns(u64::MAX), None);
        // A whole unit's last tick that fits, and the first that does not, as the exact
        // 128-bit path has them.
        for unit in [3.0, 7.0, 1000.0] {
            let s = TickScale::from_ns_per_tick(unit).unwrap();
            let last = (i64::MAX / unit as i64) as u64;
            for t in [last - 1, last, last + 1, 1 << 63] {
                let exact = round_scaled(false, t as u128 * s.mant as u128, s.exp);
                assert_eq!(s.ticks_to_ns(t), exact, "{t} ticks of {unit} ns");
            }
            assert_eq!(s.ticks_to_ns(last), Some(last as i64 * unit as i64));
            assert_eq!(s.ticks_to_ns(last + 1), None);
        }
        // 41.666… ns per tick (24 MHz): 3 ticks are exactly 125 ns to the nearest ns.
        let s = TickScale::from_ns_per_tick(1000.0 / 24.0).unwrap();
        assert_eq!(s.ticks_to_ns(3), Some(125));
        assert_eq!(
            s.ticks_to_ns(24_000_000_000_000),
            Some(1_000_000_000_000_000)
        );
        // v1: microseconds per tick, f64 ticks.
        let v1 = TickScale::from_us_per_tick(1.0).unwrap();
        assert_eq!(v1.float_ticks_to_ns(1234.567), Some(1234567));
        assert_eq!(v1.float_ticks_to_ns(-0.5), Some(-500));
        assert_eq!(v1.float_ticks_to_ns(f64::NAN), None);
        assert_eq!(v1.float_ticks_to_ns(f64::INFINITY), None);
        assert_eq!(v1.float_ticks_to_ns(1e300), None);
        let rdtsc = TickScale::from_us_per_tick(1.0 / 3000.0).unwrap(); // 3 GHz
        assert_eq!(rdtsc.float_ticks_to_ns(3e12), Some(1_000_000_000_000));
        assert!(TickScale::from_ns_per_tick(0.0).is_none());
        assert!(TickScale::from_ns_per_tick(-1.0).is_none());
        assert!(TickScale::from_ns_per_tick(f64::NAN).is_none());
    }
}
