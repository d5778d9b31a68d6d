//! The byte writer and reader of transferred traces (and of what is transferred beside
//! them, such as an index): little-endian values, and lengths that the reader checks
//! against the bytes left before it allocates anything, so a damaged buffer is an error,
//! never a panic or an unbounded allocation.

use super::TransferError;

/// Appends little-endian values to a buffer.
#[derive(Debug, Default)]
pub struct TransferWriter(Vec<u8>);

impl TransferWriter {
    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> TransferWriter {
        TransferWriter(Vec::with_capacity(capacity))
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A little-endian `i64`.
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A length, then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
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
        self.0.reserve(v.len() * 8);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }

    /// A length, then `f` of each value.
    pub fn u32s_by<T>(&mut self, v: &[T], f: impl Fn(&T) -> u32) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&f(x).to_le_bytes());
        }
    }

    /// A length, then the values.
    pub fn u32s(&mut self, v: &[u32]) {
        self.u32s_by(v, |x| *x);
    }

    /// A length, then `f` of each item.
    pub fn list<T>(&mut self, v: &[T], mut f: impl FnMut(&mut TransferWriter, &T)) {
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
}

impl<'a> TransferReader<'a> {
    /// Reads `b` from its start.
    pub fn new(b: &'a [u8]) -> TransferReader<'a> {
        TransferReader { b, at: 0 }
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
