//! SQL over a loaded [`Trace`], the way Perfetto's trace processor offers it: SQLite (bundled,
//! nothing to install) with **virtual tables over the trace**, not a copy of it, under
//! Perfetto's table and column names, so queries written for Perfetto run here.
//!
//! Tables: `slice`, `thread`, `process`, `track`, `thread_track`, `process_track`,
//! `counter_track`, `counter`, `instant`, `flow`, `args` (parsed from each event's raw JSON
//! only when read), the samples' `cpu_profile_stack_sample`, `perf_sample`,
//! `stack_profile_callsite`, `stack_profile_frame` and `stack_profile_mapping`, the views `spall_slice` (`slice` with `utid`, `self_dur`, `unfinished`
//! and `kind`) and `thread_slice`, the table-valued functions `ancestor_slice(id)`,
//! `descendant_slice(id)`, `directly_connected_flow(id)`, `following_flow(id)` and
//! `preceding_flow(id)`, and the function `EXTRACT_ARG(arg_set_id, key)`. `slice` holds
//! spans, instants (`dur = 0`) and async slices, placed as trace_processor places them:
//! the tables only expose trace-model's [`perfetto`](trace_model::perfetto) view, where
//! the nesting, placing and flow binding are settled once per trace.
//! Times are integer nanoseconds; an unfinished slice has `dur = -1`. Constraints on `slice`'s `id`, `ts`, `track_id`, `depth` and `name` are
//! pushed into the table: `WHERE track_id = 3 AND ts BETWEEN a AND b` reads only that
//! thread's spans in that range. The columns are in `docs/SQL.md`.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! let json = br#"[
//!   {"name": "frame", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
//!   {"name": "draw", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {"n": 7}}
//! ]"#;
//! let trace = Arc::new(trace_model::load_bytes(json).unwrap());
//! let db = trace_sql::TraceDb::new(trace).unwrap();
//! let r = db
//!     .query("SELECT name, dur, parent_id IS NOT NULL FROM slice ORDER BY ts")
//!     .unwrap();
//! assert_eq!(r.columns, ["name", "dur", "parent_id IS NOT NULL"]);
//! assert_eq!(r.rows[1][0].as_str(), Some("draw"));
//! assert_eq!(r.rows[1][1].as_i64(), Some(2000));
//! let n = db.query("SELECT int_value FROM slice JOIN args USING (arg_set_id) WHERE key = 'args.n'").unwrap();
//! assert_eq!(n.rows[0][0].as_i64(), Some(7));
//! ```

#![warn(missing_docs)]

#[cfg(feature = "arrow")]
pub mod arrow;
mod catalog;
mod connected;
mod samples;
mod sched;
mod slices;
mod source;
mod tables;
mod vtab;

use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value as Json;
use trace_model::Trace;

use connected::{Connected, Mode};
use slices::Related;
use tables::Args;

/// A query's failure, as SQLite reports it, with where in the SQL when it says.
#[derive(Debug)]
pub struct Error {
    /// SQLite's message (or rusqlite's, for errors outside SQLite).
    pub message: String,
    /// Byte offset into the SQL of the error, when SQLite knows it.
    pub offset: Option<usize>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        let offset = match &e {
            rusqlite::Error::SqlInputError { offset, .. } => usize::try_from(*offset).ok(),
            _ => None,
        };
        let message = match &e {
            rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
            e => e.to_string(),
        };
        Error { message, offset }
    }
}

/// A finished query: column names and rows of JSON values (integers, reals, text, null).
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    /// The result's column names, in order.
    pub columns: Vec<String>,
    /// The rows, each one value per column of [`columns`](Self::columns).
    pub rows: Vec<Vec<Json>>,
    /// Rows were left out past the limit given to [`TraceDb::query_limited`].
    pub truncated: bool,
}

/// Stops a query running on another thread (it then fails with "interrupted").
pub use rusqlite::InterruptHandle;

/// A SQLite connection whose tables are the trace.
pub struct TraceDb {
    db: Connection,
}

impl std::fmt::Debug for TraceDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceDb")
    }
}

