//! The protobuf wire format, read in place.
//!
//! A message is a run of fields, each a varint tag (`field << 3 | wire type`) and a value:
//! a varint, 8 or 4 little-endian bytes, or a varint length and that many bytes. A
//! [`Reader`] walks one message's fields and hands length-delimited values out as slices of
//! the input, so skipping a field costs one varint and nothing is allocated. Nesting is the
//! caller's: a sub-message is read with a new `Reader` over its slice.

use std::fmt;

/// What is wrong with the bytes at [`WireError::offset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireErrorKind {
    /// A varint whose tenth byte still has its continuation bit set.
    VarintTooLong,
    /// A length-delimited field longer than what is left of its message.
    LengthPastEnd {
        /// The length the field gives.
        len: u64,
        /// The bytes left of its message after the length.
        left: u64,
    },
    /// Wire types 3 and 4 (groups, unused by Perfetto) and 6 and 7 (undefined).
    BadWireType(u8),
    /// Field number 0, which no message defines.
    FieldZero,
    /// The message ends inside a tag, a varint or a fixed-size value.
    Truncated,
}

/// A malformed field: what, and where (a byte offset in the decoded input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireError {
    /// What is wrong.
    pub kind: WireErrorKind,
    /// Byte offset of the field's tag in the decoded input.
    pub offset: u64,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: ", self.offset)?;
        match self.kind {
            WireErrorKind::VarintTooLong => f.write_str("a varint longer than 10 bytes"),
            WireErrorKind::LengthPastEnd { len, left } => write!(
                f,
                "a field of {len} bytes where only {left} are left of its message"
            ),
            WireErrorKind::BadWireType(t) => {
                write!(f, "wire type {t}: expected 0, 1, 2 or 5")
            }
            WireErrorKind::FieldZero => f.write_str("field number 0"),
            WireErrorKind::Truncated => f.write_str("the message ends inside a field"),
        }
    }
}

/// A field's value, as the wire type gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0: integers, booleans, enums.
    Varint(u64),
    /// Wire type 1: `fixed64`, `sfixed64`, `double`.
    Fixed64(u64),
    /// Wire type 2: strings, bytes, sub-messages, packed repeated scalars; borrowed.
    Bytes(&'a [u8]),
    /// Wire type 5: `fixed32`, `sfixed32`, `float`.
    Fixed32(u32),
}

impl<'a> Value<'a> {
    /// A varint or fixed-size value as an unsigned integer.
    pub fn uint(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(v as u64),
            Value::Bytes(_) => None,
        }
    }

    /// A varint or fixed-size value as a two's complement signed integer (`int64`,
    /// `int32`; not zigzag `sint`, which Perfetto's trace messages do not use).
    pub fn int(self) -> Option<i64> {
        match self {
            Value::Fixed32(v) => Some(v as i32 as i64),
            v => v.uint().map(|u| u as i64),
        }
    }

    /// A `double` (or a `float`).
    pub fn double(self) -> Option<f64> {
        match self {
            Value::Fixed64(v) => Some(f64::from_bits(v)),
            Value::Fixed32(v) => Some(f32::from_bits(v) as f64),
            _ => None,
        }
    }

    /// A length-delimited value: a string, bytes or a sub-message.
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// One field of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field number.
    pub num: u32,
    /// The value, as its wire type gives it.
    pub value: Value<'a>,
    /// Byte offset of the tag in the decoded input.
    pub offset: u64,
}

/// Walks the fields of one message. Stops for good after the first error.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf[0]` in the decoded input, for errors.
    base: u64,
}

