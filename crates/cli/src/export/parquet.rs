//! One table of one trace as one Parquet file, written atomically: Arrow batches from the
//! trace's columns, tagged with the trace, in row groups the engines can skip by their
//! statistics (`slice` is sorted by thread, then time).
//!
//! Encoding is most of the work, so a row group's columns are encoded on several threads
//! (each owning some columns' writers) while this thread builds the next batches.
//! Integers are delta-encoded (ids and times shrink to a few bits) and left uncompressed;
//! text and small integers go through a dictionary, then Snappy.

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesBuilder};
use parquet::schema::types::ColumnPath;
use trace_sql::arrow::Tables;

use crate::util::Fatal;

/// Rows per Arrow batch: what is built in memory at a time.
const BATCH: usize = 64 * 1024;
/// Rows per row group: what an engine reads or skips at a time, and what is held encoded
/// in memory before it is written.
pub const ROW_GROUP: usize = 1024 * 1024;

/// The trace a file's rows come from.
pub struct Tag {
    /// The path as given.
    pub trace: String,
    /// FNV-1a 64 of its bytes, 16 hex digits.
    pub hash: String,
}

pub struct Written {
    pub rows: u64,
    pub bytes: u64,
}

/// Columns worth a dictionary: text and small integers (ids and times are not).
fn dictionary(f: &Field) -> bool {
    f.data_type() == &DataType::Utf8
        || matches!(
            f.name().as_str(),
            "utid" | "upid" | "track_id" | "depth" | "unfinished" | "sort_index"
        )
}

fn properties(schema: &Schema, tag: &Tag) -> WriterProperties {
    let meta = vec![
        KeyValue::new("spall.trace".to_string(), tag.trace.clone()),
        KeyValue::new("spall.trace_fnv64".to_string(), tag.hash.clone()),
    ];
    let mut props: WriterPropertiesBuilder = WriterProperties::builder()
        .set_key_value_metadata(Some(meta))
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_dictionary_enabled(false);
    for f in schema.fields() {
        let col = ColumnPath::from(f.name().as_str());
        // The tags are the same in every row of a file (and name it): statistics would
        // compare every value for nothing.
        if matches!(f.name().as_str(), "trace" | "trace_fnv64") {
            props = props.set_column_statistics_enabled(col.clone(), EnabledStatistics::None);
        }
        if dictionary(f) {
            props = props.set_column_dictionary_enabled(col, true);
        } else if f.data_type() == &DataType::Int64 {
            props = props
                .set_column_encoding(col.clone(), Encoding::DELTA_BINARY_PACKED)
                .set_column_compression(col, Compression::UNCOMPRESSED);
        }
    }
    props.build()
}

