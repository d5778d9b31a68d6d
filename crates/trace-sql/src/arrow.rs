//! Every SQL table of a trace as Arrow record batches (feature `arrow`), for Parquet files,
//! pandas, Polars or DuckDB: the same columns as the SQLite tables (docs/SQL.md), read from
//! the same sources, filled straight from the trace's columns into typed arrays (no value
//! per cell).
//!
//! - [`tables`]: the table names, in export order.
//! - [`Tables::new`]: places a trace's slices once (as [`TraceDb::new`](crate::TraceDb::new)
//!   does); [`Tables::schema`] and [`Tables::batches`] then give any table.
//! - [`Tables::dictionary_batches`]: the same rows, with `slice`'s `name`, `category` and
//!   `kind` as dictionaries whose keys are the trace's string ids, for a writer that takes
//!   the trace's interning as it is instead of hashing every value.
//!
//! Types: an `INTEGER` column is `Int64`, `REAL` `Float64`, `TEXT` `Utf8`, and the untyped
//! `tid` and `pid` (a trace may name a thread by text) are `Int64`, NULL for a textual id.
//! Every column is nullable. `slice` also has its hidden columns, as the view `spall_slice`
//! names them: `utid`, `self_dur`, `unfinished` and `kind`; the sample tables theirs
//! (`weight`, `line`).
//!
//! Row order: `slice` gives the spans thread by thread, each thread's in time order (outer
//! first at equal times), then the instants and async slices in id order; the other tables
//! give rows in id order (`counter`: series by series, each in time order).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! let json = br#"[
//!   {"name": "frame", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
//!   {"name": "draw", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}
//! ]"#;
//! let trace = Arc::new(trace_model::load_bytes(json).unwrap());
//! let tables = trace_sql::arrow::Tables::new(trace);
//! assert!(trace_sql::arrow::tables().contains(&"slice"));
//! let mut rows = 0;
//! for batch in tables.batches("slice", 65536).unwrap() {
//!     let batch = batch.unwrap();
//!     assert_eq!(batch.schema().field(0).name(), "id");
//!     rows += batch.num_rows();
//! }
//! assert_eq!(rows, 2);
//! ```

mod spans;

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, RecordBatch, UInt32Array};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use rusqlite::types::Value;
use trace_model::Trace;

use crate::catalog::{columns, Catalog};
use crate::source::{Cell, Source};

/// The tables [`Tables::batches`] gives, in the order an export writes them.
pub const TABLES: [&str; 16] = [
    "slice",
    "thread",
    "process",
    "track",
    "thread_track",
    "process_track",
    "counter_track",
    "counter",
    "instant",
    "flow",
    "args",
    "cpu_profile_stack_sample",
    "perf_sample",
    "stack_profile_callsite",
    "stack_profile_frame",
    "stack_profile_mapping",
];

/// The table names, in export order.
pub fn tables() -> &'static [&'static str] {
    &TABLES
}

/// A trace's tables, ready to be read as Arrow batches any number of times.
#[derive(Clone)]
pub struct Tables {
    catalog: Catalog,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tables")
    }
}

/// How a column is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Real,
    Text,
}

impl Kind {
    fn of(sql_type: &str) -> Kind {
        match sql_type {
            "REAL" => Kind::Real,
            "TEXT" => Kind::Text,
            _ => Kind::Int,
        }
    }

    fn of_arrow(t: &DataType) -> Kind {
        match t {
            DataType::Float64 => Kind::Real,
            DataType::Utf8 | DataType::Dictionary(..) => Kind::Text,
            _ => Kind::Int,
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::Real => DataType::Float64,
            Kind::Text => DataType::Utf8,
        }
    }
}

impl Tables {
    /// Places `trace`'s slices and tracks (as [`TraceDb::new`](crate::TraceDb::new) does).
    pub fn new(trace: Arc<Trace>) -> Tables {
        Tables {
            catalog: Catalog::new(trace),
        }
    }

    /// The Arrow schema of `table`, or `None` for a table not in [`tables`].
    pub fn schema(&self, table: &str) -> Option<SchemaRef> {
        Some(self.layout(table, false)?.0)
    }

    /// `dictionary`: `slice`'s interned text columns as [`dictionary_type`].
    fn layout(
        &self,
        table: &str,
        dictionary: bool,
    ) -> Option<(SchemaRef, Vec<Kind>, Arc<dyn Source>)> {
        if !TABLES.contains(&table) {
            return None;
        }
        let source = self.catalog.get(table)?.clone();
        let cols = columns(&source.schema());
        let kinds: Vec<Kind> = cols.iter().map(|c| Kind::of(&c.ty)).collect();
        let fields: Vec<Field> = cols
            .iter()
            .zip(&kinds)
            .map(|(c, k)| {
                // The view `spall_slice` names the hidden `spall_utid` `utid`.
                let name = c.name.strip_prefix("spall_").unwrap_or(&c.name);
                let interned = matches!(name, "name" | "category" | "kind");
                if dictionary && table == "slice" && interned {
                    Field::new(name, dictionary_type(), true)
                } else {
                    Field::new(name, k.data_type(), true)
                }
            })
            .collect();
        Some((Arc::new(Schema::new(fields)), kinds, source))
    }

    /// The rows of `table` in batches of at most `rows_per_batch` rows; `None` for a table
    /// not in [`tables`]. Memory: one batch at a time.
    pub fn batches(&self, table: &str, rows_per_batch: usize) -> Option<Batches> {
        self.batches_as(table, rows_per_batch, false)
    }