impl<'a> Reader<'a> {
    /// Reads `buf`, a message found at byte `base` of the decoded input.
    pub fn new(buf: &'a [u8], base: u64) -> Reader<'a> {
        Reader { buf, pos: 0, base }
    }

    /// The offset in the decoded input of the next field.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Offset in the decoded input of `sub`, a slice this reader handed out.
    pub fn offset_of(&self, sub: &[u8]) -> u64 {
        self.base + (sub.as_ptr() as usize).wrapping_sub(self.buf.as_ptr() as usize) as u64
    }

    fn fail(&mut self, kind: WireErrorKind, at: usize) -> WireError {
        self.pos = self.buf.len();
        WireError {
            kind,
            offset: self.base + at as u64,
        }
    }

    #[inline(always)]
    fn varint(&mut self) -> Result<u64, WireError> {
        // Most tags, lengths and small values are one byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        self.varint_long()
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        match varint(&self.buf[start..]) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(k) => Err(self.fail(k, start)),
        }
    }

    fn fixed<const N: usize>(&mut self, at: usize) -> Result<[u8; N], WireError> {
        match self.buf.get(self.pos..self.pos + N) {
            Some(b) => {
                self.pos += N;
                Ok(b.try_into().unwrap())
            }
            None => Err(self.fail(WireErrorKind::Truncated, at)),
        }
    }

    /// The next field if it is field 1, length-delimited and whole (a trace's packet),
    /// read the fast way for the loops over a file's packets; `None` for anything else,
    /// which [`next_field`](Self::next_field) reads (or reports).
    #[inline]
    pub fn next_packet(&mut self) -> Option<&'a [u8]> {
        let rest = self.buf.get(self.pos..)?;
        if rest.first() != Some(&0x0a) {
            return None;
        }
        let (len, n) = match rest.get(1) {
            Some(&l) if l < 0x80 => (l as u64, 1),
            _ => varint(&rest[1..]).ok()?,
        };
        let start = 1 + n;
        if len > (rest.len() - start) as u64 {
            return None;
        }
        let end = start + len as usize;
        self.pos += end;
        Some(&rest[start..end])
    }

    /// The next field, `None` at the end of the message. Always inlined: the decoder's
    /// per-event loops read every field through it.
    #[inline(always)]
    pub fn next_field(&mut self) -> Option<Result<Field<'a>, WireError>> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let at = self.pos;
        Some(self.field(at))
    }

    #[inline(always)]
    fn field(&mut self, at: usize) -> Result<Field<'a>, WireError> {
        let tag = self.varint()?;
        let num = tag >> 3;
        if num == 0 || num > u32::MAX as u64 {
            return Err(self.fail(WireErrorKind::FieldZero, at));
        }
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.fixed::<8>(at)?)),
            2 => {
                let len = self.varint()?;
                let left = (self.buf.len() - self.pos) as u64;
                if len > left {
                    return Err(self.fail(WireErrorKind::LengthPastEnd { len, left }, at));
                }
                let b = &self.buf[self.pos..self.pos + len as usize];
                self.pos += len as usize;
                Value::Bytes(b)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.fixed::<4>(at)?)),
            t => return Err(self.fail(WireErrorKind::BadWireType(t as u8), at)),
        };
        Ok(Field {
            num: num as u32,
            value,
            offset: self.base + at as u64,
        })
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<Field<'a>, WireError>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_field()
    }
}

/// Walks the top-level fields of a message the fast way, for a pass that needs few of
/// them: calls `varint` with each varint field's number and value only for `want_varint`,
/// and `bytes` with each length-delimited field's number and bytes only for
/// `want_bytes(num)`; every other field is skipped without decoding its value. Stops
/// quietly at the first malformed field (the full decode counts it).
#[inline]
pub fn skim<'a>(
    b: &'a [u8],
    want_varint: u32,
    want_bytes: impl Fn(u32) -> bool,
    mut varint_of: impl FnMut(u64),
    mut bytes: impl FnMut(u32, &'a [u8]),
) {
    let mut i = 0;
    while i < b.len() {
        let (tag, n) = match b[i] {
            t if t < 0x80 => (t as u64, 1),
            _ => match varint(&b[i..]) {
                Ok(x) => x,
                Err(_) => return,
            },
        };
        i += n;
        let num = (tag >> 3) as u32;
        match tag & 7 {
            0 if num == want_varint => match varint(&b[i..]) {
                Ok((v, n)) => {
                    varint_of(v);
                    i += n;
                }
                Err(_) => return,
            },
            0 => {
                // A varint ends at its first byte under 0x80 (most are one byte).
                match b.get(i) {
                    Some(&c) if c < 0x80 => i += 1,
                    _ => match b[i.min(b.len())..].iter().take(10).position(|&c| c < 0x80) {
                        Some(k) => i += k + 1,
                        None => return,
                    },
                }
            }
            1 => i += 8,
            2 => {
                let (len, n) = match b.get(i) {
                    Some(&l) if l < 0x80 => (l as u64, 1),
                    _ => match varint(&b[i.min(b.len())..]) {
                        Ok(x) => x,
                        Err(_) => return,
                    },
                };
                i += n;
                if len > (b.len() - i) as u64 {
                    return;
                }
                let end = i + len as usize;
                if want_bytes(num) {
                    bytes(num, &b[i..end]);
                }
                i = end;
            }
            5 => i += 4,
            _ => return,
        }
    }
}

