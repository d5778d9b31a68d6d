//! Python's exceptions for what goes wrong: the CLI's messages, never a panic.
//!
//! `spall.SpallError` is the base; `spall.TraceError` (a file that cannot be read as a
//! trace) carries `path` and `offset` as `spall-cli` prints them; `spall.SqlError` carries
//! the byte `offset` in the SQL. Bad keyword arguments are `ValueError`s with the message
//! the CLI gives for the same option. A panic in Rust (a bug) becomes a `SpallError`
//! saying so, instead of unwinding into the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use spall_cli::util::Fatal;

pyo3::create_exception!(spall, SpallError, PyException, "Any failure of spall.");
pyo3::create_exception!(
    spall,
    TraceError,
    SpallError,
    "A file that cannot be read as a trace: `path` and `offset` (a byte offset into the \
     decoded input) say where, the message what was expected."
);
pyo3::create_exception!(
    spall,
    SqlError,
    SpallError,
    "A query SQLite refused or that failed: `offset` is the byte offset in the SQL, or None."
);

/// A decode error as `spall-cli` reports it (with its hint for the gzip limit), keeping the
/// file and offset as attributes.
pub fn trace_error(py: Python<'_>, e: &spall_format::Error) -> PyErr {
    let mut msg = e.to_string();
    if let spall_format::ErrorKind::DecompressedTooLarge { .. } = e.kind {
        msg.push_str(" (max_decompressed=SIZE)");
    }
    let err = TraceError::new_err(msg);
    let path = e.path.as_ref().map(|p| p.display().to_string());
    let value = err.value(py);
    let _ = value.setattr("path", path);
    let _ = value.setattr("offset", e.offset);
    err
}

/// A query's failure, with the CLI's caret under the place SQLite named.
pub fn sql_error(py: Python<'_>, sql: &str, e: &trace_sql::Error) -> PyErr {
    let err = SqlError::new_err(spall_cli::query::describe(sql, e));
    let _ = err.value(py).setattr("offset", e.offset);
    err
}

/// The CLI's usage errors (`--thread`, `--filter`, ...) are the caller's: `ValueError`.
pub fn usage(e: Fatal) -> PyErr {
    PyValueError::new_err(e.0)
}

/// Runs `f`, turning a panic into a `SpallError` (the interpreter goes on).
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(SpallError::new_err(format!(
                "internal error: {what}. Please report this with the trace that caused it."
            )))
        }
    }
}
