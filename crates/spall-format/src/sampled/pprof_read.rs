//! pprof's `Profile` read field by field, as its bytes arrive or from a whole file alike
//! ([`Reading`]): the whole-file decode is one push of every byte, so a streamed profile
//! gives that decode's samples and warnings by construction.
//!
//! A sample's locations may refer to tables that come after it (Go writes the samples
//! first and the string table last), so nothing is handed over before the end. Until then
//! each top-level field is read as soon as it is complete and only what it says is kept:
//! the tables (as [`Tables`], strings owned), and per sample its values, its labels and
//! the index of its list of location ids among the distinct lists seen (a profile has far
//! fewer stacks than samples). Only the bytes of the field not complete yet are held,
//! never the file.
//!
//! At the end, each distinct list becomes a path in a call tree of (caller node,
//! location) edges, once; every sample's stack is then that path's frames, handed over
//! with the tree's node of each frame ([`RawSample::nodes`]), so a sink need not compare
//! the stack with the previous sample's frame by frame.

use std::borrow::Cow;

use super::pprof_tables::{label, location, value_type, Label, Tables};
use super::{bad, warn, RawFrame};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::proto::hash::IdMap;
use crate::proto::wire::{self, Reader, Value};

/// No node, no stack.
pub(super) const NONE: u32 = u32::MAX;

/// One sample as kept until the end.
#[derive(Clone, Copy)]
pub(super) struct Kept {
    pub offset: u64,
    /// Index of its list of location ids in [`Reading::stacks`].
    pub stack: u32,
    /// Where its values end in [`Reading::values`].
    pub values_end: u32,
    /// Index of its labels in [`Reading::label_sets`] (0: none).
    pub labels: u32,
}

/// The samples kept, a column per field of [`Kept`] (no padding: 20 bytes a sample).
#[derive(Default)]
pub(super) struct KeptSamples {
    offset: Vec<u64>,
    stack: Vec<u32>,
    values_end: Vec<u32>,
    labels: Vec<u32>,
}

impl KeptSamples {
    fn push(&mut self, k: Kept) {
        self.offset.push(k.offset);
        self.stack.push(k.stack);
        self.values_end.push(k.values_end);
        self.labels.push(k.labels);
    }

    pub fn len(&self) -> usize {
        self.offset.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offset.is_empty()
    }

    pub fn get(&self, i: usize) -> Kept {
        Kept {
            offset: self.offset[i],
            stack: self.stack[i],
            values_end: self.values_end[i],
            labels: self.labels[i],
        }
    }
}

/// A profile read so far.
#[derive(Default)]
pub(super) struct Reading {
    pub t: Tables,
    pub samples: KeptSamples,
    pub values: Vec<i64>,
    /// The distinct lists of location ids (varints, innermost first).
    pub stacks: Interner,
    /// The distinct sets of labels (each label's length, then its message); the first,
    /// none.
    pub label_sets: Interner,
    /// A sample's list or labels being read, as the interners hold them.
    key: Vec<u8>,
    labels_key: Vec<u8>,
    /// The bytes of fields not read yet (a field not complete, or everything after a
    /// field the wire format refuses: read at the end, as the whole decode reads it).
    window: Vec<u8>,
    /// The file's offset of `window[0]`.
    at: u64,
    /// Whether the stream stopped splitting at a field the wire format refuses.
    broken: bool,
    /// Whether reading stopped at a field that does not parse (the rest is left out).
    stopped: bool,
}

impl Reading {
    /// The file's next bytes: its complete top-level fields are read.
    pub fn push(&mut self, chunk: &[u8], diags: &mut Diagnostics) -> Result<(), Error> {
        self.window.extend_from_slice(chunk);
        if self.broken || self.stopped {
            if self.stopped {
                self.window.clear();
            }
            return Ok(());
        }
        let end = self.complete();
        if end > 0 {
            let w = std::mem::take(&mut self.window);
            let r = self.fields(&w[..end], self.at, diags);
            self.window = w;
            self.window.drain(..end);
            self.at += end as u64;
            r?;
        }
        Ok(())
    }

