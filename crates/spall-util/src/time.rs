//! Times for people: durations typed on a command line (`1.5ms`, `10ms..250ms`) and
//! printed in messages and panels (`1.234 ms`). Exact integer nanoseconds, as everywhere
//! in spall; the decoders' own timestamp conversions live in `spall-format`.

/// Parses a time a person typed, with a unit (`150ns`, `200us`, `1.5ms`, `3s`; a bare `0`
/// needs none), into exact nanoseconds: digits below a nanosecond round to the nearest,
/// ties to even.
pub fn parse_time_with_unit(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let zero = !num.is_empty()
        && num
            .trim_start_matches(['-', '+'])
            .chars()
            .all(|c| c == '0' || c == '.');
    let digits_per_ns = match unit.trim() {
        "ns" => 0,
        "us" | "µs" => 3,
        "ms" => 6,
        "s" => 9,
        "" if zero => 0,
        "" => {
            return Err(format!(
                "{s:?} needs a unit: ns, us, ms or s (for example 1.5ms)"
            ))
        }
        u => return Err(format!("{s:?}: unknown unit {u:?}; use ns, us, ms or s")),
    };
    decimal_to_ns(num, digits_per_ns)
        .ok_or_else(|| format!("{s:?} is not a time (for example 1.5ms, 200us, 3s)"))
}

/// `[+-]DIGITS[.DIGITS]` (or `.DIGITS`) times `10^shift`, exactly, rounded to an integer
/// (ties to even). `None` for other text or a result outside `i64`.
fn decimal_to_ns(num: &str, shift: usize) -> Option<i64> {
    let (neg, body) = match num.as_bytes().first()? {
        b'-' => (true, &num[1..]),
        b'+' => (false, &num[1..]),
        _ => (false, num),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if (int.is_empty() && frac.is_empty())
        || (body.contains('.') && frac.is_empty())
        || !all_digits(int)
        || !all_digits(frac)
    {
        return None;
    }
    let int = int.trim_start_matches('0');
    if int.len() > 20 {
        return None;
    }
    let (kept, dropped) = frac.split_at(frac.len().min(shift));
    let mut mag: u128 = 0;
    for c in int.bytes().chain(kept.bytes()) {
        mag = mag * 10 + u128::from(c - b'0');
    }
    mag *= 10u128.pow((shift - kept.len()) as u32);
    let mut rest = dropped.bytes();
    let up = match rest.next() {
        Some(b'6'..=b'9') => true,
        Some(b'5') => rest.any(|c| c != b'0') || mag % 2 == 1,
        _ => false,
    };
    mag += u128::from(up);
    if neg {
        0i128
            .checked_sub(i128::try_from(mag).ok()?)?
            .try_into()
            .ok()
    } else {
        mag.try_into().ok()
    }
}

/// A duration for people, three decimals in the largest fitting unit: `56 ns`,
/// `1.234 ms`, `2.500 s`.
pub fn format_duration(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let sign = if ns < 0 { "-" } else { "" };
    if a >= 1e9 {
        format!("{sign}{:.3} s", a / 1e9)
    } else if a >= 1e6 {
        format!("{sign}{:.3} ms", a / 1e6)
    } else if a >= 1e3 {
        format!("{sign}{:.3} us", a / 1e3)
    } else {
        format!("{sign}{a} ns")
    }
}

/// Parses `START..END` with units; either side may be empty.
pub fn parse_time_range(s: &str) -> Result<(Option<i64>, Option<i64>), String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!(
            "{s:?} is not a range: use START..END, for example 10ms..250ms"
        ));
    };
    let side = |x: &str| -> Result<Option<i64>, String> {
        if x.trim().is_empty() {
            Ok(None)
        } else {
            parse_time_with_unit(x).map(Some)
        }
    };
    let (a, b) = (side(a)?, side(b)?);
    if let (Some(a), Some(b)) = (a, b) {
        if b < a {
            return Err(format!("{s:?}: the end comes before the start"));
        }
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_units_are_exact() {
        assert_eq!(parse_time_with_unit("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_time_with_unit("200us"), Ok(200_000));
        assert_eq!(parse_time_with_unit("200µs"), Ok(200_000));
        assert_eq!(parse_time_with_unit("3s"), Ok(3_000_000_000));
        assert_eq!(parse_time_with_unit("150ns"), Ok(150));
        assert_eq!(parse_time_with_unit(" 0.000001s "), Ok(1000));
        assert_eq!(parse_time_with_unit("-2.5ms"), Ok(-2_500_000));
        assert_eq!(parse_time_with_unit("+.5us"), Ok(500));
        assert_eq!(parse_time_with_unit("0"), Ok(0));
        assert_eq!(parse_time_with_unit("0.0"), Ok(0));
        assert!(parse_time_with_unit("15")
            .unwrap_err()
            .contains("needs a unit"));
        assert!(parse_time_with_unit("5h")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_time_with_unit("1e3ms").is_err());
        for bad in [
            "abc", "1.ms", ".ms", "-ms", "1.2.3ms", "+-1ms", "1-2ms", "ms",
        ] {
            assert!(parse_time_with_unit(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sub_nanosecond_digits_round_to_even() {
        assert_eq!(parse_time_with_unit("1.5ns"), Ok(2));
        assert_eq!(parse_time_with_unit("2.5ns"), Ok(2));
        assert_eq!(parse_time_with_unit("2.5000001ns"), Ok(3));
        assert_eq!(parse_time_with_unit("0.0034999us"), Ok(3));
        assert_eq!(parse_time_with_unit("-0.0035us"), Ok(-4));
        assert_eq!(parse_time_with_unit("1.0006us"), Ok(1001));
    }

    #[test]
    fn the_ends_of_i64() {
        assert_eq!(parse_time_with_unit("9223372036.854775807s"), Ok(i64::MAX));
        assert_eq!(parse_time_with_unit("-9223372036854775808ns"), Ok(i64::MIN));
        assert!(parse_time_with_unit("9223372036854775808ns").is_err());
        assert!(parse_time_with_unit("99999999999999999999999999s").is_err());
        assert_eq!(
            parse_time_with_unit("0000000000000000000000000012ns"),
            Ok(12)
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(
            parse_time_range("1ms..2ms"),
            Ok((Some(1_000_000), Some(2_000_000)))
        );
        assert_eq!(parse_time_range("..2ms"), Ok((None, Some(2_000_000))));
        assert_eq!(parse_time_range("1ms.."), Ok((Some(1_000_000), None)));
        assert!(parse_time_range("2ms..1ms").is_err());
        assert!(parse_time_range("2ms").is_err());
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(format_duration(56), "56 ns");
        assert_eq!(format_duration(1_234_000), "1.234 ms");
        assert_eq!(format_duration(-2_500_000_000), "-2.500 s");
        assert_eq!(format_duration(1_500), "1.500 us");
    }
}
