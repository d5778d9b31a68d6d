//! A text column chunk written from Arrow dictionaries without hashing every value: the
//! trace has interned its strings already (`Tables::dictionary_batches` gives them as
//! string ids over the string table), so each row's entry in the row group's dictionary is
//! found through a table indexed by that id, and only a value first seen is hashed.
//!
//! The pages are what Parquet's writer makes of a dictionary column (a PLAIN dictionary
//! page, then RLE_DICTIONARY data pages v1 with RLE definition levels), uncompressed: the
//! indices are bit-packed or run-length encoded already. Min and max are taken over the
//! dictionary's entries (every entry is some row's value), once per row group; no page
//! statistics or page index (engines prune on `utid` and `ts`).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

/// No entry yet for this value.
const NONE: u32 = u32::MAX;

/// One row group's chunk of one text column, built from `Dictionary(UInt32, Utf8)` arrays.
pub struct TextChunk {
    descr: ColumnDescPtr,
    /// The dictionary page's body (PLAIN: a 4-byte length, then the bytes, per entry), and
    /// where each entry's bytes start in it.
    dict: Vec<u8>,
    starts: Vec<usize>,
    by_text: HashMap<Box<[u8]>, u32>,
    /// The values array last seen (held, so its address is not reused) and each of its
    /// values' entry.
    values: Option<ArrayRef>,
    entry_of: Vec<u32>,
    /// Encoded data page bodies and their row counts.
    pages: Vec<(Vec<u8>, u32)>,
    rows: u64,
    nulls: u64,
    indices: Vec<u32>,
}

impl TextChunk {
    pub fn new(descr: ColumnDescPtr) -> TextChunk {
        TextChunk {
            descr,
            dict: Vec::new(),
            starts: Vec::new(),
            by_text: HashMap::new(),
            values: None,
            entry_of: Vec::new(),
            pages: Vec::new(),
            rows: 0,
            nulls: 0,
            indices: Vec::new(),
        }
    }

    /// Encodes `a`, a `Dictionary(UInt32, Utf8)` array, as one data page.
    pub fn write(&mut self, a: &dyn Array) -> Result<(), ParquetError> {
        let name = self.name();
        let wrong = || ParquetError::General(format!("{name}: not a text dictionary"));
        let d = a.as_dictionary_opt::<UInt32Type>().ok_or_else(wrong)?;
        let values = d.values();
        let strings = values.as_string_opt::<i32>().ok_or_else(wrong)?;
        if !self.values.as_ref().is_some_and(|v| Arc::ptr_eq(v, values)) {
            self.values = Some(values.clone());
            self.entry_of.clear();
            self.entry_of.resize(values.len(), NONE);
        }
        let nulls = d.logical_nulls();
        let keys = d.keys().values();
        if keys.iter().any(|&k| k as usize >= strings.len()) {
            return Err(wrong());
        }
        self.indices.clear();
        for (i, &k) in keys.iter().enumerate() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                continue;
            }
            let mut e = self.entry_of[k as usize];
            if e == NONE {
                e = self.entry(strings.value(k as usize).as_bytes());
                self.entry_of[k as usize] = e;
            }
            self.indices.push(e);
        }
        let n = keys.len();
        let null_count = n - self.indices.len();
        let mut body = Vec::with_capacity(8 + self.indices.len() * 4);
        if self.descr.max_def_level() > 0 {
            let mut levels = Vec::new();
            match &nulls {
                Some(m) if null_count > 0 => {
                    let l: Vec<u32> = (0..n).map(|i| m.is_valid(i) as u32).collect();
                    hybrid(&l, 1, &mut levels);
                }
                _ => run(n, 1, 1, &mut levels),
            }
            body.extend_from_slice(&(levels.len() as u32).to_le_bytes());
            body.extend_from_slice(&levels);
        } else if null_count > 0 {
            return Err(ParquetError::General(format!(
                "{name}: NULL in a required column"
            )));
        }
        let width = bits(self.starts.len().saturating_sub(1) as u32);
        body.push(width);
        hybrid(&self.indices, width, &mut body);
        self.pages.push((body, n as u32));
        self.rows += n as u64;
        self.nulls += null_count as u64;
        Ok(())
    }

    fn name(&self) -> String {
        self.descr.path().string()
    }

    /// The dictionary entry of `v`, added if new.
    fn entry(&mut self, v: &[u8]) -> u32 {
        if let Some(&e) = self.by_text.get(v) {
            return e;
        }
        let e = self.starts.len() as u32;
        self.dict.extend_from_slice(&(v.len() as u32).to_le_bytes());
        self.starts.push(self.dict.len());
        self.dict.extend_from_slice(v);
        self.by_text.insert(v.into(), e);
        e
    }

    fn text(&self, e: usize) -> &[u8] {
        let s = self.starts[e];
        let len = u32::from_le_bytes([
            self.dict[s - 4],
            self.dict[s - 3],
            self.dict[s - 2],
            self.dict[s - 1],
        ]);
        &self.dict[s..s + len as usize]
    }

    /// The chunk's bytes (dictionary page first) and what the row group needs to know of it.
    pub fn close(self) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        let entries = self.starts.len();
        let (mut min, mut max) = (None::<&[u8]>, None::<&[u8]>);
        for e in 0..entries {
            let t = self.text(e);
            min = Some(min.map_or(t, |m| m.min(t)));
            max = Some(max.map_or(t, |m| m.max(t)));
        }
        let stats = Statistics::byte_array(
            min.map(|m| ByteArray::from(m.to_vec())),
            max.map(|m| ByteArray::from(m.to_vec())),
            None,
            Some(self.nulls),
            false,
        );
        let mut sink = TrackedWrite::new(Vec::new());
        let mut pages = SerializedPageWriter::new(&mut sink);
        let (mut compressed, mut uncompressed) = (0, 0);
        let mut data_offset = None;
        let dict_len = self.dict.len();
        let dict = Page::DictionaryPage {
            buf: self.dict.into(),
            num_values: entries as u32,
            encoding: Encoding::PLAIN,
            is_sorted: false,
        };
        let mut all = vec![CompressedPage::new(dict, dict_len)];
        for (body, rows) in self.pages {
            let len = body.len();
            let page = Page::DataPage {
                buf: body.into(),
                num_values: rows,
                encoding: Encoding::RLE_DICTIONARY,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            };
            all.push(CompressedPage::new(page, len));
        }
        for (k, page) in all.into_iter().enumerate() {
            let spec = pages.write_page(page)?;
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            if k == 1 {
                data_offset = Some(spec.offset as i64);
            }
        }
        pages.close()?;
        let bytes = Bytes::from(sink.into_inner()?);
        let metadata = ColumnChunkMetaData::builder(self.descr)
            .set_compression(Compression::UNCOMPRESSED)
            .set_encodings(vec![
                Encoding::PLAIN,
                Encoding::RLE,
                Encoding::RLE_DICTIONARY,
            ])
            .set_num_values(self.rows as i64)
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_dictionary_page_offset(Some(0))
            .set_data_page_offset(data_offset.unwrap_or(0))
            .set_statistics(stats)
            .build()?;
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: self.rows,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        };
        Ok((bytes, close))
    }
}

