//! [`TraceBuilder`]: an [`EventSink`] that collects decoded events into a [`Trace`].

use hashbrown::HashMap;

use spall_format::{
    Args, Diagnostics, EventSink, Id2, Phase, RawEvent, RawId, RawSample, Summary, ThreadSlice,
};

use crate::args::{ArgsId, ArgsStore};
use crate::diag::ModelWarning;
use crate::event_kinds::{
    AsyncEvent, CounterSeries, Flow, FlowPoint, Instant, InstantScope, Metadata, SampleEvent,
};
use crate::nest::{KeptEnd, KeptEnds, Matcher, Pending};
use crate::span::ExtId;
use crate::stack::{ChunkStack, ThreadStack};
use crate::strings::{KeyedIds, StrId, Strings};
use crate::trace::Trace;
use spall::SpallCursor;

mod counters;
mod finish;
mod merge;
mod met;
mod sched;
mod spall;

struct ThreadBuild {
    pid: ExtId,
    tid: ExtId,
    process: u32,
    name: Option<StrId>,
    sort_index: Option<i64>,
    /// Buffered mode: every span-forming event, matched at the end.
    events: Vec<Pending>,
    /// Streaming mode: B/E matched as they arrive (valid while they arrive in time order).
    /// Its spans are the thread's `B` and `X` events, in file order.
    stream: Option<Matcher>,
    /// Streaming mode, where the builder keeps events (`keep`): the thread's `E` events,
    /// each with its place among the `B` and `X` events. With `stream`'s spans, they give
    /// the thread's events in file order again: a thread that went back in time, or that
    /// trace_processor would pair otherwise, is paired again from them, alone, as a
    /// buffered builder pairs it, with no second decode (see `nest::streamed_lanes`).
    ends: KeptEnds,
    /// After the chunks' merge: each chunk's `ends`.
    kept: Vec<merge::KeptPart>,
    /// Streaming mode: the thread's B/E events went back in time (`stream`'s pairs are
    /// wrong; it stops, unless the builder keeps events).
    disordered: bool,
    /// Streaming mode: the warnings of `stream` (a chunk's are mismatched `E`s, which make
    /// the thread pair again from `events`). After a merge: those of joining the chunks.
    diags: Diagnostics<ModelWarning>,
    /// Streaming mode, `.spall` v3: Begin and End events put straight into lanes.
    spall: Option<ChunkStack>,
    /// Streaming mode, `.spall` v3: the stacks before each step back in time, in file
    /// order (`spall` follows them). Each went forward in time, so its events can be had
    /// again from it ([`ChunkStack::replay`]): the thread is paired again from them, as a
    /// buffered builder pairs it, with no second decode.
    spall_cut: Vec<ChunkStack>,
    /// After the chunks' merge: their `spall` stacks joined.
    joined: Option<ThreadStack>,
    /// Streaming mode: the first and last B/E timestamps seen.
    first_be_ts: i64,
    last_be_ts: i64,
    /// The thread's latest instants, all at time `waiting_at`: an `E` at that time that
    /// comes after them ends a span that holds them, a `B` begins one that does not
    /// ([`Instant::ends_after`], [`Instant::begins_after`]).
    waiting_at: i64,
    waiting: Vec<u32>,
}

impl ThreadBuild {
    /// A `B`, `E` or `X` event of this thread: buffered, or (streaming) matched as it
    /// arrives, an `E` kept if `keep` (see `ends`).
    #[inline]
    fn span_event(&mut self, e: Pending, keep: bool, names: &dyn Fn(StrId) -> String) {
        let Some(m) = &mut self.stream else {
            return self.events.push(e);
        };
        if e.phase != Phase::COMPLETE {
            self.disordered |= e.ts < self.last_be_ts;
            self.first_be_ts = self.first_be_ts.min(e.ts);
            self.last_be_ts = e.ts;
            if keep && e.phase == Phase::END {
                self.ends.push(KeptEnd::new(&e, m.span_count()));
            }
        }
        // Kept events need every `B` and `X` in the matcher, even past a step back.
        if keep || !self.disordered {
            m.push(e, names, &mut self.diags);
        }
    }
}

struct ProcessBuild {
    pid: ExtId,
    name: Option<StrId>,
    sort_index: Option<i64>,
    labels: Vec<StrId>,
}

