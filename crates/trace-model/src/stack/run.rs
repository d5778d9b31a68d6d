//! The spans a chunk closed at one depth, held in 12 bytes each until the chunks' join
//! copies them into their lane's columns.
//!
//! A chunk's spans are written once here and once more into the model, so the bytes held
//! here are fresh memory paid on every span (spall.h's output has 30M spans of 23 bytes
//! each in its file): a span is kept as its distance from the end of the span before it
//! in the run, its duration and its name, 4 bytes each. A span whose distance or
//! duration does not fit in 32 bits, or that has arguments, is marked and kept whole in
//! a side list (the first of each run, for one; `.spall` spans with arguments are rare).

use super::{ChunkIds, Closed};
use crate::args::ArgsId;
use crate::span::Lane;
use crate::strings::StrId;

/// A span of a run: `delta` from the end of the span before it (from 0 for the first),
/// `dur`, and `name`; `dur == WIDE` when it is kept whole in [`Run::wide`].
#[derive(Clone, Copy, Debug)]
struct Packed {
    delta: u32,
    dur: u32,
    name: u32,
}

/// The mark of a span kept whole.
const WIDE: u32 = u32::MAX;

/// A span kept whole: its start, duration and arguments (its name stays packed).
#[derive(Clone, Copy, Debug)]
struct Wide {
    start: i64,
    dur: i64,
    args: ArgsId,
}

/// Spans closed at one depth, in file order, in blocks that never move: each twice the
/// size of the one before, from `FIRST` up to `BLOCK` spans (growing one `Vec` would copy
/// its spans at each doubling, a copy of every span in all, and to millions of spans
/// fault in about twice their memory).
#[derive(Debug, Default)]
pub(super) struct Run {
    blocks: Vec<Vec<Packed>>,
    wide: Vec<Wide>,
    /// The end of the last span pushed (start plus duration, wrapping).
    last_end: i64,
}

/// The size of the first block, and of a full block, in spans.
const FIRST: usize = 16;
const BLOCK: usize = 1 << 13;

impl Run {
    #[inline(always)]
    pub(super) fn push(&mut self, s: Closed) {
        let delta = s.start.wrapping_sub(self.last_end) as u64;
        self.last_end = s.start.wrapping_add(s.dur);
        let fits = delta < u64::from(WIDE) && (s.dur as u64) < u64::from(WIDE);
        let p = match fits && s.args == ArgsId::NONE {
            true => Packed {
                delta: delta as u32,
                dur: s.dur as u32,
                name: s.name.0,
            },
            false => self.wide(s),
        };
        match self.blocks.last_mut() {
            Some(block) if block.len() < block.capacity() => block.push(p),
            _ => self.grow(p),
        }
    }

    #[cold]
    #[inline(never)]
    fn wide(&mut self, s: Closed) -> Packed {
        self.wide.push(Wide {
            start: s.start,
            dur: s.dur,
            args: s.args,
        });
        Packed {
            delta: 0,
            dur: WIDE,
            name: s.name.0,
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, p: Packed) {
        let size = self
            .blocks
            .last()
            .map_or(FIRST, |b| (b.capacity() * 2).min(BLOCK));
        let mut b = Vec::with_capacity(size);
        b.push(p);
        self.blocks.push(b);
    }

    pub(super) fn len(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }

    /// The spans, in the order pushed.
    pub(super) fn iter(&self) -> RunIter<'_> {
        RunIter {
            blocks: self.blocks.iter(),
            block: [].iter(),
            wide: self.wide.iter(),
            last_end: 0,
        }
    }

    /// Appends the spans to `lane` with `ids`' names and arguments, a block at a time:
    /// unpacked into `buf` (cleared first), then column by column, each a plain loop over
    /// the block; each block is dropped once copied.
    pub(super) fn append_to(self, lane: &mut Lane, ids: &ChunkIds<'_>, buf: &mut Vec<Closed>) {
        let mut wide = self.wide.iter();
        let mut last_end = 0i64;
        for block in self.blocks {
            buf.clear();
            buf.extend(block.iter().map(|p| unpack(p, &mut wide, &mut last_end)));
            drop(block);
            lane.start.extend(buf.iter().map(|s| s.start));
            lane.dur.extend(buf.iter().map(|s| s.dur));
            lane.name.extend(buf.iter().map(|s| ids.name(s.name)));
            match ids.args.offset_only() {
                // A plain loop (vectorised), as for most chunks of a trace without args.
                Some(off) => (lane.args).extend(buf.iter().map(|s| match s.args.0 {
                    0 => ArgsId::NONE,
                    a => ArgsId(a + off),
                })),
                None => lane.args.extend(buf.iter().map(|s| ids.args(s.args))),
            }
            let n = buf.len();
            lane.cat.resize(lane.cat.len() + n, StrId::EMPTY);
            lane.flags.resize(lane.flags.len() + n, 0);
        }
    }
}

