//! Shared pieces: loading with progress, time parsing and formatting, errors.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use spall_format::DecodeOptions;
use trace_model::Trace;

/// A failure that ends the command with exit code 2 (bad usage or unreadable input).
#[derive(Debug)]
pub struct Fatal(pub String);

impl<E: std::fmt::Display> From<E> for Fatal {
    fn from(e: E) -> Self {
        Fatal(e.to_string())
    }
}

/// Loads a trace, showing progress on stderr (when it is a terminal) once a load has taken
/// more than a second. Returns the trace and the load time in seconds.
pub fn load(path: &Path) -> Result<(Trace, f64), Fatal> {
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut shown = false;
    let mut last = 0.0f64;
    let trace = trace_model::load_with(path, &DecodeOptions::default(), |done, total| {
        let t = start.elapsed().as_secs_f64();
        if tty && t > 1.0 && t - last > 0.1 && total > 0 {
            last = t;
            shown = true;
            eprint!(
                "\rspall-cli: loading {}: {:>3.0}% of {}   ",
                path.display(),
                done as f64 * 100.0 / total as f64,
                bytes(total)
            );
        }
    })?;
    if shown {
        eprint!("\r{:80}\r", "");
    }
    Ok((trace, start.elapsed().as_secs_f64()))
}

/// `1.2 GB`, `340 KB`, ...
pub fn bytes(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.1} GB", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} MB", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} KB", n / 1e3)
    } else {
        format!("{n} B")
    }
}

/// A duration for people: `1.234 ms`, `56 ns`, `2.5 s`.
pub fn human_ns(ns: i64) -> String {
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

/// Parses a time with a unit (`1.5ms`, `200us`, `3s`, `150ns`; `0` needs none) into exact
/// nanoseconds.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let exp = match unit.trim() {
        "ns" => "e-3",
        "us" | "µs" => "",
        "ms" => "e3",
        "s" => "e6",
        "" if num
            .trim_start_matches(['-', '+'])
            .chars()
            .all(|c| c == '0' || c == '.')
            && !num.is_empty() =>
        {
            ""
        }
        "" => {
            return Err(format!(
                "{s:?} needs a unit: ns, us, ms or s (for example 1.5ms)"
            ))
        }
        u => return Err(format!("{s:?}: unknown unit {u:?}; use ns, us, ms or s")),
    };
    spall_format::time::micros_text_to_ns(format!("{num}{exp}").as_bytes())
        .map_err(|_| format!("{s:?} is not a time (for example 1.5ms, 200us, 3s)"))
}

/// Parses `START..END` (either side may be empty), relative to the trace start.
pub fn parse_range(s: &str) -> Result<(Option<i64>, Option<i64>), String> {
    let Some((a, b)) = s.split_once("..") else {
        return Err(format!(
            "{s:?} is not a range: use START..END, for example 10ms..250ms"
        ));
    };
    let side = |x: &str| -> Result<Option<i64>, String> {
        if x.trim().is_empty() {
            Ok(None)
        } else {
            parse_time(x).map(Some)
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

/// The diagnostics of a load (decode and model) as `(kind, count)`, sorted by kind.
pub fn all_diagnostics(trace: &Trace) -> Vec<(String, u64)> {
    use spall_format::DiagnosticKind;
    let mut v: Vec<(String, u64)> = trace
        .decode
        .diagnostics
        .counts()
        .map(|(k, n)| (k.as_str().to_string(), n))
        .chain(
            trace
                .diagnostics
                .counts()
                .map(|(k, n)| (k.name().into_owned(), n)),
        )
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_with_units_are_exact() {
        assert_eq!(parse_time("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_time("200us"), Ok(200_000));
        assert_eq!(parse_time("3s"), Ok(3_000_000_000));
        assert_eq!(parse_time("150ns"), Ok(150));
        assert_eq!(parse_time(" 0.000001s "), Ok(1000));
        assert_eq!(parse_time("0"), Ok(0));
        assert!(parse_time("15").unwrap_err().contains("needs a unit"));
        assert!(parse_time("5h").unwrap_err().contains("unknown unit"));
        assert!(parse_time("abc").is_err());
        assert_eq!(
            parse_range("1ms..2ms"),
            Ok((Some(1_000_000), Some(2_000_000)))
        );
        assert_eq!(parse_range("..2ms"), Ok((None, Some(2_000_000))));
        assert_eq!(parse_range("1ms.."), Ok((Some(1_000_000), None)));
        assert!(parse_range("2ms..1ms").is_err());
        assert!(parse_range("2ms").is_err());
    }

    #[test]
    fn human_units() {
        assert_eq!(human_ns(56), "56 ns");
        assert_eq!(human_ns(1_234_000), "1.234 ms");
        assert_eq!(human_ns(-2_500_000_000), "-2.500 s");
    }
}
