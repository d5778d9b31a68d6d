//! One `TrackEvent`: its fields, its track, and the events it becomes.

use std::borrow::Cow;

use super::annot::{self, Interned, Location};
use super::base::{dec, emit, malformed, text, Num, Open, Packet, Pending, PendingEnd, Te};
use super::events::Decoder;
use super::hash::IdMap;
use super::kinds::{counter, flow_events, flow_phase, flow_points, legacy, legacy_phase};
use super::named;
use super::scan::{Found, Place, Track};
use super::seq::{time, Seq, Uses};
use super::typed;
use super::wire::{repeated, Field, Reader, Value, WireErrorKind};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Id2, Phase, RawEvent, RawId, ThreadSlice};

/// Where an event's track puts it.
#[derive(Clone, Copy)]
pub(super) enum Where<'t> {
    Thread(i64, i64),
    Process(i64, i64, &'t str, u64),
    /// The last field: the track is a process's (no thread among its ancestors), so its
    /// id is process-local (`id2.local`), as trace_processor puts it on a process track.
    Async(i64, i64, &'t str, u64, bool),
}

impl Where<'_> {
    fn ids(self) -> (i64, i64) {
        match self {
            Where::Thread(p, t) | Where::Process(p, t, ..) | Where::Async(p, t, ..) => (p, t),
        }
    }
}

/// TrackEvent's field numbers (`perfetto/trace/track_event/track_event.proto`); Chrome's
/// typed fields are in [`typed`].
mod field {
    pub(super) const TIMESTAMP_DELTA_US: u32 = 1;
    pub(super) const CATEGORY_IIDS: u32 = 3;
    pub(super) const DEBUG_ANNOTATIONS: u32 = 4;
    pub(super) const TASK_EXECUTION: u32 = 5;
    pub(super) const LEGACY_EVENT: u32 = 6;
    pub(super) const TYPE: u32 = 9;
    pub(super) const NAME_IID: u32 = 10;
    pub(super) const TRACK_UUID: u32 = 11;
    pub(super) const EXTRA_COUNTER_VALUES: u32 = 12;
    pub(super) const TIMESTAMP_ABSOLUTE_US: u32 = 16;
    pub(super) const CATEGORIES: u32 = 22;
    pub(super) const NAME: u32 = 23;
    pub(super) const COUNTER_VALUE: u32 = 30;
    pub(super) const EXTRA_COUNTER_TRACK_UUIDS: u32 = 31;
    pub(super) const SOURCE_LOCATION: u32 = 33;
    pub(super) const SOURCE_LOCATION_IID: u32 = 34;
    /// Varints, before `FLOW_IDS` (fixed64).
    pub(super) const FLOW_IDS_OLD: u32 = 36;
    pub(super) const TERMINATING_FLOW_IDS_OLD: u32 = 42;
    pub(super) const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub(super) const EXTRA_DOUBLE_COUNTER_TRACK_UUIDS: u32 = 45;
    pub(super) const EXTRA_DOUBLE_COUNTER_VALUES: u32 = 46;
    pub(super) const FLOW_IDS: u32 = 47;
    pub(super) const TERMINATING_FLOW_IDS: u32 = 48;
    /// `TaskExecution.posted_from_iid`.
    pub(super) const POSTED_FROM_IID: u32 = 1;
}

/// `TrackEvent.Type`.
mod ty {
    pub(super) const UNSPECIFIED: u64 = 0;
    pub(super) const SLICE_BEGIN: u64 = 1;
    pub(super) const SLICE_END: u64 = 2;
    pub(super) const INSTANT: u64 = 3;
    pub(super) const COUNTER: u64 = 4;
}

use field::*;

/// A field whose value is not of the type its number needs (a packed list cut short
/// included): warned as such.
struct WrongType;

impl From<WireErrorKind> for WrongType {
    fn from(_: WireErrorKind) -> WrongType {
        WrongType
    }
}

type FieldResult = Result<(), WrongType>;

