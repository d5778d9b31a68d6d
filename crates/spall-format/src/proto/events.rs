//! The second pass: packets in file order, each sequence's incremental state, and events.

use std::borrow::Cow;
use std::fmt::Write;

use super::annot::{self, escape_bytes, escape_into, write_f64, Interned};
use super::clock::{self, ClockKey, BOOTTIME};
use super::hash::{IdMap, IdSet};
use super::packet_kind;
use super::scan::{thread_descriptor, Found, Place, Track};
use super::wire::{repeated, Reader, Value, WireError};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Id2, Phase, RawEvent, RawId};

const CLEARED: u64 = 1;
const NEEDS_STATE: u64 = 2;

/// A clock whose timestamps are deltas from the previous one on its sequence.
#[derive(Clone, Copy, Debug)]
struct IncClock {
    value: i64,
    multiplier: i64,
    /// Its value in ns at the snapshot that defined it, and the clock read beside it then
    /// (with that clock's reading), through which its times convert.
    snap_ns: i64,
    via: Option<(ClockKey, i64)>,
}

/// One packet sequence's incremental state.
#[derive(Default)]
struct Seq<'a> {
    valid: bool,
    names: IdMap<u64, Cow<'a, str>>,
    cats: IdMap<u64, Cow<'a, str>>,
    ann_names: IdMap<u64, &'a [u8]>,
    ann_strings: IdMap<u64, &'a [u8]>,
    track_uuid: Option<u64>,
    extra_counters: Vec<u64>,
    extra_double_counters: Vec<u64>,
    clock: Option<u32>,
    inc: IdMap<u32, IncClock>,
    /// The thread of a legacy `ThreadDescriptor` packet: the default track.
    thread: Option<(i64, i64)>,
    last_us: i64,
    /// Running totals of incremental counter tracks: integer values summed exactly, any
    /// double turns the total into one.
    sums: IdMap<u64, Num>,
}

impl Seq<'_> {
    fn reset(&mut self) {
        let thread = self.thread;
        *self = Seq {
            thread,
            ..Seq::default()
        };
    }
}

/// The fields of one packet that decoding needs.
#[derive(Default)]
struct Packet<'a> {
    ts: Option<u64>,
    clock: Option<u32>,
    seq: u32,
    flags: u64,
    cleared: bool,
    dropped: bool,
    te: Option<(&'a [u8], u64)>,
    interned: Option<&'a [u8]>,
    defaults: Option<&'a [u8]>,
    snapshot: Option<&'a [u8]>,
    thread: Option<&'a [u8]>,
    kind: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i64),
    Double(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Double(x) => x,
        }
    }
}

/// Where an event's track puts it.
#[derive(Clone, Copy)]
enum Where<'t> {
    Thread(i64, i64),
    Process(i64, i64, &'t str, u64),
    Async(i64, i64, &'t str, u64),
}

impl Where<'_> {
    fn ids(self) -> (i64, i64) {
        match self {
            Where::Thread(p, t) | Where::Process(p, t, ..) | Where::Async(p, t, ..) => (p, t),
        }
    }
}

/// The fields of one `TrackEvent`, and scratch lists reused from event to event.
#[derive(Default)]
struct Te<'a> {
    ty: u64,
    name: Option<Cow<'a, str>>,
    cats: Vec<Cow<'a, str>>,
    track: Option<u64>,
    counter: Option<Num>,
    extra_tracks: Vec<u64>,
    extra_values: Vec<i64>,
    extra_double_tracks: Vec<u64>,
    extra_double_values: Vec<f64>,
    flow_out: Vec<u64>,
    flow_in: Vec<u64>,
    annots: Vec<(&'a [u8], u64)>,
    abs_us: Option<i64>,
    delta_us: Option<i64>,
    legacy: Option<(&'a [u8], u64)>,
}

impl Te<'_> {
    fn clear(&mut self) {
        self.ty = 0;
        self.name = None;
        self.cats.clear();
        self.track = None;
        self.counter = None;
        self.extra_tracks.clear();
        self.extra_values.clear();
        self.extra_double_tracks.clear();
        self.extra_double_values.clear();
        self.flow_out.clear();
        self.flow_in.clear();
        self.annots.clear();
        self.abs_us = None;
        self.delta_us = None;
        self.legacy = None;
    }
}

/// An open async slice: its name and category, for its end.
type Open<'a> = (Cow<'a, str>, Cow<'a, str>);

