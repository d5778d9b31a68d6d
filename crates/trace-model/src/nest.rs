//! Turning one thread's events into lanes: B/E matching, then nesting by containment.
//!
//! An `E` ends the innermost open `B` (`.spall`'s rule, and chrome://tracing's). Where a
//! JSON thread's events would pair or nest otherwise in trace_processor (an `E` of another
//! name or category, an `E` at the time of the `B` it would end, a `B` outliving the `X`
//! it starts in, an `X` starting with a `B`), that thread is paired again as
//! trace_processor pairs it ([`trace_processor`]), so that the viewer, statistics and SQL
//! agree with it.
//!
//! Recursion-free: depth is a `Vec` index, so 100,000 levels cost memory, not stack.

mod kept;
mod segment;
mod trace_processor;

pub(crate) use kept::KeptEnds;
use segment::Segment;

use spall_format::{Diagnostics, Phase};

use crate::args::{ArgsId, ArgsStore};
use crate::diag::ModelWarning;
use crate::span::{flags, Lane, SpanData};
use crate::strings::StrId;

/// A span-forming event of one thread, waiting for the thread to be complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub ts: i64,
    /// `X`: the duration. `B`/`E`: unused.
    pub dur: i64,
    pub phase: Phase,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
    /// Byte offset in the decoded input, for warnings.
    pub offset: u64,
}

/// An `E` event of a thread matched as its events streamed in, kept so that the thread's
/// events can be had again in file order (see [`streamed_lanes`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeptEnd {
    pub ts: i64,
    pub offset: u64,
    /// How many of the thread's `B` and `X` events came before it.
    pub after: u32,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
}

impl KeptEnd {
    pub(crate) fn new(e: &Pending, after: u32) -> KeptEnd {
        KeptEnd {
            ts: e.ts,
            offset: e.offset,
            after,
            name: e.name,
            cat: e.cat,
            args: e.args,
        }
    }
}

/// Where a span is: (segment, index in it).
type Slot = (u32, usize);

/// A span flag while matching: the span's arguments are its `E`'s (its `B` had none).
/// Cleared when the spans go into lanes.
const ARGS_OF_END: u8 = 0x80;

/// The top bit of a span's [`ArgsId`] between matching and the end of the build: the low
/// bits index the thread's [`EndArgs`], whose merged set replaces it (see
/// [`merge_end_args`]).
pub(crate) const MERGED_ARGS: u32 = 1 << 31;

/// Per span whose `B` and `E` both carry arguments: (the `B`'s, the `E`'s). The thread's
/// spans hold `ArgsId(MERGED_ARGS | index)` until the argument store can take the merged
/// set (threads match in parallel; the store is built on one thread).
pub(crate) type EndArgs = Vec<(ArgsId, ArgsId)>;

/// The most spans a segment of [`Matcher::spans`] holds (2 MB). A segment never grows:
/// a full one is followed by one twice its size, from [`FIRST_SEGMENT_SPANS`] up to this,
/// where one vector grown by doubling would copy its spans again each time, into fresh
/// pages. The crate's own tests use tiny segments, so that their threads cross segments.
const SEGMENT_SPANS: usize = if cfg!(test) { 5 } else { 1 << 16 };
const FIRST_SEGMENT_SPANS: usize = if cfg!(test) { 2 } else { 1 << 8 };

