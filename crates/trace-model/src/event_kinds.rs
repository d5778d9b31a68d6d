//! Everything besides spans: instants, counters, flows, async events and metadata.

use crate::args::ArgsId;
use crate::strings::StrId;

/// Where an instant event applies (`s` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstantScope {
    /// `g`: the whole trace.
    Global,
    /// `p`: the event's process.
    Process,
    /// `t` (the default): the event's thread.
    Thread,
}

/// An instant event: `i`, `I`, `R` (mark).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instant {
    /// When, in nanoseconds.
    pub ts: i64,
    /// The event's name.
    pub name: StrId,
    /// The event's category (empty when none).
    pub cat: StrId,
    /// What the instant applies to.
    pub scope: InstantScope,
    /// Index into `Trace::processes`.
    pub process: u32,
    /// Index into `Trace::threads`.
    pub thread: u32,
    /// The event's arguments.
    pub args: ArgsId,
    /// An `R` event: a mark (Chrome's navigation timing writes them: `navigationStart`).
    pub mark: bool,
    /// How many `E` events of its thread at its time came after it in the file (at most
    /// 255): the spans they end held it open, for trace_processor, which takes one
    /// sequence's events of one time in file order (a protobuf instant written just
    /// before its slice's end is inside that slice).
    pub ends_after: u8,
    /// How many `B` events of its thread at its time came after it in the file (at most
    /// 255): the spans they begin do not hold it, for trace_processor.
    pub begins_after: u8,
}

/// One counter series: one per process, counter name and argument key.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSeries {
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// Index into [`Trace::threads`](crate::Trace::threads) for a thread's own counter
    /// (Perfetto's thread counter tracks, such as Chrome's `thread_time`; a `C` event with
    /// `"s": "t"`); `None` for a process counter, as every other `C` event is.
    pub thread: Option<u32>,
    /// The event name (with its `id`, if any, appended as Chrome does: `"name id"`).
    pub name: StrId,
    /// The event's `id`, which [`name`](Self::name) ends with.
    pub id: Option<StrId>,
    /// The argument key (`"value"`, `"bytes"`, ...).
    pub key: StrId,
    /// A named counter track's series (a Perfetto counter track, an atrace `C` marker, in
    /// a system trace or a JSON trace's `systemTraceEvents`): `name` is the whole series
    /// name, where a JSON `C` event's series is its name and [`key`](Self::key).
    pub from_track: bool,
    /// The colour the file asks for (`cname`, one of chrome://tracing's reserved colour
    /// names such as `"good"` or `"rail_load"`); the last one given wins.
    pub cname: Option<StrId>,
    /// Sorted by time (stable for equal times).
    pub ts: Vec<i64>,
    /// The value at each of [`ts`](Self::ts).
    pub values: Vec<f64>,
}

/// One point of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPoint {
    /// When, in nanoseconds.
    pub ts: i64,
    /// Index into [`Trace::threads`](crate::Trace::threads).
    pub thread: u32,
    /// `b's'`, `b't'` or `b'f'` (for a slice with `flow_out`, both, or `flow_in`).
    pub phase: u8,
    /// `bp: "e"`: binds to the enclosing slice rather than the next one.
    pub bind_enclosing: bool,
    /// A flow v2 point (`bind_id` with `flow_in`/`flow_out` on a slice): binds to the slice
    /// starting at `ts` whose duration is `span_dur` (any duration when negative).
    pub on_slice: bool,
    /// The slice's duration in nanoseconds, for an [`on_slice`](Self::on_slice) point.
    pub span_dur: i64,
    /// The name of the event that carried the point: for an [`on_slice`](Self::on_slice)
    /// point, it tells the slice from a parent beginning with it and lasting as long.
    pub span_name: StrId,
    /// Byte offset of the event in the decoded input (for warnings).
    pub offset: u64,
    /// Carried by a thread slice's end (a Perfetto `TYPE_SLICE_END` event): trace_processor
    /// binds it to the slice that end closes, not to the one open after it.
    pub on_end: bool,
}

/// A flow: the points sharing one category and id, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    /// The flow's id (`id`, `id2` or `bind_id`), as text.
    pub id: StrId,
    /// The category the points share.
    pub cat: StrId,
    /// The name of its first event in the file.
    pub name: StrId,
    /// The points, in time order.
    pub points: Vec<FlowPoint>,
}

/// An async event (`b`, `n`, `e`, and the legacy `S`, `T`, `p`, `F`), kept as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncEvent {
    /// The `ph` byte.
    pub phase: u8,
    /// When, in nanoseconds.
    pub ts: i64,
    /// The event's name.
    pub name: StrId,
    /// The event's category (empty when none).
    pub cat: StrId,
    /// `id`, or `id2`'s value, as text.
    pub id: StrId,
    /// The id is `id2: {"local": ..}`: it names an operation of this process only.
    pub local: bool,
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// Index into [`Trace::threads`](crate::Trace::threads).
    pub thread: u32,
    /// The event's arguments.
    pub args: ArgsId,
    /// Byte offset of the event in the decoded input (for warnings).
    pub offset: u64,
}

/// A `P` (sample) event, kept as written until the trace is finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SampleEvent {
    pub ts: i64,
    pub name: StrId,
    pub id: StrId,
    pub thread: u32,
    pub args: ArgsId,
    pub offset: u64,
}

/// An `M` event the model does not interpret (names and sort indices are applied instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The event's name.
    pub name: StrId,
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// Index into [`Trace::threads`](crate::Trace::threads) for a thread's record; `None`
    /// for a process's.
    pub thread: Option<u32>,
    /// The event's arguments.
    pub args: ArgsId,
}