pub struct Decoder<'a> {
    f: Found<'a>,
    seqs: IdMap<u32, Seq<'a>>,
    /// Open slices of each async track: (name, category), innermost last.
    stacks: IdMap<u64, Vec<Open<'a>>>,
    /// Flow ids seen and not terminated: the next point of one continues it.
    flows: IdSet<u64>,
    pub events: u64,
    total: u64,
    next_progress: u64,
    te: Te<'a>,
    args: String,
    /// Counter values' arguments (while `args` holds the event's).
    cargs: String,
}

/// Formats `v` in decimal into `buf`, without allocating.
fn dec(buf: &mut [u8; 20], v: u64) -> &str {
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

fn text<'a>(b: &'a [u8], at: u64, d: &mut Diagnostics) -> Cow<'a, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            d.warn(WarningKind::InvalidUtf8, at, || {
                "a protobuf string that is not UTF-8, decoded with U+FFFD replacements".into()
            });
            Cow::Owned(String::from_utf8_lossy(b).into_owned())
        }
    }
}

fn malformed(d: &mut Diagnostics, e: WireError, what: &str) {
    d.warn(WarningKind::ProtoMalformed, e.offset, || {
        format!("{what} with a broken field ({e}); skipped")
    });
}

impl<'a> Decoder<'a> {
    pub fn new(f: Found<'a>, total: u64) -> Decoder<'a> {
        Decoder {
            f,
            seqs: IdMap::default(),
            stacks: IdMap::default(),
            flows: IdSet::default(),
            events: 0,
            total,
            next_progress: 0,
            te: Te::default(),
            args: String::new(),
            cargs: String::new(),
        }
    }

    fn emit<S: EventSink>(events: &mut u64, sink: &mut S, ev: &RawEvent<'_>) {
        *events += 1;
        sink.event(ev);
    }

    /// Process and thread names, sort indices and labels, as `M` events.
    pub fn names<S: EventSink>(&mut self, sink: &mut S) {
        let mut d = Diagnostics::default();
        for t in self.f.tracks.values() {
            if let (Place::Thread, Some(key), Some(n)) = (t.place, t.thread, t.name) {
                let th = self.f.threads.entry(key).or_default();
                th.name = th.name.or(Some(n));
            }
        }
        let mut args = String::new();
        let mut m = |name: &str, pid: i64, tid: i64, args: &str| {
            let ev = RawEvent {
                ph: Phase::METADATA,
                name: Cow::Borrowed(name),
                pid: RawId::Num(pid),
                tid: RawId::Num(tid),
                args: Args::Json(Cow::Borrowed(args)),
                ..RawEvent::default()
            };
            Self::emit(&mut self.events, sink, &ev);
        };
        for (&pid, p) in &self.f.processes {
            if let Some(n) = p.name {
                args.clear();
                args.push_str("{\"name\":");
                escape_bytes(&mut args, n, 0, &mut d);
                args.push('}');
                m("process_name", pid, 0, &args);
            }
            if let Some(i) = p.sort_index {
                m(
                    "process_sort_index",
                    pid,
                    0,
                    &format!("{{\"sort_index\":{i}}}"),
                );
            }
            if !p.labels.is_empty() {
                let l: Vec<_> = p
                    .labels
                    .iter()
                    .map(|l| String::from_utf8_lossy(l))
                    .collect();
                args.clear();
                args.push_str("{\"labels\":");
                escape_into(&mut args, &l.join(","));
                args.push('}');
                m("process_labels", pid, 0, &args);
            }
        }
        for (&(pid, tid), t) in &self.f.threads {
            if let Some(n) = t.name {
                args.clear();
                args.push_str("{\"name\":");
                escape_bytes(&mut args, n, 0, &mut d);
                args.push('}');
                m("thread_name", pid, tid, &args);
            }
            if let Some(i) = t.sort_index {
                m(
                    "thread_sort_index",
                    pid,
                    tid,
                    &format!("{{\"sort_index\":{i}}}"),
                );
            }
        }
    }

    pub fn finish(&mut self, _d: &mut Diagnostics) {}

    /// One packet, at byte `at` of the input.
    pub fn packet<S: EventSink>(
        &mut self,
        p: &'a [u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        if at >= self.next_progress {
            sink.progress(at, self.total);
            self.next_progress = at + (4 << 20);
        }
        let mut pk = Packet::default();
        let mut r = Reader::new(p, at);
        while let Some(f) = r.next_field() {
            let f = match f {
                Ok(f) => f,
                Err(e) => return malformed(d, e, "a packet"),
            };
            match (f.num, f.value) {
                (8, v) => pk.ts = v.uint(),
                (58, v) => pk.clock = v.uint().map(|c| c as u32),
                (10, v) => pk.seq = v.uint().unwrap_or(0) as u32,
                (13, v) => pk.flags = v.uint().unwrap_or(0),
                (41, v) => pk.cleared |= v.uint().unwrap_or(0) != 0,
                (42, v) => pk.dropped |= v.uint().unwrap_or(0) != 0,
                (11, Value::Bytes(b)) => pk.te = Some((b, r.offset_of(b))),
                (12, Value::Bytes(b)) => pk.interned = Some(b),
                (59, Value::Bytes(b)) => pk.defaults = Some(b),
                (6, Value::Bytes(b)) => pk.snapshot = Some(b),
                (44, Value::Bytes(b)) => pk.thread = Some(b),
                (11 | 12 | 59 | 6 | 44, _) => annot::wrong_type(d, f.offset),
                // Sideband fields, descriptors (read in the first pass), sync markers.
                (3 | 36 | 43 | 60 | 79 | 87 | 98, _) => {}
                (n, _) => pk.kind = Some(n),
            }
        }
        if let Some(k) = pk.kind {
            let kind = packet_kind(k);
            d.warn(WarningKind::ProtoUnmodelled(kind), at, || {
                format!("a packet of kind {k} ({kind}), which is not modelled; counted and skipped")
            });
        }
        let seq = self.seqs.entry(pk.seq).or_default();
        if pk.dropped {
            seq.valid = false;
        }
        if pk.cleared || pk.flags & CLEARED != 0 {
            seq.reset();
            seq.valid = true;
        }
        if pk.flags & NEEDS_STATE != 0 && !seq.valid {
            if pk.te.is_some() {
                d.warn(WarningKind::ProtoIncrementalStateLost, at, || {
                    format!(
                        "an event on sequence {} whose incremental state was lost (packets dropped before it); skipped until the state is cleared",
                        pk.seq
                    )
                });
            }
            return;
        }
        if let Some(b) = pk.interned {
            intern(seq, b, d);
        }
        if let Some(b) = pk.defaults {
            defaults(seq, b);
        }
        if let Some(b) = pk.snapshot {
            incremental_clocks(seq, b, pk.seq, self.f.clocks.trace_clock);
        }
        if let Some(b) = pk.thread {
            let (key, _, _) = thread_descriptor(b);
            seq.thread = Some(key);
            for f in Reader::new(b, 0).map_while(Result::ok) {
                if f.num == 6 {
                    seq.last_us = f.value.int().unwrap_or(0);
                }
            }
        }
        if let Some((b, te_at)) = pk.te {
            self.track_event(b, te_at, &pk, at, sink, d);
        }
    }