/// A counter series' identity: process, own thread, name, key, and whether a named track's.
type CounterKey = (u32, Option<u32>, StrId, StrId, bool);

/// Collects decoded events (it is an [`EventSink`]), then [`finish`](TraceBuilder::finish)es
/// them into a [`Trace`].
pub struct TraceBuilder {
    strings: Strings,
    /// The ids of thread slices' keyed names and categories (valid until a merge, after
    /// which no event comes).
    keyed: KeyedIds,
    args: ArgsStore,
    processes: Vec<ProcessBuild>,
    process_ids: HashMap<ExtId, u32>,
    threads: Vec<ThreadBuild>,
    thread_ids: HashMap<(ExtId, ExtId), u32>,
    /// The last thread looked up (events come in runs of one thread).
    last_thread: Option<((ExtId, ExtId), u32)>,
    /// The last profile sample's args text and id (see `EventSink::sample`).
    last_sample_args: Option<(String, ArgsId)>,
    /// The thread of the current `.spall` v3 buffer, with its stack taken out.
    spall_cur: Option<SpallCursor>,
    instants: Vec<Instant>,
    counters: Vec<CounterSeries>,
    counter_ids: HashMap<CounterKey, u32>,
    recent_counters: counters::RecentCounters,
    flows: Vec<Flow>,
    flow_ids: HashMap<(StrId, StrId), u32>,
    async_events: Vec<AsyncEvent>,
    samples: Vec<SampleEvent>,
    /// Samples of a sampling profile.
    profile: crate::profile::Collected,
    /// Scheduler records of a system trace.
    sched: crate::sched::collect::Collected,
    metadata: Vec<Metadata>,
    /// Named async tracks (`M` `track_name` with an `id`): (process, id, name).
    pub(super) track_names: Vec<(u32, StrId, StrId)>,
    diags: Diagnostics<ModelWarning>,
    start: i64,
    end: i64,
    /// Match B/E as events arrive instead of buffering them.
    streaming: bool,
    /// Streaming mode: keep each thread's `E` events (see `ThreadBuild::ends`).
    keep: bool,
    /// After a merge: how each chunk's ids map to the merged ones (for `ThreadBuild::kept`).
    chunk_maps: Vec<merge::Remap>,
    /// In streaming mode, the B/E events of a thread whose events are not kept went back in
    /// time: the result would be wrong, so the load is redone buffered.
    disordered: bool,
    /// The earliest and latest times so far, and the earliest time of an event that came
    /// after a later one: trace_processor's sorter orders the events from there on by
    /// time and phase. (Merging chunks needs the earliest: see `merge`.)
    earliest: i64,
    latest: i64,
    sorted_from: i64,
    /// Where trace_processor's importer first meets each thread (a protobuf trace's).
    met: met::Met,
}

impl std::fmt::Debug for TraceBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceBuilder")
            .field("threads", &self.threads.len())
            .finish_non_exhaustive()
    }
}

impl Default for TraceBuilder {
    fn default() -> Self {
        TraceBuilder {
            strings: Strings::default(),
            keyed: KeyedIds::default(),
            args: ArgsStore::default(),
            processes: Vec::new(),
            process_ids: HashMap::new(),
            threads: Vec::new(),
            thread_ids: HashMap::new(),
            last_thread: None,
            last_sample_args: None,
            spall_cur: None,
            instants: Vec::new(),
            counters: Vec::new(),
            counter_ids: HashMap::new(),
            recent_counters: Default::default(),
            flows: Vec::new(),
            flow_ids: HashMap::new(),
            async_events: Vec::new(),
            samples: Vec::new(),
            profile: Default::default(),
            sched: Default::default(),
            metadata: Vec::new(),
            track_names: Vec::new(),
            diags: Diagnostics::default(),
            start: i64::MAX,
            end: i64::MIN,
            streaming: false,
            keep: false,
            chunk_maps: Vec::new(),
            disordered: false,
            earliest: i64::MAX,
            latest: i64::MIN,
            sorted_from: i64::MAX,
            met: Default::default(),
        }
    }
}

fn args_text<'a>(a: &'a Args<'_>) -> (&'a str, bool) {
    match a {
        Args::None => ("", false),
        Args::Json(s) => (s, true),
        Args::Text(s) => (s, false),
    }
}