    /// A whole file, read in place.
    pub fn push_all(&mut self, b: &[u8], diags: &mut Diagnostics) -> Result<(), Error> {
        self.fields(b, 0, diags)?;
        self.end(diags)
    }

    /// Reads what is left: the whole decode's error where the last bytes do not parse.
    pub fn end(&mut self, diags: &mut Diagnostics) -> Result<(), Error> {
        let w = std::mem::take(&mut self.window);
        if !self.stopped && !w.is_empty() {
            self.fields(&w, self.at, diags)?;
        }
        if self.t.strings.first().is_some_and(|s| !s.is_empty()) {
            warn(diags, 0, || {
                "the string table's first entry is not empty".into()
            });
        }
        Ok(())
    }

    /// How many bytes of the window are whole fields the wire format takes; past a field
    /// it refuses, the stream holds the rest for [`end`](Self::end).
    fn complete(&mut self) -> usize {
        let w = &self.window[..];
        let mut at = 0;
        loop {
            let Ok((tag, n)) = wire::varint(&w[at..]) else {
                self.broken = w.len() - at >= 10;
                return at;
            };
            let num = tag >> 3;
            if num == 0 || num > u32::MAX as u64 {
                self.broken = true;
                return at;
            }
            let p = at + n;
            let len = match tag & 7 {
                0 => match wire::varint(&w[p..]) {
                    Ok((_, n)) => n as u64,
                    Err(_) => {
                        self.broken = w.len() - p >= 10;
                        return at;
                    }
                },
                1 => 8,
                5 => 4,
                2 => match wire::varint(&w[p..]) {
                    Ok((len, n)) => len.saturating_add(n as u64),
                    Err(_) => {
                        self.broken = w.len() - p >= 10;
                        return at;
                    }
                },
                _ => {
                    self.broken = true;
                    return at;
                }
            };
            if len > (w.len() - p) as u64 {
                return at;
            }
            at = p + len as usize;
        }
    }

    /// Reads the top-level fields in `b` (at file offset `base`).
    fn fields(&mut self, b: &[u8], base: u64, diags: &mut Diagnostics) -> Result<(), Error> {
        for f in Reader::new(b, base) {
            let f = match f {
                Ok(f) => f,
                Err(e) if self.samples.is_empty() && self.t.strings.is_empty() => {
                    return Err(bad(format!("not a pprof profile: {e}"), e.offset))
                }
                Err(e) => {
                    warn(diags, e.offset, || {
                        format!("the profile is cut short ({e}); its rest left out")
                    });
                    self.stopped = true;
                    return Ok(());
                }
            };
            self.field(f, diags);
        }
        Ok(())
    }

    /// One top-level field.
    fn field(&mut self, f: wire::Field<'_>, diags: &mut Diagnostics) {
        let t = &mut self.t;
        match (f.num, f.value) {
            (1, Value::Bytes(m)) => t.sample_types.push(value_type(m)),
            (2, Value::Bytes(m)) => self.sample(m, f.offset, diags),
            (3, Value::Bytes(m)) => {
                let (mut id, mut file) = (0, 0);
                for g in Reader::new(m, f.offset).flatten() {
                    match (g.num, g.value) {
                        (1, Value::Varint(x)) => id = x,
                        (5, Value::Varint(x)) => file = x,
                        _ => {}
                    }
                }
                t.mappings.push((id, file));
            }
            (4, Value::Bytes(m)) => location(t, m, f.offset, diags),
            (5, Value::Bytes(m)) => {
                let mut id = 0;
                let mut func = super::pprof_tables::Function::default();
                for g in Reader::new(m, f.offset).flatten() {
                    match (g.num, g.value) {
                        (1, Value::Varint(x)) => id = x,
                        (2, Value::Varint(x)) => func.name = x,
                        (3, Value::Varint(x)) => func.system_name = x,
                        (4, Value::Varint(x)) => func.file = x,
                        _ => {}
                    }
                }
                t.fn_ids.insert(id, t.functions.len() as u32);
                t.functions.push(func);
            }
            (6, Value::Bytes(s)) => t.strings.push(super::text::utf8(s).into_owned()),
            (9, Value::Varint(x)) => t.time_nanos = Some(x as i64),
            (10, Value::Varint(x)) => t.duration_nanos = Some(x as i64),
            (11, Value::Bytes(m)) => t.period_type = Some(value_type(m)),
            (12, Value::Varint(x)) => t.period = Some(x as i64),
            (14, Value::Varint(x)) => t.default_type = Some(x),
            _ => {}
        }
    }