/// B/E matching for one thread, fed events in time order (for B and E; X events may come
/// in any order). Spans are kept in the order they open (a B reserves its slot, filled in
/// by its E), so that nesting breaks ties between equal spans by file order.
#[derive(Debug, Default)]
pub(crate) struct Matcher {
    /// Each span with the byte offset of the event that opened it (for warnings), in
    /// segments of at most [`SEGMENT_SPANS`], a chunk's appended without copying.
    spans: Vec<Segment>,
    /// The spans of every segment but the last.
    before_last: usize,
    /// Open B events: (slot in `spans`, the event).
    open: Vec<(Slot, Pending)>,
    /// The current run of E events sharing one timestamp.
    run: Vec<Pending>,
    be_flag: u8,
    /// A chunk of a parallel decode: E events that found no open B, kept (in order) for
    /// [`append`](Matcher::append) to match against earlier chunks instead of reported.
    orphans: Option<Vec<Pending>>,
    /// E events with arguments that closed a B with arguments: (the B's slot, the E).
    ends: Vec<(Slot, Pending)>,
    /// JSON: trace_processor would pair some E with another B (see the module's overview).
    mismatched: bool,
    /// JSON: the latest time at which an E ended a B of the same time. trace_processor
    /// takes such an E before its B only where its sorter orders by phase (see
    /// [`trace_processor`]).
    tie_at: Option<i64>,
    /// trace_processor's stack, when pairing as it does ([`trace_processor`]).
    stack: Vec<trace_processor::Entry>,
    /// How many of `stack`'s entries are not open `B`s: with none, an event passes
    /// nothing, and a deep stack of `B`s is not walked at every event.
    stack_closed: usize,
}

impl Matcher {
    pub(crate) fn new(from_spall: bool) -> Matcher {
        Matcher {
            be_flag: if from_spall { 0 } else { flags::FROM_BEGIN_END },
            ..Matcher::default()
        }
    }

    /// A matcher for one chunk of a parallel decode (see `orphans`).
    pub(crate) fn for_chunk() -> Matcher {
        Matcher {
            orphans: Some(Vec::new()),
            ..Matcher::new(false)
        }
    }

    /// How many spans (`B` and `X` events) it holds.
    #[inline]
    pub(crate) fn span_count(&self) -> u32 {
        let n = self.before_last + self.spans.last().map_or(0, Segment::len);
        u32::try_from(n).expect("fewer than 2^32 spans on a thread")
    }

    /// Ends a chunk: closes its pending run of E events.
    pub(crate) fn end_chunk(
        &mut self,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        self.flush_run(names, d);
    }

    /// Appends the next chunk's matcher (ended with [`end_chunk`](Self::end_chunk)) of the
    /// same thread: its orphan E events close this matcher's open B events, in order, then
    /// its spans and open B events follow. `fix_span` and `fix_event` rewrite the chunk's
    /// string and argument ids into this matcher's; no `fix_span` leaves its spans as they
    /// are (a pass over every span of the chunk, for nothing, where its ids are the
    /// merged ones already: the first chunk's).
    pub(crate) fn append(
        &mut self,
        mut next: Matcher,
        fix_span: Option<&impl Fn(&mut SpanData)>,
        fix_event: &dyn Fn(&mut Pending),
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        debug_assert!(self.run.is_empty() && next.run.is_empty());
        self.mismatched |= next.mismatched;
        self.tie_at = self.tie_at.max(next.tie_at);
        for mut x in next.orphans.take().unwrap_or_default() {
            fix_event(&mut x);
            match self.open.pop() {
                Some((slot, b)) => {
                    self.check(&b, &x, names, d);
                    self.close(slot, &b, &x);
                }
                None => end_without_begin(&x, names, d),
            }
        }
        if let Some(fix_span) = fix_span {
            for seg in &mut next.spans {
                seg.fix(fix_span);
            }
        }
        let base = self.spans.len() as u32;
        self.ends
            .extend(next.ends.drain(..).map(|((seg, i), mut x)| {
                fix_event(&mut x);
                ((seg + base, i), x)
            }));
        self.spans.append(&mut next.spans);
        self.before_last = self.spans.iter().rev().skip(1).map(Segment::len).sum();
        self.open
            .extend(next.open.into_iter().map(|((seg, i), mut b)| {
                fix_event(&mut b);
                ((seg + base, i), b)
            }));
    }

