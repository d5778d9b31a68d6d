//! The immutable trace: processes, threads, lanes of spans, and everything else the file held.

use spall_format::{Diagnostics, Summary};

use crate::args::ArgsStore;
use crate::asyncs::{AsyncSlice, AsyncTrack};
use crate::diag::ModelWarning;
use crate::event_kinds::{AsyncEvent, CounterSeries, Flow, Instant, Metadata};
use crate::flows::FlowLink;
use crate::samples::{Frame, SampleTrack};
use crate::span::{ExtId, Lane, Process, SpanData, SpanRef, Thread};
use crate::strings::{StrId, Strings};

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
    /// Views computed at their first use: trace_processor's, at the first
    /// `Trace::perfetto`.
    pub(crate) derived: crate::derived::Derived,
    /// A system trace's scheduling: CPU slices, thread states, CPU counters.
    pub(crate) sched: Option<Box<crate::sched::SchedData>>,
    /// A protobuf trace's threads, (pid, tid), as trace_processor numbers them.
    pub(crate) importer_threads: Vec<(i64, i64)>,
}

impl Trace {
    /// A protobuf trace's threads, (pid, tid), in the order trace_processor's importer
    /// first meets them: the `i`-th is its `utid` `i + 1`, the number a
    /// `legacy_event.passthrough_utid` arg holds (its utid 0 is the swapper). Empty for
    /// other formats.
    pub fn importer_threads(&self) -> &[(i64, i64)] {
        &self.importer_threads
    }

    /// A system trace's scheduling data (CPU slices, thread states, CPU counters); `None`
    /// for traces with no scheduler records.
    pub fn sched(&self) -> Option<&crate::sched::SchedData> {
        self.sched.as_deref()
    }

    /// The interned strings (names, categories, thread and process names).
    pub fn strings(&self) -> &Strings {
        &self.strings
    }

    /// Processes, by sort index, then pid (a viewer shows them in
    /// [`display_order`](Self::display_order)).
    pub fn processes(&self) -> &[Process] {
        &self.processes
    }

    /// Threads, by process, sort index, then tid. A [`SpanRef`]'s `thread` indexes this.
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

    /// The span a flow point binds to by the rules [`flow_links`](Trace::flow_links)
    /// follows (enclosing, next, or the slice that carried it), for a consumer that chains
    /// points its own way (trace_processor's rule, `perfetto::View::flows`).
    /// O(depth × log spans).
    pub fn flow_point_span(&self, p: &crate::FlowPoint) -> Option<SpanRef> {
        crate::flows::bind_point(&self.threads, p)
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

    /// Samples, one track per sampled thread and kind, by thread.
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

    /// From [`start_ns`](Self::start_ns) to [`end_ns`](Self::end_ns), in nanoseconds.
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

    /// Approximate heap bytes held by the spans (lanes), samples, strings, arguments and
    /// scheduling data.
    pub fn heap_bytes(&self) -> usize {
        let samples: usize = (self.samples.iter())
            .map(|s| s.ts.capacity() * 8 + s.weight.capacity() * 8 + s.frame.capacity() * 4)
            .sum();
        self.threads
            .iter()
            .flat_map(|t| &t.lanes)
            .map(Lane::heap_bytes)
            .sum::<usize>()
            + samples
            + self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.strings.heap_bytes()
            + self.args.heap_bytes()
            + self.sched.as_ref().map_or(0, |s| s.heap_bytes())
    }
}
