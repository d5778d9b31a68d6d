//! The immutable trace: processes, threads, lanes of spans, and everything else the file held.

use spall_format::{Diagnostics, Summary};

use crate::asyncs::{AsyncSlice, AsyncTrack};
use crate::diag::ModelWarning;
use crate::flows::FlowLink;
use crate::other::{AsyncEvent, CounterSeries, Flow, Instant, Metadata};
use crate::samples::{Frame, SampleTrack};
use crate::strings::{StrId, Strings};

/// A process or thread id as the file gave it: a number, or a string (interned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExtId {
    Num(i64),
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
}

/// Arguments of a span or event: an index into the trace's argument store (0 = none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArgsId(pub u32);

impl ArgsId {
    pub const NONE: ArgsId = ArgsId(0);
}

/// The spans of one thread at one depth: sorted by start, never overlapping.
/// Struct-of-arrays, so scans touch only the columns they need.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    pub start: Vec<i64>,
    pub dur: Vec<i64>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub args: Vec<ArgsId>,
    pub flags: Vec<u8>,
}

impl Lane {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

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
    pub start: i64,
    pub dur: i64,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
    pub flags: u8,
}

impl SpanData {
    pub fn end(&self) -> i64 {
        self.start.saturating_add(self.dur)
    }
}

/// Where a span lives: thread index, depth, index within the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanRef {
    pub thread: u32,
    pub depth: u32,
    pub index: u32,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub pid: ExtId,
    pub name: Option<StrId>,
    pub sort_index: Option<i64>,
    pub labels: Vec<StrId>,
    /// Indices into [`Trace::threads`], in display order.
    pub threads: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct Thread {
    pub pid: ExtId,
    pub tid: ExtId,
    /// Index into [`Trace::processes`].
    pub process: u32,
    pub name: Option<StrId>,
    pub sort_index: Option<i64>,
    /// `lanes[d]` holds the spans at depth `d` (0 is the outermost).
    pub lanes: Vec<Lane>,
}

impl Thread {
    /// The number of spans on this thread.
    pub fn span_count(&self) -> u64 {
        self.lanes.iter().map(|l| l.len() as u64).sum()
    }

    /// Self time of span `i` at `depth`: its duration minus its direct children's (a
    /// child that outlives it, a partial overlap, counts only up to its end).
    pub fn self_ns(&self, depth: usize, i: usize) -> i64 {
        let lane = &self.lanes[depth];
        let (s, e) = (lane.start[i], lane.end(i));
        let children: i64 = match self.lanes.get(depth + 1) {
            Some(next) => next
                .starting_in(s, e)
                .map(|j| next.end(j).min(e) - next.start[j])
                .sum(),
            None => 0,
        };
        lane.dur[i] - children
    }
}

/// Stored argument texts, in segments: a parallel load keeps each chunk's segment as it is
/// (a trace's args can be half its bytes, too much to copy again on one thread).
#[derive(Clone, Debug, Default)]
pub struct ArgsStore {
    segments: Vec<ArgsSegment>,
    /// The id of each segment's first entry (ids start at 1: 0 is `ArgsId::NONE`).
    firsts: Vec<u32>,
}

/// Entries back to back: entry `i` is `text[ends[i-1]..ends[i]]` (`text[..ends[0]]` for 0).
/// The top bit of an end marks JSON (else free text from a `.spall` Begin).
#[derive(Clone, Debug, Default)]
struct ArgsSegment {
    text: String,
    ends: Vec<u64>,
}

const JSON_BIT: u64 = 1 << 63;

impl ArgsStore {
    pub(crate) fn add(&mut self, text: &str, is_json: bool) -> ArgsId {
        if text.is_empty() {
            return ArgsId::NONE;
        }
        let id = self.count() + 1;
        if self.segments.is_empty() {
            self.segments.push(ArgsSegment::default());
            self.firsts.push(id);
        }
        let seg = self.segments.last_mut().expect("a segment");
        seg.text.push_str(text);
        seg.ends
            .push(seg.text.len() as u64 | if is_json { JSON_BIT } else { 0 });
        ArgsId(id)
    }

    /// Appends every entry of `other`, taking its segments without copying them; its id
    /// `i` becomes `i + offset` (the return value).
    pub(crate) fn append(&mut self, other: ArgsStore) -> u32 {
        let offset = self.count();
        for (seg, first) in other.segments.into_iter().zip(other.firsts) {
            if !seg.ends.is_empty() {
                let first = first
                    .checked_add(offset)
                    .expect("fewer than 2^32 argument sets");
                self.segments.push(seg);
                self.firsts.push(first);
            }
        }
        offset
    }

    pub(crate) fn shrink(&mut self) {
        for seg in &mut self.segments {
            seg.text.shrink_to_fit();
            seg.ends.shrink_to_fit();
        }
    }

    /// How many argument sets there are: their ids run from 1 to this.
    pub fn count(&self) -> u32 {
        match (self.firsts.last(), self.segments.last()) {
            (Some(&first), Some(seg)) => first - 1 + seg.ends.len() as u32,
            _ => 0,
        }
    }