    pub(crate) fn push(
        &mut self,
        e: Pending,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        match e.phase {
            Phase::BEGIN => {
                self.flush_run(names, d);
                let slot = self.add_span(&e, self.be_flag);
                self.open.push((slot, e));
            }
            Phase::END => {
                if self.run.first().is_some_and(|r| r.ts != e.ts) {
                    self.flush_run(names, d);
                }
                self.run.push(e);
            }
            // X events stand alone and do not interrupt a run of E events.
            _ => {
                self.add_span(&e, 0);
            }
        }
    }

    /// A new span for `e`, its duration that of an `X` (a `B`'s is set when it ends).
    #[inline]
    fn add_span(&mut self, e: &Pending, flags: u8) -> Slot {
        let seg = self.segment();
        let s = SpanData {
            start: e.ts,
            dur: if e.phase == Phase::COMPLETE { e.dur } else { 0 },
            name: e.name,
            cat: e.cat,
            args: e.args,
            flags,
        };
        (seg, self.spans[seg as usize].push(&s, e.offset))
    }

    /// The index of the segment new spans go to: a new one once the last is full.
    #[inline]
    fn segment(&mut self) -> u32 {
        match self.spans.last() {
            Some(last) if last.len() < last.capacity().min(SEGMENT_SPANS) => {}
            last => {
                let (n, cap) = last.map_or((0, 0), |l| (l.len(), l.capacity()));
                self.before_last += n;
                let cap = (cap * 2).clamp(FIRST_SEGMENT_SPANS, SEGMENT_SPANS);
                self.spans.push(Segment::with_capacity(cap));
            }
        }
        self.spans.len() as u32 - 1
    }

    /// Closes the pending run of E events: they close that many B events, all at one time.
    /// Which E pairs with which B changes no span, so names are compared as a set over the
    /// run (real traces write such runs in any order).
    #[inline]
    fn flush_run(&mut self, names: &dyn Fn(StrId) -> String, d: &mut Diagnostics<ModelWarning>) {
        match self.run.len() {
            0 => {}
            // The common case: one E, compared with the one B it closes. No bookkeeping.
            1 => {
                let x = self.run.pop().expect("one E");
                match self.open.pop() {
                    Some((slot, b)) => {
                        self.check(&b, &x, names, d);
                        self.close(slot, &b, &x);
                    }
                    None => self.orphan(x, names, d),
                }
            }
            _ => self.flush_longer_run(names, d),
        }
    }

    /// [`flush_run`](Self::flush_run) for a run of several E events (out of line: the
    /// usual run is one E).
    #[inline(never)]
    fn flush_longer_run(
        &mut self,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        let run = std::mem::take(&mut self.run);
        let mut unmatched: Vec<usize> = (0..run.len())
            .filter(|&i| run[i].name != StrId::EMPTY || run[i].cat != StrId::EMPTY)
            .collect();
        for (xi, x) in run.iter().enumerate() {
            let Some((slot, b)) = self.open.pop() else {
                self.orphan(*x, names, d);
                unmatched.retain(|&u| u != xi);
                continue;
            };
            if let Some(i) = unmatched.iter().position(|&u| !differs(&b, &run[u])) {
                unmatched.swap_remove(i);
            }
            self.tie(&b, x);
            self.close(slot, &b, x);
        }
        self.mismatched |= !unmatched.is_empty() && self.be_flag != 0;
        for u in unmatched {
            mismatch(&run[u], names, d);
        }
        // Keep the buffer's capacity for the next run.
        self.run = run;
        self.run.clear();
    }

    /// An E event `x` closes `b`, the innermost open B: trace_processor would not pair
    /// them if they differ in name or category, nor take `x` after `b` if they share a
    /// time (it takes a time's E events first).
    fn check(
        &mut self,
        b: &Pending,
        x: &Pending,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        let differ = differs(b, x);
        self.mismatched |= differ && self.be_flag != 0;
        self.tie(b, x);
        if differ {
            mismatch(x, names, d);
        }
    }

    /// Notes a JSON `E` ending a `B` of the same time.
    fn tie(&mut self, b: &Pending, x: &Pending) {
        if b.ts == x.ts && self.be_flag != 0 {
            self.tie_at = self.tie_at.max(Some(b.ts));
        }
    }