impl<'a> Te<'a> {
    /// The event's track: its own, else its sequence's default (Chrome writes global
    /// legacy instants with track 0: they stay on their sequence's track).
    #[inline]
    fn uuid(&self, seq: &Seq<'_>) -> Option<u64> {
        self.track.filter(|&u| u != 0).or(seq.track_uuid)
    }

    /// Reads a TrackEvent's fields (`b`, at byte `at` of the input), by group: names,
    /// placement (time, type, track), counter values, flows and what becomes args.
    #[inline]
    fn read(&mut self, b: &'a [u8], at: u64, seq: &Seq<'a>, d: &mut Diagnostics) {
        self.clear();
        let mut r = Reader::new(b, at);
        while let Some(field) = r.next_field() {
            let field = match field {
                Ok(x) => x,
                Err(e) => return malformed(d, e, "a TrackEvent"),
            };
            let read = match field.num {
                CATEGORY_IIDS | CATEGORIES | NAME_IID | NAME => self.name_field(field, seq, d),
                TIMESTAMP_DELTA_US | TIMESTAMP_ABSOLUTE_US | TYPE | TRACK_UUID => {
                    self.place_field(field)
                }
                COUNTER_VALUE
                | DOUBLE_COUNTER_VALUE
                | EXTRA_COUNTER_TRACK_UUIDS
                | EXTRA_COUNTER_VALUES
                | EXTRA_DOUBLE_COUNTER_TRACK_UUIDS
                | EXTRA_DOUBLE_COUNTER_VALUES => self.counter_field(field),
                FLOW_IDS_OLD | FLOW_IDS | TERMINATING_FLOW_IDS_OLD | TERMINATING_FLOW_IDS => {
                    self.flow_field(field)
                }
                _ => self.arg_field(field, &r),
            };
            if read.is_err() {
                annot::wrong_type(d, field.offset);
            }
        }
    }

    /// Categories and the name, interned or inline.
    #[inline]
    fn name_field(&mut self, field: Field<'a>, seq: &Seq<'a>, d: &mut Diagnostics) -> FieldResult {
        match (field.num, field.value) {
            (CATEGORY_IIDS, v) => Ok(repeated(v, false, |i| match seq.cats.get(&i) {
                Some(c) => self.push_cat(c),
                None => annot::undefined(d, field.offset, "category"),
            })?),
            (CATEGORIES, Value::Bytes(s)) => {
                self.push_cat(&(text(s, field.offset, d), 0));
                Ok(())
            }
            (NAME_IID, v) => {
                match v.uint().and_then(|i| seq.names.get(&i)) {
                    Some(n) => self.set_name(n),
                    None => annot::undefined(d, field.offset, "event name"),
                }
                Ok(())
            }
            (NAME, Value::Bytes(s)) => {
                self.set_name(&(text(s, field.offset, d), 0));
                Ok(())
            }
            _ => Err(WrongType),
        }
    }

    /// Time, type and track.
    #[inline]
    fn place_field(&mut self, field: Field<'a>) -> FieldResult {
        let v = field.value;
        match field.num {
            TIMESTAMP_DELTA_US => self.delta_us = v.int(),
            TIMESTAMP_ABSOLUTE_US => self.abs_us = v.int(),
            TYPE => self.ty = v.uint().unwrap_or(ty::UNSPECIFIED),
            _ => self.track = v.uint(),
        }
        Ok(())
    }

    /// The counter value, and extra counter values with their tracks.
    #[inline]
    fn counter_field(&mut self, field: Field<'a>) -> FieldResult {
        let v = field.value;
        match field.num {
            COUNTER_VALUE => self.counter = v.int().map(Num::Int),
            DOUBLE_COUNTER_VALUE => self.counter = v.double().map(Num::Double),
            EXTRA_COUNTER_TRACK_UUIDS => repeated(v, false, |x| self.extra_tracks.push(x))?,
            EXTRA_COUNTER_VALUES => repeated(v, false, |x| self.extra_values.push(x as i64))?,
            EXTRA_DOUBLE_COUNTER_TRACK_UUIDS => {
                repeated(v, false, |x| self.extra_double_tracks.push(x))?
            }
            _ => {
                let values = &mut self.extra_double_values;
                repeated(v, true, |x| values.push(f64::from_bits(x)))?
            }
        }
        Ok(())
    }