/// Decodes a varint at the start of `b`: its value and length.
#[inline]
pub fn varint(b: &[u8]) -> Result<(u64, usize), WireErrorKind> {
    let mut v = 0u64;
    for i in 0..10 {
        let Some(&byte) = b.get(i) else {
            return Err(WireErrorKind::Truncated);
        };
        v |= ((byte & 0x7f) as u64) << (7 * i);
        if byte < 0x80 {
            return Ok((v, i + 1));
        }
    }
    Err(WireErrorKind::VarintTooLong)
}

/// The values of a repeated scalar field, packed (one length-delimited field) or not (one
/// field per value): calls `f` with each. `fixed64`: a packed run holds 8-byte values
/// rather than varints.
pub fn repeated(v: Value<'_>, fixed64: bool, mut f: impl FnMut(u64)) -> Result<(), WireErrorKind> {
    match v {
        Value::Bytes(mut b) => {
            while !b.is_empty() {
                if fixed64 {
                    let Some(x) = b.get(..8) else {
                        return Err(WireErrorKind::Truncated);
                    };
                    f(u64::from_le_bytes(x.try_into().unwrap()));
                    b = &b[8..];
                } else {
                    let (x, n) = varint(b)?;
                    f(x);
                    b = &b[n..];
                }
            }
            Ok(())
        }
        other => {
            if let Some(x) = other.uint() {
                f(x);
            }
            Ok(())
        }
    }
}

/// The varint at `b[*i..]`, moving `i` past it; `None` if it is broken or cut short.
#[inline(always)]
pub(super) fn var(b: &[u8], i: &mut usize) -> Option<u64> {
    let &c = b.get(*i)?;
    if c < 0x80 {
        *i += 1;
        return Some(c as u64);
    }
    let (v, n) = varint(&b[*i..]).ok()?;
    *i += n;
    Some(v)
}