impl TraceBuilder {
    /// A builder that buffers each thread's events and sorts them at the end: correct for
    /// any input order.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder for one chunk of a parallel decode: it matches B/E events as they arrive,
    /// holding no event list (far less memory and time when each thread's B/E events come in
    /// time order, as in `.spall` files and most JSON). The chunks' builders are combined, in
    /// file order, by [`merge`](Self::merge). A thread whose events went back in time, or
    /// that trace_processor would pair otherwise, is paired again from its kept events.
    pub(crate) fn streaming() -> Self {
        TraceBuilder {
            streaming: true,
            keep: true,
            ..Self::default()
        }
    }

    /// [`streaming`](Self::streaming) builders for a file whose first bytes are `head`:
    /// `.spall` pairs every thread as it streams (its Begins and Ends, v3's and v1's, come
    /// through `spall_begin` and `spall_end`), so its builders keep no `E` events: a thread
    /// whose events go back in time is paired again from its stacks (`spall_cut`).
    pub(crate) fn streaming_for(head: &[u8]) -> fn() -> TraceBuilder {
        match spall_format::detect(head) {
            spall_format::Detected::Spall => || TraceBuilder {
                keep: false,
                ..TraceBuilder::streaming()
            },
            _ => TraceBuilder::streaming,
        }
    }

    /// Inline: returned through memory from a call, the id was read back wider than it
    /// was written, a stalled store forward on every event.
    #[inline(always)]
    fn ext_id(&mut self, id: &RawId<'_>) -> ExtId {
        match id {
            RawId::Num(n) => ExtId::Num(*n),
            RawId::Str(s) => self.ext_str(s),
        }
    }

    #[inline(never)]
    fn ext_str(&mut self, s: &str) -> ExtId {
        ExtId::Str(self.strings.intern(s))
    }

    fn process(&mut self, pid: ExtId) -> u32 {
        if let Some(&p) = self.process_ids.get(&pid) {
            return p;
        }
        let p = self.processes.len() as u32;
        self.processes.push(ProcessBuild {
            pid,
            name: None,
            sort_index: None,
            labels: Vec::new(),
        });
        self.process_ids.insert(pid, p);
        p
    }

    fn thread(&mut self, ev: &RawEvent<'_>) -> u32 {
        let key = (self.ext_id(&ev.pid), self.ext_id(&ev.tid));
        self.thread_at(key)
    }

    /// The thread with this (pid, tid), the last one's looked up once.
    #[inline(always)]
    fn thread_at(&mut self, key: (ExtId, ExtId)) -> u32 {
        match self.last_thread {
            Some((k, t)) if k == key => t,
            _ => {
                let t = self.thread_of(key);
                self.last_thread = Some((key, t));
                t
            }
        }
    }

    /// The thread with this (pid, tid), created if new.
    fn thread_of(&mut self, key: (ExtId, ExtId)) -> u32 {
        match self.thread_ids.get(&key) {
            Some(&t) => t,
            None => {
                let process = self.process(key.0);
                let t = self.threads.len() as u32;
                self.threads.push(ThreadBuild {
                    pid: key.0,
                    tid: key.1,
                    process,
                    name: None,
                    sort_index: None,
                    events: Vec::new(),
                    stream: self.streaming.then(Matcher::for_chunk),
                    ends: KeptEnds::default(),
                    kept: Vec::new(),
                    disordered: false,
                    diags: Diagnostics::default(),
                    spall: None,
                    spall_cut: Vec::new(),
                    joined: None,
                    first_be_ts: i64::MAX,
                    last_be_ts: i64::MIN,
                    waiting_at: i64::MIN,
                    waiting: Vec::new(),
                });
                self.thread_ids.insert(key, t);
                t
            }
        }
    }

    #[inline(always)]
    fn time(&mut self, ts: i64, end: i64) {
        self.start = self.start.min(ts);
        self.end = self.end.max(end);
    }

    /// Notes an event (not a sample) at `ts`: the span of times seen, and where they stop
    /// coming in order.
    #[inline]
    fn seen_at(&mut self, ts: i64) {
        if ts < self.latest {
            self.sorted_from = self.sorted_from.min(ts);
        }
        self.earliest = self.earliest.min(ts);
        self.latest = self.latest.max(ts);
    }