/// Writes `table` of `tables` to `out`, encoding on `threads` threads.
pub fn write(
    tables: &Tables,
    table: &str,
    tag: &Tag,
    out: &Path,
    threads: usize,
) -> Result<Written, Fatal> {
    let err = |e: &dyn std::fmt::Display| Fatal(format!("{}: {e}", out.display()));
    let mut batches = tables
        .batches(table, BATCH)
        .ok_or_else(|| err(&"no such table"))?;
    let inner = batches.schema();
    let mut fields: Vec<Field> = inner.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("trace", DataType::Utf8, false));
    fields.push(Field::new("trace_fnv64", DataType::Utf8, false));
    let schema = Arc::new(Schema::new(fields));
    let file = spall_util::AtomicFile::create(out)?;
    let w = ArrowWriter::try_new(file, schema.clone(), Some(properties(&schema, tag)))
        .map_err(|e| err(&e))?;
    let (mut writer, factory) = w.into_serialized_writer().map_err(|e| err(&e))?;
    // The tags: one array of BATCH copies, sliced for each batch.
    let repeat = |s: &str, n: usize| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(s, n)))
    };
    let (trace, hash) = (repeat(&tag.trace, BATCH), repeat(&tag.hash, BATCH));
    let tagged = |b: RecordBatch| -> Result<RecordBatch, Fatal> {
        let n = b.num_rows();
        let mut cols = b.columns().to_vec();
        // (Batches are at most BATCH rows; a longer one gets arrays of its own.)
        for (a, s) in [(&trace, &tag.trace), (&hash, &tag.hash)] {
            cols.push(if n <= a.len() {
                a.slice(0, n)
            } else {
                repeat(s, n)
            });
        }
        RecordBatch::try_new(schema.clone(), cols).map_err(|e| err(&e))
    };
    let mut next = batches.next();
    let mut rows = 0u64;
    let mut row_group = 0;
    while next.is_some() {
        let writers = factory
            .create_column_writers(row_group)
            .map_err(|e| err(&e))?;
        row_group += 1;
        let chunks = std::thread::scope(|s| -> Result<Vec<ArrowColumnChunk>, Fatal> {
            let mut senders = Vec::new();
            let mut workers = Vec::new();
            for part in split(writers, &schema, threads) {
                let (tx, rx) = sync_channel::<RecordBatch>(2);
                senders.push(tx);
                let schema = schema.clone();
                workers.push(s.spawn(move || encode(part, &schema, rx)));
            }
            // This row group's batches, built here while the workers encode.
            let mut in_group = 0;
            while in_group < ROW_GROUP {
                let Some(b) = next.take() else { break };
                let b = tagged(b.map_err(|e| err(&e))?)?;
                in_group += b.num_rows();
                rows += b.num_rows() as u64;
                for tx in &senders {
                    // A worker that stopped has failed: its join says why.
                    let _ = tx.send(b.clone());
                }
                next = batches.next();
            }
            drop(senders);
            let mut chunks: Vec<(usize, ArrowColumnChunk)> = Vec::new();
            for w in workers {
                let done = w.join().map_err(|_| err(&"an encoder panicked"))?;
                chunks.extend(done.map_err(|e| err(&e))?);
            }
            chunks.sort_by_key(|(i, _)| *i);
            Ok(chunks.into_iter().map(|(_, c)| c).collect())
        })?;
        let mut rg = writer.next_row_group().map_err(|e| err(&e))?;
        for c in chunks {
            c.append_to_row_group(&mut rg).map_err(|e| err(&e))?;
        }
        rg.close().map_err(|e| err(&e))?;
    }
    let file = writer.into_inner().map_err(|e| err(&e))?;
    file.commit()?;
    let bytes = out.metadata().map_or(0, |m| m.len());
    Ok(Written { rows, bytes })
}

/// The column writers dealt to `threads` workers, each with its columns' indices, text
/// (the dictionary's hashing) weighing more.
fn split(
    writers: Vec<ArrowColumnWriter>,
    schema: &SchemaRef,
    threads: usize,
) -> Vec<Vec<(usize, ArrowColumnWriter)>> {
    let n = threads.clamp(1, writers.len().max(1));
    let mut parts: Vec<(u32, Vec<(usize, ArrowColumnWriter)>)> =
        (0..n).map(|_| (0, Vec::new())).collect();
    for (i, w) in writers.into_iter().enumerate() {
        let cost = if schema.field(i).data_type() == &DataType::Utf8 {
            3
        } else {
            1
        };
        let p = (0..n).min_by_key(|&p| parts[p].0).unwrap_or(0);
        parts[p].0 += cost;
        parts[p].1.push((i, w));
    }
    parts.into_iter().map(|(_, p)| p).collect()
}

/// Encodes its columns of every batch it receives; their chunks once the row group ends.
fn encode(
    mut part: Vec<(usize, ArrowColumnWriter)>,
    schema: &SchemaRef,
    rx: Receiver<RecordBatch>,
) -> Result<Vec<(usize, ArrowColumnChunk)>, parquet::errors::ParquetError> {
    for b in rx {
        for (i, w) in &mut part {
            for leaf in compute_leaves(schema.field(*i), b.column(*i))? {
                w.write(&leaf)?;
            }
        }
    }
    part.into_iter().map(|(i, w)| Ok((i, w.close()?))).collect()
}
