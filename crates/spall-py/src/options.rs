//! Keyword arguments read as the CLI reads its options: the same names and values
//! (`sort="total"`, `thread=["main", "1:2"]`, `range="10ms..250ms"`, `threshold="5%"`),
//! parsed by the CLI's own parsers, so a value means the same in both.

use clap::ValueEnum;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spall_cli::select::Selection;

use crate::errors::usage;

/// `value` as one of the CLI's value names for option `name`.
pub fn choice<T: ValueEnum>(name: &str, value: &str) -> PyResult<T> {
    T::from_str(value, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        PyValueError::new_err(format!(
            "{name}={value:?}: expected one of {}",
            names.join(", ")
        ))
    })
}

/// `thread=`: None, one spec, or a list of them.
#[derive(Debug, FromPyObject)]
pub enum Threads {
    One(String),
    Many(Vec<String>),
}

impl Threads {
    pub fn specs(t: Option<Threads>) -> Vec<String> {
        match t {
            None => Vec::new(),
            Some(Threads::One(s)) => vec![s],
            Some(Threads::Many(v)) => v,
        }
    }
}

/// `range=`: the CLI's `START..END` text, or `(start_ns, end_ns)` relative to the trace's
/// start, either end `None` for open.
#[derive(Debug, FromPyObject)]
pub enum Range {
    Text(String),
    Ns(Option<i64>, Option<i64>),
}

/// The spans a command looks at, as `--thread`, `--filter` and `--range` pick them.
pub fn selection(
    thread: Option<Threads>,
    filter: Option<&str>,
    range: Option<Range>,
) -> PyResult<Selection> {
    let specs = Threads::specs(thread);
    let text = match &range {
        Some(Range::Text(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut sel = Selection::parse(&specs, filter, text).map_err(usage)?;
    if let Some(Range::Ns(s, e)) = range {
        sel.range = Some((s, e));
    }
    Ok(sel)
}

/// A number or the CLI's text for it (`threshold=5` or `"5%"`, `min_delta=1_000_000` or
/// `"1ms"`).
#[derive(Debug, FromPyObject)]
pub enum NumOrText {
    Int(i64),
    Float(f64),
    Text(String),
}

impl NumOrText {
    pub fn percent(self, name: &str) -> PyResult<f64> {
        match self {
            NumOrText::Int(v) => Ok(v as f64),
            NumOrText::Float(v) => Ok(v),
            NumOrText::Text(s) => spall_cli::util::parse_percent(&s),
        }
        .and_then(|v| {
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(format!("{v} is not a percentage (for example 5%)"))
            }
        })
        .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
    }

    /// `min_delta=`: a number in the compared weights' unit (a trace's nanoseconds), or the
    /// CLI's text (`"2ms"`, `"4KB"`).
    pub fn min_delta(self) -> PyResult<spall_cli::diff::MinDelta> {
        use spall_cli::diff::MinDelta;
        match self {
            NumOrText::Int(v) => Ok(MinDelta::Plain(v)),
            NumOrText::Float(v) => Ok(MinDelta::Plain(v.round() as i64)),
            NumOrText::Text(s) => MinDelta::parse(&s),
        }
        .map_err(|e| PyValueError::new_err(format!("min_delta: {e}")))
    }
}

/// `max_memory=`: None (`"auto"`, the CLI's default), bytes, or the CLI's text (`"4G"`,
/// `"auto"`, `"off"`).
pub fn memory_limit(v: Option<NumOrText>) -> PyResult<spall_format::MemoryLimit> {
    let bad = |e: String| PyValueError::new_err(format!("max_memory: {e}"));
    match v {
        None => Ok(spall_format::MemoryLimit::Available),
        Some(NumOrText::Int(n)) if n >= 0 => Ok(spall_format::MemoryLimit::Bytes(n as u64)),
        Some(NumOrText::Text(s)) => spall_cli::util::parse_memory_limit(&s).map_err(bad),
        Some(_) => Err(bad(
            "expected a size in bytes, text such as \"4G\", \"auto\" or \"off\"".into(),
        )),
    }
}

/// `max_decompressed=`: None (16 GiB, the CLI's default), bytes, or text (`"64G"`).
pub fn size(name: &str, v: Option<NumOrText>, default: u64) -> PyResult<u64> {
    let bad = |e: String| PyValueError::new_err(format!("{name}: {e}"));
    match v {
        None => Ok(default),
        Some(NumOrText::Int(n)) if n >= 0 => Ok(n as u64),
        Some(NumOrText::Text(s)) => spall_cli::util::parse_size(&s).map_err(bad),
        Some(_) => Err(bad(
            "expected a size in bytes or text such as \"64G\"".into()
        )),
    }
}