    /// Flow ids, outgoing and terminating (varints in the old fields, fixed64 in the new).
    #[inline]
    fn flow_field(&mut self, field: Field<'a>) -> FieldResult {
        let v = field.value;
        Ok(match field.num {
            FLOW_IDS_OLD => repeated(v, false, |x| self.flow_out.push(x)),
            FLOW_IDS => repeated(v, true, |x| self.flow_out.push(x)),
            TERMINATING_FLOW_IDS_OLD => repeated(v, false, |x| self.flow_in.push(x)),
            _ => repeated(v, true, |x| self.flow_in.push(x)),
        }?)
    }

    /// What becomes args: debug annotations, the legacy event, source locations, the
    /// task's, Chrome's typed fields. Other fields are not modelled.
    #[inline]
    fn arg_field(&mut self, field: Field<'a>, r: &Reader<'a>) -> FieldResult {
        match (field.num, field.value) {
            (DEBUG_ANNOTATIONS, Value::Bytes(a)) => self.annots.push((a, r.offset_of(a))),
            (LEGACY_EVENT, Value::Bytes(l)) => self.legacy = Some((l, r.offset_of(l))),
            (SOURCE_LOCATION_IID, v) => {
                self.location_iid = v.uint().map(|i| (i, field.offset));
            }
            (SOURCE_LOCATION, Value::Bytes(l)) => self.location = Some(l),
            (TASK_EXECUTION, Value::Bytes(task)) => self.task(task, r.offset_of(task)),
            (DEBUG_ANNOTATIONS | LEGACY_EVENT | SOURCE_LOCATION, _) => return Err(WrongType),
            (n, Value::Bytes(m)) if typed::track_event_field(n).is_some() => {
                self.typed.push((n, m, r.offset_of(m)));
            }
            _ => {}
        }
        Ok(())
    }
}
impl<'a> Te<'a> {
    /// `TaskExecution` `task` (at byte `at`): where the task was posted from.
    #[inline]
    pub(super) fn task(&mut self, task: &'a [u8], at: u64) {
        for f in Reader::new(task, at).map_while(Result::ok) {
            if f.num == POSTED_FROM_IID {
                self.task_iid = f.value.uint().map(|i| (i, f.offset));
            }
        }
    }
}

