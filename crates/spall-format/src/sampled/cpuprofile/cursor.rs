//! The cursor the streamed `.cpuprofile` reader ([`Reader`](super::stream::Reader)) reads
//! JSON with: over the bytes read so far, each step either done, or stopped because the bytes
//! end inside the item (read again from its start once more arrive) or because the reader
//! gives up. Strings, numbers and skipped values are checked as serde_json checks them; V8's
//! own layout of a call frame and of a node's lists is read with one comparison a key.

use std::borrow::Cow;

use crate::hash::same;
use crate::json::scan::special_mask;

/// Why a step stopped: the bytes so far end inside the item, or the reader gives up.
pub(super) enum Stop {
    Need,
    Fail,
}

pub(super) type R<T> = Result<T, Stop>;

/// The deepest nesting read: serde_json, which the whole decode falls back to, stops at
/// 128.
const MAX_NESTING: usize = 100;

/// A part of a node read whole (`Ok(true)`), or not (`Ok(false)`, or a failure): the
/// cursor back at `at`; more bytes needed is passed on.
pub(super) fn kept(r: R<bool>, c: &mut Cur<'_>, at: usize) -> R<bool> {
    match r {
        Ok(true) => Ok(true),
        Err(Stop::Need) => Err(Stop::Need),
        Ok(false) | Err(Stop::Fail) => {
            c.i = at;
            Ok(false)
        }
    }
}

/// A node's `callFrame`: its name, url and line.
pub(super) type CallFrame<'b> = (Option<Cow<'b, str>>, Option<Cow<'b, str>>, Option<i64>);

/// A position in the bytes read so far; `end`: they are all there will be.
pub(super) struct Cur<'b> {
    pub(super) b: &'b [u8],
    pub(super) i: usize,
    pub(super) end: bool,
}

impl<'b> Cur<'b> {
    /// Ran out: wait for more bytes, or give up at the end.
    pub(super) fn need(&self) -> Stop {
        if self.end {
            Stop::Fail
        } else {
            Stop::Need
        }
    }

