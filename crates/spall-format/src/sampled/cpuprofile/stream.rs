//! V8's `.cpuprofile` in its current form read as its bytes arrive, by a small state
//! machine over the top-level object rather than a JSON parser over the whole text: each
//! node is read into a few numbers and two interned strings as soon as its bytes are in,
//! and `samples`, `timeDeltas` (or `timestamps`) one number at a time, so neither the file
//! nor its text is held, only the bytes of the item not yet complete.
//!
//! It reads what the whole-file fast reading (`cpuprofile::Fast`) reads, and gives up on
//! anything it is not sure that reading takes alike (a duplicate field, a key with
//! escapes, a value of another type, the older `head` form, a number it would have to
//! round differently, nesting deeper than [`MAX_NESTING`]): the file is then decoded whole,
//! as before. So when it does not give up, its samples and warnings are the whole
//! decode's, whatever pieces the bytes came in (the whole decode runs this same reader
//! first, over all the bytes at once).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::tree::{emit, frame, sample_times, Node, Parsed};
use crate::diag::Diagnostics;
use crate::event::EventSink;

/// Why a step stopped: the bytes so far end inside the item, or the reader gives up.
enum Stop {
    Need,
    Fail,
}

type R<T> = Result<T, Stop>;

/// The most bytes one item (a node, a number, a skipped value) may take while incomplete:
/// an item is read again from its start as more bytes come, so a hostile one-item file
/// would cost its size at each push.
const MAX_ITEM: usize = 64 << 20;

/// The deepest nesting read: serde_json, which the whole decode falls back to, stops at
/// 128.
const MAX_NESTING: usize = 100;

/// A top-level field the reader keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Nodes,
    Samples,
    TimeDeltas,
    Timestamps,
    StartTime,
    EndTime,
    Title,
    Other,
}

impl Field {
    fn of(key: &[u8]) -> Field {
        match key {
            b"nodes" => Field::Nodes,
            b"samples" => Field::Samples,
            b"timeDeltas" => Field::TimeDeltas,
            b"timestamps" => Field::Timestamps,
            b"startTime" => Field::StartTime,
            b"endTime" => Field::EndTime,
            b"title" => Field::Title,
            _ => Field::Other,
        }
    }
}

/// Where the reader is in the top-level object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// Before its `{`.
    #[default]
    Open,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After a value: `,` and a key, or `}`.
    NextKey,
    /// After a key and its `:`.
    Value(Field),
    /// After an array's `[`: an item or `]`.
    FirstItem(Field),
    /// After an item: `,` and an item, or `]`.
    NextItem(Field),
    /// After the closing `}`: only whitespace.
    Done,
}

/// A node as read: its strings interned.
struct RawNode {
    id: i64,
    parent: Option<i64>,
    name: u32,
    url: u32,
    line: Option<i64>,
}

/// No string.
const NO_STR: u32 = u32::MAX;

/// A `.cpuprofile` being read: [`push`](Self::push) its bytes in order, then
/// [`finish`](Self::finish).
#[derive(Default)]
pub(crate) struct Reader {
    state: State,
    /// The bytes of the item not complete yet.
    window: Vec<u8>,
    failed: bool,
    /// The fields seen (a second one fails, as in serde).
    seen: [bool; 7],
    nodes: Vec<RawNode>,
    children: Vec<(i64, i64)>,
    /// The current node's children, kept until the node is complete.
    kids: Vec<i64>,
    samples: Vec<i64>,
    deltas: Option<Vec<f64>>,
    stamps: Option<Vec<f64>>,
    start: Option<f64>,
    end: Option<f64>,
    title: Option<String>,
    strings: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32, BuildHasherDefault<WordHasher>>,
    /// The last name and url interned.
    last: [u32; 2],
    read: u64,
}

impl Reader {
    /// Whether the reader has given up (the file must be decoded whole).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Bytes read completely so far.
    pub(crate) fn consumed(&self) -> u64 {
        self.read - self.window.len() as u64
    }

