//! A transfer in pieces: a model's small parts in one buffer (its head), its large columns
//! (a trace's spans, an index's levels) as three streams of numbers, 64-bit, 32-bit and
//! bytes, which the two sides keep outside the model's memory. A browser's worker writes
//! each column straight into the page's typed arrays ([`ColumnSink`]), so the model is
//! never doubled in its memory; the page reads the head into a model whose columns are
//! empty, then [`ColumnFill`] copies the streams into them a few megabytes at a time
//! ([`ColumnSource`]), drawing frames between the steps.
//!
//! The fill checks what the head could not (names, arguments and offsets in range) as it
//! copies, so a damaged transfer is an error, never a panic later.

use std::ops::Range;

/// One of a transfer's column streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// 64-bit numbers.
    I64,
    /// 32-bit numbers.
    U32,
    /// Bytes.
    U8,
}

impl Stream {
    /// One value of this stream, as `TransferReader` counts a column's values by stream.
    pub(crate) fn one(self) -> [u64; 3] {
        match self {
            Stream::I64 => [1, 0, 0],
            Stream::U32 => [0, 1, 0],
            Stream::U8 => [0, 0, 1],
        }
    }
}

/// Where a writer in pieces puts its large columns' values, each stream in order.
pub trait ColumnSink {
    /// The next values of the 64-bit stream.
    fn i64s(&mut self, v: &[i64]);
    /// The next values of the 32-bit stream.
    fn u32s(&mut self, v: &[u32]);
    /// The next bytes of the byte stream.
    fn u8s(&mut self, v: &[u8]);
}

/// Where the fill reads the streams a [`ColumnSink`] was given, in order.
pub trait ColumnSource {
    /// Fills `dst` with the next values of the 64-bit stream; false if fewer are left.
    fn i64s(&mut self, dst: &mut [i64]) -> bool;
    /// Fills `dst` with the next values of the 32-bit stream; false if fewer are left.
    fn u32s(&mut self, dst: &mut [u32]) -> bool;
    /// Fills `dst` with the next bytes of the byte stream; false if fewer are left.
    fn u8s(&mut self, dst: &mut [u8]) -> bool;
}

/// The three streams in memory: what a test, or a transfer within one memory, uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryColumns {
    /// The 64-bit stream.
    pub i64s: Vec<i64>,
    /// The 32-bit stream.
    pub u32s: Vec<u32>,
    /// The byte stream.
    pub u8s: Vec<u8>,
    /// How far each stream was read.
    pub read: [usize; 3],
}

impl MemoryColumns {
    /// The values in each stream ([`Stream`] order), for `TransferReader::with_pieces`.
    pub fn lens(&self) -> [u64; 3] {
        [self.i64s.len(), self.u32s.len(), self.u8s.len()].map(|n| n as u64)
    }

    /// Whether every value was read.
    pub fn at_end(&self) -> bool {
        self.read == [self.i64s.len(), self.u32s.len(), self.u8s.len()]
    }
}

impl ColumnSink for MemoryColumns {
    fn i64s(&mut self, v: &[i64]) {
        self.i64s.extend_from_slice(v);
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u32s.extend_from_slice(v);
    }
    fn u8s(&mut self, v: &[u8]) {
        self.u8s.extend_from_slice(v);
    }
}

fn take<T: Copy>(from: &[T], at: &mut usize, dst: &mut [T]) -> bool {
    match from.get(*at..*at + dst.len()) {
        Some(s) => {
            dst.copy_from_slice(s);
            *at += dst.len();
            true
        }
        None => false,
    }
}

impl ColumnSource for MemoryColumns {
    fn i64s(&mut self, dst: &mut [i64]) -> bool {
        take(&self.i64s, &mut self.read[0], dst)
    }
    fn u32s(&mut self, dst: &mut [u32]) -> bool {
        take(&self.u32s, &mut self.read[1], dst)
    }
    fn u8s(&mut self, dst: &mut [u8]) -> bool {
        take(&self.u8s, &mut self.read[2], dst)
    }
}