    /// The raw text of the arguments, and whether it is JSON.
    pub fn get(&self, id: ArgsId) -> Option<(&str, bool)> {
        if id.0 == 0 || id.0 > self.count() {
            return None;
        }
        let k = self.firsts.partition_point(|&f| f <= id.0) - 1;
        let seg = &self.segments[k];
        let i = (id.0 - self.firsts[k]) as usize;
        let start = match i {
            0 => 0,
            _ => (seg.ends[i - 1] & !JSON_BIT) as usize,
        };
        let end = seg.ends[i];
        Some((
            &seg.text[start..(end & !JSON_BIT) as usize],
            end & JSON_BIT != 0,
        ))
    }

    /// The arguments as JSON (`.spall` text becomes a JSON string).
    pub fn json(&self, id: ArgsId) -> Option<serde_json::Value> {
        let (text, is_json) = self.get(id)?;
        if is_json {
            serde_json::from_str(text).ok()
        } else {
            Some(serde_json::Value::String(text.to_string()))
        }
    }

    pub fn heap_bytes(&self) -> usize {
        let segments: usize = (self.segments.iter())
            .map(|seg| seg.text.capacity() + seg.ends.capacity() * 8)
            .sum();
        segments
            + self.segments.capacity() * std::mem::size_of::<ArgsSegment>()
            + self.firsts.capacity() * 4
    }
}

/// A loaded trace. Immutable once built (see [`crate::load`] and [`crate::TraceBuilder`]):
/// read through its accessors.
#[derive(Debug)]
pub struct Trace {
    pub(crate) strings: Strings,
    pub(crate) processes: Vec<Process>,
    pub(crate) threads: Vec<Thread>,
    pub(crate) args: ArgsStore,
    pub(crate) instants: Vec<Instant>,
    pub(crate) counters: Vec<CounterSeries>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) async_events: Vec<AsyncEvent>,
    pub(crate) metadata: Vec<Metadata>,
    pub(crate) async_slices: Vec<AsyncSlice>,
    pub(crate) async_tracks: Vec<AsyncTrack>,
    pub(crate) flow_links: Vec<FlowLink>,
    /// Indices into `flow_links`, sorted by `to`.
    pub(crate) flow_links_by_to: Vec<u32>,
    pub(crate) samples: Vec<SampleTrack>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) start_ns: i64,
    pub(crate) end_ns: i64,
    pub(crate) diagnostics: Diagnostics<ModelWarning>,
    pub(crate) decode: Summary,
}

impl Trace {
    /// The interned strings (names, categories, thread and process names).
    pub fn strings(&self) -> &Strings {
        &self.strings
    }

    /// Processes, in display order: sort index, then pid.
    pub fn processes(&self) -> &[Process] {
        &self.processes
    }

    /// Threads; [`Process::threads`] gives their display order. A [`SpanRef`]'s `thread`
    /// indexes this.
    pub fn threads(&self) -> &[Thread] {
        &self.threads
    }

    /// The arguments of spans and events.
    pub fn args(&self) -> &ArgsStore {
        &self.args
    }

    /// Instant events, in file order.
    pub fn instants(&self) -> &[Instant] {
        &self.instants
    }

    /// Counter series, one per process, name and argument key.
    pub fn counters(&self) -> &[CounterSeries] {
        &self.counters
    }

    /// Flow arrows between spans.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Async events (`b`, `n`, `e` and the legacy `S`, `T`, `p`, `F`), kept as written, in
    /// file order.
    pub fn async_events(&self) -> &[AsyncEvent] {
        &self.async_events
    }

    /// Async operations, paired into slices (see `asyncs`' rules in docs/MODEL.md).
    pub fn async_slices(&self) -> &[AsyncSlice] {
        &self.async_slices
    }

    /// Async slices grouped into tracks (per process, by top-level name) and packed into
    /// rows; tracks come by process, then by first start.
    pub fn async_tracks(&self) -> &[AsyncTrack] {
        &self.async_tracks
    }

    /// Flow arrows between spans, sorted by their `from` span.
    pub fn flow_links(&self) -> &[FlowLink] {
        &self.flow_links
    }

    /// The flow arrows leaving a span. O(log links).
    pub fn flows_from(&self, r: SpanRef) -> impl Iterator<Item = &FlowLink> {
        let i = self.flow_links.partition_point(|l| l.from < r);
        self.flow_links[i..].iter().take_while(move |l| l.from == r)
    }

    /// The flow arrows arriving at a span. O(log links).
    pub fn flows_into(&self, r: SpanRef) -> impl Iterator<Item = &FlowLink> {
        let links = &self.flow_links;
        let by_to = &self.flow_links_by_to;
        let i = by_to.partition_point(|&l| links[l as usize].to < r);
        by_to[i..]
            .iter()
            .map(move |&l| &links[l as usize])
            .take_while(move |l| l.to == r)
    }