    fn add(&mut self, ev: &RawEvent<'_>) {
        let ph = ev.ph;
        if ph == Phase::METADATA && ev.name == "spall_met" {
            return self.met.meet(ev);
        }
        match ph {
            Phase::SAMPLE => self.latest = self.latest.max(ev.ts),
            _ => self.seen_at(ev.ts),
        }
        match ph {
            Phase::BEGIN | Phase::END | Phase::COMPLETE => self.span_event(ev),
            Phase::INSTANT | Phase::INSTANT_LEGACY | Phase::MARK => self.instant(ev),
            Phase::COUNTER => self.counter(ev),
            Phase::FLOW_START | Phase::FLOW_STEP | Phase::FLOW_END => self.flow(ev),
            Phase::ASYNC_BEGIN
            | Phase::ASYNC_INSTANT
            | Phase::ASYNC_END
            | Phase::LEGACY_ASYNC_START
            | Phase::LEGACY_ASYNC_STEP_INTO
            | Phase::LEGACY_ASYNC_STEP_PAST
            | Phase::LEGACY_ASYNC_FINISH => self.async_event(ev),
            Phase::SAMPLE => self.sample_point(ev),
            Phase::METADATA => self.metadata(ev),
            other => self
                .diags
                .warn(ModelWarning::UnmodelledPhase(other), ev.offset, || {
                    format!(
                        "{:?} events are not modelled yet; kept out of the timeline",
                        other.as_char()
                    )
                }),
        }
    }

    /// A `B`, `E` or `X`: its time, strings and arguments, onto its thread's matcher; a
    /// flow point it carries (Perfetto's flow v2) bound to it.
    #[inline]
    fn span_event(&mut self, ev: &RawEvent<'_>) {
        let ph = ev.ph;
        let mut dur = 0;
        if ph == Phase::COMPLETE {
            dur = match ev.dur {
                Some(d) if d >= 0 => d,
                other => {
                    self.diags.warn(ModelWarning::BadDuration, ev.offset, || {
                        format!("X {:?} has dur {other:?}; taken as 0", ev.name)
                    });
                    0
                }
            };
        }
        self.time(ev.ts, ev.ts.saturating_add(dur));
        let t = self.thread(ev);
        let name = self.strings.intern(&ev.name);
        let (a, is_json) = args_text(&ev.args);
        let e = self.pending(ph, ev.ts, dur, name, &ev.cat, (a, is_json), ev.offset);
        self.thread_span_event(t, e);
        if (ev.flow_in || ev.flow_out) && ev.bind_id.is_some() && ph != Phase::END {
            let slice_dur = if ph == Phase::COMPLETE { dur } else { -1 };
            self.flow_point(ev, t, Some(slice_dur), name);
        }
    }