/// How far the fill of a model's columns has come, between steps.
#[derive(Debug, Default)]
pub struct ColumnFill {
    /// Each column's length, as the head says ([`super::TransferReader::col_lens`]).
    lens: Vec<u64>,
    /// Which columns are zeros, in no stream ([`super::TransferReader::col_zeros`]).
    zeros: Vec<bool>,
    /// The column being filled, in the order the model's columns are visited.
    col: usize,
    /// How much of it is filled.
    at: usize,
    scratch_i: Vec<i64>,
    scratch_u: Vec<u32>,
}

impl ColumnFill {
    /// The fill of columns of these lengths, in the order the model visits them.
    pub fn new(lens: &[u64]) -> ColumnFill {
        ColumnFill {
            lens: lens.to_vec(),
            ..ColumnFill::default()
        }
    }

    /// [`new`](Self::new), where the columns marked in `zeros` are zeros, sent as their
    /// length alone: filled with zeros, nothing read from the streams for them.
    pub fn with_zeros(lens: &[u64], zeros: &[bool]) -> ColumnFill {
        ColumnFill {
            zeros: zeros.to_vec(),
            ..ColumnFill::new(lens)
        }
    }

    /// One step: the model visits each of its large columns, in the order it wrote them,
    /// and about `budget` bytes of them are filled from `src`.
    pub fn step<'f>(&'f mut self, src: &'f mut dyn ColumnSource, budget: usize) -> Columns<'f> {
        Columns {
            fill: self,
            src,
            budget,
            k: 0,
            err: None,
        }
    }
}

/// The columns a model visits in one step of its fill ([`ColumnFill::step`]).
pub struct Columns<'f> {
    fill: &'f mut ColumnFill,
    src: &'f mut dyn ColumnSource,
    budget: usize,
    /// The column visited next.
    k: usize,
    err: Option<&'static str>,
}

impl std::fmt::Debug for Columns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Columns")
            .field("fill", &self.fill)
            .field("budget", &self.budget)
            .field("k", &self.k)
            .finish()
    }
}

/// Values copied through scratch at a time (mapped or checked columns).
const SCRATCH: usize = 16 << 10;

