//! The decoded event: one record per trace event, borrowing from the input where it can.

use std::borrow::Cow;
use std::fmt;

/// A trace-event phase: the first character of Chrome's `ph` field.
///
/// `.spall` events map onto the same phases (`B`, `E`, `M`), so every consumer handles one
/// vocabulary. Unknown phases are kept as their byte, never rejected.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Phase(pub u8);

impl Phase {
    /// `B`: a span opens on its thread.
    pub const BEGIN: Phase = Phase(b'B');
    /// `E`: closes the thread's innermost open `B` span.
    pub const END: Phase = Phase(b'E');
    /// `X`: a whole span, with its duration in `dur`.
    pub const COMPLETE: Phase = Phase(b'X');
    /// `i`: an instant event, scoped by `s` to a thread, process or the whole trace.
    pub const INSTANT: Phase = Phase(b'i');
    /// `I`: the deprecated spelling of [`INSTANT`](Self::INSTANT).
    pub const INSTANT_LEGACY: Phase = Phase(b'I');
    /// `R`: a mark (User Timing or navigation timing).
    pub const MARK: Phase = Phase(b'R');
    /// `C`: counter values, one per `args` key, at `ts`.
    pub const COUNTER: Phase = Phase(b'C');
    /// `b`: a nestable async slice opens (matched by `cat` and `id`).
    pub const ASYNC_BEGIN: Phase = Phase(b'b');
    /// `n`: an instant inside a nestable async slice.
    pub const ASYNC_INSTANT: Phase = Phase(b'n');
    /// `e`: a nestable async slice closes.
    pub const ASYNC_END: Phase = Phase(b'e');
    /// `S`: a legacy async slice opens.
    pub const LEGACY_ASYNC_START: Phase = Phase(b'S');
    /// `T`: a step into a legacy async slice.
    pub const LEGACY_ASYNC_STEP_INTO: Phase = Phase(b'T');
    /// `p`: a step past in a legacy async slice.
    pub const LEGACY_ASYNC_STEP_PAST: Phase = Phase(b'p');
    /// `F`: a legacy async slice closes.
    pub const LEGACY_ASYNC_FINISH: Phase = Phase(b'F');
    /// `s`: a flow arrow starts (flow events v1, matched by `id`).
    pub const FLOW_START: Phase = Phase(b's');
    /// `t`: a flow arrow passes through.
    pub const FLOW_STEP: Phase = Phase(b't');
    /// `f`: a flow arrow ends (see [`RawEvent::bp`]).
    pub const FLOW_END: Phase = Phase(b'f');
    /// `P`: a sampling profiler's sample.
    pub const SAMPLE: Phase = Phase(b'P');
    /// `N`: a tracked object is created.
    pub const OBJECT_CREATED: Phase = Phase(b'N');
    /// `O`: a snapshot of a tracked object's state.
    pub const OBJECT_SNAPSHOT: Phase = Phase(b'O');
    /// `D`: a tracked object is destroyed.
    pub const OBJECT_DESTROYED: Phase = Phase(b'D');
    /// `M`: metadata, such as process and thread names and sort indices.
    pub const METADATA: Phase = Phase(b'M');
    /// `c`: a clock sync marker.
    pub const CLOCK_SYNC: Phase = Phase(b'c');
    /// `(`: a context is entered.
    pub const CONTEXT_ENTER: Phase = Phase(b'(');
    /// `)`: a context is left.
    pub const CONTEXT_LEAVE: Phase = Phase(b')');
    /// An event whose `ph` was missing or empty.
    pub const MISSING: Phase = Phase(0);

    /// The phase as a character (`'?'` for a missing phase).
    pub fn as_char(self) -> char {
        if self.0 == 0 {
            '?'
        } else {
            char::from(self.0)
        }
    }
}

impl fmt::Debug for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Phase({:?})", self.as_char())
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// A process or thread id as the file wrote it.
///
/// Chrome JSON allows strings (`"tid": "Spans"`). A string that is a plain decimal integer
/// decodes as [`RawId::Num`]; any other string stays a distinct [`RawId::Str`], so two
/// string ids never collapse into one numeric id (such as 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RawId<'a> {
    /// A numeric id (or a string holding a plain decimal integer).
    Num(i64),
    /// Any other string id, as written.
    Str(Cow<'a, str>),
}

impl Default for RawId<'_> {
    fn default() -> Self {
        RawId::Num(0)
    }
}