    fn track_event<S: EventSink>(
        &mut self,
        b: &'a [u8],
        te_at: u64,
        pk: &Packet<'a>,
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        let Decoder {
            f,
            seqs,
            stacks,
            flows,
            events,
            te,
            args,
            cargs,
            ..
        } = self;
        let seq = seqs.get_mut(&pk.seq).expect("the packet's sequence exists");
        te.clear();
        let mut r = Reader::new(b, te_at);
        while let Some(field) = r.next_field() {
            let field = match field {
                Ok(x) => x,
                Err(e) => return malformed(d, e, "a TrackEvent"),
            };
            let v = field.value;
            let rep = match (field.num, v) {
                (3, v) => repeated(v, false, |i| match seq.cats.get(&i) {
                    Some(c) => te.cats.push(c.clone()),
                    None => annot::undefined(d, field.offset, "category"),
                }),
                (22, Value::Bytes(s)) => {
                    te.cats.push(text(s, field.offset, d));
                    Ok(())
                }
                (10, v) => {
                    match v.uint().and_then(|i| seq.names.get(&i)) {
                        Some(n) => te.name = Some(n.clone()),
                        None => annot::undefined(d, field.offset, "event name"),
                    }
                    Ok(())
                }
                (23, Value::Bytes(s)) => {
                    te.name = Some(text(s, field.offset, d));
                    Ok(())
                }
                (9, v) => {
                    te.ty = v.uint().unwrap_or(0);
                    Ok(())
                }
                (11, v) => {
                    te.track = v.uint();
                    Ok(())
                }
                (30, v) => {
                    te.counter = v.int().map(Num::Int);
                    Ok(())
                }
                (44, v) => {
                    te.counter = v.double().map(Num::Double);
                    Ok(())
                }
                (31, v) => repeated(v, false, |x| te.extra_tracks.push(x)),
                (12, v) => repeated(v, false, |x| te.extra_values.push(x as i64)),
                (45, v) => repeated(v, false, |x| te.extra_double_tracks.push(x)),
                (46, v) => repeated(v, true, |x| te.extra_double_values.push(f64::from_bits(x))),
                (36, v) => repeated(v, false, |x| te.flow_out.push(x)),
                (47, v) => repeated(v, true, |x| te.flow_out.push(x)),
                (42, v) => repeated(v, false, |x| te.flow_in.push(x)),
                (48, v) => repeated(v, true, |x| te.flow_in.push(x)),
                (4, Value::Bytes(a)) => {
                    te.annots.push((a, r.offset_of(a)));
                    Ok(())
                }
                (16, v) => {
                    te.abs_us = v.int();
                    Ok(())
                }
                (1, v) => {
                    te.delta_us = v.int();
                    Ok(())
                }
                (6, Value::Bytes(l)) => {
                    te.legacy = Some((l, r.offset_of(l)));
                    Ok(())
                }
                (22 | 23 | 4 | 6, _) => {
                    annot::wrong_type(d, field.offset);
                    Ok(())
                }
                _ => Ok(()),
            };
            if rep.is_err() {
                annot::wrong_type(d, field.offset);
            }
        }
        let ts = time(f, seq, pk, te, at, d);
        let name: Cow<'a, str> = te.name.clone().unwrap_or(Cow::Borrowed(""));
        let cat: Cow<'a, str> = match te.cats.len() {
            0 => Cow::Borrowed(""),
            1 => te.cats[0].clone(),
            _ => Cow::Owned(te.cats.join(",")),
        };