impl Columns<'_> {
    /// The part of the next column (of values of `size` bytes, `have` of them filled)
    /// this step fills, the column's length, and whether it is zeros (in no stream).
    fn next(&mut self, have: usize, size: usize) -> Option<(Range<usize>, usize, bool)> {
        let k = self.k;
        self.k += 1;
        if k != self.fill.col || self.err.is_some() {
            return None;
        }
        let len = self.fill.lens.get(k).map(|&n| n as usize);
        let Some(len) = len.filter(|_| have == self.fill.at) else {
            self.fail_if(true, "as many columns as the head says");
            return None;
        };
        let zero = self.fill.zeros.get(k).copied().unwrap_or(false);
        let from = self.fill.at;
        let to = len.min(from + self.budget / size);
        self.budget -= (to - from) * size;
        if to == len {
            self.fill.col += 1;
            self.fill.at = 0;
        } else {
            self.fill.at = to;
        }
        Some((from..to, len, zero))
    }

    /// The next part of a column copied as it is.
    fn copy<T: Copy + Default>(
        &mut self,
        col: &mut Vec<T>,
        take: impl Fn(&mut dyn ColumnSource, &mut [T]) -> bool,
        what: &'static str,
    ) {
        let Some((r, len, zero)) = self.next(col.len(), std::mem::size_of::<T>()) else {
            return;
        };
        if r.start == 0 {
            col.reserve_exact(len);
        }
        col.resize(r.end, T::default());
        if !zero {
            let ok = take(&mut *self.src, &mut col[r]);
            self.fail_if(!ok, what);
        }
    }

    fn fail_if(&mut self, bad: bool, what: &'static str) {
        if bad && self.err.is_none() {
            self.err = Some(what);
        }
    }

    /// A column of 64-bit numbers.
    pub fn i64s(&mut self, col: &mut Vec<i64>) {
        let what = "64-bit columns as long as the head says";
        self.copy(col, |s, d| s.i64s(d), what);
    }

    /// A column of 32-bit numbers.
    pub fn u32s(&mut self, col: &mut Vec<u32>) {
        let what = "32-bit columns as long as the head says";
        self.copy(col, |s, d| s.u32s(d), what);
    }

    /// A column of bytes.
    pub fn u8s(&mut self, col: &mut Vec<u8>) {
        self.copy(
            col,
            |s, d| s.u8s(d),
            "byte columns as long as the head says",
        );
    }

    /// A column of `f` of 32-bit numbers, each below `below` (an error otherwise).
    pub fn u32s_by<T>(&mut self, col: &mut Vec<T>, below: u32, f: impl Fn(u32) -> T) {
        let Some((r, len, zero)) = self.next(col.len(), 4) else {
            return;
        };
        if r.start == 0 {
            col.reserve_exact(len);
        }
        if zero {
            self.fail_if(below == 0, "ids in range");
            col.extend(r.map(|_| f(0)));
            return;
        }
        let mut scratch = std::mem::take(&mut self.fill.scratch_u);
        let mut at = r.start;
        while at < r.end {
            let n = (r.end - at).min(SCRATCH);
            at += n;
            scratch.resize(n, 0);
            if !self.src.u32s(&mut scratch) {
                self.fail_if(true, "32-bit columns as long as the head says");
                break;
            }
            let max = scratch.iter().fold(0, |m, &v| m.max(v));
            if max >= below {
                self.fail_if(true, "ids in range");
                break;
            }
            col.extend(scratch.iter().map(|&v| f(v)));
        }
        self.fill.scratch_u = scratch;
    }

    /// A column of records of `I` 64-bit and `U` 32-bit numbers each, made by `f` (`None`:
    /// a damaged record, an error).
    pub fn records<T, const I: usize, const U: usize>(
        &mut self,
        col: &mut Vec<T>,
        f: impl Fn([i64; I], [u32; U]) -> Option<T>,
    ) {
        let Some((r, len, zero)) = self.next(col.len(), I * 8 + U * 4) else {
            return;
        };
        if r.start == 0 {
            col.reserve_exact(len);
        }
        if zero {
            // Never written so (records are not zero columns): damage.
            self.fail_if(true, "record columns in the streams");
            return;
        }
        let (mut a, mut b) = (
            std::mem::take(&mut self.fill.scratch_i),
            std::mem::take(&mut self.fill.scratch_u),
        );
        let mut at = r.start;
        while at < r.end {
            let n = (r.end - at).min(SCRATCH / 4);
            at += n;
            a.resize(n * I, 0);
            b.resize(n * U, 0);
            if !self.src.i64s(&mut a) || !self.src.u32s(&mut b) {
                self.fail_if(true, "record columns as long as the head says");
                break;
            }
            let before = col.len();
            col.extend((0..n).map_while(|i| {
                let i64s = a[i * I..][..I].try_into().expect("I values");
                let u32s = b[i * U..][..U].try_into().expect("U values");
                f(i64s, u32s)
            }));
            if col.len() != before + n {
                self.fail_if(true, "records in range");
                break;
            }
        }
        (self.fill.scratch_i, self.fill.scratch_u) = (a, b);
    }

    /// Whether every column is filled now (an error where a stream ran short or a value
    /// was out of range).
    pub fn done(self) -> Result<bool, &'static str> {
        match self.err {
            Some(e) => Err(e),
            None if self.fill.col == self.k && self.k != self.fill.lens.len() => {
                Err("as many columns as the head says")
            }
            None => Ok(self.fill.col == self.k),
        }
    }
}