    /// A `Sample`: its values kept, its list of location ids and its labels interned.
    fn sample(&mut self, m: &[u8], offset: u64, diags: &mut Diagnostics) {
        self.key.clear();
        self.labels_key.clear();
        let (key, labels) = (&mut self.key, &mut self.labels_key);
        for f in Reader::new(m, offset) {
            let Ok(f) = f else {
                warn(diags, offset, || {
                    "a sample that does not parse; its rest left out".into()
                });
                break;
            };
            let r = match f.num {
                1 => wire::repeated(f.value, false, |id| put_varint(key, id)),
                2 => wire::repeated(f.value, false, |v| self.values.push(v as i64)),
                3 => {
                    if let Value::Bytes(l) = f.value {
                        put_varint(labels, l.len() as u64);
                        labels.extend_from_slice(l);
                    }
                    Ok(())
                }
                _ => Ok(()),
            };
            if r.is_err() {
                warn(diags, f.offset, || {
                    "a packed field cut short; its rest left out".into()
                });
            }
        }
        if self.label_sets.len() == 0 {
            self.label_sets.intern(&[]);
        }
        let stack = self.stacks.intern(&self.key);
        let labels = self.label_sets.intern(&self.labels_key);
        self.samples.push(Kept {
            offset,
            stack,
            values_end: self.values.len() as u32,
            labels,
        });
    }

    /// The labels of the set `i`.
    pub fn labels(&self, i: u32) -> impl Iterator<Item = Label> + '_ {
        let mut b = self.label_sets.get(i);
        std::iter::from_fn(move || {
            let (len, n) = wire::varint(b).ok()?;
            let l = b.get(n..n + len as usize)?;
            b = &b[n + len as usize..];
            Some(label(l))
        })
    }

    /// The bytes read, up to the field not complete yet.
    pub fn decoded(&self) -> u64 {
        self.at
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Distinct byte strings, each numbered in the order first seen and held once.
#[derive(Default)]
pub(super) struct Interner {
    bytes: Vec<u8>,
    /// Per string, where it ends in `bytes`.
    ends: Vec<u32>,
    /// A string's hash to the last string with that hash; then a chain through `same_hash`.
    by_hash: IdMap<u64, u32>,
    same_hash: Vec<u32>,
}

impl Interner {
    /// The number of `key`, added if new.
    fn intern(&mut self, key: &[u8]) -> u32 {
        let h = hash(key);
        let mut i = self.by_hash.get(&h).copied().unwrap_or(NONE);
        while i != NONE {
            if self.get(i) == key {
                return i;
            }
            i = self.same_hash[i as usize];
        }
        let new = self.ends.len() as u32;
        self.same_hash
            .push(self.by_hash.insert(h, new).unwrap_or(NONE));
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len() as u32);
        new
    }

    /// The string numbered `i`.
    pub fn get(&self, i: u32) -> &[u8] {
        let start = match i {
            0 => 0,
            i => self.ends[i as usize - 1] as usize,
        };
        &self.bytes[start..self.ends[i as usize] as usize]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }
}