/// The length-delimited value at `b[*i..]` (after its tag), moving `i` past it.
#[inline(always)]
pub(super) fn bytes<'a>(b: &'a [u8], i: &mut usize) -> Option<&'a [u8]> {
    let len = var(b, i)?;
    if len > (b.len() - *i) as u64 {
        return None;
    }
    let v = &b[*i..*i + len as usize];
    *i += len as usize;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(b: &[u8]) -> Vec<Result<Field<'_>, WireError>> {
        Reader::new(b, 100).collect()
    }

    #[test]
    fn reads_every_wire_type() {
        // field 1 varint 300; field 2 fixed64; field 3 bytes "hi"; field 4 fixed32
        let mut b = vec![0x08, 0xac, 0x02, 0x11];
        b.extend_from_slice(&7u64.to_le_bytes());
        b.extend_from_slice(&[0x1a, 2, b'h', b'i', 0x25]);
        b.extend_from_slice(&(-2i32).to_le_bytes());
        let f: Vec<_> = fields(&b).into_iter().map(Result::unwrap).collect();
        assert_eq!(f.len(), 4);
        assert_eq!((f[0].num, f[0].value), (1, Value::Varint(300)));
        assert_eq!(f[1].value, Value::Fixed64(7));
        assert_eq!(f[2].value.bytes(), Some(&b"hi"[..]));
        assert_eq!(f[2].offset, 100 + 12);
        assert_eq!(f[3].value.int(), Some(-2));
    }

    #[test]
    fn varint_of_eleven_bytes_is_an_error_at_its_offset() {
        let mut b = vec![0x08];
        b.extend_from_slice(&[0xff; 10]);
        b.push(0x01);
        let f = fields(&b);
        assert_eq!(
            f,
            vec![Err(WireError {
                kind: WireErrorKind::VarintTooLong,
                offset: 101
            })]
        );
        // Ten bytes are fine: u64::MAX.
        let mut b = vec![0x08];
        b.extend_from_slice(&[0xff; 9]);
        b.push(0x01);
        assert_eq!(
            fields(&b)[0].as_ref().unwrap().value,
            Value::Varint(u64::MAX)
        );
    }

    #[test]
    fn length_past_end_wire_types_and_truncation() {
        assert_eq!(
            fields(&[0x0a, 5, 1, 2]),
            vec![Err(WireError {
                kind: WireErrorKind::LengthPastEnd { len: 5, left: 2 },
                offset: 100
            })]
        );
        // A huge length does not allocate or overflow.
        let b = [
            0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(matches!(
            fields(&b)[0],
            Err(WireError {
                kind: WireErrorKind::LengthPastEnd { .. },
                ..
            })
        ));
        for t in [3u8, 4, 6, 7] {
            let b = [0x08 | t, 0];
            let f = fields(&b);
            assert_eq!(f[0].unwrap_err().kind, WireErrorKind::BadWireType(t));
        }
        assert_eq!(
            fields(&[0x00])[0].unwrap_err().kind,
            WireErrorKind::FieldZero
        );
        assert_eq!(
            fields(&[0x11, 1, 2])[0].unwrap_err().kind,
            WireErrorKind::Truncated
        );
        assert_eq!(
            fields(&[0x08, 0x80])[0].unwrap_err().kind,
            WireErrorKind::Truncated
        );
        // The reader stops after an error.
        assert_eq!(fields(&[0x00, 0x08, 0x01]).len(), 1);
    }

    #[test]
    fn packed_and_unpacked_repeated_values() {
        let mut got = Vec::new();
        repeated(Value::Bytes(&[1, 0xac, 0x02]), false, |v| got.push(v)).unwrap();
        repeated(Value::Varint(9), false, |v| got.push(v)).unwrap();
        let mut b = 5u64.to_le_bytes().to_vec();
        repeated(Value::Bytes(&b), true, |v| got.push(v)).unwrap();
        assert_eq!(got, [1, 300, 9, 5]);
        b.pop();
        assert_eq!(
            repeated(Value::Bytes(&b), true, |_| {}),
            Err(WireErrorKind::Truncated)
        );
    }

    #[test]
    fn skim_reads_only_what_it_is_asked_for() {
        // 8: varint 300 (two bytes); 10: varint 7; 1: fixed64; 60: "ab"; 5: fixed32;
        // 11: "xyz"; then a tag of wire type 3, where it stops.
        let b = [
            0x40, 0xac, 0x02, 0x50, 7, 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0xe2, 0x03, 2, b'a', b'b',
            0x2d, 1, 2, 3, 4, 0x5a, 3, b'x', b'y', b'z', 0x0b, 0x50, 9,
        ];
        let (mut seq, mut got) = (Vec::new(), Vec::new());
        skim(
            &b,
            10,
            |n| n == 60,
            |v| seq.push(v),
            |n, x| got.push((n, x)),
        );
        assert_eq!(seq, [7]);
        assert_eq!(got, [(60, &b"ab"[..])]);
        // A length past the end stops it too.
        let (mut seq, mut got) = (Vec::new(), Vec::new());
        skim(
            &[0x50, 1, 0xe2, 0x03, 9, b'a', 0x50, 2],
            10,
            |_| true,
            |v| seq.push(v),
            |n, x| got.push((n, x)),
        );
        assert_eq!((seq, got.len()), (vec![1], 0));
    }
}
