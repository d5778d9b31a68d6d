//! The byte writer and reader of transferred traces (and of what is transferred beside
//! them, such as an index): little-endian values, and lengths that the reader checks
//! against the bytes left before it allocates anything, so a damaged buffer is an error,
//! never a panic or an unbounded allocation.
//!
//! A model's large columns (`col_*`) are written inline, or, in a transfer in pieces, as
//! their length inline and their values to a [`ColumnSink`] (a column of zeros as its
//! length alone, marked); a reader of such a buffer gives each column its length, zeroed,
//! and [`ColumnFill`] fills them afterwards.

use super::pieces::{ColumnSink, Stream};
use super::TransferError;

/// The mark of a column of zeros in a transfer in pieces: its length with this bit set,
/// none of its values in the streams (the fill writes zeros).
pub(crate) const ZERO_COL: u64 = 1 << 63;

/// Appends little-endian values to a buffer.
#[derive(Default)]
pub struct TransferWriter<'a> {
    buf: Vec<u8>,
    /// Where the large columns' values go in a transfer in pieces.
    sink: Option<&'a mut dyn ColumnSink>,
}

impl std::fmt::Debug for TransferWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransferWriter")
            .field("bytes", &self.buf.len())
            .field("pieces", &self.sink.is_some())
            .finish()
    }
}

impl TransferWriter<'static> {
    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> TransferWriter<'static> {
        TransferWriter {
            buf: Vec::with_capacity(capacity),
            sink: None,
        }
    }
}

impl<'a> TransferWriter<'a> {
    /// An empty buffer whose large columns go to `sink`.
    pub fn with_sink(sink: &'a mut dyn ColumnSink) -> TransferWriter<'a> {
        TransferWriter {
            buf: Vec::new(),
            sink: Some(sink),
        }
    }

    /// Room for `n` more bytes.
    pub fn reserve(&mut self, n: usize) {
        self.buf.reserve(n);
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// A large column of 64-bit numbers.
    pub fn col_i64s(&mut self, v: &[i64]) {
        match self.sink.as_deref_mut() {
            Some(s) => {
                s.i64s(v);
                self.u64(v.len() as u64);
            }
            None => self.i64s(v),
        }
    }

    /// In a transfer in pieces, a column of zeros (`zero` of each value; not empty) as
    /// its length marked [`ZERO_COL`], no values sent: a `.spall` trace's categories,
    /// arguments and flags, 9 of a span's 29 bytes. True if written so.
    fn zero_col<T>(&mut self, v: &[T], zero: impl Fn(&T) -> bool) -> bool {
        let yes = self.sink.is_some() && !v.is_empty() && v.iter().all(zero);
        if yes {
            self.u64(v.len() as u64 | ZERO_COL);
        }
        yes
    }

    /// A large column of `f` of each value.
    pub fn col_u32s_by<T>(&mut self, v: &[T], f: impl Fn(&T) -> u32) {
        if self.zero_col(v, |x| f(x) == 0) {
            return;
        }
        let Some(s) = self.sink.as_deref_mut() else {
            return self.u32s_by(v, f);
        };
        // Mapped through scratch: each `u32s` may be a call out of the module (a worker's).
        let mut scratch = Vec::with_capacity(v.len().min(64 << 10));
        for c in v.chunks(64 << 10) {
            scratch.clear();
            scratch.extend(c.iter().map(&f));
            s.u32s(&scratch);
        }
        self.u64(v.len() as u64);
    }

    /// A large column of 32-bit numbers.
    pub fn col_u32s(&mut self, v: &[u32]) {
        if self.zero_col(v, |&x| x == 0) {
            return;
        }
        match self.sink.as_deref_mut() {
            Some(s) => {
                s.u32s(v);
                self.u64(v.len() as u64);
            }
            None => self.u32s(v),
        }
    }

    /// A large column of bytes.
    pub fn col_u8s(&mut self, v: &[u8]) {
        if self.zero_col(v, |&x| x == 0) {
            return;
        }
        match self.sink.as_deref_mut() {
            Some(s) => {
                s.u8s(v);
                self.u64(v.len() as u64);
            }
            None => self.bytes(v),
        }
    }

    /// A large column of records of `I` 64-bit and `U` 32-bit numbers each (inline: a
    /// list, each record's numbers in that order).
    pub fn col_records<T, const I: usize, const U: usize>(
        &mut self,
        v: &[T],
        f: impl Fn(&T) -> ([i64; I], [u32; U]),
    ) {
        let Some(s) = self.sink.as_deref_mut() else {
            return self.list(v, |w, x| {
                let (a, b) = f(x);
                a.into_iter().for_each(|n| w.i64(n));
                b.into_iter().for_each(|n| w.u32(n));
            });
        };
        let (mut a, mut b) = (Vec::with_capacity(8192 * I), Vec::with_capacity(8192 * U));
        for c in v.chunks(8192) {
            a.clear();
            b.clear();
            for x in c {
                let (i, u) = f(x);
                a.extend_from_slice(&i);
                b.extend_from_slice(&u);
            }
            s.i64s(&a);
            s.u32s(&b);
        }
        self.u64(v.len() as u64);
    }

    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `i64`.
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A length, then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// The bytes alone (the length written before them).
    pub fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// A length, then the text's bytes.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// A presence byte, then the value (0 when absent).
    pub fn opt_u32(&mut self, v: Option<u32>) {
        self.u8(v.is_some() as u8);
        self.u32(v.unwrap_or(0));
    }

    /// A presence byte, then the value (0 when absent).
    pub fn opt_i64(&mut self, v: Option<i64>) {
        self.u8(v.is_some() as u8);
        self.i64(v.unwrap_or(0));
    }

    /// A length, then the values.
    pub fn i64s(&mut self, v: &[i64]) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 8);
        for x in v {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
    }

    /// A length, then `f` of each value.
    pub fn u32s_by<T>(&mut self, v: &[T], f: impl Fn(&T) -> u32) {
        self.u64(v.len() as u64);
        self.buf.reserve(v.len() * 4);
        for x in v {
            self.buf.extend_from_slice(&f(x).to_le_bytes());
        }
    }

    /// A length, then the values.
    pub fn u32s(&mut self, v: &[u32]) {
        self.u32s_by(v, |x| *x);
    }

    /// A length, then `f` of each item.
    pub fn list<T>(&mut self, v: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.u64(v.len() as u64);
        for x in v {
            f(self, x);
        }
    }
}

/// Reads what a [`TransferWriter`] wrote.
#[derive(Debug)]
pub struct TransferReader<'a> {
    b: &'a [u8],
    at: usize,
    /// In a transfer in pieces: the values left in each column stream, for the columns
    /// not read yet (a length past them is damage, not an allocation).
    pieces: Option<[u64; 3]>,
    /// In a transfer in pieces: each large column's length, in the order read.
    cols: Vec<u64>,
    /// In a transfer in pieces: which of `cols` are zeros, sent as their length alone.
    zeros: Vec<bool>,
    /// The values the columns of zeros may still have in all (a damaged length is an
    /// error, not an allocation): a few times the streams' values.
    zero_room: u64,
}