impl RawId<'_> {
    /// Copies borrowed text so the id outlives the input.
    pub fn into_owned(self) -> RawId<'static> {
        match self {
            RawId::Num(n) => RawId::Num(n),
            RawId::Str(s) => RawId::Str(Cow::Owned(s.into_owned())),
        }
    }
}

impl fmt::Display for RawId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawId::Num(n) => write!(f, "{n}"),
            RawId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// An event's arguments, kept undecoded until someone asks for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Args<'a> {
    /// No `args` key.
    #[default]
    None,
    /// The raw JSON text of the `args` value (usually an object), exactly as in the file.
    Json(Cow<'a, str>),
    /// Free-form bytes from a `.spall` Begin event (decoded as UTF-8, lossily if needed).
    Text(Cow<'a, str>),
}

impl Args<'_> {
    /// Whether there are no arguments (no `args` key, or zero-length `.spall` args).
    pub fn is_empty(&self) -> bool {
        match self {
            Args::None => true,
            Args::Json(s) | Args::Text(s) => s.is_empty(),
        }
    }

    /// The undecoded text, if any.
    pub fn raw(&self) -> Option<&str> {
        match self {
            Args::None => None,
            Args::Json(s) | Args::Text(s) => Some(s),
        }
    }

    /// Parses the arguments as JSON. `.spall` text arguments become a JSON string.
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        match self {
            Args::None => Ok(serde_json::Value::Null),
            Args::Json(s) => serde_json::from_str(s),
            Args::Text(s) => Ok(serde_json::Value::String(s.to_string())),
        }
    }

    /// Copies borrowed text so the arguments outlive the input.
    pub fn into_owned(self) -> Args<'static> {
        match self {
            Args::None => Args::None,
            Args::Json(s) => Args::Json(Cow::Owned(s.into_owned())),
            Args::Text(s) => Args::Text(Cow::Owned(s.into_owned())),
        }
    }
}

/// Chrome's `id2` field: an id explicitly scoped to the process (`local`) or global.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id2<'a> {
    /// `id2.local`: the id means something only within the event's process.
    Local(Cow<'a, str>),
    /// `id2.global`: the id is the same across processes.
    Global(Cow<'a, str>),
}

/// One decoded trace event.
///
/// Times are integer nanoseconds, converted exactly from the file's decimal text (JSON) or
/// ticks (`.spall`). Text borrows from the input unless it had to be unescaped or repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawEvent<'a> {
    /// `ph`: what kind of event this is.
    pub ph: Phase,
    /// `name` (empty when absent).
    pub name: Cow<'a, str>,
    /// `cat`: comma-separated categories (empty when absent).
    pub cat: Cow<'a, str>,
    /// `ts` in nanoseconds (0 where the file gave none, as for most `M` events).
    pub ts: i64,
    /// `dur` in nanoseconds (X events).
    pub dur: Option<i64>,
    /// `tts`: thread timestamp in nanoseconds.
    pub tts: Option<i64>,
    /// `tdur`: thread duration in nanoseconds.
    pub tdur: Option<i64>,
    /// `pid`: the process.
    pub pid: RawId<'a>,
    /// `tid`: the thread, within the process.
    pub tid: RawId<'a>,
    /// `id`, as text (numbers keep their JSON spelling, e.g. `"0x1f"` or `42`).
    pub id: Option<Cow<'a, str>>,
    /// `id2`: an id with an explicit scope, in place of `id`.
    pub id2: Option<Id2<'a>>,
    /// `bind_id`: the flow a slice with [`flow_in`](Self::flow_in) or
    /// [`flow_out`](Self::flow_out) belongs to.
    pub bind_id: Option<Cow<'a, str>>,
    /// `s`: the scope of an instant event (`g`, `p` or `t`), as a byte. On a counter, `t`
    /// makes it its thread's own counter rather than its process's.
    pub scope: Option<u8>,
    /// `bp`: the binding point of a flow event (`e` binds to the enclosing slice), as a byte.
    pub bp: Option<u8>,
    /// `cname`: one of Chrome's reserved colour names.
    pub cname: Option<Cow<'a, str>>,
    /// `flow_in: true`: this slice ends the flow `bind_id` (flow events v2).
    pub flow_in: bool,
    /// `flow_out: true`: this slice starts (or continues) the flow `bind_id`.
    pub flow_out: bool,
    /// A counter whose `name` names its track whole (a Perfetto counter track, an atrace
    /// `C` marker): one series, called `name`, where a JSON `C` event's series are called
    /// by its name and each args key, as trace_processor calls them.
    pub track_counter: bool,
    /// A flow point carried by a thread slice's end (a Perfetto `TYPE_SLICE_END` event's
    /// flow ids): it binds to the slice that end closes, as trace_processor binds it.
    pub closes_slice: bool,
    /// `args`, undecoded.
    pub args: Args<'a>,
    /// Byte offset of the event in the decoded (decompressed) input.
    pub offset: u64,
}

