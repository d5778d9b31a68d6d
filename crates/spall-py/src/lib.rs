//! The Python package `spall`: traces loaded in-process by the same engine as `spall-cli`,
//! read as pyarrow tables, queried with SQL, summarised by the CLI's own commands.
//!
//! ```python
//! import spall
//! t = spall.load("trace.json.gz")           # the GIL is released while it loads
//! t.info()["spans"]
//! t.stats(sort="total", top=10).to_pandas()
//! t.query("SELECT name, SUM(dur) FROM slice GROUP BY 1").as_pandas_dataframe()
//! t.slices()                                # a pyarrow.Table, no per-row objects
//! spall.load_many(paths, jobs=4).query("SELECT COUNT(*) FROM slice").as_pandas_dataframe()
//! ```
//!
//! Built by maturin (`pyproject.toml`) as the extension module `spall._spall`, which
//! `python/spall/__init__.py` re-exports; its tests are Python's (`tests/`, pytest). The
//! commands are `spall-cli`'s library functions, so their numbers are the CLI's.

mod batch;
mod columns;
mod errors;
mod options;
mod query;
mod trace;

use std::path::PathBuf;

use pyo3::prelude::*;

use options::{memory_limit, size, NumOrText};

/// The CLI's `--max-decompressed` default.
const MAX_DECOMPRESSED: u64 = 16 << 30;

fn decode_options(
    max_memory: Option<NumOrText>,
    max_decompressed: Option<NumOrText>,
) -> PyResult<spall_format::DecodeOptions> {
    Ok(spall_format::DecodeOptions {
        max_decompressed: size("max_decompressed", max_decompressed, MAX_DECOMPRESSED)?,
        max_memory: memory_limit(max_memory)?,
    })
}

/// Loads a trace: .spall (v1, v3), Chrome JSON, Perfetto protobuf, or gzip of any of them
/// (told by the content). `max_memory` refuses a load estimated to need more (bytes, "4G",
/// "auto": what the system has available, the default; "off"); `max_decompressed` stops
/// gzip input expanding past it (default "16G"). Raises `spall.TraceError` (with `path`
/// and `offset`) for a file that is not a readable trace. The GIL is released while it
/// loads.
#[pyfunction]
#[pyo3(signature = (path, *, max_memory=None, max_decompressed=None))]
fn load(
    py: Python<'_>,
    path: PathBuf,
    max_memory: Option<NumOrText>,
    max_decompressed: Option<NumOrText>,
) -> PyResult<trace::Trace> {
    let opts = decode_options(max_memory, max_decompressed)?;
    py.detach(|| trace::Trace::open(&path, &opts))
        .map_err(|e| e.into_py(py))
}

/// Loads several traces, `jobs` at a time (default: one per core), for one query over all
/// of them (`TraceBatch.query`). Options as in `load`; the first file that fails raises.
#[pyfunction]
#[pyo3(signature = (paths, *, jobs=None, max_memory=None, max_decompressed=None))]
fn load_many(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    jobs: Option<usize>,
    max_memory: Option<NumOrText>,
    max_decompressed: Option<NumOrText>,
) -> PyResult<batch::TraceBatch> {
    let opts = decode_options(max_memory, max_decompressed)?;
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    batch::TraceBatch::load(py, paths, jobs, &opts)
}

#[pymodule]
fn _spall(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_many, m)?)?;
    m.add_class::<trace::Trace>()?;
    m.add_class::<batch::TraceBatch>()?;
    m.add_class::<query::QueryResult>()?;
    m.add("SpallError", py.get_type::<errors::SpallError>())?;
    m.add("TraceError", py.get_type::<errors::TraceError>())?;
    m.add("SqlError", py.get_type::<errors::SqlError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