        // The track: the event's, else the sequence's default, else its thread. Chrome
        // writes global legacy instants with track 0: they stay on their sequence's thread,
        // global in scope.
        let global = te.track == Some(0);
        let uuid = te.track.filter(|&u| u != 0).or(seq.track_uuid);
        if let Some(u) = uuid {
            f.tracks.entry(u).or_insert_with(|| {
                d.warn(WarningKind::ProtoUnknownTrack, at, || {
                    format!("an event on track {u}, which no TrackDescriptor defines; taken as a global track")
                });
                Track::new(u)
            });
        }
        let track: Option<&Track<'a>> = uuid.and_then(|u| f.tracks.get(&u));
        let wh = match track {
            Some(t) => where_of(t, uuid.unwrap_or(0), seq.thread),
            None => match seq.thread {
                Some((p, t)) => Where::Thread(p, t),
                None => {
                    if te.ty != 4 {
                        d.warn(WarningKind::ProtoNoTrack, at, || {
                            "an event with no track, on a sequence with no default track or thread; put on thread 0 of process 0".into()
                        });
                    }
                    Where::Thread(0, 0)
                }
            },
        };

        // Arguments: debug annotations under `debug`.
        args.clear();
        let ann = Interned {
            names: &seq.ann_names,
            strings: &seq.ann_strings,
        };
        let flat = te.legacy.is_some() && legacy_phase(te.legacy) == Some(b'C');
        if !te.annots.is_empty() {
            args.push('{');
            if let Err(e) = annot::write_debug(args, &te.annots, &ann, !flat, d) {
                malformed(d, e, "a debug annotation");
            }
            args.push('}');
        }
        let ev_args = if args.is_empty() {
            Args::None
        } else {
            Args::Json(Cow::Borrowed(args.as_str()))
        };
        let (pid, tid) = wh.ids();
        let mut buf = [0u8; 20];
        let mut ev = RawEvent {
            ph: Phase::INSTANT,
            name: name.clone(),
            cat: cat.clone(),
            ts,
            pid: RawId::Num(pid),
            tid: RawId::Num(tid),
            args: ev_args,
            offset: at,
            ..RawEvent::default()
        };