    /// A span-forming event's strings and arguments stored, as its thread's matcher takes it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn pending(
        &mut self,
        phase: Phase,
        ts: i64,
        dur: i64,
        name: StrId,
        cat: &str,
        (args, is_json): (&str, bool),
        offset: u64,
    ) -> Pending {
        Pending {
            ts,
            dur,
            phase,
            name,
            cat: self.strings.intern(cat),
            args: self.args.add(args, is_json),
            offset,
        }
    }

    /// A `B`, `E` or `X` onto thread `t`'s matcher (or its buffered events).
    #[inline(always)]
    fn thread_span_event(&mut self, t: u32, e: Pending) {
        let th = &mut self.threads[t as usize];
        if e.phase != Phase::COMPLETE && th.waiting_at == e.ts {
            // The instants of this time before it in the file: one more B or E after them.
            for &i in &th.waiting {
                let inst = &mut self.instants[i as usize];
                let n = match e.phase {
                    Phase::END => &mut inst.ends_after,
                    _ => &mut inst.begins_after,
                };
                *n = n.saturating_add(1);
            }
        }
        let strings = &self.strings;
        th.span_event(e, self.keep, &|id| strings.get(id).to_string());
        self.disordered |= th.disordered && !self.keep;
    }

    /// The event-order bookkeeping of [`add`](Self::add) for an event at `ts`.
    #[inline(always)]
    fn order(&mut self, ts: i64) {
        if ts < self.latest {
            self.sorted_from = self.sorted_from.min(ts);
        }
        self.earliest = self.earliest.min(ts);
        self.latest = self.latest.max(ts);
    }

    /// An `i`, `I` or `R` event.
    fn instant(&mut self, ev: &RawEvent<'_>) {
        self.time(ev.ts, ev.ts);
        let thread = self.thread(ev);
        let scope = match ev.scope {
            Some(b'g') => InstantScope::Global,
            Some(b'p') => InstantScope::Process,
            _ => InstantScope::Thread,
        };
        let inst = Instant {
            ts: ev.ts,
            name: self.strings.intern(&ev.name),
            cat: self.strings.intern(&ev.cat),
            scope,
            process: self.threads[thread as usize].process,
            thread,
            args: self.args_of(ev),
            mark: ev.ph == Phase::MARK,
            ends_after: 0,
            begins_after: 0,
        };
        if scope == InstantScope::Thread {
            let th = &mut self.threads[thread as usize];
            if th.waiting_at != ev.ts {
                th.waiting_at = ev.ts;
                th.waiting.clear();
            }
            th.waiting.push(self.instants.len() as u32);
        }
        self.instants.push(inst);
    }

    /// A `b`/`n`/`e` or legacy `S`/`T`/`p`/`F` event: kept with its id for pairing at the end.
    fn async_event(&mut self, ev: &RawEvent<'_>) {
        let ph = ev.ph;
        self.time(ev.ts, ev.ts);
        let thread = self.thread(ev);
        let (id, local) = match (&ev.id, &ev.id2) {
            (Some(id), _) => (self.strings.intern(id), false),
            (None, Some(Id2::Local(s))) => (self.strings.intern(s), true),
            (None, Some(Id2::Global(s))) => (self.strings.intern(s), false),
            (None, None) => (StrId::EMPTY, false),
        };
        let a = AsyncEvent {
            phase: ph.0,
            ts: ev.ts,
            name: self.strings.intern(&ev.name),
            cat: self.strings.intern(&ev.cat),
            id,
            local,
            process: self.threads[thread as usize].process,
            thread,
            args: self.args_of(ev),
            offset: ev.offset,
        };
        self.async_events.push(a);
    }

    /// A `P` event: one CPU sample (V8's profiles arrive as these too).
    fn sample_point(&mut self, ev: &RawEvent<'_>) {
        self.time(ev.ts, ev.ts);
        let thread = self.thread(ev);
        let s = SampleEvent {
            ts: ev.ts,
            name: self.strings.intern(&ev.name),
            id: ev
                .id
                .as_ref()
                .map_or(StrId::EMPTY, |id| self.strings.intern(id)),
            thread,
            args: self.args_of(ev),
            offset: ev.offset,
        };
        self.samples.push(s);
    }

    fn args_of(&mut self, ev: &RawEvent<'_>) -> ArgsId {
        let (a, is_json) = args_text(&ev.args);
        self.args.add(a, is_json)
    }

    fn flow(&mut self, ev: &RawEvent<'_>) {
        self.time(ev.ts, ev.ts);
        let thread = self.thread(ev);
        // A further flow v2 point of a slice (the protobuf reader's, for a slice carrying
        // several): bound to that slice, as its first is.
        let slice = (ev.flow_in && ev.bind_id.is_some()).then_some(-1);
        let name = self.strings.intern(&ev.name);
        self.flow_point(ev, thread, slice, name);
    }

    /// A point of the flow `ev` (named `name`) belongs to; `slice` is the duration of the
    /// slice that carries a flow v2 point (-1 when not known yet, for `B`).
    fn flow_point(&mut self, ev: &RawEvent<'_>, thread: u32, slice: Option<i64>, name: StrId) {
        // Flow v2 ids are global: one flow per `bind_id`, whatever the slices' categories.
        let cat = if slice.is_some() { "" } else { &ev.cat };
        let local;
        let id: &str = match (&ev.id, &ev.id2, &ev.bind_id) {
            (_, _, Some(b)) if slice.is_some() => b,
            (Some(id), _, _) => id,
            (None, Some(Id2::Local(s)), _) => {
                local = format!("local:{s}");
                &local
            }
            (None, Some(Id2::Global(s)), _) => s,
            (None, None, Some(b)) => b,
            (None, None, None) => {
                self.diags.warn(ModelWarning::FlowWithoutId, ev.offset, || {
                    format!(
                        "flow event {:?} ({}) has no id; it cannot be linked",
                        ev.name, ev.ph
                    )
                });
                return;
            }
        };
        let id = self.strings.intern(id);
        let cat = self.strings.intern(cat);
        let next = self.flows.len() as u32;
        let i = *self.flow_ids.entry((cat, id)).or_insert(next);
        if i == next {
            let name = self.strings.intern(&ev.name);
            self.flows.push(Flow {
                id,
                cat,
                name,
                points: Vec::new(),
            });
        }
        let phase = match (slice, ev.flow_in, ev.flow_out) {
            (None, ..) => ev.ph.0,
            (Some(_), true, true) => b't',
            (Some(_), true, false) => b'f',
            (Some(_), false, _) => b's',
        };
        self.flows[i as usize].points.push(FlowPoint {
            ts: ev.ts,
            thread,
            phase,
            bind_enclosing: ev.bp == Some(b'e'),
            on_slice: slice.is_some(),
            span_dur: slice.unwrap_or(-1),
            span_name: name,
            offset: ev.offset,
            on_end: ev.closes_slice,
        });
    }

    fn metadata(&mut self, ev: &RawEvent<'_>) {
        let json = ev.args.to_json().ok();
        let field = |k: &str| json.as_ref().and_then(|j| j.get(k)).cloned();
        let as_i64 = |v: Option<serde_json::Value>| -> Option<i64> {
            match v? {
                serde_json::Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            }
        };
        let as_text = |v: Option<serde_json::Value>| -> Option<String> {
            match v? {
                serde_json::Value::String(s) => Some(s),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            }
        };
        let bad = |d: &mut Diagnostics<ModelWarning>| {
            d.warn(ModelWarning::BadMetadata, ev.offset, || {
                format!(
                    "M {:?} has args {:?}; ignored",
                    ev.name,
                    ev.args.raw().unwrap_or("")
                )
            })
        };
        match &*ev.name {
            "process_name" | "process_sort_index" | "process_labels" => {
                let pid = self.ext_id(&ev.pid);
                let p = self.process(pid) as usize;
                match &*ev.name {
                    "process_name" => match as_text(field("name")) {
                        Some(n) => self.processes[p].name = Some(self.strings.intern(&n)),
                        None => bad(&mut self.diags),
                    },
                    "process_sort_index" => match as_i64(field("sort_index")) {
                        Some(i) => self.processes[p].sort_index = Some(i),
                        None => bad(&mut self.diags),
                    },
                    _ => match as_text(field("labels")) {
                        Some(l) => {
                            for label in l.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                                let id = self.strings.intern(label);
                                self.processes[p].labels.push(id);
                            }
                        }
                        None => bad(&mut self.diags),
                    },
                }
            }
            "thread_name" | "thread_sort_index" => {
                let t = self.thread(ev) as usize;
                if &*ev.name == "thread_name" {
                    match as_text(field("name")) {
                        Some(n) => self.threads[t].name = Some(self.strings.intern(&n)),
                        None => bad(&mut self.diags),
                    }
                } else {
                    match as_i64(field("sort_index")) {
                        Some(i) => self.threads[t].sort_index = Some(i),
                        None => bad(&mut self.diags),
                    }
                }
            }
            // A thread known to exist, unnamed (the protobuf reader's, for the processes
            // Chrome lists as active, as trace_processor lists them).
            "spall_thread" => {
                self.thread(ev);
            }
            "track_name" if ev.id.is_some() => {
                let id = ev.id.as_deref().unwrap_or_default();
                let pid = self.ext_id(&ev.pid);
                let process = self.process(pid);
                match as_text(field("name")) {
                    Some(n) => {
                        let (id, n) = (self.strings.intern(id), self.strings.intern(&n));
                        self.track_names.push((process, id, n));
                    }
                    None => bad(&mut self.diags),
                }
            }
            _ => {
                let pid = self.ext_id(&ev.pid);
                let process = self.process(pid);
                let name = self.strings.intern(&ev.name);
                let args = self.args_of(ev);
                self.metadata.push(Metadata {
                    name,
                    process,
                    thread: None,
                    args,
                });
            }
        }
    }

    /// Like [`finish`](Self::finish), but `None` from a streaming builder whose B/E events
    /// went back in time: decode again with a buffered builder.
    pub(crate) fn try_finish(self, decode: Summary) -> Option<Trace> {
        if self.disordered {
            return None;
        }
        self.finish_inner(decode, true)
    }

    /// Builds the trace. `decode` is the decoder's summary (format, decode warnings).
    pub fn finish(self, decode: Summary) -> Trace {
        debug_assert!(!self.disordered, "a streaming builder must use try_finish");
        self.finish_inner(decode, false)
            .expect("a builder that may not decode again builds")
    }
}