/// Bits to store values up to `max`.
fn bits(max: u32) -> u8 {
    (32 - max.leading_zeros()) as u8
}

/// `n` copies of `v` as one RLE run of the hybrid encoding.
fn run(n: usize, v: u32, width: u8, out: &mut Vec<u8>) {
    uleb((n as u64) << 1, out);
    out.extend_from_slice(&v.to_le_bytes()[..(width as usize).div_ceil(8)]);
}

fn uleb(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Parquet's RLE / bit-packing hybrid of `vals` at `width` bits: runs of 8 or more equal
/// values as RLE runs, the rest bit-packed in groups of 8 (the last one padded with zeros).
fn hybrid(vals: &[u32], width: u8, out: &mut Vec<u8>) {
    // Bit-packed runs of at most 63 groups, so that each header is one byte.
    const MAX_GROUPS: usize = 63;
    let mut i = 0;
    while i < vals.len() {
        let same = vals[i..].iter().take_while(|&&v| v == vals[i]).count();
        if same >= 8 {
            run(same, vals[i], width, out);
            i += same;
            continue;
        }
        // Groups of 8 until a group of 8 equal values (an RLE run) starts.
        let start = i;
        let mut groups = 0;
        while i < vals.len() && groups < MAX_GROUPS {
            let g = &vals[i..(i + 8).min(vals.len())];
            if g.len() == 8 && g.iter().all(|&v| v == g[0]) {
                break;
            }
            i += g.len();
            groups += 1;
        }
        out.push((groups << 1 | 1) as u8);
        let (mut acc, mut filled) = (0u64, 0u32);
        for k in 0..groups * 8 {
            let v = vals.get(start + k).copied().unwrap_or(0);
            acc |= (v as u64) << filled;
            filled += width as u32;
            while filled >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                filled -= 8;
            }
        }
        if filled > 0 {
            out.push(acc as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the hybrid encoding as the Parquet spec defines it, independently.
    fn decode(mut b: &[u8], width: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < n {
            let (mut h, mut shift) = (0u64, 0);
            loop {
                let c = b[0];
                b = &b[1..];
                h |= ((c & 0x7f) as u64) << shift;
                shift += 7;
                if c < 0x80 {
                    break;
                }
            }
            if h & 1 == 0 {
                let w = (width as usize).div_ceil(8);
                let mut v = [0u8; 4];
                v[..w].copy_from_slice(&b[..w]);
                b = &b[w..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(v),
                    (h >> 1) as usize,
                ));
            } else {
                let count = (h >> 1) as usize * 8;
                let len = count * width as usize / 8;
                for k in 0..count {
                    let mut v = 0u32;
                    for bit in 0..width as usize {
                        let at = k * width as usize + bit;
                        v |= ((b[at / 8] >> (at % 8) & 1) as u32) << bit;
                    }
                    out.push(v);
                }
                b = &b[len..];
            }
        }
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_round_trips_runs_and_packed_groups() {
        let mut vals: Vec<u32> = (0..1000).map(|i| (i * 7919 % 37) as u32).collect();
        vals.extend(std::iter::repeat_n(5, 20));
        vals.extend((0..13).map(|i| i % 3));
        vals.extend(std::iter::repeat_n(36, 7));
        for width in [6u8, 9, 17] {
            let mut out = Vec::new();
            hybrid(&vals, width, &mut out);
            assert_eq!(decode(&out, width, vals.len()), vals, "width {width}");
        }
        let mut out = Vec::new();
        hybrid(&[0; 100], 0, &mut out);
        assert_eq!(out, [200, 1]);
    }
}