        match (te.ty, te.legacy) {
            (1, _) => match wh {
                Where::Thread(..) => {
                    let first = te
                        .flow_out
                        .first()
                        .map(|&i| (i, false))
                        .or(te.flow_in.first().map(|&i| (i, true)));
                    if let Some((id, terminating)) = first {
                        let ph = flow_phase(flows, id, terminating);
                        ev.bind_id = Some(Cow::Borrowed(dec(&mut buf, id)));
                        ev.flow_in = ph != b's';
                        ev.flow_out = ph != b'f';
                    }
                    ev.ph = Phase::BEGIN;
                    Self::emit(events, sink, &ev);
                    let skip = usize::from(first.is_some());
                    flow_events(events, sink, &ev, flows, te, skip);
                }
                Where::Process(..) | Where::Async(..) => {
                    let (id, u) = async_id(wh);
                    ev.ph = Phase::ASYNC_BEGIN;
                    ev.id = Some(Cow::Borrowed(id));
                    stacks.entry(u).or_default().push((name, cat));
                    Self::emit(events, sink, &ev);
                    flow_events(events, sink, &ev, flows, te, 0);
                }
            },
            (2, _) => match wh {
                Where::Thread(..) => {
                    ev.ph = Phase::END;
                    Self::emit(events, sink, &ev);
                    flow_events(events, sink, &ev, flows, te, 0);
                }
                Where::Process(..) | Where::Async(..) => {
                    let (id, u) = async_id(wh);
                    match stacks.get_mut(&u).and_then(Vec::pop) {
                        Some((n, c)) => {
                            ev.ph = Phase::ASYNC_END;
                            ev.id = Some(Cow::Borrowed(id));
                            ev.name = n;
                            ev.cat = c;
                            Self::emit(events, sink, &ev);
                            flow_events(events, sink, &ev, flows, te, 0);
                        }
                        None => d.warn(WarningKind::ProtoUnmatchedEnd, at, || {
                            format!("a slice end on track {u}, which has no open slice; skipped")
                        }),
                    }
                }
            },
            (3, _) => {
                match wh {
                    Where::Thread(..) => ev.scope = Some(if global { b'g' } else { b't' }),
                    Where::Process(..) => ev.scope = Some(b'p'),
                    Where::Async(..) => {
                        ev.ph = Phase::ASYNC_INSTANT;
                        ev.id = Some(Cow::Borrowed(async_id(wh).0));
                    }
                }
                Self::emit(events, sink, &ev);
                flow_events(events, sink, &ev, flows, te, 0);
            }
            (4, _) => {
                let value = te.counter.unwrap_or(Num::Int(0));
                match (track, uuid) {
                    (Some(t), Some(u)) => {
                        counter(events, sink, &mut ev, t, u, value, &mut seq.sums, cargs)
                    }
                    _ => d.warn(WarningKind::ProtoNoTrack, at, || {
                        "a counter value with no track; skipped".into()
                    }),
                }
            }
            (0, Some((l, l_at))) => {
                legacy(events, sink, &mut ev, l, l_at, seq, flows, te, global, d);
            }
            (ty, _) => {
                // Extra counter values may ride on an event of any type.
                if ty != 0 || (te.extra_values.is_empty() && te.extra_double_values.is_empty()) {
                    d.warn(
                        WarningKind::ProtoUnmodelled("proto_unmodelled_event_type"),
                        at,
                        || format!("a TrackEvent of type {ty}, which is not modelled; skipped"),
                    );
                }
            }
        }

        // Extra counter values: on the event's own tracks, else the sequence's defaults.
        let extra = [
            (&te.extra_tracks, &seq.extra_counters, false),
            (&te.extra_double_tracks, &seq.extra_double_counters, true),
        ];
        for (own, default, double) in extra {
            let tracks = if own.is_empty() { default } else { own };
            let n = if double {
                te.extra_double_values.len()
            } else {
                te.extra_values.len()
            };
            for (i, &u) in tracks.iter().enumerate().take(n) {
                let Some(t) = f.tracks.get(&u) else {
                    d.warn(WarningKind::ProtoUnknownTrack, at, || {
                        format!("a counter value on track {u}, which no TrackDescriptor defines; skipped")
                    });
                    continue;
                };
                let v = if double {
                    Num::Double(te.extra_double_values[i])
                } else {
                    Num::Int(te.extra_values[i])
                };
                let (pid, tid) = where_of(t, u, seq.thread).ids();
                ev.pid = RawId::Num(pid);
                ev.tid = RawId::Num(tid);
                counter(events, sink, &mut ev, t, u, v, &mut seq.sums, cargs);
            }
        }
    }
}