    /// Skips whitespace; the next byte.
    pub(super) fn ws(&mut self) -> R<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Ok(c);
            }
            self.i += 1;
        }
        Err(self.need())
    }

    pub(super) fn eat(&mut self, want: u8) -> R<()> {
        if self.ws()? != want {
            return Err(Stop::Fail);
        }
        self.i += 1;
        Ok(())
    }

    /// After an item: true at `,` (taken), false at `close` (left).
    pub(super) fn comma_or(&mut self, close: u8) -> R<bool> {
        match self.ws()? {
            b',' => {
                self.i += 1;
                Ok(true)
            }
            c if c == close => Ok(false),
            _ => Err(Stop::Fail),
        }
    }

    pub(super) fn literal(&mut self, word: &[u8]) -> R<()> {
        let Some(got) = self.b.get(self.i..self.i + word.len()) else {
            return Err(self.need());
        };
        if got != word {
            return Err(Stop::Fail);
        }
        self.i += word.len();
        Ok(())
    }

    /// `null` as `None`, else `read`'s value.
    pub(super) fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> R<T>) -> R<Option<T>> {
        if self.ws()? == b'n' {
            self.literal(b"null")?;
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// A key without escapes (one with escapes is given up on).
    pub(super) fn key(&mut self) -> R<&'b [u8]> {
        if self.ws()? != b'"' {
            return Err(Stop::Fail);
        }
        // ASCII, the usual key: no UTF-8 check (a node has a dozen keys).
        let start = self.i + 1;
        let rest = &self.b[start..];
        let mut q = plain_ascii(rest);
        loop {
            match rest.get(q) {
                None => return Err(self.need()),
                Some(b'"') => {
                    self.i = start + q + 1;
                    return Ok(&rest[..q]);
                }
                Some(b'\\' | 0..0x20) => return Err(Stop::Fail),
                Some(0x80..) => break,
                Some(_) => q += 1,
            }
        }
        match self.string()? {
            Cow::Borrowed(s) => Ok(s.as_bytes()),
            Cow::Owned(_) => Err(Stop::Fail),
        }
    }

    /// A string (at its `"`), borrowed where it has no escapes. Control characters and
    /// text that is not UTF-8 fail, as in serde_json.
    pub(super) fn string(&mut self) -> R<Cow<'b, str>> {
        let start = self.i + 1;
        let rest = &self.b[start..];
        // A word at a time to the first byte that is not plain ASCII, then byte by byte: a
        // node's strings are short, and memchr's setup cost more than the scan (in wasm
        // most).
        let (mut q, mut high) = (plain_ascii(rest), 0);
        loop {
            match rest.get(q) {
                None => return Err(self.need()),
                Some(b'"' | b'\\') => break,
                Some(0..0x20) => return Err(Stop::Fail),
                Some(&c) => {
                    high |= c;
                    q += 1;
                }
            }
        }
        if rest[q] == b'"' {
            let s = match high {
                // SAFETY: bytes under 0x80 are ASCII, which is UTF-8.
                #[allow(unsafe_code)]
                0..0x80 => unsafe { std::str::from_utf8_unchecked(&rest[..q]) },
                _ => std::str::from_utf8(&rest[..q]).map_err(|_| Stop::Fail)?,
            };
            self.i = start + q + 1;
            return Ok(Cow::Borrowed(s));
        }
        // Escapes: find the closing quote, and let serde_json read the string.
        let mut j = q;
        loop {
            match memchr::memchr2(b'"', b'\\', &rest[j..]) {
                None => return Err(self.need()),
                Some(k) if rest[j + k] == b'\\' => j += k + 2,
                Some(k) => {
                    j += k;
                    break;
                }
            }
            if j >= rest.len() {
                return Err(self.need());
            }
        }
        let raw = &self.b[self.i..start + j + 1];
        let s: String = serde_json::from_slice(raw).map_err(|_| Stop::Fail)?;
        self.i = start + j + 1;
        Ok(Cow::Owned(s))
    }

    /// A number's text, checked against JSON's grammar; it must be followed by a byte
    /// (every number in the file is).
    pub(super) fn number(&mut self) -> R<&'b [u8]> {
        let start = self.i;
        let n = self.b[start..]
            .iter()
            .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'));
        let Some(n) = n else {
            return Err(self.need());
        };
        let t = &self.b[start..start + n];
        if !json_number(t) {
            return Err(Stop::Fail);
        }
        self.i = start + n;
        Ok(t)
    }

    /// An integer as most numbers of a profile are (`-`, then up to 18 digits with no
    /// leading zero, then a byte that does not go on a number), read in one pass and taken,
    /// with whether it had a `-`; `None` where the number is another (the cursor stays).
    #[inline]
    pub(super) fn plain_int(&mut self) -> R<Option<(i64, bool)>> {
        let neg = self.b.get(self.i) == Some(&b'-');
        let first = self.i + neg as usize;
        let (j, v) = digits(self.b, first);
        match self.b.get(j) {
            None => return Err(self.need()),
            Some(b'.' | b'e' | b'E' | b'+' | b'-') => return Ok(None),
            Some(_) => {}
        }
        if !plain_digits(self.b, first, j) {
            return Ok(None);
        }
        self.i = j;
        Ok(Some((if neg { -v } else { v }, neg)))
    }

    /// An integer of up to 18 digits: serde_json's `i64` takes it alike (anything else is
    /// given up on).
    #[inline]
    pub(super) fn int(&mut self) -> R<i64> {
        // The usual: digits at the cursor, then the `,` or bracket after them.
        let (j, v) = digits(self.b, self.i);
        let ends = matches!(self.b.get(j), Some(b',' | b']' | b'}'));
        if ends && plain_digits(self.b, self.i, j) {
            self.i = j;
            return Ok(v);
        }
        self.any_int()
    }

    /// [`int`](Self::int) in every other case: whitespace first, a sign, the end of the
    /// bytes.
    fn any_int(&mut self) -> R<i64> {
        if !matches!(self.ws()?, b'-' | b'0'..=b'9') {
            return Err(Stop::Fail);
        }
        if let Some((v, _)) = self.plain_int()? {
            return Ok(v);
        }
        let t = self.number()?;
        let digits = t.strip_prefix(b"-").unwrap_or(t);
        if digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
            return Err(Stop::Fail);
        }
        let v = digits.iter().fold(0i64, |a, &d| a * 10 + (d - b'0') as i64);
        Ok(if t[0] == b'-' { -v } else { v })
    }

    /// A number as serde_json's `f64` reads it: integers exactly, others by serde_json.
    pub(super) fn float(&mut self) -> R<f64> {
        if !matches!(self.ws()?, b'-' | b'0'..=b'9') {
            return Err(Stop::Fail);
        }
        match self.plain_int()? {
            // `-0` is serde_json's -0.0.
            Some((0, true)) => return Ok(-0.0),
            Some((v, _)) => return Ok(v as f64),
            None => {}
        }
        let t = self.number()?;
        let digits = t.strip_prefix(b"-").unwrap_or(t);
        // `-0` is serde_json's -0.0.
        let plain = digits.len() <= 18
            && digits.iter().all(u8::is_ascii_digit)
            && !(t[0] == b'-' && digits == b"0");
        if plain {
            let v = digits.iter().fold(0i64, |a, &d| a * 10 + (d - b'0') as i64);
            return Ok(if t[0] == b'-' { -v } else { v } as f64);
        }
        serde_json::from_slice(t).map_err(|_| Stop::Fail)
    }

    /// Whether the bytes at the cursor are `word`, taken if so (too few bytes to tell:
    /// [`need`](Self::need)).
    #[inline(always)]
    pub(super) fn starts(&mut self, word: &[u8]) -> R<bool> {
        match self.b.get(self.i..self.i + word.len()) {
            // Compared a word at a time inline (`word` a key's constant text, folded in), not by
            // a call to `memcmp` (in wasm a byte loop): a node has a dozen keys.
            Some(got) if same(got, word) => {
                self.i += word.len();
                Ok(true)
            }
            Some(_) => Ok(false),
            None if word.starts_with(&self.b[self.i..]) => Err(self.need()),
            None => Ok(false),
        }
    }

    /// `prefix` (which ends with a list's `[`), then the list's items, each read by `item`
    /// (`false`: not as expected), then its `]`: whether all were.
    pub(super) fn list_after(
        &mut self,
        prefix: &[u8],
        mut item: impl FnMut(&mut Self) -> R<bool>,
    ) -> R<bool> {
        if !self.starts(prefix)? {
            return Ok(false);
        }
        let mut next = self.ws()? != b']';
        while next {
            if !item(self)? {
                return Ok(false);
            }
            next = self.comma_or(b']')?;
        }
        self.i += 1;
        Ok(true)
    }

    /// A `callFrame` object (at its `{`).
    pub(super) fn call_frame(&mut self) -> R<CallFrame<'b>> {
        let at = self.i;
        match self.v8_call_frame() {
            Ok(Some(f)) => return Ok(f),
            Err(Stop::Need) => return Err(Stop::Need),
            Ok(None) | Err(Stop::Fail) => self.i = at,
        }
        self.call_frame_any()
    }

    /// A `callFrame` as V8 writes it, its keys in its order with no space between
    /// (`{"functionName":"f","scriptId":"1","url":"u","lineNumber":2,"columnNumber":3}`),
    /// read with one comparison a key; `None` (or a failure) where the bytes are laid out
    /// otherwise: [`call_frame_any`](Self::call_frame_any) reads them from the same place.
    pub(super) fn v8_call_frame(&mut self) -> R<Option<CallFrame<'b>>> {
        let Some(name) = self.string_after(b"{\"functionName\":\"")? else {
            return Ok(None);
        };
        if !self.skip_string_after(b",\"scriptId\":\"")? {
            return Ok(None);
        }
        let Some(url) = self.string_after(b",\"url\":\"")? else {
            return Ok(None);
        };
        if !self.starts(b",\"lineNumber\":")? {
            return Ok(None);
        }
        let line = self.int()?;
        if !self.starts(b",\"columnNumber\":")? {
            return Ok(None);
        }
        self.int()?;
        if !self.starts(b"}")? {
            return Ok(None);
        }
        Ok(Some((Some(name), Some(url), Some(line))))
    }

    /// The string after `prefix` (which ends with the string's `"`), or `None` where the
    /// bytes are not `prefix`.
    pub(super) fn string_after(&mut self, prefix: &[u8]) -> R<Option<Cow<'b, str>>> {
        if !self.starts(prefix)? {
            return Ok(None);
        }
        self.i -= 1;
        self.string().map(Some)
    }

    /// Whether the bytes are `prefix` (which ends with a string's `"`), then the string,
    /// checked and skipped: a plain ASCII one found a word at a time and not made a `str`.
    pub(super) fn skip_string_after(&mut self, prefix: &[u8]) -> R<bool> {
        if !self.starts(prefix)? {
            return Ok(false);
        }
        let q = plain_ascii(&self.b[self.i..]);
        if self.b.get(self.i + q) == Some(&b'"') {
            self.i += q + 1;
            return Ok(true);
        }
        self.i -= 1;
        self.string().map(|_| true)
    }

    /// A key and its colon: the key's index in `keys` (`keys.len()`: another key). A key
    /// read twice (`seen`) fails, as in serde.
    pub(super) fn key_in(&mut self, keys: &[&[u8]], seen: &mut [bool]) -> R<usize> {
        let key = self.key()?;
        self.eat(b':')?;
        let k = keys.iter().position(|&w| w == key).unwrap_or(keys.len());
        if k < keys.len() && std::mem::replace(&mut seen[k], true) {
            return Err(Stop::Fail);
        }
        Ok(k)
    }

    /// A `callFrame` object (at its `{`), its keys in any order.
    pub(super) fn call_frame_any(&mut self) -> R<CallFrame<'b>> {
        self.eat(b'{')?;
        let (mut name, mut url, mut line) = (None, None, None);
        let mut seen = [false; 3];
        let mut more = self.ws()? != b'}';
        while more {
            match self.key_in(&[b"functionName", b"url", b"lineNumber"], &mut seen)? {
                0 => name = self.opt(Cur::string_value)?,
                1 => url = self.opt(Cur::string_value)?,
                2 => line = self.opt(Cur::int)?,
                _ => self.skip(4)?,
            }
            more = self.comma_or(b'}')?;
        }
        self.i += 1;
        Ok((name, url, line))
    }

    /// A string value (after whitespace).
    pub(super) fn string_value(&mut self) -> R<Cow<'b, str>> {
        if self.ws()? != b'"' {
            return Err(Stop::Fail);
        }
        self.string()
    }

    /// Any value, checked and skipped; `depth`: its nesting.
    pub(super) fn skip(&mut self, depth: usize) -> R<()> {
        if depth > MAX_NESTING {
            return Err(Stop::Fail);
        }
        match self.ws()? {
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            open @ (b'[' | b'{') => {
                self.i += 1;
                let close = if open == b'[' { b']' } else { b'}' };
                let mut more = self.ws()? != close;
                while more {
                    if open == b'{' {
                        self.key()?;
                        self.eat(b':')?;
                    }
                    self.skip(depth + 1)?;
                    more = self.comma_or(close)?;
                }
                self.i += 1;
                Ok(())
            }
            _ => Err(Stop::Fail),
        }
    }
}

