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

pub use spall_format::time::format_duration as human_ns;
pub use spall_format::time::parse_time_range as parse_range;

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
    fn human_units() {
        assert_eq!(human_ns(56), "56 ns");
        assert_eq!(human_ns(1_234_000), "1.234 ms");
        assert_eq!(human_ns(-2_500_000_000), "-2.500 s");
    }
}
