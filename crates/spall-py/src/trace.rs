//! `spall.Trace`: a loaded trace, and the CLI's commands over it as methods.
//!
//! Every method that walks the trace releases the GIL while it does. The SQL database over
//! the trace is made by the first `query` and kept (its tables read the trace in place).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::builder::{Int64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_pyarrow::IntoPyArrow;
use arrow_schema::ArrowError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spall_cli::{diff, flame, info, stats, SortBy};
use trace_sql::TraceDb;

use crate::columns;
use crate::errors::{guard, sql_error, trace_error, usage, SpallError};
use crate::options::{choice, selection, NumOrText, Range, Threads};
use crate::query::{table, to_batch, QueryResult};

/// A loaded trace. Made by `spall.load`; immutable.
#[pyclass(module = "spall", frozen)]
#[derive(Debug)]
pub struct Trace {
    pub(crate) trace: Arc<trace_model::Trace>,
    pub(crate) path: PathBuf,
    load_secs: f64,
    index: OnceLock<(f64, usize)>,
    db: Mutex<Option<TraceDb>>,
    tables: OnceLock<trace_sql::arrow::Tables>,
    /// Last, so that it drops after the model.
    _trim: Trim,
}

/// Hands the heap's free pages back to the system once the model is gone. glibc keeps the
/// pages a load freed (its worker threads' arenas too) for the process to reuse, so a
/// notebook that drops a large trace would otherwise keep its size.
#[derive(Debug)]
struct Trim;

impl Drop for Trim {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only returns free memory to the system; any thread may call it.
        #[allow(unsafe_code)]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// What failed while loading off the GIL: a decode error, or a bug (a panic's message).
#[derive(Debug)]
pub enum LoadFailure {
    Decode(spall_format::Error),
    Panic(PyErr),
}

impl LoadFailure {
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            LoadFailure::Decode(e) => trace_error(py, &e),
            LoadFailure::Panic(e) => e,
        }
    }
}

impl Trace {
    /// Loads `path` (no GIL needed: call it detached).
    pub fn open(path: &Path, opts: &spall_format::DecodeOptions) -> Result<Trace, LoadFailure> {
        let started = std::time::Instant::now();
        let mut decoded = None;
        guard(|| {
            decoded = Some(trace_model::load_with(path, opts, |_, _| {}));
            Ok(())
        })
        .map_err(LoadFailure::Panic)?;
        let trace = decoded
            .expect("set unless guard returned an error")
            .map_err(LoadFailure::Decode)?;
        Ok(Trace {
            trace: Arc::new(trace),
            path: path.to_path_buf(),
            load_secs: started.elapsed().as_secs_f64(),
            index: OnceLock::new(),
            db: Mutex::new(None),
            tables: OnceLock::new(),
            _trim: Trim,
        })
    }

    /// Runs `sql` on this trace's database (made on first use).
    pub fn run_sql(&self, sql: &str) -> Result<trace_sql::QueryResult, trace_sql::Error> {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        if db.is_none() {
            *db = Some(TraceDb::new(self.trace.clone())?);
        }
        db.as_ref().expect("made above").query(sql)
    }

    /// A table built off the GIL, handed to pyarrow.
    fn arrow<'py>(
        &self,
        py: Python<'py>,
        build: fn(&trace_model::Trace) -> Result<RecordBatch, ArrowError>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let t = &self.trace;
        let batch =
            py.detach(|| guard(|| build(t).map_err(|e| SpallError::new_err(e.to_string()))))?;
        table(py, batch)
    }
}

/// `json.loads` of serde_json's text: the CLI's JSON as Python values.
fn from_json<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

fn utf8(bytes: Vec<u8>) -> PyResult<String> {
    String::from_utf8(bytes).map_err(|e| SpallError::new_err(e.to_string()))
}

