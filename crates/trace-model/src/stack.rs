//! `.spall` version 3 Begin and End events straight into lanes, with no span list and no
//! nesting pass.
//!
//! A `.spall` v3 buffer holds one thread's events in the order the thread wrote them. A
//! stack of open Begins then gives each span its depth when its End arrives, and the spans
//! of one depth end in the order they start, so each span is appended to its lane once.
//! The lanes are exactly those of [`nest`](crate::nest) (containment) for Begin and End
//! events in time order, whose spans form a laminar family:
//!
//! - a span of positive length lies, by containment, under exactly the spans that were
//!   open when it began: its depth on the stack;
//! - a zero-length span at time `t` lies under the positive spans covering `t`
//!   (`start <= t < end`), after the spans of its lane that start before `t`, and in file
//!   order among the zero-length spans at `t`. A span that ends at `t` is open on the stack
//!   but is not its parent, and one that starts at `t` later in the file is, so zero-length
//!   spans wait until a later time arrives: the spans open then are those covering `t`, and
//!   the lane at the stack's depth holds only spans that began before `t`, so they are
//!   appended to it. Those still waiting at a chunk's end (or at an End with no Begin) are
//!   placed once the positive spans are in their lanes.
//!
//! A chunk of a parallel decode builds a [`ChunkStack`] per thread: Ends that find no open
//! Begin of the chunk close the Begins left open by earlier chunks, which the chunk cannot
//! see. Its spans are kept by (how many such Ends came before, depth among the chunk's own
//! Begins); [`ThreadStack::join`] turns that into absolute depths once the earlier chunks
//! are known, and copies each run of spans into its lane. A run holds a span in 12 bytes
//! (`run`): written there and again into the model, its bytes are fresh memory twice.
//!
//! A thread whose Begins and Ends go back in time gets a new stack at each step back, and
//! is paired again from its stacks' events ([`ChunkStack::replay`]) as a buffered builder
//! pairs the file's: each byte is still decoded once.

use spall_format::Diagnostics;

use crate::args::{ArgsId, ArgsMap};
use crate::diag::ModelWarning;
use crate::span::{flags, Lane, SpanData};
use crate::strings::StrId;

mod replay;
mod run;

use run::Run;

/// A Begin not closed yet.
#[derive(Clone, Copy, Debug)]
struct Open {
    start: i64,
    name: StrId,
    args: ArgsId,
    /// Byte offset in the input: for warnings, and the file order of zero-length spans.
    offset: u64,
}

/// A span closed inside one chunk (a `.spall` span has no category and, closed, no flag).
#[derive(Clone, Copy, Debug)]
struct Closed {
    start: i64,
    dur: i64,
    name: StrId,
    args: ArgsId,
}

/// One thread's Begin and End events within one chunk.
#[derive(Debug)]
pub(crate) struct ChunkStack {
    open: Vec<Open>,
    /// Positive spans closed since the last orphan End, by depth among the chunk's Begins.
    lanes: Vec<Run>,
    /// `lanes` as it was at each orphan End, in order.
    done: Vec<Vec<Run>>,
    /// Ends that found no open Begin in the chunk: (time, byte offset).
    orphans: Vec<(i64, u64)>,
    /// Zero-length spans left to [`ThreadStack::finish`] to place: those at the chunk's
    /// last time, or at the time of an End with no Begin.
    zeros: Vec<Zero>,
    /// Zero-length spans of the latest time, `pending_t`, until a later time arrives:
    /// then their lane is the depth of the stack (see `settle_zeros`).
    pending: Vec<Zero>,
    /// The zero-length spans put in `lanes` and `done`, as they were pending: should the
    /// thread go back in time, [`ChunkStack::replay`] places them as those in `zeros`.
    settled: Vec<Zero>,
    /// The time of the `pending` spans; `i64::MAX` when there are none.
    pending_t: i64,
    /// A time whose zero-length spans went to `zeros` (all of them do).
    listed_t: Option<i64>,
}

impl Default for ChunkStack {
    fn default() -> ChunkStack {
        ChunkStack {
            open: Vec::new(),
            lanes: Vec::new(),
            done: Vec::new(),
            orphans: Vec::new(),
            zeros: Vec::new(),
            pending: Vec::new(),
            settled: Vec::new(),
            pending_t: i64::MAX,
            listed_t: None,
        }
    }
}