/// A list's hash, eight bytes at a time.
fn hash(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().unwrap());
        h = (h.rotate_left(5) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    for &c in chunks.remainder() {
        h = (h.rotate_left(5) ^ c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h
}

/// The call tree of the distinct lists: each list's leaf node, each node's frame and
/// caller.
pub(super) struct Tree {
    /// Per node: its frame (index into the location frames) and its caller node.
    pub frame: Vec<u32>,
    pub parent: Vec<u32>,
    /// Per list of ids: its leaf node, and its ids no location has.
    pub leaf: Vec<u32>,
    pub unknown: Vec<u32>,
}

impl Tree {
    /// The tree of `r`'s lists (each location's frames are a range of the frames that
    /// [`Tables::loc_frames`] gives, outermost first).
    pub fn new(r: &Reading) -> Tree {
        let t = &r.t;
        let mut tree = Tree {
            frame: Vec::new(),
            parent: Vec::new(),
            leaf: Vec::with_capacity(r.stacks.len()),
            unknown: Vec::with_capacity(r.stacks.len()),
        };
        let mut edges: IdMap<(u32, u32), u32> = IdMap::default();
        let mut ids = Vec::new();
        for i in 0..r.stacks.len() as u32 {
            ids.clear();
            let _ = wire::repeated(Value::Bytes(r.stacks.get(i)), false, |id| ids.push(id));
            let (mut node, mut unknown) = (NONE, 0);
            for &id in ids.iter().rev() {
                let Some(loc) = t.loc_ids.get(id) else {
                    unknown += 1;
                    continue;
                };
                let next = tree.frame.len() as u32;
                let first = *edges.entry((node, loc)).or_insert(next);
                let (a, z) = t.loc_frames[loc as usize];
                if first == next {
                    for (k, f) in (a..z).enumerate() {
                        tree.frame.push(f);
                        tree.parent
                            .push(if k == 0 { node } else { next + k as u32 - 1 });
                    }
                }
                node = first + (z - a) - 1;
            }
            tree.leaf.push(node);
            tree.unknown.push(unknown);
        }
        tree
    }

    /// The stack of the list `i`, outermost first: its frames (viewed from `frames`) into
    /// `stack`, its nodes into `nodes`.
    fn stack<'f>(
        &self,
        i: u32,
        frames: &'f [RawFrame<'_>],
        stack: &mut Vec<RawFrame<'f>>,
        nodes: &mut Vec<u32>,
    ) {
        let from = nodes.len();
        let mut n = self.leaf[i as usize];
        while n != NONE {
            nodes.push(n);
            n = self.parent[n as usize];
        }
        nodes[from..].reverse();
        stack.extend(nodes[from..].iter().map(|&n| {
            let f = &frames[self.frame[n as usize] as usize];
            RawFrame {
                name: Cow::Borrowed(&*f.name),
                file: f.file.as_deref().map(Cow::Borrowed),
                line: f.line,
            }
        }));
    }
}

/// The most frames the stacks built are kept for (a profile's distinct stacks are few;
/// past this, a stack is built again for each sample).
const KEPT_FRAMES: usize = 1 << 18;

/// Each list's stack, built from the tree once and kept while they are few.
pub(super) struct Stacks<'t, 'f> {
    tree: &'t Tree,
    frames: &'f [RawFrame<'f>],
    /// Per list: where its stack is in `stack` and `nodes`, once built.
    at: Vec<(u32, u32)>,
    stack: Vec<RawFrame<'f>>,
    nodes: Vec<u32>,
}

impl<'t, 'f> Stacks<'t, 'f> {
    pub fn new(tree: &'t Tree, frames: &'f [RawFrame<'f>]) -> Self {
        Stacks {
            tree,
            frames,
            at: vec![(NONE, 0); tree.leaf.len()],
            stack: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// The stack of the list `i` and its nodes.
    pub fn get(&mut self, i: u32) -> (&[RawFrame<'f>], &[u32]) {
        let (a, z) = match self.at[i as usize] {
            (NONE, _) => {
                if self.stack.len() > KEPT_FRAMES {
                    self.stack.clear();
                    self.nodes.clear();
                    self.at.iter_mut().for_each(|x| *x = (NONE, 0));
                }
                let a = self.stack.len() as u32;
                (self.tree).stack(i, self.frames, &mut self.stack, &mut self.nodes);
                self.at[i as usize] = (a, self.stack.len() as u32);
                (a, self.stack.len() as u32)
            }
            at => at,
        };
        let r = a as usize..z as usize;
        (&self.stack[r.clone()], &self.nodes[r])
    }
}