/// The decimal digits of `b` from `first`: where they end, and their value (wrapped past
/// 18 digits, which [`plain_digits`] refuses).
#[inline(always)]
fn digits(b: &[u8], first: usize) -> (usize, i64) {
    let (mut j, mut v) = (first, 0i64);
    while let Some(d) = b.get(j).map(|d| d.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        v = v.wrapping_mul(10).wrapping_add(d as i64);
        j += 1;
    }
    (j, v)
}

/// Whether the digits `first..end` of `b` are an integer serde_json's `i64` reads alike:
/// 1 to 18 of them, no leading zero.
#[inline(always)]
fn plain_digits(b: &[u8], first: usize, end: usize) -> bool {
    let n = end - first;
    (1..=18).contains(&n) && (n == 1 || b[first] != b'0')
}

/// How many bytes `b` starts with that are plain ASCII in a JSON string (not `"`, `\`, a
/// control character or a byte past 0x7f), counted a word at a time: a multiple of 8 where
/// the bytes run out before one that is not.
#[inline]
fn plain_ascii(b: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let mut q = 0;
    while let Some(w) = b.get(q..q + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap());
        // A borrow out of a byte that is flagged only reaches later bytes.
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        let m = special_mask(w) | (control | w) & HIGH;
        if m != 0 {
            return q + (m.trailing_zeros() / 8) as usize;
        }
        q += 8;
    }
    q
}

/// Whether `t` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn json_number(t: &[u8]) -> bool {
    let t = t.strip_prefix(b"-").unwrap_or(t);
    let int = t.iter().take_while(|c| c.is_ascii_digit()).count();
    if int == 0 || (int > 1 && t[0] == b'0') {
        return false;
    }
    let mut r = &t[int..];
    if let Some(f) = r.strip_prefix(b".") {
        let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        r = &f[n..];
    }
    if let Some(e) = r.strip_prefix(b"e").or_else(|| r.strip_prefix(b"E")) {
        let e = e
            .strip_prefix(b"+")
            .or_else(|| e.strip_prefix(b"-"))
            .unwrap_or(e);
        let n = e.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        r = &e[n..];
    }
    r.is_empty()
}
