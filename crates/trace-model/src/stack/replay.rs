//! A thread's `.spall` events had again from the stacks it was cut into where it went back
//! in time, so that it is paired as a buffered builder pairs the file's, with no second
//! decode.
//!
//! Each stack went forward in time, and each of its lanes holds spans that each start
//! after the one before ends, so a lane's Begins and Ends, alternating, are a sorted
//! stream: the stack's events in order are a k-way merge of a stream a lane (with the
//! Ends that found no Begin, the zero-length spans left to place and the Begins left
//! open), a step of a heap of some 30 streams an event, where sorting them took a sort's
//! 20-odd comparisons and moved each event more than once.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use spall_format::Phase;

use super::run::RunIter;
use super::{ChunkIds, ChunkStack, Open, Zero, UNKNOWN};
use crate::args::ArgsId;
use crate::nest::Pending;
use crate::strings::StrId;

/// An event's place in a stack's replay: (time, class, order within the class at that
/// time), the class being 0 for the Ends of positive spans, 1 for Ends with no Begin, 2
/// for Begins and zero-length spans.
type Key = (i64, u8, i64);

/// One sorted stream of a stack's events.
enum Source<'a> {
    /// A lane's positive spans, each's Begin then its End (the next starts after it
    /// ends), with the lane's depth and the End to come.
    Lane {
        spans: RunIter<'a>,
        depth: i64,
        end: Option<(Key, Pending)>,
    },
    /// Ends with no Begin in the stack: (time, byte offset).
    Orphans(std::slice::Iter<'a, (i64, u64)>),
    /// Events already keyed and sorted.
    Keyed(std::vec::IntoIter<(Key, Pending)>),
    /// The Begins left open, outermost first.
    Open(std::iter::Enumerate<std::slice::Iter<'a, Open>>),
}

/// An event with the merged builder's ids.
fn event(
    ids: &ChunkIds<'_>,
    ts: i64,
    phase: Phase,
    (name, args): (StrId, ArgsId),
    offset: u64,
) -> Pending {
    Pending {
        ts,
        dur: 0,
        phase,
        name: ids.name(name),
        cat: StrId::EMPTY,
        args: ids.args(args),
        offset,
    }
}

impl Source<'_> {
    /// The stream's next event and its key.
    #[inline]
    fn next(&mut self, ids: &ChunkIds<'_>) -> Option<(Key, Pending)> {
        let (begin, fin) = (Phase::BEGIN, Phase::END);
        let mk = |ts, phase, name, args, offset| event(ids, ts, phase, (name, args), offset);
        let none = (StrId::EMPTY, ArgsId::NONE);
        Some(match self {
            Source::Lane { spans, depth, end } => {
                if let Some(e) = end.take() {
                    return Some(e);
                }
                // Zero-length spans are placed as those left to place are.
                let s = spans.find(|s| s.dur != 0)?;
                let (d, ts) = (*depth, s.start + s.dur);
                *end = Some(((ts, 0, -d), mk(ts, fin, none.0, none.1, UNKNOWN)));
                (
                    (s.start, 2, d << 32),
                    mk(s.start, begin, s.name, s.args, UNKNOWN),
                )
            }
            Source::Orphans(it) => {
                let &(ts, offset) = it.next()?;
                ((ts, 1, offset as i64), mk(ts, fin, none.0, none.1, offset))
            }
            Source::Keyed(it) => it.next()?,
            Source::Open(it) => {
                let (depth, b) = it.next()?;
                let key = (b.start, 2, (depth as i64) << 32);
                (key, mk(b.start, begin, b.name, b.args, b.offset))
            }
        })
    }
}