    /// As [`Tables::batches`], but `slice`'s `name`, `category` and `kind` are
    /// [`dictionary_type`]: a span's keys are the trace's string ids, into one values array
    /// holding the trace's whole string table (the same array in every batch: built once,
    /// as large as the table); `kind`'s values are its one text; the other rows' keys
    /// index values of their batch's own, one per row. The other tables are as
    /// [`Tables::batches`] gives them.
    pub fn dictionary_batches(&self, table: &str, rows_per_batch: usize) -> Option<Batches> {
        self.batches_as(table, rows_per_batch, true)
    }

    fn batches_as(&self, table: &str, rows_per_batch: usize, dict: bool) -> Option<Batches> {
        let (schema, kinds, source) = self.layout(table, dict)?;
        let (spans, rows) = if table == "slice" {
            let s = &self.catalog.slices;
            let walk = spans::Walk::new(s.clone(), &schema);
            (Some(walk), s.v().span_slices()..s.v().len())
        } else {
            (None, 0..0)
        };
        let ranges = if table == "slice" {
            vec![rows]
        } else {
            source.plan(&[])
        };
        Some(Batches {
            schema,
            kinds,
            source,
            rows: rows_per_batch.max(1),
            spans,
            ranges: ranges.into_iter(),
            current: 0..0,
            pending: VecDeque::new(),
        })
    }
}

/// The batches of one table ([`Tables::batches`]).
pub struct Batches {
    schema: SchemaRef,
    kinds: Vec<Kind>,
    source: Arc<dyn Source>,
    rows: usize,
    /// `slice`'s spans, first.
    spans: Option<spans::Walk>,
    /// Then the rows read through the table's source.
    ranges: std::vec::IntoIter<Range<u64>>,
    current: Range<u64>,
    /// Rows of an expanded row (`args`) not yet given.
    pending: VecDeque<Vec<Value>>,
}

impl std::fmt::Debug for Batches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Batches")
    }
}

impl Batches {
    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn next_row(&mut self) -> Option<u64> {
        loop {
            if let Some(r) = self.current.next() {
                return Some(r);
            }
            self.current = self.ranges.next()?;
        }
    }

    /// Up to `rows` rows read through the source, column by column of each row.
    fn source_batch(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        let mut cols: Vec<Col> = self.kinds.iter().map(|&k| Col::new(k, self.rows)).collect();
        let mut n = 0;
        while n < self.rows {
            if let Some(sub) = self.pending.pop_front() {
                for (c, v) in cols.iter_mut().zip(&sub) {
                    c.push(&value_cell(v));
                }
                n += 1;
                continue;
            }
            let Some(row) = self.next_row() else {
                break;
            };
            match self.source.sub_rows(row) {
                Some(sub) => self.pending.extend(sub),
                None => {
                    for (k, c) in cols.iter_mut().enumerate() {
                        c.push(&self.source.column(row, k));
                    }
                    n += 1;
                }
            }
        }
        if n == 0 {
            return None;
        }
        let arrays = (cols.iter_mut().zip(self.schema.fields()))
            .map(|(c, f)| match f.data_type() {
                DataType::Dictionary(..) => row_dictionary(c.finish()),
                _ => Ok(c.finish()),
            })
            .collect::<Result<Vec<_>, _>>();
        Some(arrays.and_then(|a| RecordBatch::try_new(self.schema.clone(), a)))
    }
}

/// The type of [`Tables::dictionary_batches`]' dictionary columns.
pub fn dictionary_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8))
}

/// Text `values` as a dictionary of its own values, one key per row (NULL where a value is).
fn row_dictionary(values: ArrayRef) -> Result<ArrayRef, ArrowError> {
    let keys = UInt32Array::new((0..values.len() as u32).collect(), values.nulls().cloned());
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(
        keys, values,
    )?))
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(walk) = &mut self.spans {
            match walk.batch(self.rows, &self.schema) {
                Some(b) => return Some(b),
                None => self.spans = None,
            }
        }
        self.source_batch()
    }
}

/// A builder for a column of any [`Kind`].
pub(crate) enum Col {
    Int(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
}

impl Col {
    fn new(kind: Kind, rows: usize) -> Col {
        match kind {
            Kind::Int => Col::Int(Int64Builder::with_capacity(rows)),
            Kind::Real => Col::Real(Float64Builder::with_capacity(rows)),
            Kind::Text => Col::Text(StringBuilder::with_capacity(rows, rows * 16)),
        }
    }

    /// Appends `c`, converted to the column's kind (NULL where it cannot be: a textual id in
    /// an integer column).
    pub(crate) fn push(&mut self, c: &Cell<'_>) {
        match (self, c) {
            (Col::Int(b), Cell::Int(v)) => b.append_value(*v),
            (Col::Int(b), _) => b.append_null(),
            (Col::Real(b), Cell::Real(v)) => b.append_value(*v),
            (Col::Real(b), Cell::Int(v)) => b.append_value(*v as f64),
            (Col::Real(b), _) => b.append_null(),
            (Col::Text(b), Cell::Text(s)) => b.append_value(s),
            (Col::Text(b), Cell::Owned(s)) => b.append_value(s),
            (Col::Text(b), Cell::Int(v)) => b.append_value(v.to_string()),
            (Col::Text(b), Cell::Real(v)) => b.append_value(v.to_string()),
            (Col::Text(b), Cell::Null) => b.append_null(),
        }
    }

    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Int(b) => Arc::new(b.finish()),
            Col::Real(b) => Arc::new(b.finish()),
            Col::Text(b) => Arc::new(b.finish()),
        }
    }
}

fn value_cell(v: &Value) -> Cell<'_> {
    match v {
        Value::Integer(i) => Cell::Int(*i),
        Value::Real(r) => Cell::Real(*r),
        Value::Text(s) => Cell::Text(s),
        Value::Null | Value::Blob(_) => Cell::Null,
    }
}

#[cfg(test)]
mod tests;