/// A zero-length span: its Begin's byte offset, and where it stood among the Begins of
/// its time (for [`ChunkStack::replay`]).
#[derive(Clone, Copy, Debug)]
struct Zero {
    offset: u64,
    span: Closed,
    /// Its depth among the chunk's Begins.
    depth: u32,
    /// The byte offset of the Begin it lay in, if that began at the same time (else
    /// `UNKNOWN`).
    parent: u64,
}

impl ChunkStack {
    /// Whether no Begin or End has arrived.
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
            && self.lanes.is_empty()
            && self.done.is_empty()
            && self.orphans.is_empty()
            && self.zeros.is_empty()
            && self.pending.is_empty()
    }

    #[inline(always)]
    pub(crate) fn begin(&mut self, start: i64, name: StrId, args: ArgsId, offset: u64) {
        if start > self.pending_t {
            self.settle_zeros();
        }
        self.open.push(Open {
            start,
            name,
            args,
            offset,
        });
    }

    /// Inline always, with what is rare out of line: once per span.
    #[inline(always)]
    pub(crate) fn end(&mut self, ts: i64, offset: u64) {
        if ts > self.pending_t {
            self.settle_zeros();
        }
        let Some(b) = self.open.pop() else {
            return self.orphan(ts, offset);
        };
        let s = Closed {
            start: b.start,
            dur: ts - b.start,
            name: b.name,
            args: b.args,
        };
        if s.dur == 0 {
            return self.zero(b.offset, s);
        }
        match self.lanes.get_mut(self.open.len()) {
            Some(run) => run.push(s),
            None => self.deeper(s),
        }
    }

    /// A zero-length span.
    #[cold]
    #[inline(never)]
    fn zero(&mut self, offset: u64, span: Closed) {
        let parent = match self.open.last() {
            Some(p) if p.start == span.start => p.offset,
            _ => UNKNOWN,
        };
        let z = Zero {
            offset,
            span,
            depth: self.open.len() as u32,
            parent,
        };
        match self.listed_t == Some(span.start) {
            true => self.zeros.push(z),
            false => {
                self.pending_t = span.start;
                self.pending.push(z);
            }
        }
    }

    /// Time has moved past the `pending` zero-length spans: the spans covering their time
    /// are those open now (a span that ended at it has closed, one that began at it after
    /// them is open), so they go to the lane of the stack's depth, after its spans (all
    /// began before), in the order they began. Placed here, not by a search of every lane
    /// in `ThreadStack::finish` and an insert into the lane's middle: spall.h's output of a
    /// clock that ticks by 10 ns holds hundreds of thousands.
    #[cold]
    #[inline(never)]
    fn settle_zeros(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|z| z.offset);
        let depth = self.open.len();
        if self.lanes.len() <= depth {
            self.lanes.resize_with(depth + 1, Run::default);
        }
        for z in pending.drain(..) {
            self.lanes[depth].push(z.span);
            self.settled.push(z);
        }
        self.pending = pending;
        self.pending_t = i64::MAX;
    }

    /// The `pending` zero-length spans to `zeros`, where `ThreadStack::finish` places them
    /// (at the chunk's end, where later chunks may still end spans at their time; at an
    /// End with no Begin, which changes the depths the stack's are relative to).
    fn list_zeros(&mut self) {
        if let Some(z) = self.pending.first() {
            self.listed_t = Some(z.span.start);
            self.zeros.append(&mut self.pending);
            self.pending_t = i64::MAX;
        }
    }

    /// The chunk's events are all in: no zero-length span left pending.
    fn close(&mut self) {
        self.list_zeros();
    }

    /// An End with no open Begin in the chunk.
    #[cold]
    #[inline(never)]
    fn orphan(&mut self, ts: i64, offset: u64) {
        self.list_zeros();
        self.orphans.push((ts, offset));
        self.done.push(std::mem::take(&mut self.lanes));
    }

    /// A span closed deeper than any before it.
    #[cold]
    #[inline(never)]
    fn deeper(&mut self, s: Closed) {
        let depth = self.open.len();
        self.lanes.resize_with(depth + 1, Run::default);
        self.lanes[depth].push(s);
    }
}

/// The byte offset of an event [`ChunkStack::replay`] does not know yet.
const UNKNOWN: u64 = u64::MAX;

