//! One table of one trace as one Parquet file, written atomically: Arrow batches from the
//! trace's columns, tagged with the trace, in row groups the engines can skip by their
//! statistics (`slice` is sorted by thread, then time).
//!
//! Encoding is most of the work, so a row group's columns are encoded on several threads
//! (each owning some columns' writers) while this thread builds the next batches.
//! Integers are delta-encoded (ids and times shrink to a few bits) and left uncompressed.
//! Text the trace has interned (`slice`'s names, categories and kinds) and the two tags
//! come as Arrow dictionaries and are written by [`TextChunk`](super::text::TextChunk)
//! without hashing each value; other text goes through Parquet's dictionary, then Snappy.

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::schema::types::ColumnPath;
use trace_sql::arrow::{dictionary_type, Tables};

use super::text::TextChunk;
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
        // Text Parquet's writer encodes (not `TextChunk`'s): through a dictionary. Integers,
        // small ones too: delta-encoded, as hashing each into a dictionary cost four times
        // as much, and sorted ids (`utid`, `track_id`) are runs of zero deltas.
        if f.data_type() == &DataType::Utf8 {
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
        .dictionary_batches(table, BATCH)
        .ok_or_else(|| err(&"no such table"))?;
    // The batches' columns, then the tags: dictionaries of one value.
    let mut fields: Vec<Field> = (batches.schema().fields().iter())
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("trace", dictionary_type(), false));
    fields.push(Field::new("trace_fnv64", dictionary_type(), false));
    let batch_schema = Arc::new(Schema::new(fields));
    // The file's: text as text, whatever the batches hold.
    let fields: Vec<Field> = (batch_schema.fields().iter())
        .map(|f| match f.data_type() {
            DataType::Dictionary(..) => f.as_ref().clone().with_data_type(DataType::Utf8),
            _ => f.as_ref().clone(),
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let text: Vec<bool> = (batch_schema.fields().iter())
        .map(|f| matches!(f.data_type(), DataType::Dictionary(..)))
        .collect();
    let file = spall_util::AtomicFile::create(out)?;
    let w = ArrowWriter::try_new(file, schema.clone(), Some(properties(&schema, tag)))
        .map_err(|e| err(&e))?;
    let (mut writer, factory) = w.into_serialized_writer().map_err(|e| err(&e))?;
    let descr = writer.schema_descr().columns().to_vec();
    // The tags: BATCH zero keys into one value, sliced for each batch.
    let repeat = |s: &str, n: usize| -> Result<ArrayRef, Fatal> {
        let values: ArrayRef = Arc::new(StringArray::from(vec![s]));
        let keys = UInt32Array::from(vec![0; n]);
        let d = DictionaryArray::<UInt32Type>::try_new(keys, values).map_err(|e| err(&e))?;
        Ok(Arc::new(d))
    };
    let (trace, hash) = (repeat(&tag.trace, BATCH)?, repeat(&tag.hash, BATCH)?);
    let tagged = |b: RecordBatch| -> Result<RecordBatch, Fatal> {
        let n = b.num_rows();
        let mut cols = b.columns().to_vec();
        // (Batches are at most BATCH rows; a longer one gets arrays of its own.)
        for (a, s) in [(&trace, &tag.trace), (&hash, &tag.hash)] {
            cols.push(if n <= a.len() {
                a.slice(0, n)
            } else {
                repeat(s, n)?
            });
        }
        RecordBatch::try_new(batch_schema.clone(), cols).map_err(|e| err(&e))
    };
    let mut next = batches.next();
    let mut rows = 0u64;
    let mut row_group = 0;
    while next.is_some() {
        let writers = factory
            .create_column_writers(row_group)
            .map_err(|e| err(&e))?;
        let writers = (writers.into_iter().enumerate())
            .map(|(i, w)| match text[i] {
                true => Encoder::Text(TextChunk::new(descr[i].clone())),
                false => Encoder::Arrow(Box::new(w)),
            })
            .collect();
        row_group += 1;
        let chunks = std::thread::scope(|s| -> Result<Vec<Chunk>, Fatal> {
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
            let mut chunks: Vec<(usize, Chunk)> = Vec::new();
            for w in workers {
                let done = w.join().map_err(|_| err(&"an encoder panicked"))?;
                chunks.extend(done.map_err(|e| err(&e))?);
            }
            chunks.sort_by_key(|(i, _)| *i);
            Ok(chunks.into_iter().map(|(_, c)| c).collect())
        })?;
        let mut rg = writer.next_row_group().map_err(|e| err(&e))?;
        for c in chunks {
            match c {
                Chunk::Arrow(c) => c.append_to_row_group(&mut rg),
                Chunk::Text(bytes, close) => rg.append_column(&bytes, close),
            }
            .map_err(|e| err(&e))?;
        }
        rg.close().map_err(|e| err(&e))?;
    }
    let file = writer.into_inner().map_err(|e| err(&e))?;
    file.commit()?;
    let bytes = out.metadata().map_or(0, |m| m.len());
    Ok(Written { rows, bytes })
}

/// A column's writer in a row group.
enum Encoder {
    Arrow(Box<ArrowColumnWriter>),
    Text(TextChunk),
}

/// A column's chunk of a row group, encoded.
enum Chunk {
    Arrow(ArrowColumnChunk),
    Text(Bytes, ColumnCloseResult),
}

/// The column writers dealt to `threads` workers, each with its columns' indices, text
/// through Parquet's dictionary (its hashing) weighing more.
fn split(writers: Vec<Encoder>, schema: &SchemaRef, threads: usize) -> Vec<Vec<(usize, Encoder)>> {
    let n = threads.clamp(1, writers.len().max(1));
    let mut parts: Vec<(u32, Vec<(usize, Encoder)>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for (i, w) in writers.into_iter().enumerate() {
        let hashed = matches!(w, Encoder::Arrow(_));
        let cost = if hashed && schema.field(i).data_type() == &DataType::Utf8 {
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
    mut part: Vec<(usize, Encoder)>,
    schema: &SchemaRef,
    rx: Receiver<RecordBatch>,
) -> Result<Vec<(usize, Chunk)>, parquet::errors::ParquetError> {
    for b in rx {
        for (i, w) in &mut part {
            match w {
                Encoder::Arrow(w) => {
                    for leaf in compute_leaves(schema.field(*i), b.column(*i))? {
                        w.write(&leaf)?;
                    }
                }
                Encoder::Text(t) => t.write(b.column(*i))?,
            }
        }
    }
    (part.into_iter())
        .map(|(i, w)| {
            Ok(match w {
                Encoder::Arrow(w) => (i, Chunk::Arrow(w.close()?)),
                Encoder::Text(t) => {
                    let (bytes, close) = t.close()?;
                    (i, Chunk::Text(bytes, close))
                }
            })
        })
        .collect()
}