    /// Whether trace_processor would pair this thread's events otherwise, its sorter
    /// ordering by phase from `sorted_from` on: an `E` matched across names or
    /// categories, or one that ended a `B` of its time where the sorter takes `E`s first.
    pub(crate) fn pairs_otherwise(&self, sorted_from: i64) -> bool {
        self.mismatched || self.tie_at.is_some_and(|t| t >= sorted_from)
    }

    /// An E event with no open B: reported, or kept for an earlier chunk.
    fn orphan(
        &mut self,
        x: Pending,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        match &mut self.orphans {
            Some(o) => o.push(x),
            None => end_without_begin(&x, names, d),
        }
    }

    /// Completes the span opened by `b` (in `slot`) with the E event `x`.
    fn close(&mut self, (seg, i): Slot, b: &Pending, x: &Pending) {
        let s = self.spans[seg as usize].get_mut(i);
        s.dur = x.ts - b.ts;
        if s.args == ArgsId::NONE {
            s.args = x.args;
            if x.args != ArgsId::NONE {
                s.flags |= ARGS_OF_END;
            }
        } else if x.args != ArgsId::NONE {
            self.ends.push(((seg, i), *x));
        }
    }

    /// Ends matching: unclosed B events end at `trace_end`, flagged unfinished. Returns the
    /// spans for [`nest`], and the argument sets to merge for [`merge_end_args`].
    pub(crate) fn finish(
        mut self,
        trace_end: i64,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> (Vec<Segment>, EndArgs) {
        self.flush_run(names, d);
        let unclosed = self.open.len() as u64;
        if unclosed > 0 {
            let first = self.open[0].1;
            d.warn_n(ModelWarning::UnclosedBegin, unclosed, first.offset, || {
                format!(
                    "{unclosed} B event(s) never closed (first: {:?} at {} ns); closed at the trace's end, {trace_end} ns, and flagged unfinished",
                    names(first.name),
                    first.ts
                )
            });
        }
        for ((seg, i), b) in self.open.drain(..) {
            let s = self.spans[seg as usize].get_mut(i);
            s.dur = (trace_end - b.ts).max(0);
            s.flags |= flags::UNFINISHED;
        }
        let mut merges = EndArgs::with_capacity(self.ends.len());
        for ((seg, i), x) in self.ends {
            let s = self.spans[seg as usize].get_mut(i);
            let k = u32::try_from(merges.len())
                .ok()
                .filter(|k| k & MERGED_ARGS == 0)
                .expect("fewer than 2^31 spans with end arguments on a thread");
            merges.push((s.args, x.args));
            s.args = ArgsId(MERGED_ARGS | k);
        }
        (self.spans, merges)
    }
}

/// Whether trace_processor would not end `b` with `x`: an `E` with a name or category
/// ends only a `B` with the same.
fn differs(b: &Pending, x: &Pending) -> bool {
    (x.name != StrId::EMPTY && x.name != b.name) || (x.cat != StrId::EMPTY && x.cat != b.cat)
}

fn mismatch(x: &Pending, names: &dyn Fn(StrId) -> String, d: &mut Diagnostics<ModelWarning>) {
    d.warn(ModelWarning::EndNameMismatch, x.offset, || {
        format!(
            "E {:?} at {} ns closes a B of another name (the most recent open B on its thread)",
            names(x.name),
            x.ts
        )
    });
}

fn end_without_begin(
    x: &Pending,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) {
    d.warn(ModelWarning::EndWithoutBegin, x.offset, || {
        format!(
            "E {:?} at {} ns has no open B on its thread; ignored",
            names(x.name),
            x.ts
        )
    });
}

/// Builds the lanes of one thread from its buffered events (any order): a stable sort by
/// time (file order kept among equal times), matching, nesting; for a JSON thread that
/// trace_processor would pair otherwise, matching and nesting again as it pairs
/// ([`trace_processor`]; its sorter orders events by phase at one time from `sorted_from`
/// on).
/// `trace_end` closes unfinished `B`s.
pub(crate) fn build_lanes(
    mut events: Vec<Pending>,
    trace_end: i64,
    from_spall: bool,
    sorted_from: i64,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> (Vec<Lane>, EndArgs) {
    if !events.windows(2).all(|w| w[0].ts <= w[1].ts) {
        events.sort_by_key(|e| e.ts);
    }
    let mut m = Matcher::new(from_spall);
    // This pass's warnings stand only if it stands.
    let mut first = Diagnostics::default();
    for e in &events {
        m.push(*e, names, &mut first);
    }
    m.end_chunk(names, &mut first);
    let replay = m.pairs_otherwise(sorted_from);
    let (spans, merges) = m.finish(trace_end, names, &mut first);
    let (lanes, differs) = nest(spans, names, &mut first);
    if from_spall || !(replay || differs) {
        d.merge(first);
        return (lanes, merges);
    }
    drop(lanes);
    trace_processor::sort(&mut events, sorted_from);
    let mut m = Matcher::new(false);
    for e in events {
        m.push_tp(e, names, d);
    }
    m.end_tp();
    let (spans, merges) = m.finish(trace_end, names, d);
    (nest(spans, names, d).0, merges)
}

/// Gives each span that holds `ArgsId(MERGED_ARGS | k)` the merged set of `merges[k]`: its
/// `B`'s arguments with its `E`'s added (an `E` key replaces the `B`'s), as Chrome's
/// trace viewer and trace_processor show them.
pub(crate) fn merge_end_args(
    lanes: &mut [Lane],
    merges: &[(ArgsId, ArgsId)],
    args: &mut ArgsStore,
) {
    if merges.is_empty() {
        return;
    }
    let ids: Vec<ArgsId> = (merges.iter()).map(|&(b, e)| args.merged(b, e)).collect();
    for a in lanes.iter_mut().flat_map(|l| l.args.iter_mut()) {
        if a.0 & MERGED_ARGS != 0 {
            *a = ids[(a.0 & !MERGED_ARGS) as usize];
        }
    }
}

/// Assigns depths by containment: sort by (start ascending, duration descending), then a
/// stack of open spans. A span that outlives the span it starts in is kept whole one level
/// deeper (counted as a partial overlap), so no lane ever holds overlapping spans.
///
/// Spans from B/E events arrive sorted already; then the segments are read in place, with
/// no copy and no sort. Depths are found first, so each lane is allocated once at its final
/// size.
///
/// Also says whether trace_processor might nest a `B`/`E` span otherwise: one that
/// outlives the span it starts in (it ends it there), or one that starts with an `X` of
/// positive length (it takes the `X` first, or the earlier in the file).
pub(crate) fn nest(
    segments: Vec<Segment>,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> (Vec<Lane>, bool) {
    let n = Nesting::new(segments, names, d);
    let differs = n.differs;
    (n.lanes(), differs)
}

/// [`nest`] before the lanes are filled: the spans (sorted where they were not), each
/// one's depth, the size of each lane, and whether trace_processor might nest otherwise.
struct Nesting {
    segments: Vec<Segment>,
    /// Where the spans were sorted: each one's index before.
    order: Option<Vec<u32>>,
    depths: Vec<u32>,
    sizes: Vec<usize>,
    differs: bool,
}

impl Nesting {
    fn new(
        mut segments: Vec<Segment>,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> Nesting {
        let mut order = None;
        let (depths, sizes, differs) = match depths(&segments, names, d) {
            Some(found) => found,
            None => {
                // Sort 24-byte keys, then move each span once (cheaper than a stable sort
                // of the spans); the position breaks ties as a stable sort would.
                let all = concat(&segments);
                let mut keys: Vec<(i64, std::cmp::Reverse<i64>, u32)> = all
                    .iter()
                    .enumerate()
                    .map(|(i, (s, _))| {
                        let i = u32::try_from(i).expect("fewer than 2^32 spans on a thread");
                        (s.start, std::cmp::Reverse(s.dur), i)
                    })
                    .collect();
                keys.sort_unstable();
                segments = vec![Segment::of(keys.iter().map(|k| all[k.2 as usize]))];
                order = Some(keys.iter().map(|k| k.2).collect());
                depths(&segments, names, d).expect("sorted")
            }
        };
        Nesting {
            segments,
            order,
            depths,
            sizes,
            differs,
        }
    }

    /// Fills lanes allocated at their final sizes.
    fn lanes(self) -> Vec<Lane> {
        let mut lanes: Vec<Lane> = self.sizes.iter().map(|&k| Lane::with_capacity(k)).collect();
        let mut depths = self.depths.iter();
        // Each segment is freed once its spans are in their lanes.
        for seg in self.segments {
            for (mut s, &depth) in seg.spans().zip(depths.by_ref()) {
                s.flags &= !ARGS_OF_END;
                if depth & PARTIAL != 0 {
                    s.flags |= flags::PARTIAL_OVERLAP;
                }
                lanes[(depth & !PARTIAL) as usize].push(&s);
            }
        }
        lanes
    }

    /// The spans in the order they opened (file order).
    fn in_file_order(self) -> Vec<(SpanData, u64)> {
        let spans = concat(&self.segments);
        let Some(order) = self.order else {
            return spans;
        };
        let mut indexed: Vec<(u32, (SpanData, u64))> = order.into_iter().zip(spans).collect();
        indexed.sort_unstable_by_key(|p| p.0);
        indexed.into_iter().map(|p| p.1).collect()
    }
}

/// The lanes of a thread matched as its events streamed in (`m`, joined across chunks),
/// and whether it must be decoded again, buffered: it went back in time (`disordered`)
/// or trace_processor pairs it otherwise, and its `E` events were not kept (`ends`:
/// `None`). Where they were (`ends` gives them), the thread's events are had again, in
/// file order, from the matcher's spans and its `E` events, and paired as
/// [`build_lanes`] pairs them; `d` (the warnings of joining the chunks) then holds that
/// pairing's warnings only, as a buffered builder's would.
#[allow(clippy::too_many_arguments)]
pub(crate) fn streamed_lanes(
    m: Matcher,
    ends: Option<impl FnOnce() -> Vec<KeptEnd>>,
    disordered: bool,
    trace_end: i64,
    from_spall: bool,
    sorted_from: i64,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> ((Vec<Lane>, EndArgs), bool) {
    // `.spall` pairs as it streamed; only a v1 file's step back in time decodes it again
    // (a v3 thread that steps back is paired from its stacks: `ChunkStack::replay`).
    let ends = ends.filter(|_| !from_spall);
    let events = match (disordered, ends) {
        (true, Some(ends)) => replay(concat(&m.spans), &ends(), &[]),
        (disordered, ends) => {
            let tp = m.pairs_otherwise(sorted_from);
            let mut own = Diagnostics::default();
            let (spans, merges) = m.finish(trace_end, names, &mut own);
            let n = Nesting::new(spans, names, &mut own);
            let again = disordered || (!from_spall && (tp || n.differs));
            let Some(ends) = ends.filter(|_| again) else {
                d.merge(own);
                return ((n.lanes(), merges), again);
            };
            replay(n.in_file_order(), &ends(), &merges)
        }
    };
    *d = Diagnostics::default();
    let lanes = build_lanes(events, trace_end, from_spall, sorted_from, names, d);
    (lanes, false)
}

/// A thread's events in file order: its `B` and `X` events from its spans (in the order
/// they opened, their own arguments taken back: see `ARGS_OF_END` and [`MERGED_ARGS`]),
/// its `E` events where they came among them.
fn replay(
    spans: Vec<(SpanData, u64)>,
    ends: &[KeptEnd],
    merges: &[(ArgsId, ArgsId)],
) -> Vec<Pending> {
    let mut out = Vec::with_capacity(spans.len() + ends.len());
    let mut ends = ends.iter().peekable();
    let mut end_event = |x: &KeptEnd| Pending {
        ts: x.ts,
        dur: 0,
        phase: Phase::END,
        name: x.name,
        cat: x.cat,
        args: x.args,
        offset: x.offset,
    };
    for (i, (s, offset)) in spans.into_iter().enumerate() {
        while let Some(x) = ends.next_if(|x| x.after as usize <= i) {
            out.push(end_event(x));
        }
        let b = s.flags & flags::FROM_BEGIN_END != 0;
        let args = if s.flags & ARGS_OF_END != 0 {
            ArgsId::NONE
        } else if s.args.0 & MERGED_ARGS != 0 {
            merges[(s.args.0 & !MERGED_ARGS) as usize].0
        } else {
            s.args
        };
        out.push(Pending {
            ts: s.start,
            dur: if b { 0 } else { s.dur },
            phase: if b { Phase::BEGIN } else { Phase::COMPLETE },
            name: s.name,
            cat: s.cat,
            args,
            offset,
        });
    }
    out.extend(ends.map(&mut end_event));
    out
}

/// The spans of `segments` with their byte offsets, in order.
fn concat(segments: &[Segment]) -> Vec<(SpanData, u64)> {
    let n = segments.iter().map(Segment::len).sum();
    let mut all = Vec::with_capacity(n);
    all.extend(segments.iter().flat_map(Segment::iter));
    all
}

/// The top bit of a depth from [`depths`]: the span is a partial overlap.
const PARTIAL: u32 = 1 << 31;

/// Each span's depth, the size of each lane, and whether trace_processor would nest a
/// `B`/`E` span otherwise (see [`nest`]); `None` (and no warning) as soon as two spans are
/// out of (start ascending, duration descending) order.
fn depths(
    segments: &[Segment],
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> Option<(Vec<u32>, Vec<usize>, bool)> {
    let n: usize = segments.iter().map(Segment::len).sum();
    let mut depths: Vec<u32> = Vec::with_capacity(n);
    let mut sizes: Vec<usize> = Vec::new();
    let mut warnings = Diagnostics::default();
    // The end of the open span at each depth.
    let mut stack: Vec<i64> = Vec::new();
    let mut prev = None;
    let mut differs = false;
    // The kinds of span starting at `at` so far: 1 from B/E events, 2 an `X` of positive
    // length.
    let (mut at, mut kinds) = (i64::MIN, 0u8);
    for (s, offset) in segments.iter().flat_map(Segment::iter) {
        let key = Some((s.start, std::cmp::Reverse(s.dur)));
        if key < prev {
            return None;
        }
        prev = key;
        let be = s.flags & flags::FROM_BEGIN_END != 0;
        if s.start != at {
            (at, kinds) = (s.start, 0);
        }
        kinds |= if be { 1 } else { 2 * u8::from(s.dur > 0) };
        differs |= kinds == 3;
        // Close every span that ended at or before this one starts. A zero-length span
        // ends where it starts, so the next span at the same time is its sibling.
        while let Some(&end) = stack.last() {
            if end <= s.start {
                stack.pop();
            } else {
                break;
            }
        }
        let end = s.end();
        let mut partial = 0;
        if let Some(&parent_end) = stack.last() {
            if end > parent_end {
                partial = PARTIAL;
                differs |= be;
                warnings.warn(ModelWarning::PartialOverlap, offset, || {
                    format!(
                        "span {:?} [{}, {}] ns starts inside its parent but ends {} ns after it; kept whole, one level deeper",
                        names(s.name),
                        s.start,
                        end,
                        end - parent_end
                    )
                });
            }
        }
        let depth = stack.len();
        if sizes.len() <= depth {
            sizes.push(0);
        }
        sizes[depth] += 1;
        depths.push(depth as u32 | partial);
        // A `B` never ended holds everything after it, even a span starting at the
        // trace's end, where it was cut (trace_processor's stack still has it open).
        stack.push(if s.flags & flags::UNFINISHED != 0 {
            i64::MAX
        } else {
            end
        });
    }
    d.merge(warnings);
    Some((depths, sizes, differs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(phase: Phase, ts: i64) -> Pending {
        Pending {
            ts,
            dur: 0,
            phase,
            name: StrId::EMPTY,
            cat: StrId::EMPTY,
            args: ArgsId::default(),
            offset: 0,
        }
    }

    /// The crate's tests' segments hold 5 spans: a thread of many crosses them, and one
    /// that trace_processor pairs otherwise (an `E` named as the slice below its `B`) is
    /// paired again from its kept `E`s, each put back among the spans by their count
    /// before it.
    #[test]
    fn a_thread_across_segments_pairs_again_as_the_buffered_build_does() {
        let mut evs = Vec::new();
        let e = |ph: &str, ts: i64, name: &str| {
            format!(r#"{{"ph":"{ph}","ts":{ts},"pid":1,"tid":1,"name":"{name}"}}"#)
        };
        for i in 0..20 {
            let t = i * 10;
            evs.push(e("B", t, "a"));
            evs.push(e("B", t + 1, "b"));
            // Zero-length: file order decides which `B` it ends. Named as the outer
            // slice once, which trace_processor then ends instead.
            evs.push(e("E", t + 1, if i == 13 { "a" } else { "" }));
            evs.push(e("E", t + 5, ""));
        }
        let json = format!("[{}]", evs.join(","));
        let shape = |t: &crate::Trace| -> Vec<Vec<(i64, i64, String)>> {
            let lanes = t.threads().iter().flat_map(|th| &th.lanes);
            lanes
                .map(|l| {
                    let span = |i: usize| (l.start[i], l.dur[i], t.str(l.name[i]).to_string());
                    (0..l.len()).map(span).collect()
                })
                .collect()
        };
        let streamed = crate::load_bytes(json.as_bytes()).unwrap();
        let mut b = crate::TraceBuilder::new();
        let summary = spall_format::decode(json.as_bytes(), &mut b).unwrap();
        let buffered = b.finish(summary);
        assert_eq!(streamed.span_count(), 40);
        assert_eq!(shape(&streamed), shape(&buffered));
    }

    #[test]
    fn a_zero_length_pair_pairs_otherwise_only_where_the_sorter_orders_by_phase() {
        // B and E at 10: trace_processor takes them in file order before `sorted_from`
        // (as the model does), the E first from there on.
        let names = |_: StrId| String::new();
        let mut d = Diagnostics::default();
        let mut m = Matcher::new(false);
        for e in [ev(Phase::BEGIN, 10), ev(Phase::END, 10)] {
            m.push(e, &names, &mut d);
        }
        m.end_chunk(&names, &mut d);
        assert!(!m.pairs_otherwise(i64::MAX));
        assert!(!m.pairs_otherwise(11));
        assert!(m.pairs_otherwise(10));
        // `.spall` keeps its own rule whatever the order.
        let mut m = Matcher::new(true);
        for e in [ev(Phase::BEGIN, 10), ev(Phase::END, 10)] {
            m.push(e, &names, &mut d);
        }
        m.end_chunk(&names, &mut d);
        assert!(!m.pairs_otherwise(0));
    }

    /// A `B` starting at the trace's end, where the `B`s still open are cut, nests inside
    /// them (trace_processor's stack still holds them), not beside them.
    #[test]
    fn a_begin_at_the_trace_end_nests_in_the_unfinished_ones() {
        let t = crate::load_bytes(
            br#"[{"ph":"B","name":"a","ts":0,"pid":1,"tid":1},
                {"ph":"B","name":"b","ts":2,"pid":1,"tid":1},
                {"ph":"B","name":"c","ts":5,"pid":1,"tid":1}]"#,
        )
        .unwrap();
        let lanes = &t.threads()[0].lanes;
        let names: Vec<&str> = lanes.iter().map(|l| t.str(l.name[0])).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(lanes.iter().all(|l| l.flags[0] & flags::UNFINISHED != 0));
    }
}