fn where_of<'t>(t: &'t Track<'_>, uuid: u64, seq_thread: Option<(i64, i64)>) -> Where<'t> {
    let tid = t.tid.unwrap_or(match seq_thread {
        Some((p, th)) if p == t.pid => th,
        _ => t.pid,
    });
    match t.place {
        Place::Thread => Where::Thread(t.pid, tid),
        Place::Process => Where::Process(t.pid, tid, &t.id, uuid),
        Place::Other => Where::Async(t.pid, tid, &t.id, uuid),
    }
}

/// The async id and track of a process or other track.
fn async_id<'t>(wh: Where<'t>) -> (&'t str, u64) {
    match wh {
        Where::Async(_, _, id, u) | Where::Process(_, _, id, u) => (id, u),
        Where::Thread(..) => ("", 0),
    }
}

/// The phase of one point of flow `id`: `s` for its first, `t` after, `f` to terminate.
fn flow_phase(flows: &mut IdSet<u64>, id: u64, terminating: bool) -> u8 {
    if terminating {
        flows.remove(&id);
        b'f'
    } else if flows.insert(id) {
        b's'
    } else {
        b't'
    }
}

/// The event's flow points (after the first `skip`, carried on the slice itself) as flow
/// events bound to the enclosing slice.
fn flow_events<S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &RawEvent<'_>,
    flows: &mut IdSet<u64>,
    te: &Te<'_>,
    skip: usize,
) {
    let points = te
        .flow_out
        .iter()
        .map(|&i| (i, false))
        .chain(te.flow_in.iter().map(|&i| (i, true)))
        .skip(skip);
    for (id, terminating) in points {
        let ph = flow_phase(flows, id, terminating);
        let mut buf = [0u8; 20];
        let f = RawEvent {
            ph: Phase(ph),
            name: ev.name.clone(),
            ts: ev.ts,
            pid: ev.pid.clone(),
            tid: ev.tid.clone(),
            id: Some(Cow::Borrowed(dec(&mut buf, id))),
            bp: Some(b'e'),
            offset: ev.offset,
            ..RawEvent::default()
        };
        Decoder::emit(events, sink, &f);
    }
}

/// A counter value on track `t`: a `C` event named after the track, its value the `value`
/// argument (times the track's unit multiplier; summed, for an incremental track).
#[allow(clippy::too_many_arguments)]
fn counter<S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &mut RawEvent<'_>,
    t: &Track<'_>,
    uuid: u64,
    v: Num,
    sums: &mut IdMap<u64, Num>,
    args: &mut String,
) {
    let info = t.counter;
    let mult = info.map_or(1, |c| c.multiplier);
    args.clear();
    args.push_str("{\"value\":");
    let v = match v {
        Num::Int(i) => i
            .checked_mul(mult)
            .map_or(Num::Double(i as f64 * mult as f64), Num::Int),
        Num::Double(x) => Num::Double(x * mult as f64),
    };
    let v = if info.is_some_and(|c| c.incremental) {
        let s = sums.entry(uuid).or_insert(Num::Int(0));
        *s = match (*s, v) {
            (Num::Int(a), Num::Int(b)) => a
                .checked_add(b)
                .map_or(Num::Double(a as f64 + b as f64), Num::Int),
            (a, b) => Num::Double(a.as_f64() + b.as_f64()),
        };
        *s
    } else {
        v
    };
    match v {
        Num::Int(i) => {
            let _ = write!(args, "{i}");
        }
        Num::Double(x) => write_f64(args, x),
    }
    args.push('}');
    let name = match t.name {
        Some(n) => String::from_utf8_lossy(n),
        None => Cow::Owned(format!("counter {uuid}")),
    };
    // A thread's counter (Chrome's thread_time) is its own series, not its process's:
    // the model names a counter with an id "NAME ID".
    let mut buf = [0u8; 20];
    let id = match t.tid {
        Some(tid) if tid >= 0 => Some(Cow::Borrowed(dec(&mut buf, tid as u64))),
        Some(tid) => Some(Cow::Owned(tid.to_string())),
        None => None,
    };
    let c = RawEvent {
        ph: Phase::COUNTER,
        name,
        id,
        cat: ev.cat.clone(),
        ts: ev.ts,
        pid: ev.pid.clone(),
        tid: ev.tid.clone(),
        args: Args::Json(Cow::Borrowed(args.as_str())),
        offset: ev.offset,
        ..RawEvent::default()
    };
    Decoder::emit(events, sink, &c);
}