/// A packed span with its start and duration (and arguments, if kept whole) restored.
#[inline(always)]
fn unpack(p: &Packed, wide: &mut std::slice::Iter<'_, Wide>, last_end: &mut i64) -> Closed {
    let (start, dur, args) = match p.dur {
        WIDE => {
            let w = wide.next().expect("a whole span for each mark");
            (w.start, w.dur, w.args)
        }
        d => (
            last_end.wrapping_add(i64::from(p.delta)),
            i64::from(d),
            ArgsId::NONE,
        ),
    };
    *last_end = start.wrapping_add(dur);
    Closed {
        start,
        dur,
        name: StrId(p.name),
        args,
    }
}

/// [`Run::iter`].
#[derive(Debug)]
pub(super) struct RunIter<'a> {
    blocks: std::slice::Iter<'a, Vec<Packed>>,
    block: std::slice::Iter<'a, Packed>,
    wide: std::slice::Iter<'a, Wide>,
    last_end: i64,
}

impl Iterator for RunIter<'_> {
    type Item = Closed;

    #[inline]
    fn next(&mut self) -> Option<Closed> {
        loop {
            if let Some(p) = self.block.next() {
                return Some(unpack(p, &mut self.wide, &mut self.last_end));
            }
            self.block = self.blocks.next()?.iter();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spans that fit and spans kept whole (a first span, a distance or duration over 32
    /// bits, a negative one, arguments) come back as pushed, across blocks.
    #[test]
    fn spans_come_back_as_pushed() {
        let mut spans = Vec::new();
        let mut t = 1_000_000_000_000i64;
        for i in 0..20_000i64 {
            let (gap, dur) = match i % 7 {
                0 => (3, 5),
                1 => (0, 0),
                2 => (1 << 33, 2),
                3 => (4, 1 << 40),
                4 => (-10, 3),
                5 => (i64::from(u32::MAX) - 1, i64::from(u32::MAX) - 1),
                _ => (i64::from(u32::MAX), 1),
            };
            let start = t + gap;
            let args = if i % 11 == 0 {
                ArgsId(i as u32)
            } else {
                ArgsId::NONE
            };
            spans.push(Closed {
                start,
                dur,
                name: StrId(i as u32 % 5),
                args,
            });
            t = start + dur;
        }
        let mut run = Run::default();
        spans.iter().for_each(|&s| run.push(s));
        assert_eq!(run.len(), spans.len());
        let key = |s: &Closed| (s.start, s.dur, s.name, s.args);
        let back: Vec<_> = run.iter().map(|s| key(&s)).collect();
        assert_eq!(back, spans.iter().map(key).collect::<Vec<_>>());
        // Names and arguments rewritten as a chunk's join rewrites them.
        let names: Vec<StrId> = (0..5).map(|i| StrId(10 + i)).collect();
        let ids = ChunkIds {
            names: &names,
            args: crate::args::ArgsMap::offset(100),
        };
        let mut lane = Lane::default();
        run.append_to(&mut lane, &ids, &mut Vec::new());
        let appended: Vec<_> = (0..lane.len())
            .map(|i| (lane.start[i], lane.dur[i], lane.name[i], lane.args[i]))
            .collect();
        let rewritten = spans
            .iter()
            .map(|s| (s.start, s.dur, ids.name(s.name), ids.args(s.args)));
        assert_eq!(appended, rewritten.collect::<Vec<_>>());
        assert!(lane.cat.iter().all(|&c| c == StrId::EMPTY) && lane.cat.len() == spans.len());
        assert!(lane.flags.iter().all(|&f| f == 0) && lane.flags.len() == spans.len());
    }
}