impl TraceDb {
    /// An in-memory database over `trace`. Costs O(threads + counter series): no rows are
    /// copied.
    pub fn new(trace: Arc<Trace>) -> Result<TraceDb, Error> {
        let db = Connection::open_in_memory()?;
        let catalog = catalog::Catalog::new(trace.clone());
        for (name, source) in &catalog.tables {
            vtab::register(&db, name, source.clone())?;
        }
        let related = |ancestors| Related {
            slices: catalog.slices.clone(),
            ancestors,
        };
        vtab::register(&db, "ancestor_slice", Arc::new(related(true)))?;
        vtab::register(&db, "descendant_slice", Arc::new(related(false)))?;
        for (name, mode, ancestors) in [
            ("directly_connected_flow", Mode::Direct, false),
            ("following_flow", Mode::Following, false),
            ("preceding_flow", Mode::Preceding, true),
        ] {
            let f = Connected::new(catalog.flows.clone(), related(ancestors), mode);
            vtab::register(&db, name, Arc::new(f))?;
        }
        extract_arg(&db, Args::new(trace.clone()))?;
        db.execute_batch(
            "CREATE TEMP VIEW spall_slice AS
               SELECT slice.*, spall_utid AS utid, self_dur, unfinished, kind FROM slice;
             CREATE TEMP VIEW thread_slice AS
               SELECT spall_slice.*, thread.tid AS tid, thread.name AS thread_name,
                      thread.upid AS upid, process.pid AS pid, process.name AS process_name
               FROM spall_slice JOIN thread USING (utid) LEFT JOIN process USING (upid);",
        )?;
        Ok(TraceDb { db })
    }

    /// Runs every statement of `sql`; returns the last one's columns and rows.
    pub fn query(&self, sql: &str) -> Result<QueryResult, Error> {
        self.query_limited(sql, usize::MAX)
    }

    /// [`query`](TraceDb::query), keeping at most `max_rows` rows of the last statement
    /// (the rest are not computed: the statement stops there).
    pub fn query_limited(&self, sql: &str, max_rows: usize) -> Result<QueryResult, Error> {
        const STOP: &str = "\0row limit";
        let mut last = QueryResult::default();
        let r = self.each_statement(sql, |e| {
            match e {
                Event::Columns(c) => {
                    last = QueryResult {
                        columns: c.to_vec(),
                        ..QueryResult::default()
                    }
                }
                Event::Row(_) if last.rows.len() >= max_rows => {
                    last.truncated = true;
                    return Err(Error {
                        message: STOP.into(),
                        offset: None,
                    });
                }
                Event::Row(r) => last.rows.push(r),
            }
            Ok(())
        });
        match r {
            Err(e) if e.message != STOP => Err(e),
            _ => Ok(last),
        }
    }

    /// A handle that interrupts this connection's running query from another thread.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.db.get_interrupt_handle()
    }

    /// Runs every statement of `sql`, streaming: each statement's column names, then its
    /// rows (so a CLI prints a million rows without holding them).
    pub fn each_statement(
        &self,
        sql: &str,
        mut each: impl FnMut(Event<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        use rusqlite::fallible_iterator::FallibleIterator;
        let mut batch = rusqlite::Batch::new(&self.db, sql);
        loop {
            let mut stmt = match batch.next() {
                Ok(Some(s)) => s,
                Ok(None) => return Ok(()),
                Err(e) => return Err(at_offset(e, sql)),
            };
            let columns: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
            each(Event::Columns(&columns))?;
            let n = columns.len();
            let mut rows = stmt.raw_query();
            while let Some(r) = rows.next()? {
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(match r.get_ref(i)? {
                        ValueRef::Null => Json::Null,
                        ValueRef::Integer(v) => Json::from(v),
                        ValueRef::Real(v) => Json::from(v),
                        ValueRef::Text(t) => Json::String(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(b) => Json::String(format!("<{} bytes>", b.len())),
                    });
                }
                each(Event::Row(out))?;
            }
        }
    }
}

/// `EXTRACT_ARG(arg_set_id, key)`, as trace_processor defines it: the value of the argument
/// `key` in the set (an integer, text or real; a bool as 0 or 1), NULL when the set or the
/// key is absent.
fn extract_arg(db: &Connection, args: Args) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    use rusqlite::types::Value;
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_scalar_function("EXTRACT_ARG", 2, flags, move |ctx| {
        let (Ok(set), Ok(key)) = (ctx.get::<i64>(0), ctx.get::<String>(1)) else {
            return Ok(Value::Null);
        };
        Ok(args.value(set, &key).unwrap_or(Value::Null))
    })
}

/// What [`TraceDb::each_statement`] streams.
#[derive(Debug)]
pub enum Event<'a> {
    /// A statement's column names, before its rows.
    Columns(&'a [String]),
    /// One row of the statement: one value per column, in the order of its `Columns`.
    Row(Vec<Json>),
}

/// The error with its offset made relative to the whole of `sql` (SQLite reports it within
/// the statement being prepared, which is the rest of the text).
fn at_offset(e: rusqlite::Error, sql: &str) -> Error {
    let rest = match &e {
        rusqlite::Error::SqlInputError { sql: rest, .. } => Some(rest.len()),
        _ => None,
    };
    let mut out = Error::from(e);
    if let (Some(o), Some(rest)) = (out.offset, rest) {
        out.offset = Some(sql.len().saturating_sub(rest) + o);
    }
    out
}