    /// CPU samples, one track per sampled thread, by thread.
    pub fn samples(&self) -> &[SampleTrack] {
        &self.samples
    }

    /// The stack frames samples point into.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// `M` events the model does not interpret (names and sort indices are applied).
    pub fn metadata(&self) -> &[Metadata] {
        &self.metadata
    }

    /// Earliest timestamp of any timed event (0 for an empty trace).
    pub fn start_ns(&self) -> i64 {
        self.start_ns
    }

    /// Latest timestamp or span end.
    pub fn end_ns(&self) -> i64 {
        self.end_ns
    }

    /// Everything the model repaired or could not place, counted by kind.
    pub fn diagnostics(&self) -> &Diagnostics<ModelWarning> {
        &self.diagnostics
    }

    /// What the decoder reported: the format, and its own warnings.
    pub fn decode_summary(&self) -> &Summary {
        &self.decode
    }

    /// The text of an interned string.
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// Total spans on all threads.
    pub fn span_count(&self) -> u64 {
        self.threads.iter().map(Thread::span_count).sum()
    }

    /// Depth levels of the deepest thread (a flat trace has 1; no spans, 0).
    pub fn max_depth(&self) -> usize {
        self.threads
            .iter()
            .map(|t| t.lanes.len())
            .max()
            .unwrap_or(0)
    }

    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// Total counter samples over all series.
    pub fn counter_samples(&self) -> u64 {
        self.counters.iter().map(|c| c.ts.len() as u64).sum()
    }

    /// The span at `r`.
    #[inline]
    pub fn span(&self, r: SpanRef) -> SpanData {
        self.threads[r.thread as usize].lanes[r.depth as usize].get(r.index as usize)
    }

    /// Self time of the span at `r`.
    pub fn self_ns(&self, r: SpanRef) -> i64 {
        self.threads[r.thread as usize].self_ns(r.depth as usize, r.index as usize)
    }

    /// A display label for a process id (its number, or its string).
    pub fn ext_id(&self, id: ExtId) -> String {
        match id {
            ExtId::Num(n) => n.to_string(),
            ExtId::Str(s) => self.str(s).to_string(),
        }
    }

    /// A thread's display name: its name, else its tid.
    pub fn thread_label(&self, t: u32) -> String {
        let th = &self.threads[t as usize];
        match th.name {
            Some(n) => self.str(n).to_string(),
            None => format!("thread {}", self.ext_id(th.tid)),
        }
    }

    /// Every warning of the load, decoder's and model's together, as (stable kind name,
    /// count), sorted by name: what `spall-cli validate` reports and the viewer's banner
    /// summarises.
    pub fn warning_counts(&self) -> Vec<(String, u64)> {
        use spall_format::DiagnosticKind;
        let decode = self.decode.diagnostics.counts();
        let model = self.diagnostics.counts();
        let mut v: Vec<(String, u64)> = decode
            .map(|(k, n)| (k.name().into_owned(), n))
            .chain(model.map(|(k, n)| (k.name().into_owned(), n)))
            .collect();
        v.sort();
        v
    }

    /// Approximate heap bytes held by the spans (lanes), strings and arguments.
    pub fn heap_bytes(&self) -> usize {
        self.threads
            .iter()
            .flat_map(|t| &t.lanes)
            .map(Lane::heap_bytes)
            .sum::<usize>()
            + self.strings.heap_bytes()
            + self.args.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_store_round_trips() {
        let mut a = ArgsStore::default();
        assert_eq!(a.add("", true), ArgsId::NONE);
        let x = a.add("{\"a\":1}", true);
        let y = a.add("free text", false);
        assert_eq!(a.get(x), Some(("{\"a\":1}", true)));
        assert_eq!(a.get(y), Some(("free text", false)));
        assert_eq!(a.get(ArgsId::NONE), None);
        assert_eq!(a.get(ArgsId(99)), None);
        assert_eq!(a.json(x).unwrap()["a"], 1);
        assert_eq!(a.json(y).unwrap(), "free text");
    }

    #[test]
    fn args_appended_by_segments_keep_their_texts() {
        let store = |texts: &[(&str, bool)]| {
            let mut a = ArgsStore::default();
            for &(t, j) in texts {
                a.add(t, j);
            }
            a
        };
        let mut all = store(&[(r#"{"a":1}"#, true), ("first", false)]);
        let b = store(&[("second", false), (r#"{"b":[2]}"#, true)]);
        assert_eq!(all.append(b), 2);
        all.append(ArgsStore::default());
        assert_eq!(all.append(store(&[("third", false)])), 4);
        all.add("fourth", false);
        let got: Vec<_> = (1..=all.count())
            .map(|i| all.get(ArgsId(i)).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                (r#"{"a":1}"#, true),
                ("first", false),
                ("second", false),
                (r#"{"b":[2]}"#, true),
                ("third", false),
                ("fourth", false),
            ]
        );
        assert_eq!(all.get(ArgsId(7)), None);
    }
}
