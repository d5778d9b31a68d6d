//! pprof's tables as they are read: strings, sample types, functions, locations (each
//! location's lines, outermost first) and mappings, and the small messages of a sample
//! (`ValueType`, `Label`). Both the reader (`pprof_read`) and the hand-over (`pprof`)
//! use them.

use std::collections::HashMap;

use super::warn;
use crate::diag::Diagnostics;
use crate::proto::wire::{Reader, Value};

/// A function: name, file and start line, as string-table indices.
#[derive(Clone, Copy, Default)]
pub(super) struct Function {
    pub name: u64,
    pub system_name: u64,
    pub file: u64,
}

/// The tables, read as their fields come.
#[derive(Default)]
pub(super) struct Tables {
    pub strings: Vec<String>,
    pub sample_types: Vec<(u64, u64)>,
    pub default_type: Option<u64>,
    /// Per location (in file order): its frames, outermost (the caller) first.
    pub loc_frames: Vec<(u32, u32)>,
    /// Location id to index into `loc_frames`.
    pub loc_ids: Ids,
    /// (function id, line) per frame of every location; then the mapping or address for a
    /// location with no lines.
    pub lines: Vec<LineRef>,
    pub functions: Vec<Function>,
    pub fn_ids: Ids,
    /// (mapping id, file name index) in file order.
    pub mappings: Vec<(u64, u64)>,
    pub time_nanos: Option<i64>,
    pub duration_nanos: Option<i64>,
    pub period_type: Option<(u64, u64)>,
    pub period: Option<i64>,
}

/// One frame of a location: a line of a function, or an address alone.
#[derive(Clone, Copy)]
pub(super) enum LineRef {
    Line { function: u64, line: i64 },
    Address { address: u64, mapping: u64 },
}

/// Ids to indices: a vector while the ids are small (Go numbers them 1, 2, 3...), else a
/// map.
#[derive(Default)]
pub(super) struct Ids {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

impl Ids {
    const NONE: u32 = u32::MAX;

    pub(super) fn insert(&mut self, id: u64, i: u32) {
        if id < (1 << 20).max(self.dense.len() as u64 * 2) {
            let id = id as usize;
            if id >= self.dense.len() {
                self.dense.resize(id + 1, Self::NONE);
            }
            self.dense[id] = i;
        } else {
            self.sparse.insert(id, i);
        }
    }

    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&i) if i != Self::NONE => Some(i),
            _ => self.sparse.get(&id).copied(),
        }
    }
}

/// A `ValueType`'s (type, unit) string indices.
pub(super) fn value_type(m: &[u8]) -> (u64, u64) {
    let (mut ty, mut unit) = (0, 0);
    for g in Reader::new(m, 0).flatten() {
        match (g.num, g.value) {
            (1, Value::Varint(x)) => ty = x,
            (2, Value::Varint(x)) => unit = x,
            _ => {}
        }
    }
    (ty, unit)
}

/// A `Location`: its lines (outermost first) appended to `t.lines`.
pub(super) fn location(t: &mut Tables, m: &[u8], offset: u64, diags: &mut Diagnostics) {
    let (mut id, mut address, mut mapping) = (0, 0, 0);
    let start = t.lines.len();
    for g in Reader::new(m, offset) {
        let Ok(g) = g else {
            warn(diags, offset, || {
                "a location that does not parse; its rest left out".into()
            });
            break;
        };
        match (g.num, g.value) {
            (1, Value::Varint(x)) => id = x,
            (2, Value::Varint(x)) => mapping = x,
            (3, Value::Varint(x)) => address = x,
            (4, Value::Bytes(l)) => {
                let (mut function, mut line) = (0, 0);
                for h in Reader::new(l, g.offset).flatten() {
                    match (h.num, h.value) {
                        (1, Value::Varint(x)) => function = x,
                        (2, Value::Varint(x)) => line = x as i64,
                        _ => {}
                    }
                }
                t.lines.push(LineRef::Line { function, line });
            }
            _ => {}
        }
    }
    // The innermost (inlined) line comes first in the file; stacks are outermost first.
    t.lines[start..].reverse();
    if t.lines.len() == start {
        t.lines.push(LineRef::Address { address, mapping });
    }
    t.loc_ids.insert(id, t.loc_frames.len() as u32);
    t.loc_frames.push((start as u32, t.lines.len() as u32));
}

/// A `Label`: key, text or number and unit, as string-table indices.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Label {
    pub key: u64,
    pub text: Option<u64>,
    pub num: Option<i64>,
    pub unit: u64,
}

/// A `Label`'s fields.
pub(super) fn label(l: &[u8]) -> Label {
    let mut out = Label::default();
    for g in Reader::new(l, 0).flatten() {
        match (g.num, g.value) {
            (1, Value::Varint(x)) => out.key = x,
            (2, Value::Varint(x)) => out.text = Some(x),
            (3, Value::Varint(x)) => out.num = Some(x as i64),
            (4, Value::Varint(x)) => out.unit = x,
            _ => {}
        }
    }
    out
}