impl<'a> Decoder<'a> {
    /// The packet's TrackEvent (`pk.te`, its packet at byte `at`): the events it becomes.
    pub(super) fn track_event<S: EventSink>(
        &mut self,
        pk: &Packet<'a>,
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        let Decoder {
            f,
            uses,
            seqs,
            unknown,
            stacks,
            pending,
            events,
            te,
            args,
            ..
        } = self;
        let Some((b, te_at)) = pk.te else { return };
        let seq = &mut seqs[pk.slot];
        if !te.read_fast(b, te_at, seq) {
            te.read(b, te_at, seq, d);
        }
        let ts = time(f, seq, pk, te, at, d, uses);
        let (name, cat) = name_and_cat(te);
        let (uuid, track, wh) = match (seq.thread_track, uses.is_none(), te.ty) {
            // The sequence's last thread track again, looked up once (not for a counter,
            // which needs its track; nor in a stream, which records the tracks used).
            (Some((u, pid, tid)), true, t) if t != ty::COUNTER && te.uuid(seq) == Some(u) => {
                (Some(u), None, Where::Thread(pid, tid))
            }
            _ => {
                let (uuid, track) = track_of(f, unknown, uses, te, seq, at, d);
                if track.is_some_and(|t| t.orphan) {
                    return d.warn(WarningKind::ProtoUnknownTrack, at, || {
                        format!("an event on track {}, below a parent track no TrackDescriptor defines; skipped, as trace_processor skips it", uuid.unwrap_or(0))
                    });
                }
                let wh = place(track, uuid, te, seq, at, d);
                if let (Some(u), Some(_), Where::Thread(pid, tid)) = (uuid, track, wh) {
                    seq.thread_track = Some((u, pid, tid));
                }
                (uuid, track, wh)
            }
        };
        write_args(args, te, seq, at, d);
        if let Some((pid, tid)) = writer(f, seq, uses, pk.seq, uuid, track, wh) {
            super::events::met(sink, pid, tid, ts, at, false);
            passthrough(args, te.ty, pid, tid);
        }
        *events += named::active_processes(&te.typed, ts, te_at, sink);
        if let Some(slice) = thread_slice(wh, te, ts, &name, &cat, args, at) {
            *events += 1;
            sink.thread_slice(&slice);
            if te.has_extras() {
                let mut ev = slice.to_raw();
                let out = &mut Out { events, sink };
                extra_counters(out, &mut ev, f, uses, te, seq, d);
            }
            return;
        }
        let ev_args = (!args.is_empty()).then_some(Args::Json(Cow::Borrowed(args.as_str())));
        let (pid, tid) = wh.ids();
        let mut buf = [0u8; 20];
        let mut ev = RawEvent {
            ph: Phase::INSTANT,
            name: name.clone(),
            cat: cat.clone(),
            ts,
            pid: RawId::Num(pid),
            tid: RawId::Num(tid),
            args: ev_args.unwrap_or(Args::None),
            offset: at,
            ..RawEvent::default()
        };
        let out = &mut Out { events, sink };
        match (te.ty, te.legacy) {
            (ty::SLICE_BEGIN, _) => {
                let open = match uses {
                    Some(_) => (owned(name), owned(cat), ts),
                    None => (name, cat, ts),
                };
                slice_begin(out, (&mut ev, &mut buf), wh, te, stacks, open);
            }
            (ty::SLICE_END, _) => {
                let end_args = &args[..];
                slice_end(out, &mut ev, wh, te, stacks, pending, end_args);
            }
            (ty::INSTANT, _) => instant(out, &mut ev, wh, te),
            (ty::COUNTER, _) => {
                let value = te.counter.unwrap_or(Num::Int(0));
                match (track, uuid) {
                    (Some(t), Some(u)) => {
                        let (events, sink) = (&mut *out.events, &mut *out.sink);
                        counter(events, sink, &ev, t, u, value, &mut seq.sums)
                    }
                    _ => d.warn(WarningKind::ProtoNoTrack, at, || {
                        "a counter value with no track; skipped".into()
                    }),
                }
            }
            (ty::UNSPECIFIED, Some((l, l_at))) => {
                let global = te.track == Some(0);
                legacy(out.events, out.sink, &mut ev, l, l_at, seq, te, global, d);
            }
            // Extra counter values may ride on an event of any type.
            (ty, _) if ty == ty::UNSPECIFIED && te.has_extras() => {}
            (ty, _) => d.warn(
                WarningKind::ProtoUnmodelled("proto_unmodelled_event_type"),
                at,
                || format!("a TrackEvent of type {ty}, which is not modelled; skipped"),
            ),
        }
        if te.has_extras() {
            extra_counters(out, &mut ev, f, uses, te, seq, d);
        }
    }
}

/// The event's name, and its categories joined by commas (as trace_processor joins them).
#[inline]
fn name_and_cat<'a>(te: &Te<'a>) -> (Cow<'a, str>, Cow<'a, str>) {
    let name = te.name.clone().unwrap_or(Cow::Borrowed(""));
    let cat = match te.cats.len() {
        0 => Cow::Borrowed(""),
        1 => te.cats[0].clone(),
        _ => Cow::Owned(te.cats.join(",")),
    };
    (name, cat)
}