fn legacy_phase(l: Option<(&[u8], u64)>) -> Option<u8> {
    let (b, _) = l?;
    Reader::new(b, 0)
        .map_while(Result::ok)
        .find(|f| f.num == 2)
        .and_then(|f| f.value.uint())
        .map(|p| p as u8)
}

/// A `legacy_event`: Chrome's JSON phase and fields, carried inside a TrackEvent.
#[allow(clippy::too_many_arguments)]
fn legacy<'a, S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &mut RawEvent<'a>,
    l: &'a [u8],
    l_at: u64,
    seq: &Seq<'a>,
    flows: &mut IdSet<u64>,
    te: &Te<'_>,
    global: bool,
    d: &mut Diagnostics,
) {
    let mut bind = None;
    let mut direction = 0;
    for f in Reader::new(l, l_at) {
        let f = match f {
            Ok(f) => f,
            Err(e) => return malformed(d, e, "a legacy event"),
        };
        let v = f.value;
        match f.num {
            1 => match v.uint().and_then(|i| seq.names.get(&i)) {
                Some(n) => ev.name = n.clone(),
                None => annot::undefined(d, f.offset, "event name"),
            },
            2 => ev.ph = Phase(v.uint().unwrap_or(0) as u8),
            3 => ev.dur = v.int().and_then(|us| us.checked_mul(1000)),
            4 => ev.tdur = v.int().and_then(|us| us.checked_mul(1000)),
            6 => ev.id = Some(Cow::Owned(format!("0x{:x}", v.uint().unwrap_or(0)))),
            10 => {
                ev.id2 = Some(Id2::Local(Cow::Owned(format!(
                    "0x{:x}",
                    v.uint().unwrap_or(0)
                ))))
            }
            11 => {
                ev.id2 = Some(Id2::Global(Cow::Owned(format!(
                    "0x{:x}",
                    v.uint().unwrap_or(0)
                ))))
            }
            8 => bind = v.uint(),
            12 if v.uint().unwrap_or(0) != 0 => ev.bp = Some(b'e'),
            13 => direction = v.uint().unwrap_or(0),
            14 => {
                ev.scope = match v.uint() {
                    Some(1) => Some(b'g'),
                    Some(2) => Some(b'p'),
                    Some(3) => Some(b't'),
                    _ => None,
                }
            }
            18 => ev.pid = RawId::Num(v.int().unwrap_or(0) as i32 as i64),
            19 => ev.tid = RawId::Num(v.int().unwrap_or(0) as i32 as i64),
            _ => {}
        }
    }
    if ev.scope.is_none()
        && global
        && matches!(ev.ph, Phase::INSTANT | Phase::INSTANT_LEGACY | Phase::MARK)
    {
        ev.scope = Some(b'g');
    }
    if let Some(b) = bind {
        ev.bind_id = Some(Cow::Owned(format!("0x{b:x}")));
        ev.flow_in = direction & 1 != 0;
        ev.flow_out = direction & 2 != 0;
    }
    Decoder::emit(events, sink, ev);
    flow_events(events, sink, ev, flows, te, 0);
}

/// The event's time in trace-clock nanoseconds.
fn time(
    f: &Found<'_>,
    seq: &mut Seq<'_>,
    pk: &Packet<'_>,
    te: &Te<'_>,
    at: u64,
    d: &mut Diagnostics,
) -> i64 {
    let id = pk.clock.or(seq.clock).unwrap_or(BOOTTIME);
    let (key, ns): (ClockKey, i128) = if let Some(raw) = pk.ts {
        if let Some(inc) = seq.inc.get_mut(&id) {
            inc.value = inc.value.wrapping_add(raw as i64);
            let ns = inc.value as i128 * inc.multiplier as i128;
            match inc.via {
                Some((via, via_ns)) => (via, via_ns as i128 + ns - inc.snap_ns as i128),
                None => (clock::key(f.clocks.trace_clock, 0), ns),
            }
        } else {
            let key = clock::key(id, pk.seq);
            (key, raw as i128 * f.clocks.multiplier(key) as i128)
        }
    } else if let Some(us) = te.abs_us {
        seq.last_us = us;
        (clock::key(id, pk.seq), us as i128 * 1000)
    } else if let Some(delta) = te.delta_us {
        seq.last_us = seq.last_us.wrapping_add(delta);
        (clock::key(id, pk.seq), seq.last_us as i128 * 1000)
    } else {
        d.warn(WarningKind::ProtoClock, at, || {
            "an event with no timestamp; taken as 0".into()
        });
        return 0;
    };
    let Ok(ns) = i64::try_from(ns) else {
        d.warn(WarningKind::ProtoClock, at, || {
            format!("a time of {ns} ns, which does not fit in 64 bits; taken as 0")
        });
        return 0;
    };
    match f.clocks.to_trace(key, ns) {
        Some(t) => t,
        None => {
            d.warn(WarningKind::ProtoClock, at, || {
                format!(
                    "a time on clock {} that no clock snapshot relates to the trace clock {}; taken as it is",
                    key.0, f.clocks.trace_clock
                )
            });
            ns
        }
    }
}

