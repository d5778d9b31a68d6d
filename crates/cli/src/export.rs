//! `spall-cli export TRACE OUTDIR`: the SQL tables (docs/SQL.md) as Parquet files, for
//! DuckDB, Polars, pandas or Spark to query many traces together.
//!
//! Every row carries the source trace's path (`trace`) and a hash of its bytes
//! (`trace_fnv64`, FNV-1a 64 in hex), also stored as file metadata, so the files of many
//! traces can be concatenated and still told apart. Each file is written atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use clap::ValueEnum;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use trace_sql::{Event, TraceDb};

use crate::util::{load, Fatal};

/// The tables written, in this order.
pub const TABLES: [&str; 9] = [
    "slice",
    "thread",
    "process",
    "thread_track",
    "counter_track",
    "counter",
    "instant",
    "flow",
    "args",
];

/// Rows per Parquet row group batch.
const BATCH: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Parquet,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A trace: .spall, Chrome JSON or Perfetto protobuf, gzipped or not (told by its content).
    pub trace: PathBuf,
    /// The directory for the files (created if missing): TABLE.parquet for each table.
    pub outdir: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Parquet)]
    pub format: Format,
}

/// FNV-1a, 64 bits: stable across platforms and versions, enough to tell traces apart.
fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    let bytes = spall_format::read_file(&a.trace)?;
    let hash = format!("{:016x}", fnv64(&bytes));
    drop(bytes);
    let (trace, _) = load(&a.trace)?;
    let db = TraceDb::new(Arc::new(trace)).map_err(|e| Fatal(e.message))?;
    std::fs::create_dir_all(&a.outdir)
        .map_err(|e| Fatal(format!("{}: cannot create: {e}", a.outdir.display())))?;
    let source = a.trace.display().to_string();
    for table in TABLES {
        let out = a.outdir.join(format!("{table}.parquet"));
        // `slice` with its hidden columns (utid, self_dur, unfinished, kind).
        let from = if table == "slice" {
            "spall_slice"
        } else {
            table
        };
        let rows = export_table(&db, from, &source, &hash, &out)?;
        eprintln!("spall-cli: wrote {} ({rows} rows)", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

enum Builder {
    Int(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
}

impl Builder {
    fn push(&mut self, v: &Value) {
        match self {
            Builder::Int(b) => b.append_option(v.as_i64()),
            Builder::Real(b) => b.append_option(v.as_f64()),
            Builder::Text(b) => match v {
                Value::Null => b.append_null(),
                Value::String(s) => b.append_value(s),
                v => b.append_value(v.to_string()),
            },
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Real(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The table's columns and their Arrow types: SQLite's declared type, or for an untyped
/// column (`thread.tid`, ids as the file wrote them) integers if every value is one.
fn columns(db: &TraceDb, table: &str) -> Result<Vec<(String, DataType)>, Fatal> {
    let sql_err = |e: trace_sql::Error| Fatal(format!("{table}: {e}"));
    let info = db
        .query(&format!("PRAGMA table_info({table})"))
        .map_err(sql_err)?;
    let mut out = Vec::new();
    for r in &info.rows {
        let name = r[1].as_str().unwrap_or_default().to_string();
        let ty = match r[2].as_str().unwrap_or_default() {
            "INTEGER" => DataType::Int64,
            "REAL" => DataType::Float64,
            "TEXT" => DataType::Utf8,
            _ => {
                let q = format!(
                    "SELECT COUNT(*) FROM {table} WHERE typeof({name}) NOT IN ('integer', 'null')"
                );
                let n = db.query(&q).map_err(sql_err)?;
                if n.rows[0][0].as_i64() == Some(0) {
                    DataType::Int64
                } else {
                    DataType::Utf8
                }
            }
        };
        out.push((name, ty));
    }
    Ok(out)
}

fn export_table(
    db: &TraceDb,
    table: &str,
    source: &str,
    hash: &str,
    out: &Path,
) -> Result<u64, Fatal> {
    let cols = columns(db, table)?;
    let mut fields: Vec<Field> = cols
        .iter()
        .map(|(n, t)| Field::new(n, t.clone(), true))
        .collect();
    fields.push(Field::new("trace", DataType::Utf8, false));
    fields.push(Field::new("trace_fnv64", DataType::Utf8, false));
    let schema = Arc::new(Schema::new(fields));
    let meta = vec![
        KeyValue::new("spall.trace".to_string(), source.to_string()),
        KeyValue::new("spall.trace_fnv64".to_string(), hash.to_string()),
    ];
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(meta))
        .build();
    let file = spall_util::AtomicFile::create(out)?;
    let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props))
        .map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    let new_builders = || -> Vec<Builder> {
        cols.iter()
            .map(|(_, t)| match t {
                DataType::Int64 => Builder::Int(Int64Builder::new()),
                DataType::Float64 => Builder::Real(Float64Builder::new()),
                _ => Builder::Text(StringBuilder::new()),
            })
            .collect()
    };
    let mut builders = new_builders();
    let mut pending = 0usize;
    let mut rows = 0u64;
    let mut failure: Option<Fatal> = None;
    let flush = |b: &mut Vec<Builder>, n: usize, w: &mut ArrowWriter<_>| -> Result<(), Fatal> {
        if n == 0 {
            return Ok(());
        }
        let mut arrays: Vec<ArrayRef> = b.iter_mut().map(Builder::finish).collect();
        let mut s = StringBuilder::new();
        let mut h = StringBuilder::new();
        for _ in 0..n {
            s.append_value(source);
            h.append_value(hash);
        }
        arrays.push(Arc::new(s.finish()));
        arrays.push(Arc::new(h.finish()));
        let batch = RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| Fatal(format!("{table}: {e}")))?;
        w.write(&batch).map_err(|e| Fatal(format!("{table}: {e}")))
    };
    db.each_statement(&format!("SELECT * FROM {table}"), |e| {
        if let Event::Row(r) = e {
            for (b, v) in builders.iter_mut().zip(&r) {
                b.push(v);
            }
            pending += 1;
            rows += 1;
            if pending == BATCH {
                if let Err(f) = flush(&mut builders, pending, &mut w) {
                    failure = Some(f);
                    return Err(trace_sql::Error {
                        message: "write failed".into(),
                        offset: None,
                    });
                }
                pending = 0;
            }
        }
        Ok(())
    })
    .map_err(|e| failure.take().unwrap_or(Fatal(format!("{table}: {e}"))))?;
    flush(&mut builders, pending, &mut w)?;
    let file = w
        .into_inner()
        .map_err(|e| Fatal(format!("{}: {e}", out.display())))?;
    file.commit()?;
    Ok(rows)
}