/// The event as a [`ThreadSlice`], when it is one: a slice's begin or end on a thread, with
/// no flow (the usual TrackEvent, handed over without a [`RawEvent`]; its extra counter
/// values, Chrome's thread times, follow it).
#[inline]
fn thread_slice<'e>(
    wh: Where<'_>,
    te: &Te<'_>,
    ts: i64,
    name: &'e str,
    cat: &'e str,
    args: &'e str,
    at: u64,
) -> Option<ThreadSlice<'e>> {
    let Where::Thread(pid, tid) = wh else {
        return None;
    };
    let ph = match te.ty {
        ty::SLICE_BEGIN => Phase::BEGIN,
        ty::SLICE_END => Phase::END,
        _ => return None,
    };
    let plain = te.flow_out.is_empty() && te.flow_in.is_empty();
    plain.then_some(ThreadSlice {
        ph,
        pid,
        tid,
        ts,
        name,
        cat,
        args,
        offset: at,
        name_key: if te.name.is_some() { te.name_key } else { 0 },
        // One category is the string interned; several are joined into a new one.
        cat_key: if te.cats.len() == 1 { te.cat_key } else { 0 },
    })
}

/// Where a TrackEvent's events go: the sink, and the count of events given to it.
pub(super) struct Out<'s, S> {
    pub(super) events: &'s mut u64,
    pub(super) sink: &'s mut S,
}

/// The event's track: its own, else the sequence's default (Chrome writes global legacy
/// instants with track 0: they stay on their sequence's thread). A track no descriptor
/// defines is warned about once and taken as a global track.
#[inline]
fn track_of<'s, 'a>(
    f: &'s Found<'a>,
    unknown: &'s mut IdMap<u64, Track<'a>>,
    uses: &mut Option<Box<Uses>>,
    te: &Te<'a>,
    seq: &Seq<'a>,
    at: u64,
    d: &mut Diagnostics,
) -> (Option<u64>, Option<&'s Track<'a>>) {
    let uuid = te.uuid(seq);
    if let (Some(w), Some(u)) = (uses.as_mut(), uuid) {
        w.tracks.insert(u, ());
    }
    let Some(u) = uuid else {
        return (None, None);
    };
    // One lookup for the usual track, which a descriptor defines.
    if let Some(t) = f.tracks.get(&u) {
        return (uuid, Some(t));
    }
    let t = unknown.entry(u).or_insert_with(|| {
        d.warn(WarningKind::ProtoUnknownTrack, at, || {
            format!(
                "an event on track {u}, which no TrackDescriptor defines; taken as a global track"
            )
        });
        Track::new(u)
    });
    (uuid, Some(&*t))
}

/// Where the event's track puts it: with no track, on its sequence's thread, else on
/// thread 0 of process 0 (warned, unless it is a counter value, warned later).
#[inline]
fn place<'t>(
    track: Option<&'t Track<'_>>,
    uuid: Option<u64>,
    te: &Te<'_>,
    seq: &Seq<'_>,
    at: u64,
    d: &mut Diagnostics,
) -> Where<'t> {
    match (track, seq.thread) {
        (Some(t), _) => where_of(t, uuid.unwrap_or(0), seq.thread),
        (None, Some((p, t))) => Where::Thread(p, t),
        (None, None) => {
            if te.ty != ty::COUNTER {
                d.warn(WarningKind::ProtoNoTrack, at, || {
                    "an event with no track, on a sequence with no default track or thread; put on thread 0 of process 0".into()
                });
            }
            Where::Thread(0, 0)
        }
    }
}