/// A merged Begin left open, with its depth.
#[derive(Clone, Copy, Debug)]
struct Placed {
    open: Open,
    depth: u32,
}

/// One thread's spans, joined across chunks: lanes of positive spans, the Begins still
/// open, and the zero-length spans to place.
#[derive(Debug, Default)]
pub(crate) struct ThreadStack {
    lanes: Vec<Lane>,
    stack: Vec<Placed>,
    zeros: Vec<(u64, SpanData)>,
}

/// A span of `ThreadStack::lanes` or `zeros`, from a chunk's span with its ids rewritten.
fn span(start: i64, dur: i64, name: StrId, args: ArgsId) -> SpanData {
    SpanData {
        start,
        dur,
        name,
        cat: StrId::EMPTY,
        args,
        flags: 0,
    }
}

/// How one chunk's ids become the merged builder's: name `i` is `names[i]`, argument ids
/// by `args`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkIds<'a> {
    pub names: &'a [StrId],
    pub args: ArgsMap,
}

impl ChunkIds<'_> {
    #[inline]
    fn name(&self, id: StrId) -> StrId {
        self.names[id.0 as usize]
    }

    #[inline]
    fn args(&self, id: ArgsId) -> ArgsId {
        self.args.get(id)
    }
}

impl ThreadStack {
    /// Joins one thread's chunks, given in file order as (chunk index, its stack).
    /// `ids(chunk)` rewrites a chunk's ids into the merged builder's.
    pub(crate) fn join<'a>(
        pieces: Vec<(usize, ChunkStack)>,
        ids: impl Fn(usize) -> ChunkIds<'a>,
        d: &mut Diagnostics<ModelWarning>,
    ) -> ThreadStack {
        let pieces: Vec<(usize, ChunkStack)> = (pieces.into_iter())
            .map(|(ci, mut c)| {
                c.close();
                (ci, c)
            })
            .collect();
        // Each lane's size first (a bound: a few orphan-closed spans may be zero-length),
        // so each lane is allocated once.
        let mut sizes: Vec<usize> = Vec::new();
        let mut open = 0usize;
        let add = |sizes: &mut Vec<usize>, depth: usize, n: usize| {
            if sizes.len() <= depth {
                sizes.resize(depth + 1, 0);
            }
            sizes[depth] += n;
        };
        for (_, c) in &pieces {
            let matched = c.orphans.len().min(open);
            for j in 1..=matched {
                add(&mut sizes, open - j, 1);
            }
            let segments = c.done.iter().chain(std::iter::once(&c.lanes));
            for (o, lanes) in segments.enumerate() {
                let base = open - o.min(open);
                for (l, lane) in lanes.iter().enumerate() {
                    add(&mut sizes, base + l, lane.len());
                }
            }
            // Room for the zero-length spans `finish` places, at the depth each most
            // likely takes (that of the chunk's last stack): a lane filled to its
            // capacity would grow by doubling, a copy of the lane for a span or two.
            let top = open - c.done.len().min(open);
            for z in &c.zeros {
                add(&mut sizes, top + z.depth as usize, 1);
            }
            open = open - matched + c.open.len();
        }
        for depth in 0..open {
            add(&mut sizes, depth, 1);
        }

        let mut t = ThreadStack {
            lanes: sizes.iter().map(|&n| Lane::with_capacity(n)).collect(),
            stack: Vec::with_capacity(open),
            zeros: Vec::new(),
        };
        // A run's block, unpacked.
        let mut buf = Vec::new();
        for (ci, c) in pieces {
            let ids = ids(ci);
            let base = t.stack.len();
            for (ts, offset) in c.orphans {
                match t.stack.pop() {
                    Some(Placed { open: b, depth }) => {
                        let s = span(b.start, ts - b.start, b.name, b.args);
                        t.push(depth as usize, b.offset, s);
                    }
                    None => d.warn(ModelWarning::EndWithoutBegin, offset, || {
                        format!("E \"\" at {ts} ns has no open B on its thread; ignored")
                    }),
                }
            }
            let segments = c.done.into_iter().chain(std::iter::once(c.lanes));
            for (o, lanes) in segments.enumerate() {
                let top = base - o.min(base);
                for (l, run) in lanes.into_iter().enumerate() {
                    run.append_to(&mut t.lanes[top + l], &ids, &mut buf);
                }
            }
            t.zeros.extend(c.zeros.into_iter().map(|z| {
                let (s, name, args) = (z.span, ids.name(z.span.name), ids.args(z.span.args));
                (z.offset, span(s.start, s.dur, name, args))
            }));
            let top = t.stack.len();
            t.stack
                .extend(c.open.into_iter().enumerate().map(|(i, mut b)| {
                    (b.name, b.args) = (ids.name(b.name), ids.args(b.args));
                    Placed {
                        open: b,
                        depth: u32::try_from(top + i).expect("under 2^32 levels"),
                    }
                }));
        }
        t
    }

    /// A span of positive length goes to its lane; a zero-length one waits to be placed.
    fn push(&mut self, depth: usize, offset: u64, s: SpanData) {
        if s.dur == 0 {
            self.zeros.push((offset, s));
        } else {
            if self.lanes.len() <= depth {
                self.lanes.resize_with(depth + 1, Lane::default);
            }
            self.lanes[depth].push(&s);
        }
    }

    /// The lanes: Begins still open end at `trace_end`, flagged unfinished, and the
    /// zero-length spans are placed.
    pub(crate) fn finish(
        mut self,
        trace_end: i64,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> Vec<Lane> {
        let unclosed = self.stack.len() as u64;
        if let Some(first) = self.stack.first().map(|p| p.open) {
            d.warn_n(ModelWarning::UnclosedBegin, unclosed, first.offset, || {
                format!(
                    "{unclosed} B event(s) never closed (first: {:?} at {} ns); closed at the trace's end, {trace_end} ns, and flagged unfinished",
                    names(first.name),
                    first.start
                )
            });
        }
        for Placed { open: b, depth } in std::mem::take(&mut self.stack) {
            let mut s = span(b.start, (trace_end - b.start).max(0), b.name, b.args);
            s.flags = flags::UNFINISHED;
            self.push(depth as usize, b.offset, s);
        }
        if !self.zeros.is_empty() {
            self.place_zeros();
        }
        while self.lanes.last().is_some_and(Lane::is_empty) {
            self.lanes.pop();
        }
        self.lanes
    }

    /// Puts each zero-length span left to place (most were placed as they streamed in) under
    /// the positive spans covering its time, in its lane after the spans that start before
    /// it, in file order among those at the same time.
    ///
    /// Zeros come in time order (a thread that went back is paired by `replay` instead),
    /// so each lane's place only moves forward: a cursor per lane, found by galloping, and
    /// lanes probed by a binary search over depth, in place of a search of the whole lane
    /// at every depth of every zero (spall.h's output
    /// of a clock that ticks by 10 ns holds hundreds of thousands of zeros 40 deep). Each
    /// lane then takes its zeros in place, moved from the back, not copied whole.
    fn place_zeros(&mut self) {
        let mut zeros = std::mem::take(&mut self.zeros);
        zeros.sort_by_key(|&(offset, _)| offset);
        // (lane, position among the lane's positive spans, span), in file order per lane.
        let mut placed: Vec<(usize, usize, SpanData)> = Vec::with_capacity(zeros.len());
        let mut cursor = vec![0usize; self.lanes.len()];
        let mut last = i64::MIN;
        for (_, z) in zeros {
            let t = z.start;
            if t < last {
                cursor.fill(0);
            }
            last = t;
            // A lane covers `t` only if the one above it does (the spans nest), so the
            // depth is found by a binary search over the lanes.
            let mut probe = |d: usize| {
                let lane = &self.lanes[d];
                let at = gallop(&lane.start, cursor[d], t);
                cursor[d] = at;
                // A `B` never ended covers even a zero at the trace's end, where it was
                // cut (as `nest::depths` and trace_processor's stack hold it open).
                let open = |i: usize| lane.end(i) > t || lane.flags[i] & flags::UNFINISHED != 0;
                (at, at > 0 && open(at - 1))
            };
            let (mut lo, mut hi) = (0, self.lanes.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                match probe(mid).1 {
                    true => lo = mid + 1,
                    false => hi = mid,
                }
            }
            let at = if lo < self.lanes.len() {
                // Before the lane's zero-length spans of its time: a later chunk put them
                // there (`ChunkStack::settle_zeros`), and it came first in the file.
                let (mut at, starts) = (probe(lo).0, &self.lanes[lo].start);
                while at > 0 && starts[at - 1] == t {
                    at -= 1;
                }
                at
            } else {
                0
            };
            placed.push((lo, at, z));
        }
        placed.sort_by_key(|&(depth, ..)| depth);
        for group in placed.chunk_by(|a, b| a.0 == b.0) {
            let depth = group[0].0;
            if self.lanes.len() <= depth {
                self.lanes.resize_with(depth + 1, Lane::default);
            }
            let lane = &mut self.lanes[depth];
            insert_at(&mut lane.start, group, |s| s.start);
            insert_at(&mut lane.dur, group, |s| s.dur);
            insert_at(&mut lane.name, group, |s| s.name);
            insert_at(&mut lane.cat, group, |s| s.cat);
            insert_at(&mut lane.args, group, |s| s.args);
            insert_at(&mut lane.flags, group, |s| s.flags);
        }
    }
}