/// `stats`' rows as columns, named as in `spall-cli stats --format json`.
fn stats_batch(
    t: &trace_model::Trace,
    rows: &[trace_model::NameStats],
) -> Result<RecordBatch, ArrowError> {
    let mut name = StringBuilder::new();
    let mut count = UInt64Builder::new();
    rows.iter().for_each(|r| {
        name.append_value(t.str(r.name));
        count.append_value(r.count);
    });
    let int = |f: fn(&trace_model::NameStats) -> i64| -> ArrayRef {
        let mut b = Int64Builder::with_capacity(rows.len());
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    RecordBatch::try_from_iter(vec![
        ("name", Arc::new(name.finish()) as ArrayRef),
        ("count", Arc::new(count.finish())),
        ("total_ns", int(|r| r.total_ns)),
        ("self_ns", int(|r| r.self_ns)),
        ("min_ns", int(|r| r.min_ns)),
        ("max_ns", int(|r| r.max_ns)),
        ("mean_ns", int(|r| r.mean_ns)),
        ("p50_ns", int(|r| r.p50_ns)),
        ("p90_ns", int(|r| r.p90_ns)),
        ("p99_ns", int(|r| r.p99_ns)),
    ])
}

#[pymethods]
impl Trace {
    /// The path the trace was loaded from.
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "<spall.Trace {}: {} spans, {} threads>",
            self.path.display(),
            self.trace.span_count(),
            self.trace.threads().len()
        )
    }

    /// A summary as a dict with the keys of `spall-cli info --format json`: format, spans,
    /// threads, time span, depth, warnings, load time and memory. The first call builds
    /// the viewer's index, as `info` does, for `index_ms` and `index_bytes`.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = py.detach(|| {
            guard(|| {
                let index = *self.index.get_or_init(|| info::index(&self.trace));
                Ok(info::json(&self.path, &self.trace, self.load_secs, index))
            })
        })?;
        from_json(py, &v)
    }

    /// Per-function statistics as a `pyarrow.Table` (name, count, total_ns, self_ns,
    /// min_ns, max_ns, mean_ns, p50_ns, p90_ns, p99_ns), as `spall-cli stats`: `sort` one
    /// of self, total, count, mean, max, name; `top` rows; `filter` a regular expression on
    /// names; `thread` a thread (or a list): PID:TID, a name, a TID or part of a name;
    /// `range` "START..END" relative to the trace's start (or a tuple of ns).
    #[pyo3(signature = (*, sort="self", top=None, filter=None, thread=None, range=None))]
    fn stats<'py>(
        &self,
        py: Python<'py>,
        sort: &str,
        top: Option<usize>,
        filter: Option<&str>,
        thread: Option<Threads>,
        range: Option<Range>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sort: SortBy = choice("sort", sort)?;
        let sel = selection(thread, filter, range)?;
        let t = &self.trace;
        let batch = py.detach(|| {
            guard(|| {
                let rows = stats::rows(t, &sel, sort, top).map_err(usage)?;
                stats_batch(t, &rows).map_err(|e| SpallError::new_err(e.to_string()))
            })
        })?;
        table(py, batch)
    }

    /// Spans merged by call stack, as `spall-cli flame`: `format` "folded" (str: one line
    /// per stack, its self time in ns), "svg" (str) or "json" (a dict tree of name,
    /// total_ns, self_ns, count, children); `per_thread` keeps threads apart; `filter`
    /// keeps stacks through a matching frame; `thread` and `range` as in `stats`.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (*, format="folded", thread=None, range=None, per_thread=false, filter=None, icicle=false, title="Flame graph"))]
    fn flame<'py>(
        &self,
        py: Python<'py>,
        format: &str,
        thread: Option<Threads>,
        range: Option<Range>,
        per_thread: bool,
        filter: Option<&str>,
        icicle: bool,
        title: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fmt: flame::Format = choice("format", format)?;
        let sel = selection(thread, filter, range)?;
        let t = &self.trace;
        let text = py.detach(|| {
            guard(|| {
                let threads = spall_cli::select::threads(t, &sel.threads).map_err(usage)?;
                let tree = flame::tree(t, &sel, threads, per_thread);
                let mut out = Vec::new();
                flame::write(&mut out, t, &tree, fmt, title, icicle)
                    .map_err(|e| SpallError::new_err(e.to_string()))?;
                utf8(out)
            })
        })?;
        match fmt {
            flame::Format::Json => py.import("json")?.call_method1("loads", (text,)),
            _ => Ok(text.into_pyobject(py)?.into_any()),
        }
    }

    /// Compares this trace (BASE) with `other` (NEW) per function or call stack, as
    /// `spall-cli diff`: `format` "json" (the dict `--format json` prints), "csv", or with
    /// `by="stack"`, "folded" and "svg" (str); `metric` self, total, mean, p50, p90, p99 or
    /// count; `threshold` in percent (5 or "5%"); `min_delta` in ns or with a unit
    /// ("1ms"); `alpha` the Mann-Whitney p-value needed; `match_threads` name or id.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (other, *, format="json", metric="self", by="name", threshold=None, min_delta=None, alpha=0.05, filter=None, thread=None, match_threads="name", range=None, title="Differential flame graph", base_widths=false))]
    fn diff<'py>(
        &self,
        py: Python<'py>,
        other: &Trace,
        format: &str,
        metric: &str,
        by: &str,
        threshold: Option<NumOrText>,
        min_delta: Option<NumOrText>,
        alpha: f64,
        filter: Option<String>,
        thread: Option<Threads>,
        match_threads: &str,
        range: Option<String>,
        title: &str,
        base_widths: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = diff::Args {
            base: self.path.clone(),
            new: other.path.clone(),
            format: choice("format", format)?,
            metric: choice("metric", metric)?,
            by: choice("by", by)?,
            threshold: match threshold {
                Some(v) => v.percent("threshold")?,
                None => 5.0,
            },
            min_delta: min_delta.map(|v| v.min_delta()).transpose()?,
            alpha: spall_cli::util::parse_alpha(&alpha.to_string())
                .map_err(|e| PyValueError::new_err(format!("alpha: {e}")))?,
            fail_on: diff::FailOn::Never,
            filter,
            thread: Threads::specs(thread),
            match_threads: choice("match_threads", match_threads)?,
            range,
            title: title.to_string(),
            base_widths,
        };
        diff::check_format(&a).map_err(usage)?;
        let (base, new) = (&self.trace, &other.trace);
        enum Out {
            Json(serde_json::Value),
            Text(String),
        }
        let out = py.detach(|| {
            guard(|| match a.format {
                diff::Format::Json => Ok(Out::Json(diff::report(&a, base, new).map_err(usage)?)),
                diff::Format::Csv => {
                    let lines = diff::compare_csv(&a, base, new).map_err(usage)?;
                    Ok(Out::Text(lines.join("\n") + "\n"))
                }
                diff::Format::Folded | diff::Format::Svg => {
                    let mut out = Vec::new();
                    diff::write_stacked(&a, base, new, &mut out).map_err(usage)?;
                    Ok(Out::Text(utf8(out)?))
                }
                _ => Err(PyValueError::new_err(
                    "format: table and markdown are spall-cli's; here json, csv, folded or svg",
                )),
            })
        })?;
        match out {
            Out::Json(v) => from_json(py, &v),
            Out::Text(s) => Ok(s.into_pyobject(py)?.into_any()),
        }
    }

    /// SQL over the trace with Perfetto's table names (slice, thread, process, track,
    /// counter, args, ...), as `spall-cli query`; several statements: the last one's rows.
    fn query(&self, py: Python<'_>, sql: &str) -> PyResult<QueryResult> {
        let r = py.detach(|| guard(|| Ok(self.run_sql(sql))))?;
        let r = r.map_err(|e| sql_error(py, sql, &e))?;
        let batch = py.detach(|| {
            guard(|| {
                to_batch(&r.columns, &[&r], None).map_err(|e| SpallError::new_err(e.to_string()))
            })
        })?;
        Ok(QueryResult::new(batch))
    }

    /// SQL table `name` (slice, thread, process, track, thread_track, process_track,
    /// counter_track, counter, instant, flow, args, cpu_profile_stack_sample, perf_sample,
    /// stack_profile_callsite, stack_profile_frame, stack_profile_mapping: docs/SQL.md) as
    /// a `pyarrow.Table`,
    /// with the columns and ids `query` sees; `slice` with its hidden columns (utid,
    /// self_dur, unfinished, kind).
    fn table<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let (schema, batches) = py.detach(|| {
            guard(|| {
                let tables = self
                    .tables
                    .get_or_init(|| trace_sql::arrow::Tables::new(self.trace.clone()));
                let Some(b) = tables.batches(name, 1 << 20) else {
                    return Err(PyValueError::new_err(format!(
                        "no table {name:?}: expected one of {}",
                        trace_sql::arrow::tables().join(", ")
                    )));
                };
                let schema = b.schema();
                let batches = b
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| SpallError::new_err(e.to_string()))?;
                Ok((schema, batches))
            })
        })?;
        arrow_pyarrow::Table::try_new(batches, schema)
            .map_err(|e| SpallError::new_err(e.to_string()))?
            .into_pyarrow(py)
    }

    /// Every span of the model as a `pyarrow.Table`: ts, dur (ns), name, category
    /// (dictionary encoded), depth, thread (its row in `threads()`), flags
    /// (1 unfinished, 2 partial overlap, 4 from a B/E pair). One copy of the model's
    /// columns; `table("slice")` is SQL's `slice` instead.
    fn slices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::slices)
    }

    /// Every thread of the model as a `pyarrow.Table`: thread (its row), process, pid,
    /// tid, name, process_name, spans, max_depth.
    fn threads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::threads)
    }

    /// Every counter sample as a `pyarrow.Table`: series, name, key, process, thread (null
    /// for a process counter), ts, value.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::counters)
    }

    /// Every instant event as a `pyarrow.Table`: ts, name, category, scope, process,
    /// thread.
    fn instants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::instants)
    }

    /// Every arrow between two spans as a `pyarrow.Table`: flow, flow_id, name, category,
    /// slice_out and slice_in (rows of `slices()`), ts_out, ts_in.
    fn flows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::flows)
    }

    /// Every sample of the profile (or the trace's CPU samples) as a `pyarrow.Table`: ts,
    /// weight, unit, kind, timed (false where the format has no times and samples are
    /// laid end to end by weight), thread and process (rows of `threads()`), cpu (null
    /// where the format does not say), the leaf function's name, file and line, depth, frame (the leaf's index; null for an empty
    /// stack) and stack (outermost to leaf, `;`-separated, as `flame(format="folded")`).
    fn samples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.arrow(py, columns::samples)
    }
}