/// The event's args into `args` (empty if none): debug annotations under `debug`, the
/// source location under `source` (interned) or `source_location` (inline), the task's
/// under `task`, the typed fields under their names, as trace_processor keys them. A
/// legacy counter (`C`) keeps only its annotations, flat.
#[inline]
fn write_args(args: &mut String, te: &Te<'_>, seq: &Seq<'_>, at: u64, d: &mut Diagnostics) {
    args.clear();
    if te.no_args() {
        return;
    }
    let flat = te.legacy.is_some() && legacy_phase(te.legacy) == Some(b'C');
    // The source location (and whether interned), and where Chrome's task was posted
    // from (as trace_processor names it: `task.posted_from.file_name`, ...).
    let (location, posted_from) = match (flat, te.location_iid) {
        (true, _) => (None, None),
        (false, Some(_)) => (
            location(seq, te.location_iid, "source location", d).map(Loc::Interned),
            location(seq, te.task_iid, "task source location", d),
        ),
        (false, None) => (
            te.location.map(Loc::Inline),
            location(seq, te.task_iid, "task source location", d),
        ),
    };
    let typed = if flat { &[][..] } else { &te.typed[..] };
    // A legacy mark (`R`, `navigationStart`) keeps its phase as an arg, as
    // trace_processor keeps it for its JSON exporter.
    let mark = legacy_phase(te.legacy) == Some(b'R');
    // trace_processor also keeps an interned location's iid (`source_location_iid`, a
    // `uint`), defined or not: it reflects that TrackEvent field into args too.
    let iid = te.location_iid.filter(|_| !flat).map(|(i, _)| i);
    let any = !te.annots.is_empty() || location.is_some() || posted_from.is_some();
    if !any && iid.is_none() && typed.is_empty() && !mark {
        return;
    }
    args.push('{');
    if !te.annots.is_empty() {
        let ann = Interned {
            names: &seq.ann_names,
            strings: &seq.ann_strings,
        };
        if let Err(e) = annot::write_debug(args, &te.annots, &ann, !flat, d) {
            malformed(d, e, "a debug annotation");
        }
    }
    match location {
        Some(Loc::Interned(l)) => {
            comma(args);
            annot::write_interned_location(args, "source", l, at, d);
        }
        Some(Loc::Inline(l)) => {
            comma(args);
            annot::write_location(args, "source_location", l, false, at, d);
        }
        None => {}
    }
    if let Some(i) = iid {
        comma(args);
        args.push_str("\"source_location_iid\":");
        crate::tagged::write_uint(args, i);
    }
    if let Some(l) = posted_from {
        comma(args);
        args.push_str("\"task\":{");
        annot::write_interned_location(args, "posted_from", l, at, d);
        args.push('}');
    }
    for &(num, m, m_at) in typed {
        let (name, msg) = typed::track_event_field(num).expect("a typed field");
        comma(args);
        if let Err(e) = typed::write_field(args, name, msg, m, m_at, &seq.unsymbolized, d) {
            malformed(d, e, "a typed TrackEvent field");
        }
    }
    if mark {
        comma(args);
        args.push_str("\"legacy_event\":{\"phase\":\"R\"}");
    }
    args.push('}');
}

/// A comma before an object's member, unless it is the first.
#[inline]
fn comma(args: &mut String) {
    if args.len() > 1 {
        args.push(',');
    }
}

/// The thread that wrote an event on a process's track (its own process's, or one below
/// it) or a global track: its sequence's thread, which trace_processor keeps as the
/// event's `legacy_event.passthrough_utid`. None for an event on a thread's track. A
/// stream notes the sequence's thread as known now (`uses`).
#[inline]
fn writer(
    f: &Found<'_>,
    seq: &Seq<'_>,
    uses: &mut Option<Box<Uses>>,
    id: u32,
    uuid: Option<u64>,
    track: Option<&Track<'_>>,
    wh: Where<'_>,
) -> Option<(i64, i64)> {
    if matches!(wh, Where::Thread(..)) || uuid.is_none() {
        return None;
    }
    if let Some(u) = uses {
        let known = f.seq_threads.get(&id).copied();
        u.writers.entry(id).or_insert(known);
    }
    let (pid, tid) = f.seq_threads.get(&id).copied().or(seq.thread)?;
    let on = match track {
        Some(t) => t.tid.is_none() && (t.pid == pid || t.pid == 0 && t.process.is_none()),
        None => true,
    };
    on.then_some((pid, tid))
}

/// Adds `legacy_event.passthrough_utid`, thread `tid` of process `pid`, to the args
/// object `args` (empty for none) of a slice's begin or an instant (of type `ty`).
#[inline(never)]
fn passthrough(args: &mut String, ty: u64, pid: i64, tid: i64) {
    if !matches!(ty, ty::SLICE_BEGIN | ty::INSTANT) {
        return;
    }
    const LEGACY: &str = "\"legacy_event\":{";
    let mut v = String::from("\"passthrough_utid\":");
    crate::tagged::write_thread(&mut v, pid, tid);
    if let Some(i) = args.find(LEGACY) {
        v.push(',');
        args.insert_str(i + LEGACY.len(), &v);
    } else if args.is_empty() {
        *args = format!("{{{LEGACY}{v}}}}}");
    } else {
        args.pop();
        args.push(',');
        args.push_str(LEGACY);
        args.push_str(&v);
        args.push_str("}}");
    }
}

