//! V8's `.cpuprofile` in its current form read as its bytes arrive, by a small state
//! machine over the top-level object rather than a JSON parser over the whole text: each
//! node is read into a few numbers and two interned strings as soon as its bytes are in,
//! and `samples`, `timeDeltas` (or `timestamps`) one number at a time, so neither the file
//! nor its text is held, only the bytes of the item not yet complete.
//!
//! It reads what the whole-file fast reading (`cpuprofile::Fast`) reads, and gives up on
//! anything it is not sure that reading takes alike (a duplicate field, a key with
//! escapes, a value of another type, the older `head` form, a number it would have to
//! round differently, nesting deeper than the cursor reads): the file is then decoded whole,
//! as before. So when it does not give up, its samples and warnings are the whole
//! decode's, whatever pieces the bytes came in (the whole decode runs this same reader
//! first, over all the bytes at once).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::cursor::{kept, Cur, Stop, R};
use super::tree::{emit, frame, sample_times, Node, Parsed};
use crate::diag::Diagnostics;
use crate::event::EventSink;
use crate::hash::same;

/// The most bytes one item (a node, a number, a skipped value) may take while incomplete:
/// an item is read again from its start as more bytes come, so a hostile one-item file
/// would cost its size at each push.
const MAX_ITEM: usize = 64 << 20;

/// How many of a chunk's bytes are first added to an incomplete item (or its length, if
/// longer): most items are a node of a few hundred bytes.
const FINISH_ITEM: usize = 64 << 10;

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

/// A call frame as read: its name and url interned ([`NO_STR`]: absent), its line.
type FrameKey = (u32, u32, Option<i64>);

/// A frame key as one number, for the table: the name, the url, and the line as the frame
/// can show it (`frame` keeps a line from 0 to `u32::MAX - 1`, and only with a url): 0 for
/// none, else 1-based. Keys that differ only in a line no frame shows are one frame; no
/// two keys of different frames are.
fn packed((name, url, line): FrameKey) -> u128 {
    let line = match line {
        Some(l) if url != NO_STR && (0..u32::MAX as i64).contains(&l) => l as u128 + 1,
        _ => 0,
    };
    (name as u128) << 64 | (url as u128) << 32 | line
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
    nodes: Vec<Node>,
    /// Each distinct call frame once, by its index in `frames`.
    frames: Vec<FrameKey>,
    frame_ids: HashMap<u128, u32, BuildHasherDefault<WordHasher>>,
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
        let mut rest = chunk;
        if !self.window.is_empty() {
            // The incomplete item is finished with the chunk's first bytes; the chunk is
            // then read in place, not copied whole.
            let mut w = std::mem::take(&mut self.window);
            let old = w.len();
            let head = rest.len().min(old.max(FINISH_ITEM));
            w.extend_from_slice(&rest[..head]);
            let used = self.run(&w, false);
            if used >= old {
                rest = &rest[used - old..];
            } else {
                // Still incomplete: the rest of the chunk joins it.
                w.drain(..used);
                if head < rest.len() && !self.failed {
                    w.extend_from_slice(&rest[head..]);
                    let used = self.run(&w, false);
                    w.drain(..used);
                }
                self.window = w;
                rest = &[];
            }
        }
        if !rest.is_empty() && !self.failed {
            // Read in place: only an incomplete item's bytes are copied.
            let used = self.run(rest, false);
            self.window.extend_from_slice(&rest[used..]);
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
            nodes,
            frames: keys,
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
        let frames = (keys.iter())
            .map(|&(name, url, line)| frame(text(name), text(url), line))
            .collect();
        let (stamps, deltas) = (stamps.map(Vec::into_iter), deltas.map(Vec::into_iter));
        let times = sample_times(stamps, start.unwrap_or(0.0), deltas, diags);
        let p = Parsed {
            nodes,
            frames,
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
                        State::Value(key_colon(c)?)
                    }
                    b'"' if first => State::Value(key_colon(c)?),
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
            match c.key_in(&[b"id", b"parent", b"callFrame", b"children"], &mut seen)? {
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
        let frame = self.frame_of((name, url, line));
        self.nodes.push(Node { id, parent, frame });
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

    /// A call frame's index, a new one's appended.
    fn frame_of(&mut self, key: FrameKey) -> u32 {
        let k = packed(key);
        if let Some(&id) = self.frame_ids.get(&k) {
            return id;
        }
        let id = self.frames.len() as u32;
        self.frame_ids.insert(k, id);
        self.frames.push(key);
        id
    }

    /// `s` interned; `slot`: the field it is (a name, a url), whose last string is
    /// compared first (a node's url is its parent's or sibling's more often than not).
    fn intern(&mut self, s: &str, slot: usize) -> u32 {
        let last = self.last[slot];
        if (self.strings.get(last as usize)).is_some_and(|l| same(l.as_bytes(), s.as_bytes())) {
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

/// A top-level key and its colon.
fn key_colon(c: &mut Cur<'_>) -> R<Field> {
    let f = Field::of(c.key()?);
    c.eat(b':')?;
    Ok(f)
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