    /// The file's next bytes; an error once the reader has given up.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<(), ()> {
        if self.failed {
            return Err(());
        }
        self.read += chunk.len() as u64;
        if self.window.is_empty() {
            // Read in place: only an incomplete item's bytes are copied.
            let used = self.run(chunk, false);
            self.window.extend_from_slice(&chunk[used..]);
        } else {
            let mut w = std::mem::take(&mut self.window);
            w.extend_from_slice(chunk);
            let used = self.run(&w, false);
            w.drain(..used);
            self.window = w;
        }
        if self.window.len() > MAX_ITEM {
            self.failed = true;
        }
        if self.failed {
            self.window = Vec::new();
            return Err(());
        }
        Ok(())
    }

    /// Reads what is left and hands the samples to `sink` in time order; their number, or
    /// `None` if the reader gave up (nothing was handed over then).
    pub(crate) fn finish<S: EventSink>(
        mut self,
        sink: &mut S,
        diags: &mut Diagnostics,
    ) -> Option<u64> {
        if !self.failed {
            let w = std::mem::take(&mut self.window);
            self.run(&w, true);
        }
        if self.failed || self.state != State::Done || !self.seen[Field::Nodes as usize] {
            return None;
        }
        let Reader {
            nodes: raw,
            children,
            samples,
            deltas,
            stamps,
            start,
            end,
            title,
            strings,
            ..
        } = self;
        let text = |i: u32| (i != NO_STR).then(|| Cow::Borrowed(&*strings[i as usize]));
        let nodes = (raw.iter())
            .map(|n| Node {
                id: n.id,
                parent: n.parent,
                frame: frame(text(n.name), text(n.url), n.line),
            })
            .collect();
        drop(raw);
        let (stamps, deltas) = (stamps.map(Vec::into_iter), deltas.map(Vec::into_iter));
        let times = sample_times(stamps, start.unwrap_or(0.0), deltas, diags);
        let p = Parsed {
            nodes,
            children,
            times,
            samples,
            end_ns: end.map(|e| (e * 1000.0).round() as i64),
            title: title.as_deref().map(Cow::Borrowed),
        };
        Some(emit(p, sink, diags))
    }

    /// Reads the items complete in `b` (the rest of the input if `end`); how many bytes
    /// they took.
    fn run(&mut self, b: &[u8], end: bool) -> usize {
        let mut c = Cur { b, i: 0, end };
        loop {
            let at = c.i;
            match self.step(&mut c) {
                Ok(()) => {}
                Err(Stop::Need) => return at,
                Err(Stop::Fail) => {
                    // The end of the input after the closing brace is the end.
                    if !(self.state == State::Done && end && c.i == b.len()) {
                        self.failed = true;
                    }
                    return at;
                }
            }
        }
    }

    /// One step of the top-level object.
    fn step(&mut self, c: &mut Cur<'_>) -> R<()> {
        self.state = match self.state {
            State::Open => {
                c.eat(b'{')?;
                State::FirstKey
            }
            State::FirstKey | State::NextKey => {
                let first = self.state == State::FirstKey;
                match c.ws()? {
                    b'}' => {
                        c.i += 1;
                        State::Done
                    }
                    b',' if !first => {
                        c.i += 1;
                        State::Value(c.key_colon()?)
                    }
                    b'"' if first => State::Value(c.key_colon()?),
                    _ => return Err(Stop::Fail),
                }
            }
            State::Value(f) => self.value(c, f)?,
            State::FirstItem(f) => {
                if c.ws()? == b']' {
                    c.i += 1;
                    State::NextKey
                } else {
                    self.item(c, f)?;
                    State::NextItem(f)
                }
            }
            State::NextItem(f) => match c.ws()? {
                b',' => {
                    c.i += 1;
                    self.item(c, f)?;
                    State::NextItem(f)
                }
                b']' => {
                    c.i += 1;
                    State::NextKey
                }
                _ => return Err(Stop::Fail),
            },
            State::Done => {
                c.ws()?;
                return Err(Stop::Fail);
            }
        };
        Ok(())
    }

    /// A top-level field's value, or its array's `[`.
    fn value(&mut self, c: &mut Cur<'_>, f: Field) -> R<State> {
        if f != Field::Other && self.seen[f as usize] {
            return Err(Stop::Fail);
        }
        let null = c.ws()? == b'n';
        let next = match f {
            Field::Nodes | Field::Samples => {
                c.eat(b'[')?;
                State::FirstItem(f)
            }
            Field::TimeDeltas | Field::Timestamps if null => {
                c.literal(b"null")?;
                State::NextKey
            }
            Field::TimeDeltas | Field::Timestamps => {
                c.eat(b'[')?;
                let v = Some(Vec::new());
                match f {
                    Field::TimeDeltas => self.deltas = v,
                    _ => self.stamps = v,
                }
                State::FirstItem(f)
            }
            Field::StartTime | Field::EndTime => {
                let v = if null {
                    c.literal(b"null")?;
                    None
                } else {
                    Some(c.float()?)
                };
                match f {
                    Field::StartTime => self.start = v,
                    _ => self.end = v,
                }
                State::NextKey
            }
            Field::Title => {
                self.title = if null {
                    c.literal(b"null")?;
                    None
                } else {
                    Some(c.string_value()?.into_owned())
                };
                State::NextKey
            }
            Field::Other => {
                c.skip(1)?;
                State::NextKey
            }
        };
        if f != Field::Other {
            self.seen[f as usize] = true;
        }
        Ok(next)
    }

    /// One item of an array: a node, a sample's node id, a time.
    fn item(&mut self, c: &mut Cur<'_>, f: Field) -> R<()> {
        match f {
            Field::Nodes => self.node(c),
            Field::Samples => {
                let v = c.int()?;
                self.samples.push(v);
                Ok(())
            }
            _ => {
                let v = c.float()?;
                let list = match f {
                    Field::TimeDeltas => &mut self.deltas,
                    _ => &mut self.stamps,
                };
                list.get_or_insert_with(Vec::new).push(v);
                Ok(())
            }
        }
    }

    /// One node: `id`, `parent`, `children` and `callFrame`'s `functionName`, `url` and
    /// `lineNumber`; other fields skipped.
    fn node(&mut self, c: &mut Cur<'_>) -> R<()> {
        c.eat(b'{')?;
        self.kids.clear();
        let (mut id, mut parent, mut call) = (None, None, None);
        let mut seen = [false; 4];
        // V8 writes `"id"` and `"callFrame"` first: each read with one comparison.
        c.i -= 1;
        let mut more = if c.starts(b"{\"id\":")? {
            id = Some(c.int()?);
            seen[0] = true;
            if c.starts(b",\"callFrame\":")? {
                call = c.opt(Cur::call_frame)?;
                seen[2] = true;
                seen[3] = self.v8_node_rest(c)?;
            }
            c.comma_or(b'}')?
        } else {
            c.i += 1;
            c.ws()? != b'}'
        };
        while more {
            let key = c.key()?;
            c.eat(b':')?;
            let k = match key {
                b"id" => 0,
                b"parent" => 1,
                b"callFrame" => 2,
                b"children" => 3,
                _ => 4,
            };
            if k < 4 && std::mem::replace(&mut seen[k], true) {
                return Err(Stop::Fail);
            }
            match k {
                0 => id = Some(c.int()?),
                1 => parent = c.opt(Cur::int)?,
                2 => call = c.opt(Cur::call_frame)?,
                3 => {
                    c.eat(b'[')?;
                    let mut next = c.ws()? != b']';
                    while next {
                        self.kids.push(c.int()?);
                        next = c.comma_or(b']')?;
                    }
                    c.i += 1;
                }
                _ => c.skip(3)?,
            }
            more = c.comma_or(b'}')?;
        }
        c.i += 1;
        let id = id.ok_or(Stop::Fail)?;
        let (name, url, line) = call.unwrap_or((None, None, None));
        let name = name.map_or(NO_STR, |s| self.intern(&s, 0));
        let url = url.map_or(NO_STR, |s| self.intern(&s, 1));
        self.nodes.push(RawNode {
            id,
            parent,
            name,
            url,
            line,
        });
        self.children.extend(self.kids.iter().map(|&k| (id, k)));
        Ok(())
    }

    /// The rest of a node as V8 writes it after its call frame: `"hitCount"`, then
    /// `"children"` and `"positionTicks"` where it has them, each key one comparison; each
    /// part is read whole or the cursor goes back to its comma, where the reader of any key
    /// takes over. Whether the children were read.
    fn v8_node_rest(&mut self, c: &mut Cur<'_>) -> R<bool> {
        let at = c.i;
        let hits = (c.starts(b",\"hitCount\":")).map(|y| y && c.int().is_ok());
        if !kept(hits, c, at)? {
            return Ok(false);
        }
        let (at, ids) = (c.i, &mut self.kids);
        let kids = c.list_after(b",\"children\":[", |c| {
            ids.push(c.int()?);
            Ok(true)
        });
        let kids = kept(kids, c, at)?;
        if !kids {
            self.kids.clear();
        }
        let at = c.i;
        let ticks = c.list_after(b",\"positionTicks\":[", |c| {
            for word in [&b"{\"line\":"[..], b",\"ticks\":"] {
                if !c.starts(word)? {
                    return Ok(false);
                }
                c.int()?;
            }
            c.starts(b"}")
        });
        kept(ticks, c, at)?;
        Ok(kids)
    }

    /// `s` interned; `slot`: the field it is (a name, a url), whose last string is
    /// compared first (a node's url is its parent's or sibling's more often than not).
    fn intern(&mut self, s: &str, slot: usize) -> u32 {
        let last = self.last[slot];
        if (self.strings.get(last as usize)).is_some_and(|l| **l == *s) {
            return last;
        }
        let i = match self.ids.get(s) {
            Some(&i) => i,
            None => {
                let i = self.strings.len() as u32;
                self.strings.push(s.into());
                self.ids.insert(s.into(), i);
                i
            }
        };
        self.last[slot] = i;
        i
    }
}

