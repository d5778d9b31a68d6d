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

static DECODE: std::sync::OnceLock<DecodeOptions> = std::sync::OnceLock::new();

/// Sets the decoding limits for this run (from `--max-decompressed`).
pub fn set_decode_options(opts: DecodeOptions) {
    let _ = DECODE.set(opts);
}

/// The decoding limits for this run.
pub fn decode_options() -> DecodeOptions {
    DECODE.get().cloned().unwrap_or_default()
}

static SAMPLE_KIND: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Sets the kind of samples counted in a sampling profile (from `--sample-kind`).
pub fn set_sample_kind(kind: Option<String>) {
    let _ = SAMPLE_KIND.set(kind);
}

pub use spall_util::{parse_memory_limit, parse_size};

/// Loads a trace, showing progress on stderr (when it is a terminal) once a load has taken
/// more than a second. Returns the trace and the load time in seconds.
pub fn load(path: &Path) -> Result<(Trace, f64), Fatal> {
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut shown = false;
    let mut last = 0.0f64;
    let loaded = trace_model::load_with(path, &decode_options(), |done, total| {
        let t = start.elapsed().as_secs_f64();
        if tty && t > 1.0 && t - last > 0.1 && total > 0 {
            last = t;
            shown = true;
            eprint!(
                "\rspall-cli: loading {}: {:>3.0}% of {}   ",
                path.display(),
                done as f64 * 100.0 / total as f64,
                spall_util::human_bytes(total)
            );
        }
    });
    let mut trace = loaded.map_err(|e| match e.kind {
        spall_format::ErrorKind::DecompressedTooLarge { .. } => {
            Fatal(format!("{e} (--max-decompressed SIZE)"))
        }
        _ => Fatal(e.to_string()),
    })?;
    if shown {
        eprint!("\r{:80}\r", "");
    }
    if let Some(kind) = SAMPLE_KIND.get().and_then(Option::as_deref) {
        trace.set_sample_kind(kind).map_err(Fatal)?;
    }
    Ok((trace, start.elapsed().as_secs_f64()))
}

/// `5%`, `5` or `0.5%`: a percentage.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{s:?} is not a percentage (for example 5%)"))
}

/// A significance level: a probability above 0.
pub fn parse_alpha(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 1.0)
        .ok_or_else(|| format!("{s:?} is not a probability in (0, 1] (for example 0.05)"))
}

/// A duration with a unit: `150ns`, `200us`, `1.5ms`, `3s`.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    spall_util::parse_time_with_unit(s)
}

pub use spall_util::format_duration as human_ns;
pub use spall_util::parse_time_range as parse_range;

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