/// Interned strings of a packet, added to its sequence.
fn intern<'a>(seq: &mut Seq<'a>, b: &'a [u8], d: &mut Diagnostics) {
    for f in Reader::new(b, 0).map_while(Result::ok) {
        let Value::Bytes(entry) = f.value else {
            continue;
        };
        let (mut iid, mut s) = (0, None);
        for g in Reader::new(entry, 0).map_while(Result::ok) {
            match (g.num, g.value) {
                (1, v) => iid = v.uint().unwrap_or(0),
                (2, Value::Bytes(x)) => s = Some(x),
                _ => {}
            }
        }
        let s = s.unwrap_or(b"");
        match f.num {
            1 => {
                seq.cats.insert(iid, text(s, f.offset, d));
            }
            2 => {
                seq.names.insert(iid, text(s, f.offset, d));
            }
            3 => {
                seq.ann_names.insert(iid, s);
            }
            29 => {
                seq.ann_strings.insert(iid, s);
            }
            _ => {}
        }
    }
}

/// `TracePacketDefaults`: the sequence's default clock and tracks.
fn defaults(seq: &mut Seq<'_>, b: &[u8]) {
    for f in Reader::new(b, 0).map_while(Result::ok) {
        match (f.num, f.value) {
            (58, v) => seq.clock = v.uint().map(|c| c as u32),
            (11, Value::Bytes(t)) => {
                seq.extra_counters.clear();
                seq.extra_double_counters.clear();
                for g in Reader::new(t, 0).map_while(Result::ok) {
                    let _ = match g.num {
                        11 => {
                            seq.track_uuid = g.value.uint();
                            Ok(())
                        }
                        31 => repeated(g.value, false, |u| seq.extra_counters.push(u)),
                        45 => repeated(g.value, false, |u| seq.extra_double_counters.push(u)),
                        _ => Ok(()),
                    };
                }
            }
            _ => {}
        }
    }
}

/// The incremental clocks a `ClockSnapshot` on sequence `seq_id` defines.
fn incremental_clocks(seq: &mut Seq<'_>, b: &[u8], seq_id: u32, trace_clock: u32) {
    let mut clocks: Vec<(u32, u64, bool, i64)> = Vec::new();
    for f in Reader::new(b, 0).map_while(Result::ok) {
        let (1, Value::Bytes(c)) = (f.num, f.value) else {
            continue;
        };
        let (mut id, mut ts, mut inc, mut mult) = (0u32, 0u64, false, 1i64);
        for g in Reader::new(c, 0).map_while(Result::ok) {
            match g.num {
                1 => id = g.value.uint().unwrap_or(0) as u32,
                2 => ts = g.value.uint().unwrap_or(0),
                3 => inc = g.value.uint().unwrap_or(0) != 0,
                4 => mult = g.value.int().filter(|&m| m > 0).unwrap_or(1),
                _ => {}
            }
        }
        clocks.push((id, ts, inc, mult));
    }
    let via = clocks
        .iter()
        .filter(|c| !c.2)
        .min_by_key(|c| c.0 != trace_clock)
        .and_then(|&(id, ts, _, mult)| {
            let ns = i64::try_from(ts as i128 * mult as i128).ok()?;
            Some((clock::key(id, seq_id), ns))
        });
    for &(id, ts, inc, mult) in &clocks {
        if inc {
            seq.inc.insert(
                id,
                IncClock {
                    value: ts as i64,
                    multiplier: mult,
                    snap_ns: (ts as i64).wrapping_mul(mult),
                    via,
                },
            );
        }
    }
}