impl<'a> TransferReader<'a> {
    /// Reads `b` from its start.
    pub fn new(b: &'a [u8]) -> TransferReader<'a> {
        TransferReader {
            b,
            at: 0,
            pieces: None,
            cols: Vec::new(),
            zeros: Vec::new(),
            zero_room: 0,
        }
    }

    /// Reads the head `b` of a transfer in pieces whose column streams hold `left` values
    /// (by [`Stream`]): each large column comes back empty, its length kept
    /// ([`col_lens`](Self::col_lens)) for [`super::ColumnFill`] to fill it.
    pub fn with_pieces(b: &'a [u8], left: [u64; 3]) -> TransferReader<'a> {
        TransferReader {
            b,
            at: 0,
            pieces: Some(left),
            cols: Vec::new(),
            zeros: Vec::new(),
            zero_room: left
                .iter()
                .fold(0u64, |a, &n| a.saturating_add(n))
                .saturating_mul(4),
        }
    }

    /// In a transfer in pieces, the lengths of the large columns read so far, in order
    /// (`None` when the columns are inline).
    pub fn col_lens(&self) -> Option<&[u64]> {
        self.pieces.map(|_| &self.cols[..])
    }

    /// In a transfer in pieces, which of [`col_lens`](Self::col_lens) are columns of
    /// zeros, whose values are in no stream.
    pub fn col_zeros(&self) -> &[bool] {
        &self.zeros
    }

    /// The values left in each column stream for the columns not read yet.
    pub fn pieces_left(&self) -> Option<[u64; 3]> {
        self.pieces
    }

    /// A large column's length in pieces: `per` values of each stream per item.
    fn col_len(&mut self, per: [u64; 3]) -> Result<(), TransferError> {
        let n = self.u64()?;
        if n & ZERO_COL != 0 {
            let n = n & !ZERO_COL;
            self.zero_room = (self.zero_room.checked_sub(n))
                .ok_or_else(|| self.fail("columns of zeros as long as the streams allow"))?;
            self.cols.push(n);
            self.zeros.push(true);
            return Ok(());
        }
        let left = self.pieces.as_mut().expect("a transfer in pieces");
        let mut after = *left;
        for (l, p) in after.iter_mut().zip(per) {
            let want = n
                .checked_mul(p)
                .ok_or_else(|| self.fail("a column's length"))?;
            *l = l
                .checked_sub(want)
                .ok_or_else(|| self.fail("a column within the pieces"))?;
        }
        *self.pieces.as_mut().expect("a transfer in pieces") = after;
        self.cols.push(n);
        self.zeros.push(false);
        Ok(())
    }

    /// A large column of 64-bit numbers (empty in pieces).
    pub fn col_i64s(&mut self) -> Result<Vec<i64>, TransferError> {
        match self.pieces {
            Some(_) => self.col_len(Stream::I64.one()).map(|()| Vec::new()),
            None => self.i64s(),
        }
    }

    /// A large column of `f` of each 32-bit number (empty in pieces).
    pub fn col_u32s_by<T>(&mut self, f: impl Fn(u32) -> T) -> Result<Vec<T>, TransferError> {
        match self.pieces {
            Some(_) => self.col_len(Stream::U32.one()).map(|()| Vec::new()),
            None => Ok(self.u32s()?.into_iter().map(f).collect()),
        }
    }

    /// A large column of bytes (empty in pieces).
    pub fn col_u8s(&mut self) -> Result<Vec<u8>, TransferError> {
        match self.pieces {
            Some(_) => self.col_len(Stream::U8.one()).map(|()| Vec::new()),
            None => Ok(self.take_len(1, "bytes")?.to_vec()),
        }
    }

    /// A large column of records, as [`TransferWriter::col_records`] wrote them: `f` of
    /// each record's numbers (empty in pieces, `f` then applied by the fill).
    pub fn col_records<T, const I: usize, const U: usize>(
        &mut self,
        f: impl Fn([i64; I], [u32; U]) -> T,
    ) -> Result<Vec<T>, TransferError> {
        if self.pieces.is_some() {
            return self.col_len([I as u64, U as u64, 0]).map(|()| Vec::new());
        }
        self.list(|r| {
            let mut a = [0; I];
            let mut b = [0; U];
            for x in &mut a {
                *x = r.i64()?;
            }
            for x in &mut b {
                *x = r.u32()?;
            }
            Ok(f(a, b))
        })
    }

    /// Whether every byte was read.
    pub fn at_end(&self) -> bool {
        self.at == self.b.len()
    }

    /// An error at the current offset.
    pub fn fail(&self, expected: &'static str) -> TransferError {
        TransferError {
            offset: self.at,
            expected,
        }
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize, expected: &'static str) -> Result<&'a [u8], TransferError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| self.fail(expected))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next `N` bytes.
    pub fn arr<const N: usize>(&mut self) -> Result<[u8; N], TransferError> {
        let s = self.take(N, "a number")?;
        Ok(s.try_into().expect("N bytes"))
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, TransferError> {
        Ok(self.arr::<1>()?[0])
    }

    /// A byte that is 0 or 1.
    pub fn bool(&mut self) -> Result<bool, TransferError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.fail("0 or 1")),
        }
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, TransferError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, TransferError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }

    /// A little-endian `i64`.
    pub fn i64(&mut self) -> Result<i64, TransferError> {
        Ok(i64::from_le_bytes(self.arr()?))
    }

    /// A count of items of at least `min_bytes` each, no more than the bytes left hold.
    pub fn len(&mut self, min_bytes: usize) -> Result<usize, TransferError> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) as u64;
        if n.saturating_mul(min_bytes.max(1) as u64) > left {
            return Err(self.fail("a length within the buffer"));
        }
        Ok(n as usize)
    }

    /// A length of items of `size` bytes, then their bytes.
    pub fn take_len(&mut self, size: usize, what: &'static str) -> Result<&'a [u8], TransferError> {
        let n = self.len(size)?;
        self.take(n * size, what)
    }

    /// A length, then the text's bytes.
    pub fn str(&mut self) -> Result<&'a str, TransferError> {
        let b = self.take_len(1, "text")?;
        std::str::from_utf8(b).map_err(|_| self.fail("UTF-8 text"))
    }

    /// A presence byte, then the value (0 when absent).
    pub fn opt_u32(&mut self) -> Result<Option<u32>, TransferError> {
        let some = self.bool()?;
        let v = self.u32()?;
        Ok(some.then_some(v))
    }

    /// A presence byte, then the value (0 when absent).
    pub fn opt_i64(&mut self) -> Result<Option<i64>, TransferError> {
        let some = self.bool()?;
        let v = self.i64()?;
        Ok(some.then_some(v))
    }

    /// A length, then the values.
    pub fn i64s(&mut self) -> Result<Vec<i64>, TransferError> {
        let b = self.take_len(8, "a column of 64-bit numbers")?;
        Ok(b.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    /// A length, then the values.
    pub fn u32s(&mut self) -> Result<Vec<u32>, TransferError> {
        let b = self.take_len(4, "a column of 32-bit numbers")?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect())
    }

    /// A length, then `f` of each item.
    pub fn list<T>(
        &mut self,
        mut f: impl FnMut(&mut TransferReader<'a>) -> Result<T, TransferError>,
    ) -> Result<Vec<T>, TransferError> {
        let n = self.len(1)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(v)
    }
}
