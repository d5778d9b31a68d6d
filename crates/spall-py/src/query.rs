//! `Trace.query(sql)` and `TraceBatch.query(sql)`: SQL over trace-sql's tables (the ones
//! `spall-cli query` reads), the rows gathered into typed Arrow columns.
//!
//! SQLite's values have no column type: a column is int64 when every value is an integer
//! (or NULL), float64 when every value is a number, else text (numbers written as JSON
//! writes them), as `spall-cli export` types its Parquet columns.

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, NullArray, RecordBatch};
use arrow_pyarrow::{IntoPyArrow, Table};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use serde_json::Value;

/// A finished query: its columns, and its rows as Arrow columns.
#[pyclass(module = "spall", frozen)]
#[derive(Debug)]
pub struct QueryResult {
    batch: RecordBatch,
}

#[pymethods]
impl QueryResult {
    /// The column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        let schema = self.batch.schema();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    fn __repr__(&self) -> String {
        format!(
            "<spall.QueryResult: {} rows, columns {:?}>",
            self.batch.num_rows(),
            self.columns()
        )
    }

    /// The rows as a `pyarrow.Table`.
    fn as_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        table(py, self.batch.clone())
    }

    /// The rows as a `pandas.DataFrame` (as Perfetto's `QueryResultIterator` names it).
    fn as_pandas_dataframe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.as_arrow(py)?.call_method0("to_pandas")
    }

    /// The rows as a list of tuples of Python values (`int`, `float`, `str`, `None`).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let t = self.as_arrow(py)?;
        let columns: Vec<Bound<'py, PyList>> = (0..self.batch.num_columns())
            .map(|i| {
                let c = t.call_method1("column", (i,))?.call_method0("to_pylist")?;
                Ok(c.cast_into::<PyList>()?)
            })
            .collect::<PyResult<_>>()?;
        let rows = PyList::empty(py);
        for i in 0..self.batch.num_rows() {
            let row: Vec<Bound<'py, PyAny>> = columns
                .iter()
                .map(|c| c.get_item(i))
                .collect::<PyResult<_>>()?;
            rows.append(PyTuple::new(py, row)?)?;
        }
        Ok(rows)
    }
}

impl QueryResult {
    pub fn new(batch: RecordBatch) -> QueryResult {
        QueryResult { batch }
    }
}

/// A record batch as a `pyarrow.Table` (through the Arrow C data interface: no copy).
pub fn table<'py>(py: Python<'py>, batch: RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    let schema = batch.schema();
    let t = Table::try_new(vec![batch], schema)
        .map_err(|e| crate::errors::SpallError::new_err(e.to_string()))?;
    t.into_pyarrow(py)
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Null,
    Int,
    Real,
    Text,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Number(n) if n.is_i64() || n.is_u64() => Kind::Int,
        Value::Number(_) => Kind::Real,
        _ => Kind::Text,
    }
}

/// One column of `rows` (the `i`th value of each row, over every part) as the narrowest
/// type that holds all of it.
fn column<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> ArrayRef {
    let k = values.clone().map(kind).max().unwrap_or(Kind::Null);
    match k {
        Kind::Null => Arc::new(NullArray::new(values.count())),
        Kind::Int => {
            let mut b = Int64Builder::new();
            values.for_each(|v| b.append_option(v.as_i64()));
            Arc::new(b.finish())
        }
        Kind::Real => {
            let mut b = Float64Builder::new();
            values.for_each(|v| b.append_option(v.as_f64()));
            Arc::new(b.finish())
        }
        Kind::Text => {
            let mut b = StringBuilder::new();
            values.for_each(|v| match v {
                Value::Null => b.append_null(),
                Value::String(s) => b.append_value(s),
                v => b.append_value(v.to_string()),
            });
            Arc::new(b.finish())
        }
    }
}

/// The rows of several results with the same columns (one per trace) as one batch; with
/// `tag`, a first column `trace` says which part each row came from.
pub fn to_batch(
    columns: &[String],
    parts: &[&trace_sql::QueryResult],
    tag: Option<(&str, &[String])>,
) -> Result<RecordBatch, ArrowError> {
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    if let Some((name, labels)) = tag {
        let mut b = StringBuilder::new();
        for (p, label) in parts.iter().zip(labels) {
            for _ in 0..p.rows.len() {
                b.append_value(label);
            }
        }
        fields.push(Field::new(name, DataType::Utf8, false));
        arrays.push(Arc::new(b.finish()));
    }
    for (i, name) in columns.iter().enumerate() {
        let values = parts
            .iter()
            .flat_map(move |p| p.rows.iter().map(move |r| &r[i]));
        let a = column(values);
        fields.push(Field::new(name, a.data_type().clone(), true));
        arrays.push(a);
    }
    let rows = parts.iter().map(|p| p.rows.len()).sum();
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &opts)
}
