//! `spall.load_many(paths, jobs=N)`: many traces loaded side by side, and one query over
//! all of them into one table with a `trace` column (Perfetto's Batch Trace Processor,
//! in-process).

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::errors::{guard, sql_error, SpallError};
use crate::query::{to_batch, QueryResult};
use crate::trace::{LoadFailure, Trace};

/// Several loaded traces. Made by `spall.load_many`; indexing and iterating give the
/// `spall.Trace`s, in the order of the paths.
#[pyclass(module = "spall", frozen)]
#[derive(Debug)]
pub struct TraceBatch {
    traces: Vec<Py<Trace>>,
    jobs: usize,
}

/// Runs `f` on every item, `jobs` at a time, keeping the order.
pub fn each<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let jobs = jobs.clamp(1, items.len().max(1));
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::Mutex::new(&mut out);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

impl TraceBatch {
    pub fn load(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        jobs: usize,
        opts: &spall_format::DecodeOptions,
    ) -> PyResult<TraceBatch> {
        let loaded: Vec<Result<Trace, LoadFailure>> =
            py.detach(|| each(&paths, jobs, |p| Trace::open(p, opts)));
        let mut traces = Vec::with_capacity(loaded.len());
        for t in loaded {
            traces.push(Py::new(py, t.map_err(|e| e.into_py(py))?)?);
        }
        Ok(TraceBatch { traces, jobs })
    }
}

#[pymethods]
impl TraceBatch {
    fn __len__(&self) -> usize {
        self.traces.len()
    }

    fn __getitem__(&self, py: Python<'_>, i: isize) -> PyResult<Py<Trace>> {
        let n = self.traces.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if !(0..n).contains(&j) {
            return Err(pyo3::exceptions::PyIndexError::new_err(
                "trace index out of range",
            ));
        }
        Ok(self.traces[j as usize].clone_ref(py))
    }

    /// The traces, in the order of the paths.
    #[getter]
    fn traces(&self, py: Python<'_>) -> Vec<Py<Trace>> {
        self.traces.iter().map(|t| t.clone_ref(py)).collect()
    }

    fn __repr__(&self) -> String {
        format!("<spall.TraceBatch: {} traces>", self.traces.len())
    }

    /// Runs `sql` on every trace (`jobs` at a time) and returns all the rows as one
    /// result, with a first column `trace`: the path the rows came from.
    fn query(&self, py: Python<'_>, sql: &str) -> PyResult<QueryResult> {
        let traces: Vec<&Trace> = self.traces.iter().map(|t| t.get()).collect();
        let results = py.detach(|| {
            guard(|| {
                Ok(each(&traces, self.jobs, |t| {
                    (t.path.clone(), t.run_sql(sql))
                }))
            })
        })?;
        let mut parts = Vec::with_capacity(results.len());
        let mut labels = Vec::with_capacity(results.len());
        for (path, r) in &results {
            match r {
                Ok(r) => parts.push(r),
                Err(e) => {
                    let err = sql_error(py, sql, e);
                    let msg = format!("{}: {}", path.display(), err.value(py));
                    let out = crate::errors::SqlError::new_err(msg);
                    let _ = out.value(py).setattr("offset", e.offset);
                    return Err(out);
                }
            }
            labels.push(path.display().to_string());
        }
        let columns = parts.first().map(|p| p.columns.clone()).unwrap_or_default();
        if let Some(p) = parts.iter().find(|p| p.columns != columns) {
            return Err(SpallError::new_err(format!(
                "the traces' results have different columns: {:?} and {:?}",
                columns, p.columns
            )));
        }
        let batch = py.detach(|| {
            guard(|| {
                to_batch(&columns, &parts, Some(("trace", &labels)))
                    .map_err(|e| SpallError::new_err(e.to_string()))
            })
        })?;
        Ok(QueryResult::new(batch))
    }
}