impl EventSink for TraceBuilder {
    fn event(&mut self, event: &RawEvent<'_>) {
        self.add(event);
    }

    fn track_counter(&mut self, counter: &spall_format::TrackCounter<'_>) {
        self.track_counter_value(counter);
    }

    fn sample(&mut self, s: &RawSample<'_>) {
        let key = (self.ext_id(&s.pid), self.ext_id(&s.tid));
        let t = self.thread_at(key);
        if let (Some(n), None) = (&s.thread_name, self.threads[t as usize].name) {
            let name = self.strings.intern(n);
            self.threads[t as usize].name = Some(name);
            // A process is named after its main thread (tid = pid), as perf and Perfetto
            // name it.
            let p = &mut self.processes[self.threads[t as usize].process as usize];
            if key.0 == key.1 && p.name.is_none() {
                p.name = Some(name);
            }
        }
        // A profile's samples repeat their args (pprof hands each sample over once per
        // sample type): the last one's are stored once.
        let args = match &s.args {
            spall_format::Args::None => ArgsId::NONE,
            a => {
                let (text, is_json) = args_text(a);
                match &self.last_sample_args {
                    Some((t, id)) if t == text => *id,
                    _ => {
                        let id = self.args.add(text, is_json);
                        self.last_sample_args = Some((text.to_string(), id));
                        id
                    }
                }
            }
        };
        self.profile.add(s, t, args, &mut self.strings);
    }

