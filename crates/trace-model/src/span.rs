//! Where spans live: processes, threads, and each thread's lanes of spans.

use crate::args::ArgsId;
use crate::clip::child_time;
use crate::strings::StrId;

/// A process or thread id as the file gave it: a number, or a string (interned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExtId {
    /// A numeric id.
    Num(i64),
    /// A string id that is not a plain integer.
    Str(StrId),
}

/// Span flags.
pub mod flags {
    /// A `B` never closed: its end is the trace's last timestamp.
    pub const UNFINISHED: u8 = 1;
    /// Starts inside its parent but ends after it (kept whole; see docs/MODEL.md).
    pub const PARTIAL_OVERLAP: u8 = 2;
    /// Came from a `B`/`E` pair (else an `X` event or a `.spall` Begin/End).
    pub const FROM_BEGIN_END: u8 = 4;
    /// A JSON `B` still open when the span it started in ended, ended there as
    /// trace_processor ends it: an instant at its end still lies inside it (and inside the
    /// spans under it that end then).
    pub const ENDED_WITH_PARENT: u8 = 8;
}

/// The spans of one thread at one depth: sorted by start, never overlapping.
/// Struct-of-arrays, so scans touch only the columns they need.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    /// Per span, its start in nanoseconds.
    pub start: Vec<i64>,
    /// Per span, its duration in nanoseconds.
    pub dur: Vec<i64>,
    /// Per span, its name.
    pub name: Vec<StrId>,
    /// Per span, its category (empty when none).
    pub cat: Vec<StrId>,
    /// Per span, its arguments.
    pub args: Vec<ArgsId>,
    /// Per span, its [`flags`] bits.
    pub flags: Vec<u8>,
}

/// The first index in `0..n` for which `before` is false (`before` must be monotonic).
pub(crate) fn lower_bound(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Lane {
    /// The number of spans in the lane.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// Whether the lane holds no span.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Span `i`'s end in nanoseconds (start plus duration, saturating).
    #[inline]
    pub fn end(&self, i: usize) -> i64 {
        self.start[i].saturating_add(self.dur[i])
    }

    pub(crate) fn with_capacity(n: usize) -> Lane {
        Lane {
            start: Vec::with_capacity(n),
            dur: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            cat: Vec::with_capacity(n),
            args: Vec::with_capacity(n),
            flags: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, s: &SpanData) {
        self.start.push(s.start);
        self.dur.push(s.dur);
        self.name.push(s.name);
        self.cat.push(s.cat);
        self.args.push(s.args);
        self.flags.push(s.flags);
    }

    /// Span `i`, copied out of the columns.
    pub fn get(&self, i: usize) -> SpanData {
        SpanData {
            start: self.start[i],
            dur: self.dur[i],
            name: self.name[i],
            cat: self.cat[i],
            args: self.args[i],
            flags: self.flags[i],
        }
    }

    /// Indices of the spans that start in `[from, to)`: the direct children of a span
    /// `[from, to)` one level up.
    pub fn starting_in(&self, from: i64, to: i64) -> std::ops::Range<usize> {
        let a = self.start.partition_point(|&s| s < from);
        let b = self.start.partition_point(|&s| s < to);
        a..b.max(a)
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * 8
            + self.dur.capacity() * 8
            + self.name.capacity() * 4
            + self.cat.capacity() * 4
            + self.args.capacity() * 4
            + self.flags.capacity()
    }
}

/// One span, copied out of its lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpanData {
    /// Start, in nanoseconds.
    pub start: i64,
    /// Duration, in nanoseconds.
    pub dur: i64,
    /// The span's name.
    pub name: StrId,
    /// The span's category (empty when none).
    pub cat: StrId,
    /// The span's arguments.
    pub args: ArgsId,
    /// [`flags`] bits.
    pub flags: u8,
}

impl SpanData {
    /// End, in nanoseconds (start plus duration, saturating).
    pub fn end(&self) -> i64 {
        self.start.saturating_add(self.dur)
    }
}

/// Where a span lives: thread index, depth, index within the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanRef {
    /// Index into [`Trace::threads`](crate::Trace::threads).
    pub thread: u32,
    /// Index into the thread's [`lanes`](Thread::lanes).
    pub depth: u32,
    /// Index of the span within its lane.
    pub index: u32,
}

/// A process: its id, its metadata, and its threads.
#[derive(Clone, Debug)]
pub struct Process {
    /// The process id the file gave.
    pub pid: ExtId,
    /// From a `process_name` metadata event.
    pub name: Option<StrId>,
    /// From a `process_sort_index` metadata event: lower sorts first.
    pub sort_index: Option<i64>,
    /// From `process_labels` metadata events, split at commas.
    pub labels: Vec<StrId>,
    /// Indices into [`Trace::threads`](crate::Trace::threads), by (sort index, tid); the
    /// order a viewer shows them in is [`Trace::display_order`](crate::Trace::display_order).
    pub threads: Vec<u32>,
}

/// A thread: its ids, its metadata, and its spans by depth.
#[derive(Clone, Debug)]
pub struct Thread {
    /// The id of its process, as the file gave it.
    pub pid: ExtId,
    /// The thread id the file gave.
    pub tid: ExtId,
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// From a `thread_name` metadata event.
    pub name: Option<StrId>,
    /// From a `thread_sort_index` metadata event: lower sorts first.
    pub sort_index: Option<i64>,
    /// `lanes[d]` holds the spans at depth `d` (0 is the outermost).
    pub lanes: Vec<Lane>,
}

impl Thread {
    /// The number of spans on this thread.
    pub fn span_count(&self) -> u64 {
        self.lanes.iter().map(|l| l.len() as u64).sum()
    }

    /// Self time of span `i` at `depth`: its duration minus its direct children's
    /// (`child_time`, the rule of self time).
    pub fn self_ns(&self, depth: usize, i: usize) -> i64 {
        let lane = &self.lanes[depth];
        let (s, e) = (lane.start[i], lane.end(i));
        let children: i64 = match self.lanes.get(depth + 1) {
            Some(next) => next
                .starting_in(s, e)
                .map(|j| child_time(next.start[j], next.end(j), e, (i64::MIN, i64::MAX)))
                .sum(),
            None => 0,
        };
        lane.dur[i] - children
    }
}