/// An event's source location: interned (its JSON kept), or inline (`SourceLocation`).
enum Loc<'s, 'a> {
    Interned(&'s Location<'a>),
    Inline(&'a [u8]),
}

/// An interned source location, warned if undefined.
#[inline]
fn location<'s, 'a>(
    seq: &'s Seq<'a>,
    iid: Option<(u64, u64)>,
    what: &str,
    d: &mut Diagnostics,
) -> Option<&'s Location<'a>> {
    let (iid, at) = iid?;
    let l = seq.locations.get(&iid);
    if l.is_none() {
        annot::undefined(d, at, what);
    }
    l
}

/// A slice's begin: on a thread, a `B` carrying its first flow point; else an async `b`,
/// opened on its track's stack for its end.
#[inline]
fn slice_begin<'a, 'e, S: EventSink>(
    out: &mut Out<'_, S>,
    (ev, buf): (&mut RawEvent<'e>, &'e mut [u8; 20]),
    wh: Where<'e>,
    te: &Te<'_>,
    stacks: &mut IdMap<u64, Vec<Open<'a>>>,
    open: Open<'a>,
) {
    match wh {
        Where::Thread(..) => {
            let first = te
                .flow_out
                .first()
                .map(|&i| (i, false))
                .or(te.flow_in.first().map(|&i| (i, true)));
            if let Some((id, terminating)) = first {
                let ph = flow_phase(terminating);
                ev.bind_id = Some(Cow::Borrowed(dec(buf, id)));
                ev.flow_in = ph != b's';
                ev.flow_out = ph != b'f';
            }
            ev.ph = Phase::BEGIN;
            emit(out.events, out.sink, ev);
            let skip = usize::from(first.is_some());
            flow_events(out.events, out.sink, ev, te, skip, true);
        }
        Where::Process(..) | Where::Async(..) => {
            let (id, u, local) = async_id(wh);
            ev.ph = Phase::ASYNC_BEGIN;
            set_async_id(ev, id, local);
            stacks.entry(u).or_default().push(open);
            emit(out.events, out.sink, ev);
            flow_events(out.events, out.sink, ev, te, 0, false);
        }
    }
}
/// A slice's end: on a thread, an `E`; else an async `e` closing the innermost slice open
/// on its track, or, with none open in this part that began by then, an end pending until
/// every part is decoded.
#[inline]
fn slice_end<'a: 'e, 'e, S: EventSink>(
    out: &mut Out<'_, S>,
    ev: &mut RawEvent<'e>,
    wh: Where<'e>,
    te: &Te<'_>,
    stacks: &mut IdMap<u64, Vec<Open<'a>>>,
    pending: &mut Pending,
    args: &str,
) {
    let (id, u, local) = match wh {
        Where::Thread(..) => {
            ev.ph = Phase::END;
            emit(out.events, out.sink, ev);
            return flow_events(out.events, out.sink, ev, te, 0, false);
        }
        Where::Process(..) | Where::Async(..) => async_id(wh),
    };
    // An end closes the innermost slice open only if that began by then: trace_processor
    // pairs a track's begins and ends in time order, and a track written from several
    // sequences (gpu::Scheduler's) can bring an end here before a begin later than it.
    // Such an end waits, as one with no slice open does, for `parts::resolve`, and so do
    // the track's later ends in this part.
    let waits = !pending.tracks.is_empty() && pending.tracks.contains_key(&u);
    let top = stacks
        .get_mut(&u)
        .filter(|s| !waits && s.last().is_some_and(|o| o.2 <= ev.ts));
    match top.and_then(Vec::pop) {
        Some((n, c, _)) => {
            ev.ph = Phase::ASYNC_END;
            set_async_id(ev, id, local);
            ev.name = n;
            ev.cat = c;
            emit(out.events, out.sink, ev);
            flow_events(out.events, out.sink, ev, te, 0, false);
        }
        None => {
            let (pid, tid) = wh.ids();
            pending.tracks.insert(u, ());
            pending.ends.push(PendingEnd {
                track: u,
                ts: ev.ts,
                pid,
                tid,
                local,
                offset: ev.offset,
                args: (!args.is_empty()).then(|| args.to_string()),
                flows: flow_points(te).collect(),
            })
        }
    }
}

