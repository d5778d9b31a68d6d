//! `--min-delta` of `diff`: a duration, a size or a plain number, read before any trace is
//! loaded and taken in the unit of the weights compared once the traces are known.

use trace_model::SampleUnit;

use crate::util::Fatal;

/// `--min-delta` as given: a duration, a size, or a plain number, each taken in the unit of
/// the weights compared (a plain number: a trace's nanoseconds, a profile's own unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinDelta {
    Time(i64),
    Bytes(i64),
    Plain(i64),
}

impl MinDelta {
    /// `2ms`, `4KB` / `1MiB` (a size ends in B), or digits.
    pub fn parse(s: &str) -> Result<MinDelta, String> {
        let t = s.trim();
        if !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()) {
            return t
                .parse()
                .map(MinDelta::Plain)
                .map_err(|_| format!("{s:?} is too large"));
        }
        if t.ends_with(['B', 'b']) {
            let n = crate::util::parse_size(t)?;
            return Ok(MinDelta::Bytes(i64::try_from(n).unwrap_or(i64::MAX)));
        }
        crate::util::parse_duration(t).map(MinDelta::Time)
    }

    /// The delta in the unit of the weights compared (`None`: a trace's nanoseconds); an
    /// error for a size of times or a duration of bytes or counts.
    pub fn in_unit(self, unit: Option<SampleUnit>) -> Result<i64, Fatal> {
        let ns = matches!(unit, None | Some(SampleUnit::Nanoseconds));
        match (self, unit) {
            (MinDelta::Plain(n), _) => Ok(n),
            (MinDelta::Time(n), _) if ns => Ok(n),
            (MinDelta::Bytes(n), Some(SampleUnit::Bytes)) => Ok(n),
            (d, u) => Err(Fatal(format!(
                "--min-delta: {}, but the {} weighs {}",
                match d {
                    MinDelta::Time(_) => "a duration",
                    _ => "a size",
                },
                if u.is_some() { "profile" } else { "trace" },
                match u {
                    None | Some(SampleUnit::Nanoseconds) => "time (give a duration: \"2ms\")",
                    Some(SampleUnit::Bytes) => "bytes (give a size: \"4KB\", or a number)",
                    Some(_) => "counts (give a number)",
                }
            ))),
        }
    }
}
