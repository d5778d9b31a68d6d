//! The event kinds beyond slices and instants: flows, counters and `legacy_event`s.

use std::borrow::Cow;

use super::annot;
use super::base::{dec, emit, malformed, Num, Te};
use super::hash::IdMap;
use super::scan::Track;
use super::seq::Seq;
use super::wire::Reader;
use crate::diag::Diagnostics;
use crate::event::{CounterValue, EventSink, Id2, Phase, RawEvent, RawId, TrackCounter};

/// The phase of one point of a flow: `f` to terminate it, else `t`. Which point starts a
/// flow is not decided here but by time, where the model sorts each flow's points: the
/// first carries no arrow in, whatever its phase, and one after an `f` starts anew. So
/// points need no state shared between sequences, which are decoded apart.
pub(super) fn flow_phase(terminating: bool) -> u8 {
    if terminating {
        b'f'
    } else {
        b't'
    }
}

/// The event's flow points: (id, terminating), outgoing first.
pub(super) fn flow_points<'t>(te: &'t Te<'_>) -> impl Iterator<Item = (u64, bool)> + 't {
    (te.flow_out.iter().map(|&i| (i, false))).chain(te.flow_in.iter().map(|&i| (i, true)))
}

/// The event's flow points (after the first `skip`, carried on the slice itself) as flow
/// events bound to the enclosing slice, or, `on_slice`, to the slice `ev` begins (flow v2,
/// as trace_processor binds every flow of a slice to it, not to a child beginning with it).
pub(super) fn flow_events<S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &RawEvent<'_>,
    te: &Te<'_>,
    skip: usize,
    on_slice: bool,
) {
    // Most events have no flow: not even the iterator is built for them.
    if te.flow_out.len() + te.flow_in.len() > skip {
        flow_events_of(events, sink, ev, flow_points(te).skip(skip), on_slice);
    }
}

/// Flow events for `points`, bound to the slice `ev` encloses, or, `on_slice`, to the slice
/// `ev` begins.
pub(super) fn flow_events_of<S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &RawEvent<'_>,
    points: impl Iterator<Item = (u64, bool)>,
    on_slice: bool,
) {
    for (id, terminating) in points {
        let mut buf = [0u8; 20];
        let id = Some(Cow::Borrowed(dec(&mut buf, id)));
        let (id, bind_id) = if on_slice { (None, id) } else { (id, None) };
        let f = RawEvent {
            ph: Phase(flow_phase(terminating)),
            name: ev.name.clone(),
            ts: ev.ts,
            pid: ev.pid.clone(),
            tid: ev.tid.clone(),
            id,
            bind_id,
            flow_in: on_slice,
            flow_out: on_slice && !terminating,
            bp: Some(b'e'),
            closes_slice: ev.ph == Phase::END,
            offset: ev.offset,
            ..RawEvent::default()
        };
        emit(events, sink, &f);
    }
}

/// A counter value on track `t`, handed to the sink as a [`TrackCounter`] named after the
/// track (times the track's unit multiplier; summed, for an incremental track).
pub(super) fn counter<S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &RawEvent<'_>,
    t: &Track<'_>,
    uuid: u64,
    v: Num,
    sums: &mut IdMap<u64, Num>,
) {
    let info = t.counter;
    let mult = info.map_or(1, |c| c.multiplier);
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
    // Resolved once per track; a track not yet resolved (none in a whole decode) gets it
    // here.
    let name = match (&t.counter_name, t.name) {
        (Some(n), _) => Cow::Borrowed(&**n),
        (None, Some(n)) => String::from_utf8_lossy(n),
        (None, None) => Cow::Owned(format!("counter {uuid}")),
    };
    // The protobuf reader's ids are numbers.
    let id = |r: &RawId<'_>| match r {
        RawId::Num(n) => *n,
        RawId::Str(_) => 0,
    };
    *events += 1;
    sink.track_counter(&TrackCounter {
        name: &name,
        cat: &ev.cat,
        ts: ev.ts,
        pid: id(&ev.pid),
        tid: id(&ev.tid),
        // A thread's counter (Chrome's thread_time) is its own series, not its process's.
        thread_scoped: t.tid.is_some(),
        value: match v {
            Num::Int(i) => CounterValue::Int(i),
            Num::Double(x) => CounterValue::Double(x),
        },
        offset: ev.offset,
    });
}

pub(super) fn legacy_phase(l: Option<(&[u8], u64)>) -> Option<u8> {
    let (b, _) = l?;
    Reader::new(b, 0)
        .map_while(Result::ok)
        .find(|f| f.num == 2)
        .and_then(|f| f.value.uint())
        .map(|p| p as u8)
}

/// A `legacy_event`: Chrome's JSON phase and fields, carried inside a TrackEvent.
#[allow(clippy::too_many_arguments)]
pub(super) fn legacy<'a, S: EventSink>(
    events: &mut u64,
    sink: &mut S,
    ev: &mut RawEvent<'a>,
    l: &'a [u8],
    l_at: u64,
    seq: &Seq<'a>,
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
                Some((n, _)) => ev.name = n.clone(),
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
    // Chrome's legacy instants on track 0 are global; its marks (`navigationStart`) stay
    // on their sequence's thread, as trace_processor keeps them.
    if ev.scope.is_none() && global && matches!(ev.ph, Phase::INSTANT | Phase::INSTANT_LEGACY) {
        ev.scope = Some(b'g');
    }
    if let Some(b) = bind {
        ev.bind_id = Some(Cow::Owned(format!("0x{b:x}")));
        ev.flow_in = direction & 1 != 0;
        ev.flow_out = direction & 2 != 0;
    }
    emit(events, sink, ev);
    flow_events(events, sink, ev, te, 0, false);
}