impl RawEvent<'_> {
    /// Copies every borrowed field, so the event outlives the input.
    pub fn into_owned(self) -> RawEvent<'static> {
        fn own(c: Cow<'_, str>) -> Cow<'static, str> {
            Cow::Owned(c.into_owned())
        }
        RawEvent {
            ph: self.ph,
            name: own(self.name),
            cat: own(self.cat),
            ts: self.ts,
            dur: self.dur,
            tts: self.tts,
            tdur: self.tdur,
            pid: self.pid.into_owned(),
            tid: self.tid.into_owned(),
            id: self.id.map(own),
            id2: self.id2.map(|i| match i {
                Id2::Local(s) => Id2::Local(own(s)),
                Id2::Global(s) => Id2::Global(own(s)),
            }),
            bind_id: self.bind_id.map(own),
            scope: self.scope,
            bp: self.bp,
            cname: self.cname.map(own),
            flow_in: self.flow_in,
            flow_out: self.flow_out,
            track_counter: self.track_counter,
            closes_slice: self.closes_slice,
            args: self.args.into_owned(),
            offset: self.offset,
        }
    }
}

/// A slice's begin (`B`) or end (`E`) on a thread's own track, carrying no flow: what a
/// Perfetto TrackEvent of type SLICE_BEGIN or SLICE_END most often is. It is a `B`/`E`
/// [`RawEvent`] with only these fields set, handed to
/// [`EventSink::thread_slice`] without building one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadSlice<'a> {
    /// [`Phase::BEGIN`] or [`Phase::END`].
    pub ph: Phase,
    /// The process.
    pub pid: i64,
    /// The thread, within the process.
    pub tid: i64,
    /// The time, in nanoseconds.
    pub ts: i64,
    /// The slice's name (empty when none).
    pub name: &'a str,
    /// Comma-separated categories (empty when none).
    pub cat: &'a str,
    /// The arguments as a JSON object's text; empty when none.
    pub args: &'a str,
    /// Byte offset of the event in the decoded input.
    pub offset: u64,
    /// A number the decoder gives `name` (0: none): within one decode into one sink, a key
    /// always comes with the same name, so the sink may look the name up once per key.
    /// Perfetto's interned names have one per sequence and iid, until redefined.
    pub name_key: u32,
    /// The same for `cat`.
    pub cat_key: u32,
}

impl<'a> ThreadSlice<'a> {
    /// The same event as a [`RawEvent`].
    pub fn to_raw(&self) -> RawEvent<'a> {
        RawEvent {
            ph: self.ph,
            name: Cow::Borrowed(self.name),
            cat: Cow::Borrowed(self.cat),
            ts: self.ts,
            pid: RawId::Num(self.pid),
            tid: RawId::Num(self.tid),
            args: match self.args {
                "" => Args::None,
                a => Args::Json(Cow::Borrowed(a)),
            },
            offset: self.offset,
            ..RawEvent::default()
        }
    }
}

/// A counter track's value as a number: Perfetto's integer and double counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CounterValue {
    /// An integer counter's value.
    Int(i64),
    /// A double counter's value (any, not finite ones included).
    Double(f64),
}

impl CounterValue {
    /// The value as the model keeps it.
    pub fn as_f64(self) -> f64 {
        match self {
            CounterValue::Int(i) => i as f64,
            CounterValue::Double(x) => x,
        }
    }
}

/// One value of a counter track (Perfetto's counter events and a TrackEvent's extra
/// counter values): the JSON `C` event with one argument, `value`, that
/// [`to_raw`](Self::to_raw) makes of it, handed over without its JSON.
#[derive(Clone, Copy, Debug)]
pub struct TrackCounter<'a> {
    /// The track's name.
    pub name: &'a str,
    /// The event's categories (empty when none).
    pub cat: &'a str,
    /// The time, in nanoseconds.
    pub ts: i64,
    /// The process.
    pub pid: i64,
    /// The thread.
    pub tid: i64,
    /// A thread's own series (Chrome's thread time), as a `C` event with `"s": "t"`; else
    /// its process's.
    pub thread_scoped: bool,
    /// The value.
    pub value: CounterValue,
    /// Byte offset of the event in the decoded input.
    pub offset: u64,
}