impl ChunkStack {
    /// The Begin and End events of stacks that each went forward in time, given in file
    /// order as (chunk index, stack), with the merged builder's ids: each stack's events in
    /// an order a buffered builder pairs as it paired the file's (`ids` as in
    /// [`ThreadStack::join`](super::ThreadStack::join)).
    ///
    /// At one time, the stack's own order is: the Ends of positive spans (deepest first),
    /// Ends with no Begin (in file order), the Begins of positive spans (outermost first).
    /// A zero-length span's Begin and End pair with each other wherever they stand among
    /// those, but its place among the Begins decides which opened first (the order of
    /// spans that end up of one time and length): it follows the Begin it lay in, if that
    /// was of its time. The byte offset of a positive span's events is not kept: each
    /// takes the offset of the event before it (for warnings).
    pub(crate) fn replay<'a>(
        stacks: Vec<(usize, ChunkStack)>,
        ids: impl Fn(usize) -> ChunkIds<'a>,
    ) -> Vec<Pending> {
        let mut out = Vec::new();
        for (ci, mut c) in stacks {
            c.close();
            let ids = ids(ci);
            let mut sources: Vec<Source<'_>> = Vec::new();
            let lanes = c.done.iter().chain(std::iter::once(&c.lanes));
            for (depth, run) in lanes.flat_map(|l| l.iter().enumerate()) {
                sources.push(Source::Lane {
                    spans: run.iter(),
                    depth: depth as i64,
                    end: None,
                });
            }
            sources.push(Source::Orphans(c.orphans.iter()));
            let mut zeros = std::mem::take(&mut c.zeros);
            zeros.append(&mut c.settled);
            out.reserve(c.open.len() + c.orphans.len() + 2 * zeros.len());
            sources.push(Source::Keyed(listed_zeros(&zeros, &ids).into_iter()));
            sources.push(Source::Open(c.open.iter().enumerate()));
            merge(&mut sources, &ids, &mut out);
        }
        out
    }
}

/// Appends the streams' events to `out` in order of their keys, equal keys in the order
/// of the streams.
fn merge(sources: &mut [Source<'_>], ids: &ChunkIds<'_>, out: &mut Vec<Pending>) {
    let mut heads: Vec<Option<Pending>> = vec![None; sources.len()];
    let mut heap = BinaryHeap::with_capacity(sources.len());
    for (si, src) in sources.iter_mut().enumerate() {
        if let Some((k, e)) = src.next(ids) {
            heads[si] = Some(e);
            heap.push(Reverse((k, si as u32)));
        }
    }
    let mut last = out.last().map_or(0, |e: &Pending| e.offset);
    while let Some(mut top) = heap.peek_mut() {
        let si = top.0 .1 as usize;
        let mut e = heads[si]
            .take()
            .expect("a head for each stream in the heap");
        if e.offset == UNKNOWN {
            e.offset = last;
        }
        last = e.offset;
        out.push(e);
        match sources[si].next(ids) {
            Some((k, e)) => {
                heads[si] = Some(e);
                *top = Reverse((k, si as u32));
            }
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
    }
}

/// The zero-length spans left to place, their Begins and Ends keyed and sorted: each
/// after the positive Begin it lay in (depth `d`: `d << 32`) or before every positive
/// Begin, then in file order (the low bits).
fn listed_zeros(zeros: &[Zero], ids: &ChunkIds<'_>) -> Vec<(Key, Pending)> {
    let mut out = Vec::with_capacity(2 * zeros.len());
    for (z, slot) in zeros.iter().zip(zero_slots(zeros)) {
        let (s, offset) = (z.span, z.offset);
        let b = event(ids, s.start, Phase::BEGIN, (s.name, s.args), offset);
        out.push(((s.start, 2, slot), b));
        let e = event(
            ids,
            s.start,
            Phase::END,
            (StrId::EMPTY, ArgsId::NONE),
            offset,
        );
        out.push(((s.start, 2, slot + 1), e));
    }
    out.sort_by_key(|p| p.0);
    out
}

/// Each zero-length span's slot among the Begins of its time (see [`listed_zeros`]).
fn zero_slots(zeros: &[Zero]) -> Vec<i64> {
    // The slot of each zero-length span that holds others, by its offset.
    let mut holders: hashbrown::HashMap<u64, i64> = hashbrown::HashMap::new();
    let mut order: Vec<usize> = (0..zeros.len()).collect();
    order.sort_unstable_by_key(|&i| zeros[i].offset);
    let mut slots = vec![0; zeros.len()];
    for (rank, i) in order.into_iter().enumerate() {
        let z = &zeros[i];
        let base = match z.parent {
            UNKNOWN => -1 << 32,
            p => match holders.get(&p) {
                Some(&slot) => slot & !0xFFFF_FFFF,
                None => i64::from(z.depth - 1) << 32,
            },
        };
        let slot = base | (2 * rank as i64 + 1);
        holders.insert(z.offset, slot);
        slots[i] = slot;
    }
    slots
}