/// The number of leading `starts` at or before `t`, given that it is at least `from`:
/// steps of 1, 2, 4, ... from `from`, then a binary search of the last step.
fn gallop(starts: &[i64], from: usize, t: i64) -> usize {
    let mut lo = from;
    let mut step = 1;
    while lo + step <= starts.len() && starts[lo + step - 1] <= t {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(starts.len());
    lo + starts[lo..hi].partition_point(|&s| s <= t)
}

/// Inserts each placed span's `field` before the element at its place in `v` as it was
/// (places ascending; equal ones keep their order). Natively the column grows in place
/// (a large reallocation moves pages, not bytes) and its elements move from the back once;
/// in WebAssembly a reallocation copies the column, so it is merged into a new one
/// instead, one copy rather than two (spall.h's output puts zeros in lanes of millions).
fn insert_at<T: Copy>(
    v: &mut Vec<T>,
    items: &[(usize, usize, SpanData)],
    field: impl Fn(&SpanData) -> T,
) {
    if cfg!(target_arch = "wasm32") {
        merge_at(v, items, field);
    } else {
        shift_at(v, items, field);
    }
}

/// [`insert_at`] into a new column.
fn merge_at<T: Copy>(
    v: &mut Vec<T>,
    items: &[(usize, usize, SpanData)],
    field: impl Fn(&SpanData) -> T,
) {
    if items.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(v.len() + items.len());
    let mut from = 0;
    for (_, at, s) in items {
        out.extend_from_slice(&v[from..*at]);
        out.push(field(s));
        from = *at;
    }
    out.extend_from_slice(&v[from..]);
    *v = out;
}

/// [`insert_at`] in place.
fn shift_at<T: Copy>(
    v: &mut Vec<T>,
    items: &[(usize, usize, SpanData)],
    field: impl Fn(&SpanData) -> T,
) {
    let Some(first) = items.first() else {
        return;
    };
    let old = v.len();
    v.resize(old + items.len(), field(&first.2));
    let mut src_end = old;
    for (k, (_, at, s)) in items.iter().enumerate().rev() {
        // Elements `at..src_end` move up by the `k + 1` items at or before them.
        v.copy_within(*at..src_end, at + k + 1);
        v[at + k] = field(s);
        src_end = *at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of inserting give the same column, places repeated and at either end.
    #[test]
    fn merge_and_shift_insert_alike() {
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for len in [0usize, 1, 2, 5, 40] {
            for count in [0usize, 1, 3, 17] {
                let column: Vec<i64> = (0..len as i64).map(|i| i * 10).collect();
                let mut places: Vec<usize> = (0..count).map(|_| next(len + 1)).collect();
                places.sort_unstable();
                let items: Vec<(usize, usize, SpanData)> = places
                    .iter()
                    .enumerate()
                    .map(|(k, &at)| (0, at, span(-1 - k as i64, 0, StrId::EMPTY, ArgsId::NONE)))
                    .collect();
                let (mut a, mut b) = (column.clone(), column.clone());
                merge_at(&mut a, &items, |s| s.start);
                shift_at(&mut b, &items, |s| s.start);
                assert_eq!(a, b, "len {len}, places {places:?}");
                assert_eq!(a.len(), len + count);
                // Each inserted value sits before the element that was at its place.
                for (k, &at) in places.iter().enumerate() {
                    assert_eq!(a[at + k], -1 - k as i64);
                }
            }
        }
    }
}
