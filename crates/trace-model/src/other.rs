//! Everything besides spans: instants, counters, flows, async events and metadata.

use crate::args::ArgsId;
use crate::strings::StrId;

/// Where an instant event applies (`s` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstantScope {
    Global,
    Process,
    Thread,
}

/// An instant event: `i`, `I`, `R` (mark).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instant {
    pub ts: i64,
    pub name: StrId,
    pub cat: StrId,
    pub scope: InstantScope,
    /// Index into `Trace::processes`.
    pub process: u32,
    /// Index into `Trace::threads`.
    pub thread: u32,
    pub args: ArgsId,
}

/// One counter series: one per process, counter name and argument key.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSeries {
    pub process: u32,
    /// The event name (with its `id`, if any, appended as Chrome does: `"name id"`).
    pub name: StrId,
    /// The argument key (`"value"`, `"bytes"`, ...).
    pub key: StrId,
    /// The colour the file asks for (`cname`, one of chrome://tracing's reserved colour
    /// names such as `"good"` or `"rail_load"`); the last one given wins.
    pub cname: Option<StrId>,
    /// Sorted by time (stable for equal times).
    pub ts: Vec<i64>,
    pub values: Vec<f64>,
}

/// One point of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPoint {
    pub ts: i64,
    pub thread: u32,
    /// `b's'`, `b't'` or `b'f'` (for a slice with `flow_out`, both, or `flow_in`).
    pub phase: u8,
    /// `bp: "e"`: binds to the enclosing slice rather than the next one.
    pub bind_enclosing: bool,
    /// A flow v2 point (`bind_id` with `flow_in`/`flow_out` on a slice): binds to the slice
    /// starting at `ts` whose duration is `span_dur` (any duration when negative).
    pub on_slice: bool,
    pub span_dur: i64,
    /// Byte offset of the event in the decoded input (for warnings).
    pub offset: u64,
}

/// A flow: the points sharing one category and id, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub id: StrId,
    pub cat: StrId,
    pub name: StrId,
    pub points: Vec<FlowPoint>,
}

/// An async event (`b`, `n`, `e`, and the legacy `S`, `T`, `p`, `F`), kept as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncEvent {
    pub phase: u8,
    pub ts: i64,
    pub name: StrId,
    pub cat: StrId,
    /// `id`, or `id2`'s value, as text.
    pub id: StrId,
    /// The id is `id2: {"local": ..}`: it names an operation of this process only.
    pub local: bool,
    pub process: u32,
    pub thread: u32,
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
    pub name: StrId,
    pub process: u32,
    pub thread: Option<u32>,
    pub args: ArgsId,
}