    fn sample_kind_default(&mut self, kind: &str, unit: spall_format::SampleUnit) {
        self.profile.default_kind = Some((kind.to_string(), unit));
    }

    fn tree_nodes(&mut self, nodes: usize) {
        self.profile.reserve_frames(nodes);
    }

    fn sched(&mut self, s: &spall_format::RawSched<'_>) {
        self.sched.add(s, &mut self.strings);
    }

    fn sched_compact(&mut self, block: &spall_format::CompactSched<'_>) {
        self.sched.add_compact(block, &mut self.strings);
    }

    fn spall_buffer(&mut self, pid: u32, tid: u32) {
        if self.streaming {
            self.spall_flush();
            let key = (ExtId::Num(pid.into()), ExtId::Num(tid.into()));
            let t = self.thread_of(key);
            let th = &mut self.threads[t as usize];
            let stack = th.spall.take();
            self.spall_cur = Some(SpallCursor {
                thread: t,
                had_stack: stack.is_some(),
                stack: stack.unwrap_or_default(),
                first: th.first_be_ts,
                last: th.last_be_ts,
                peak: i64::MIN,
                cut: Vec::new(),
            });
        }
    }

    #[inline(always)]
    fn spall_begin(&mut self, ev: &RawEvent<'_>) {
        if !self.streaming {
            return self.add(ev);
        }
        let name = self.strings.intern(&ev.name);
        let args = match &ev.args {
            Args::None => ArgsId::NONE,
            a => {
                let (a, is_json) = args_text(a);
                self.args.add(a, is_json)
            }
        };
        let Some(c) = &mut self.spall_cur else {
            return self.spall_event(ev, Some(name), args);
        };
        c.at(ev.ts);
        c.stack.begin(ev.ts, name, args, ev.offset);
    }

    /// As [`event`](Self::event) takes its `B` or `E` [`RawEvent`], with no event built.
    #[inline]
    fn thread_slice(&mut self, s: &ThreadSlice<'_>) {
        self.order(s.ts);
        self.time(s.ts, s.ts);
        let t = self.thread_at((ExtId::Num(s.pid), ExtId::Num(s.tid)));
        let e = Pending {
            ts: s.ts,
            dur: 0,
            phase: s.ph,
            name: self.keyed.intern(s.name_key, s.name, &mut self.strings),
            cat: self.keyed.intern(s.cat_key, s.cat, &mut self.strings),
            args: self.args.add(s.args, true),
            offset: s.offset,
        };
        self.thread_span_event(t, e);
    }

    #[inline(always)]
    fn spall_end(&mut self, ev: &RawEvent<'_>) {
        let Some(c) = &mut self.spall_cur else {
            return match self.streaming {
                true => self.spall_event(ev, None, ArgsId::NONE),
                false => self.add(ev),
            };
        };
        c.at(ev.ts);
        c.stack.end(ev.ts, ev.offset);
    }
}
