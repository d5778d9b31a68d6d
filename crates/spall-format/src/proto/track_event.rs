//! One `TrackEvent`: its fields, its track, and the events it becomes.

use std::borrow::Cow;

use super::annot::{self, Interned};
use super::base::{dec, emit, malformed, text, Num, Packet, PendingEnd};
use super::events::Decoder;
use super::kinds::{counter, flow_events, flow_phase, flow_points, legacy, legacy_phase};
use super::scan::{Place, Track};
use super::seq::time;
use super::typed;
use super::wire::{repeated, Reader, Value};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Id2, Phase, RawEvent, RawId};

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

impl<'a> Decoder<'a> {
    pub(super) fn track_event<S: EventSink>(
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
            uses,
            seqs,
            unknown,
            stacks,
            pending,
            events,
            te,
            args,
            cargs,
            ..
        } = self;
        let seq = &mut seqs[pk.slot];
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
                (34, v) => {
                    te.location_iid = v.uint().map(|i| (i, field.offset));
                    Ok(())
                }
                (33, Value::Bytes(l)) => {
                    te.location = Some(l);
                    Ok(())
                }
                (5, Value::Bytes(task)) => {
                    let at = r.offset_of(task);
                    for f in Reader::new(task, at).map_while(Result::ok) {
                        if f.num == 1 {
                            te.task_iid = f.value.uint().map(|i| (i, f.offset));
                        }
                    }
                    Ok(())
                }
                (22 | 23 | 4 | 6 | 33, _) => {
                    annot::wrong_type(d, field.offset);
                    Ok(())
                }
                (n, Value::Bytes(m)) if typed::track_event_field(n).is_some() => {
                    te.typed.push((n, m, r.offset_of(m)));
                    Ok(())
                }
                _ => Ok(()),
            };
            if rep.is_err() {
                annot::wrong_type(d, field.offset);
            }
        }
        let ts = time(f, seq, pk, te, at, d, uses);
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
        if let (Some(w), Some(u)) = (uses.as_mut(), uuid) {
            w.tracks.insert(u, ());
        }
        if let Some(u) = uuid.filter(|u| !f.tracks.contains_key(u)) {
            unknown.entry(u).or_insert_with(|| {
                d.warn(WarningKind::ProtoUnknownTrack, at, || {
                    format!("an event on track {u}, which no TrackDescriptor defines; taken as a global track")
                });
                Track::new(u)
            });
        }
        let track: Option<&Track<'a>> =
            uuid.and_then(|u| f.tracks.get(&u).or_else(|| unknown.get(&u)));
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

        // Arguments: debug annotations under `debug`, the source location under `source`
        // (interned) or `source_location` (inline), as trace_processor keys them.
        args.clear();
        let ann = Interned {
            names: &seq.ann_names,
            strings: &seq.ann_strings,
        };
        let flat = te.legacy.is_some() && legacy_phase(te.legacy) == Some(b'C');
        let location = match te.location_iid {
            _ if flat => None,
            Some((iid, at)) => match seq.locations.get(&iid) {
                Some(&l) => Some((l, true)),
                None => {
                    annot::undefined(d, at, "source location");
                    None
                }
            },
            None => te.location.map(|l| (l, false)),
        };
        // Chrome's task: where it was posted from, an interned location, as
        // trace_processor names it (`task.posted_from.file_name`, ...).
        let posted_from = match te.task_iid {
            _ if flat => None,
            Some((iid, at)) => match seq.locations.get(&iid) {
                Some(&l) => Some(l),
                None => {
                    annot::undefined(d, at, "task source location");
                    None
                }
            },
            None => None,
        };
        let typed = if flat { &[][..] } else { &te.typed[..] };
        // A legacy mark (`R`, `navigationStart`) keeps its phase as an arg, as
        // trace_processor keeps it for its JSON exporter.
        let mark = legacy_phase(te.legacy) == Some(b'R');
        if !te.annots.is_empty()
            || location.is_some()
            || posted_from.is_some()
            || !typed.is_empty()
            || mark
        {
            args.push('{');
            if !te.annots.is_empty() {
                if let Err(e) = annot::write_debug(args, &te.annots, &ann, !flat, d) {
                    malformed(d, e, "a debug annotation");
                }
            }
            if let Some((l, interned)) = location {
                if args.len() > 1 {
                    args.push(',');
                }
                let key = if interned {
                    "source"
                } else {
                    "source_location"
                };
                annot::write_location(args, key, l, interned, at, d);
            }
            if let Some(l) = posted_from {
                if args.len() > 1 {
                    args.push(',');
                }
                args.push_str("\"task\":{");
                annot::write_location(args, "posted_from", l, true, at, d);
                args.push('}');
            }
            for &(num, m, m_at) in typed {
                let (name, msg) = typed::track_event_field(num).expect("a typed field");
                if args.len() > 1 {
                    args.push(',');
                }
                if let Err(e) = typed::write_field(args, name, msg, m, m_at, &seq.unsymbolized, d) {
                    malformed(d, e, "a typed TrackEvent field");
                }
            }
            if mark {
                if args.len() > 1 {
                    args.push(',');
                }
                args.push_str("\"legacy_event\":{\"phase\":\"R\"}");
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
                        let ph = flow_phase(terminating);
                        ev.bind_id = Some(Cow::Borrowed(dec(&mut buf, id)));
                        ev.flow_in = ph != b's';
                        ev.flow_out = ph != b'f';
                    }
                    ev.ph = Phase::BEGIN;
                    emit(events, sink, &ev);
                    let skip = usize::from(first.is_some());
                    flow_events(events, sink, &ev, te, skip);
                }
                Where::Process(..) | Where::Async(..) => {
                    let (id, u, local) = async_id(wh);
                    ev.ph = Phase::ASYNC_BEGIN;
                    set_async_id(&mut ev, id, local);
                    let open = match uses {
                        Some(_) => (owned(name), owned(cat), ts),
                        None => (name, cat, ts),
                    };
                    stacks.entry(u).or_default().push(open);
                    emit(events, sink, &ev);
                    flow_events(events, sink, &ev, te, 0);
                }
            },
            (2, _) => match wh {
                Where::Thread(..) => {
                    ev.ph = Phase::END;
                    emit(events, sink, &ev);
                    flow_events(events, sink, &ev, te, 0);
                }
                Where::Process(..) | Where::Async(..) => {
                    let (id, u, local) = async_id(wh);
                    match stacks.get_mut(&u).and_then(Vec::pop) {
                        Some((n, c, _)) => {
                            ev.ph = Phase::ASYNC_END;
                            set_async_id(&mut ev, id, local);
                            ev.name = n;
                            ev.cat = c;
                            emit(events, sink, &ev);
                            flow_events(events, sink, &ev, te, 0);
                        }
                        None => pending.push(PendingEnd {
                            track: u,
                            ts,
                            pid,
                            tid,
                            local,
                            offset: at,
                            args: (!args.is_empty()).then(|| args.clone()),
                            flows: flow_points(te).collect(),
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
                        let (id, _, local) = async_id(wh);
                        set_async_id(&mut ev, id, local);
                    }
                }
                emit(events, sink, &ev);
                flow_events(events, sink, &ev, te, 0);
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
                legacy(events, sink, &mut ev, l, l_at, seq, te, global, d);
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
                if let Some(w) = uses.as_mut() {
                    w.tracks.insert(u, ());
                }
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