/// An instant: on a thread, thread-scoped (global for Chrome's on track 0), on any other
/// track (a process's too) an async instant, nested in the slice open on that track as
/// trace_processor nests it.
#[inline]
fn instant<'e, S: EventSink>(
    out: &mut Out<'_, S>,
    ev: &mut RawEvent<'e>,
    wh: Where<'e>,
    te: &Te<'_>,
) {
    match wh {
        Where::Thread(..) => ev.scope = Some(if te.track == Some(0) { b'g' } else { b't' }),
        Where::Process(..) | Where::Async(..) => {
            ev.ph = Phase::ASYNC_INSTANT;
            let (id, _, local) = async_id(wh);
            set_async_id(ev, id, local);
        }
    }
    emit(out.events, out.sink, ev);
    flow_events(out.events, out.sink, ev, te, 0, false);
}

/// Extra counter values: on the event's own tracks, else the sequence's defaults; a
/// track no descriptor defines is skipped, warned. Not inlined: inlined, it cost the
/// decode of events without extra values more than the call costs those with them.
#[inline(never)]
pub(super) fn extra_counters<S: EventSink>(
    out: &mut Out<'_, S>,
    ev: &mut RawEvent<'_>,
    f: &Found<'_>,
    uses: &mut Option<Box<Uses>>,
    te: &Te<'_>,
    seq: &mut Seq<'_>,
    d: &mut Diagnostics,
) {
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
            if let Some(w) = uses.as_mut() {
                w.tracks.insert(u, ());
            }
            let Some(t) = f.tracks.get(&u) else {
                d.warn(WarningKind::ProtoUnknownTrack, ev.offset, || {
                    format!(
                        "a counter value on track {u}, which no TrackDescriptor defines; skipped"
                    )
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
            counter(out.events, out.sink, ev, t, u, v, &mut seq.sums);
        }
    }
}

/// Text that owns its bytes: a stream's open slices outlive the packets they came from.
fn owned<'x>(s: Cow<'_, str>) -> Cow<'x, str> {
    Cow::Owned(s.into_owned())
}

pub(super) fn where_of<'t>(
    t: &'t Track<'_>,
    uuid: u64,
    seq_thread: Option<(i64, i64)>,
) -> Where<'t> {
    let tid = t.tid.unwrap_or(match seq_thread {
        Some((p, th)) if p == t.pid => th,
        _ => t.pid,
    });
    match t.place {
        Place::Thread => Where::Thread(t.pid, tid),
        Place::Process => Where::Process(t.pid, tid, &t.id, uuid),
        Place::Other => Where::Async(t.pid, tid, &t.id, uuid, t.tid.is_none() && t.pid != 0),
    }
}

/// The async id and track of a process or other track, and whether the id is
/// process-local.
pub(super) fn async_id<'t>(wh: Where<'t>) -> (&'t str, u64, bool) {
    match wh {
        Where::Async(_, _, id, u, local) => (id, u, local),
        Where::Process(_, _, id, u) => (id, u, true),
        Where::Thread(..) => ("", 0, false),
    }
}

/// Sets an async event's id: `id2.local` for a process's track, `id` otherwise.
pub(super) fn set_async_id<'a>(ev: &mut RawEvent<'a>, id: &'a str, local: bool) {
    if local {
        ev.id = None;
        ev.id2 = Some(Id2::Local(Cow::Borrowed(id)));
    } else {
        ev.id = Some(Cow::Borrowed(id));
        ev.id2 = None;
    }
}