/// A part of a node read whole (`Ok(true)`), or not (`Ok(false)`, or a failure): the
/// cursor back at `at`; more bytes needed is passed on.
fn kept(r: R<bool>, c: &mut Cur<'_>, at: usize) -> R<bool> {
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
type CallFrame<'b> = (Option<Cow<'b, str>>, Option<Cow<'b, str>>, Option<i64>);

/// A position in the bytes read so far; `end`: they are all there will be.
struct Cur<'b> {
    b: &'b [u8],
    i: usize,
    end: bool,
}

impl<'b> Cur<'b> {
    /// Ran out: wait for more bytes, or give up at the end.
    fn need(&self) -> Stop {
        if self.end {
            Stop::Fail
        } else {
            Stop::Need
        }
    }

    /// Skips whitespace; the next byte.
    fn ws(&mut self) -> R<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Ok(c);
            }
            self.i += 1;
        }
        Err(self.need())
    }

    fn eat(&mut self, want: u8) -> R<()> {
        if self.ws()? != want {
            return Err(Stop::Fail);
        }
        self.i += 1;
        Ok(())
    }

    /// After an item: true at `,` (taken), false at `close` (left).
    fn comma_or(&mut self, close: u8) -> R<bool> {
        match self.ws()? {
            b',' => {
                self.i += 1;
                Ok(true)
            }
            c if c == close => Ok(false),
            _ => Err(Stop::Fail),
        }
    }

    fn literal(&mut self, word: &[u8]) -> R<()> {
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
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> R<T>) -> R<Option<T>> {
        if self.ws()? == b'n' {
            self.literal(b"null")?;
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// A key without escapes (one with escapes is given up on).
    fn key(&mut self) -> R<&'b [u8]> {
        if self.ws()? != b'"' {
            return Err(Stop::Fail);
        }
        // ASCII, the usual key: no UTF-8 check (a node has a dozen keys).
        let start = self.i + 1;
        let rest = &self.b[start..];
        let mut q = 0;
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

    fn key_colon(&mut self) -> R<Field> {
        let f = Field::of(self.key()?);
        self.eat(b':')?;
        Ok(f)
    }

    /// A string (at its `"`), borrowed where it has no escapes. Control characters and
    /// text that is not UTF-8 fail, as in serde_json.
    fn string(&mut self) -> R<Cow<'b, str>> {
        let start = self.i + 1;
        let rest = &self.b[start..];
        // Byte by byte: a node's strings are short, and memchr's setup cost more than
        // the scan (in wasm most).
        let (mut q, mut high) = (0, 0);
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
    fn number(&mut self) -> R<&'b [u8]> {
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
    fn plain_int(&mut self) -> R<Option<(i64, bool)>> {
        let neg = self.b.get(self.i) == Some(&b'-');
        let first = self.i + neg as usize;
        let mut j = first;
        let mut v = 0i64;
        while let Some(&d) = self.b.get(j) {
            if !d.is_ascii_digit() {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add((d - b'0') as i64);
            j += 1;
        }
        match self.b.get(j) {
            None => return Err(self.need()),
            Some(b'.' | b'e' | b'E' | b'+' | b'-') => return Ok(None),
            Some(_) => {}
        }
        let n = j - first;
        if n == 0 || n > 18 || (n > 1 && self.b[first] == b'0') {
            return Ok(None);
        }
        self.i = j;
        Ok(Some((if neg { -v } else { v }, neg)))
    }

    /// An integer of up to 18 digits: serde_json's `i64` takes it alike (anything else is
    /// given up on).
    fn int(&mut self) -> R<i64> {
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
    fn float(&mut self) -> R<f64> {
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
    fn starts(&mut self, word: &[u8]) -> R<bool> {
        match self.b.get(self.i..self.i + word.len()) {
            Some(got) if got == word => {
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
    fn list_after(&mut self, prefix: &[u8], mut item: impl FnMut(&mut Self) -> R<bool>) -> R<bool> {
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
    fn call_frame(&mut self) -> R<CallFrame<'b>> {
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
    fn v8_call_frame(&mut self) -> R<Option<CallFrame<'b>>> {
        let Some(name) = self.string_after(b"{\"functionName\":\"")? else {
            return Ok(None);
        };
        if self.string_after(b",\"scriptId\":\"")?.is_none() {
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
    fn string_after(&mut self, prefix: &[u8]) -> R<Option<Cow<'b, str>>> {
        if !self.starts(prefix)? {
            return Ok(None);
        }
        self.i -= 1;
        self.string().map(Some)
    }

    /// A `callFrame` object (at its `{`), its keys in any order.
    fn call_frame_any(&mut self) -> R<CallFrame<'b>> {
        self.eat(b'{')?;
        let (mut name, mut url, mut line) = (None, None, None);
        let mut seen = [false; 3];
        let mut more = self.ws()? != b'}';
        while more {
            let key = self.key()?;
            self.eat(b':')?;
            let k = match key {
                b"functionName" => 0,
                b"url" => 1,
                b"lineNumber" => 2,
                _ => 3,
            };
            if k < 3 && std::mem::replace(&mut seen[k], true) {
                return Err(Stop::Fail);
            }
            match k {
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
    fn string_value(&mut self) -> R<Cow<'b, str>> {
        if self.ws()? != b'"' {
            return Err(Stop::Fail);
        }
        self.string()
    }

    /// Any value, checked and skipped; `depth`: its nesting.
    fn skip(&mut self, depth: usize) -> R<()> {
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

/// A string hasher a word at a time (names and urls are interned once per node, and
/// SipHash took a large share of that).
#[derive(Default, Clone, Copy)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        let tail = (words.remainder().iter()).fold(bytes.len() as u64, |a, &c| a << 8 | c as u64);
        self.0 = (self.0.rotate_left(5) ^ tail).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