impl<'a> TrackCounter<'a> {
    /// The same value as a `C` event, its arguments written into `args`.
    pub fn to_raw<'b>(&self, args: &'b mut String) -> RawEvent<'b>
    where
        'a: 'b,
    {
        args.clear();
        args.push_str("{\"value\":");
        match self.value {
            CounterValue::Int(i) => {
                let _ = std::fmt::Write::write_fmt(args, format_args!("{i}"));
            }
            CounterValue::Double(x) => crate::tagged::write_f64(args, x),
        }
        args.push('}');
        RawEvent {
            ph: Phase::COUNTER,
            name: Cow::Borrowed(self.name),
            scope: self.thread_scoped.then_some(b't'),
            cat: Cow::Borrowed(self.cat),
            ts: self.ts,
            pid: RawId::Num(self.pid),
            tid: RawId::Num(self.tid),
            args: Args::Json(Cow::Borrowed(args.as_str())),
            offset: self.offset,
            track_counter: true,
            ..RawEvent::default()
        }
    }
}

/// Receives decoded events, one at a time, in file order.
///
/// Any `FnMut(&RawEvent<'_>)` closure is a sink.
pub trait EventSink {
    /// Receives one event; its borrowed text lives only for the call.
    fn event(&mut self, event: &RawEvent<'_>);

    /// Receives a thread's slice begin or end (Perfetto's TrackEvents); its borrowed text
    /// lives only for the call. The default hands it to [`event`](Self::event) as a
    /// [`RawEvent`]; a sink that only builds spans takes it as it is.
    #[inline]
    fn thread_slice(&mut self, slice: &ThreadSlice<'_>) {
        self.event(&slice.to_raw())
    }

    /// Receives one value of a counter track; its borrowed text lives only for the call.
    /// The default hands it to [`event`](Self::event) as the `C` event
    /// [`TrackCounter::to_raw`] makes; a sink that keeps the values takes it as it is.
    fn track_counter(&mut self, counter: &TrackCounter<'_>) {
        let mut args = String::new();
        self.event(&counter.to_raw(&mut args))
    }

    /// Receives one sample of a sampling profile (the `sampled` module); its borrowed text
    /// lives only for the call. The default drops it.
    fn sample(&mut self, _sample: &RawSample<'_>) {}

    /// A profile of several kinds of samples says which one its own tools show first
    /// (pprof's default sample type); called before its samples. The default ignores it.
    fn sample_kind_default(&mut self, _kind: &str, _unit: SampleUnit) {}

    /// A profile whose stacks are a call tree ([`RawSample::nodes`]) says how many nodes
    /// it has, before its samples: about as many frames as the model will make, room it
    /// may take at once. The default ignores it.
    fn tree_nodes(&mut self, _nodes: usize) {}

    /// Receives one scheduler record of a system trace ([`ftrace`](crate::ftrace)); its
    /// borrowed text lives only for the call. The default drops it.
    fn sched(&mut self, _sched: &crate::ftrace::RawSched<'_>) {}

    /// Receives a CPU's `compact_sched` block, its records in order. The default hands
    /// each to [`sched`](Self::sched) as a [`RawSched`](crate::RawSched); a sink that
    /// stores them can take the block whole.
    fn sched_compact(&mut self, block: &crate::ftrace::CompactSched<'_>) {
        for r in block.recs() {
            self.sched(&block.raw(&r));
        }
    }

    /// Called now and then with the bytes decoded so far and the total, for progress bars.
    fn progress(&mut self, _done: u64, _total: u64) {}

    /// `.spall` version 3: the events up to the next call come from one buffer, all of
    /// thread `tid` of process `pid` and, for Begin and End, in the order the thread
    /// wrote them. Lets a sink look its thread up once per buffer.
    fn spall_buffer(&mut self, _pid: u32, _tid: u32) {}

    /// `.spall`: a Begin event (`B`, named, with `.spall` text arguments or none) of the
    /// current buffer (version 3) or of the thread its pid and tid name (version 1, which
    /// has no buffers). The default hands it to [`event`](Self::event).
    #[inline]
    fn spall_begin(&mut self, event: &RawEvent<'_>) {
        self.event(event)
    }

    /// `.spall`: an End event (`E`, with no name or arguments), of the current buffer
    /// (version 3) or of its pid and tid (version 1). The default hands it to
    /// [`event`](Self::event).
    #[inline]
    fn spall_end(&mut self, event: &RawEvent<'_>) {
        self.event(event)
    }
}

impl<F: FnMut(&RawEvent<'_>)> EventSink for F {
    fn event(&mut self, event: &RawEvent<'_>) {
        self(event)
    }
}

/// A sink that collects owned copies of every event (convenient for tests and small files).
#[derive(Debug, Default)]
pub struct Collect(pub Vec<RawEvent<'static>>);

impl EventSink for Collect {
    fn event(&mut self, event: &RawEvent<'_>) {
        self.0.push(event.clone().into_owned());
    }
}

/// What a sample's weight counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SampleUnit {
    /// Occurrences: samples, or events (cycles, instructions) of a perf counter.
    #[default]
    Count,
    /// Time, in nanoseconds.
    Nanoseconds,
    /// Memory, in bytes.
    Bytes,
}

impl SampleUnit {
    /// `"count"`, `"nanoseconds"` or `"bytes"`: a stable name for scripts.
    pub fn name(self) -> &'static str {
        match self {
            SampleUnit::Count => "count",
            SampleUnit::Nanoseconds => "nanoseconds",
            SampleUnit::Bytes => "bytes",
        }
    }

    /// The unit a name (as [`name`](Self::name) or a profiler writes it) stands for.
    pub fn from_name(s: &str) -> Option<SampleUnit> {
        Some(match s {
            "count" | "none" | "samples" | "" => SampleUnit::Count,
            "nanoseconds" | "ns" => SampleUnit::Nanoseconds,
            "bytes" => SampleUnit::Bytes,
            _ => return None,
        })
    }
}

/// One stack frame of a sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawFrame<'a> {
    /// The function (or, where none is known, the module in brackets).
    pub name: Cow<'a, str>,
    /// The source file, or for `perf` the module (DSO), where given.
    pub file: Option<Cow<'a, str>>,
    /// The line in `file` (1-based), where given.
    pub line: Option<u32>,
}

impl<'a> RawFrame<'a> {
    /// A frame with only a name.
    pub fn named(name: impl Into<Cow<'a, str>>) -> RawFrame<'a> {
        RawFrame {
            name: name.into(),
            file: None,
            line: None,
        }
    }
}

/// One sample: a stack and its weight.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawSample<'a> {
    /// The process.
    pub pid: RawId<'a>,
    /// The thread, within the process.
    pub tid: RawId<'a>,
    /// The thread's name, where the format gives one (perf's `comm`, a profile's name).
    pub thread_name: Option<Cow<'a, str>>,
    /// What the weight measures (`"cycles"`, `"samples"`, `"cpu"`): samples of different
    /// kinds go on different tracks.
    pub kind: Cow<'a, str>,
    /// The weight's unit.
    pub unit: SampleUnit,
    /// When the sample was taken, in nanoseconds; `None` for formats with no time.
    pub ts: Option<i64>,
    /// The weight: 1 per sample, a perf event's period, the time to the next sample...
    pub weight: i64,
    /// The stack, outermost frame first.
    pub stack: &'a [RawFrame<'a>],
    /// The sample's own arguments (pprof's labels), as a JSON object; mostly none.
    pub args: Args<'a>,
    /// Whether `stack` is the previous sample's: a reader that hands one sample over once
    /// per kind (pprof's sample types) says so, and the stack is not looked at again.
    pub same_stack: bool,
    /// How many of `stack`'s outermost frames are those of the previous sample handed to
    /// the same sink, at the same depths: a reader that keeps them where they were (`perf
    /// script`'s records share their callers) says so, and they are not compared again; 0
    /// where it does not know.
    pub same_outer: usize,
    /// Where the reader keeps the stacks as one call tree (V8's nodes): per frame of
    /// `stack`, its node's index in that tree, which names the frame and all its callers
    /// for the whole decode, so a sink may take a node's stack from a node it has seen
    /// rather than look at every frame again; empty where not.
    pub nodes: &'a [u32],
    /// Byte offset of the sample in the decoded input.
    pub offset: u64,
    /// The CPU the sample was taken on, where the format says (`perf script`'s `[cpu]`).
    pub cpu: Option<u32>,
}
