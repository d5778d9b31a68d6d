//! trace_processor's flow rule: the arrows between slices (`flow`), bound and chained as
//! its flow tracker binds and chains them.
//!
//! A JSON `s` or `t` leaves the slice on top of its thread's stack (see [`topmost`]); an
//! `f` arrives there too (`bp: "e"`) or at the next slice to begin, an instant included,
//! and, unlike chrome://tracing (and the viewer's arrows, the model's own rule in
//! `crate::flows`), does not end the flow: every later `f` of the id leaves from the same
//! `s` (or the last `t`); a later `s` of the id is ignored. Flow v2 (`bind_id`) and
//! protobuf flows chain each arrow from the point before, an `f` (a terminating flow id)
//! ending the flow. Where a point's span is one trace_processor drops, the point binds to
//! the nearest enclosing slice it keeps.

use std::collections::HashMap;

use super::ids::SliceIds;
use super::placed::{Placed, Src};
use super::View;
use crate::span::{flags, SpanRef};
use crate::strings::StrId;
use crate::trace::Trace;

/// One row of `flow`: an arrow between two slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRow {
    /// The slice id it leaves.
    pub slice_out: u64,
    /// The slice id it arrives at.
    pub slice_in: u64,
    /// Index into [`Trace::flows`].
    pub flow: u32,
}

/// Every flow's arrows, in the order of the flows.
pub(super) fn bind(t: &Trace, view: &View) -> Vec<FlowRow> {
    let (ids, placed) = (&view.ids, &view.placed);
    let proto = t.decode_summary().format.name() == "perfetto";
    // A protobuf event on an async track gives its flow points its thread, time and name:
    // they bind to the async slice that thread began then, with that name (not a thread
    // instant beginning with it).
    let mut async_at: HashMap<(u32, i64, StrId), u64> = HashMap::new();
    if proto {
        for (k, row) in placed.rows.iter().enumerate() {
            if let Src::Async(a) = row.src {
                let s = &t.async_slices()[a as usize];
                async_at.insert((s.thread, s.start, s.name), placed.first + k as u64);
            }
        }
    }
    let events = instant_events(t, proto);
    let mut links = Vec::new();
    let mut first = None;
    for (fi, f) in t.flows().iter().enumerate() {
        let (fi, points) = (fi as u32, &f.points);
        let bound: Vec<Option<u64>> = points
            .iter()
            .map(|p| match async_at.get(&(p.thread, p.ts, p.span_name)) {
                Some(&a) => Some(a),
                None => {
                    let key = (p.thread, p.ts, p.span_name);
                    let nth = events
                        .get(&key)
                        .and_then(|v| v.binary_search(&p.offset).ok());
                    bind_point(t, ids, placed, p, proto, nth.unwrap_or(0))
                }
            })
            .collect();
        // Flow v2, and protobuf flows (whose terminating ids end them): each arrow from
        // the point before.
        if proto || points.iter().any(|p| p.on_slice) {
            chain_links(points, &bound, fi, &mut links);
            continue;
        }
        v1_links(t, ids, placed, points, &bound, fi, &mut first, &mut links);
    }
    let row = |(slice_out, slice_in, flow)| FlowRow {
        slice_out,
        slice_in,
        flow,
    };
    links.into_iter().map(row).collect()
}

/// A protobuf trace's instants that carry flows, by thread, time and name: their events'
/// offsets in file order. Instants of one name at one time stack in file order (Chrome's
/// `SequenceManager PostTask`s, each posting a task with its own flow), and the `k`-th
/// event's points bind to the `k`-th of them, as trace_processor binds each to its own.
fn instant_events(t: &Trace, proto: bool) -> HashMap<(u32, i64, StrId), Vec<u64>> {
    let mut out: HashMap<(u32, i64, StrId), Vec<u64>> = HashMap::new();
    if !proto {
        return out;
    }
    for p in t.flows().iter().flat_map(|f| &f.points) {
        if p.bind_enclosing && !p.on_slice {
            let key = (p.thread, p.ts, p.span_name);
            out.entry(key).or_default().push(p.offset);
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    out
}

/// Each arrow from the slice of the point before; an `f` ends the flow.
fn chain_links(
    points: &[crate::event_kinds::FlowPoint],
    bound: &[Option<u64>],
    fi: u32,
    links: &mut Vec<(u64, u64, u32)>,
) {
    let mut prev: Option<u64> = None;
    for (p, &r) in points.iter().zip(bound) {
        if p.phase != b's' {
            if let (Some(from), Some(to)) = (prev, r) {
                if from != to {
                    links.push((from, to, fi));
                }
            }
        }
        if p.phase != b'f' {
            prev = r.or(prev);
        } else {
            prev = None;
        }
    }
}

/// The start of slice `id`.
fn slice_ts(t: &Trace, ids: &SliceIds, placed: &Placed, id: u64) -> i64 {
    if let Some(r) = ids.span(id) {
        return ids.thread(t, r.thread).lanes[r.depth as usize].start[r.index as usize];
    }
    match placed.row(id).map(|r| r.src) {
        Some(Src::ThreadInstant(i) | Src::Instant(i)) => t.instants()[i as usize].ts,
        Some(Src::Async(a)) => t.async_slices()[a as usize].start,
        None => i64::MAX,
    }
}

/// A JSON (v1) flow's arrows, as trace_processor's flow tracker makes them, its points
/// taken in time order: the first `s` that finds a slice is the flow's origin (a later `s`
/// of the id is a duplicate, ignored: an `f` does not end the flow); a `t` arrives from the
/// origin and becomes it; an `f` with `bp: "e"` arrives from the origin; any other `f`
/// waits for the next slice to begin, and arrives there from the origin as of then, or,
/// where the flow has none yet, from the trace's first slice, which then becomes its origin
/// (trace_processor reads its map with `operator[]`). A `t` or an enclosing `f` that begins
/// before its origin is drawn the other way.
#[allow(clippy::too_many_arguments)]
fn v1_links(
    t: &Trace,
    ids: &SliceIds,
    placed: &Placed,
    points: &[crate::event_kinds::FlowPoint],
    bound: &[Option<u64>],
    fi: u32,
    first: &mut Option<Option<u64>>,
    links: &mut Vec<(u64, u64, u32)>,
) {
    // (when it acts, waits for a slice, point): a waiting `f` acts when its slice begins,
    // after the points of that time.
    let mut acts: Vec<(i64, bool, usize)> = Vec::with_capacity(points.len());
    for (k, (p, r)) in points.iter().zip(bound).enumerate() {
        let Some(r) = *r else { continue };
        match p.phase {
            b'f' if !p.bind_enclosing => acts.push((slice_ts(t, ids, placed, r), true, k)),
            _ => acts.push((p.ts, false, k)),
        }
    }
    acts.sort_by_key(|&(ts, waits, _)| (ts, waits));
    let mut origin: Option<u64> = None;
    for (_, waits, k) in acts {
        let (p, to) = (&points[k], bound[k].expect("bound"));
        let from = match (p.phase, origin) {
            (b's', None) => {
                origin = Some(to);
                continue;
            }
            (b's', Some(_)) => continue,
            _ if waits => {
                let o =
                    origin.or_else(|| *first.get_or_insert_with(|| first_slice(t, ids, placed)));
                origin = o;
                match o {
                    Some(o) => o,
                    None => continue,
                }
            }
            (_, None) => continue,
            (_, Some(o)) => o,
        };
        if p.phase == b't' {
            origin = Some(to);
        }
        if from == to {
            continue;
        }
        let (out, into) = if !waits && slice_ts(t, ids, placed, from) > slice_ts(t, ids, placed, to)
        {
            (to, from)
        } else {
            (from, to)
        };
        links.push((out, into, fi));
    }
}

/// trace_processor's slice 0: the trace's first slice in time (a thread's outermost span
/// before an instant or an async slice of the same time).
fn first_slice(t: &Trace, ids: &SliceIds, placed: &Placed) -> Option<u64> {
    let spans = (0..t.threads().len() as u32).filter_map(|thread| {
        let r = SpanRef {
            thread,
            depth: 0,
            index: 0,
        };
        let lane = t.threads()[thread as usize].lanes.first()?;
        let start = *lane.start.first()?;
        Some((start, 0u8, ids.of_model(r)?))
    });
    let rows = (0..placed.rows.len() as u64).map(|k| {
        let id = placed.first + k;
        (slice_ts(t, ids, placed, id), 1u8, id)
    });
    spans.chain(rows).min().map(|(_, _, id)| id)
}

/// The slice id a flow point binds to: the model's span, or a thread instant where
/// trace_processor would take it instead (a protobuf instant's point: the `nth` instant of
/// its name at its time, see [`instant_events`]).
fn bind_point(
    t: &Trace,
    ids: &SliceIds,
    placed: &Placed,
    p: &crate::event_kinds::FlowPoint,
    proto: bool,
    nth: usize,
) -> Option<u64> {
    let model = t.flow_point_span(p);
    // A span `slice` leaves out gives the point to the nearest ancestor it holds, the
    // slice trace_processor finds open there.
    let id = model.and_then(|r| {
        std::iter::once(r)
            .chain(t.ancestors(r))
            .find_map(|a| ids.of_model(a))
    });
    let span_start = model.map_or(i64::MAX, |r| t.span(r).start);
    if p.on_slice {
        return id;
    }
    if proto && p.on_end {
        if let Some(id) = closed_at(t, ids, ids.nest.main_of(p.thread), p.ts) {
            return Some(id);
        }
    }
    let instant_ts = |id: u64| match placed.row(id).map(|r| r.src) {
        Some(Src::ThreadInstant(i)) => t.instants()[i as usize].ts,
        _ => i64::MAX,
    };
    if proto && p.bind_enclosing {
        // A protobuf instant's flow: the instant itself, as trace_processor binds it, though
        // other instants begin with it.
        let at = placed.instants_in(t, p.thread, p.ts, p.ts.saturating_add(1));
        let named = |&id: &u64| instant(t, placed, id).is_some_and(|i| i.name == p.span_name);
        let mut named = at.filter(named);
        let first = named.next();
        if let Some(i) = if nth == 0 { first } else { named.nth(nth - 1) }.or(first) {
            return Some(i);
        }
    }
    if p.phase == b'f' && !p.bind_enclosing {
        let next = placed.instants_in(t, p.thread, p.ts, i64::MAX).next();
        return match next {
            Some(i) if instant_ts(i) < span_start => Some(i),
            _ => id,
        };
    }
    topmost(t, ids, placed, ids.nest.main_of(p.thread), p.ts)
}

/// The slice a thread's end at `ts` closed: the deepest `B`/`E` span of `thread` ending at
/// `ts` (the first end of that time; trace_processor binds an end's flows to the slice it
/// closes, Chrome's `Graphics.Pipeline` steps terminating their flows there).
fn closed_at(t: &Trace, ids: &SliceIds, thread: u32, ts: i64) -> Option<u64> {
    let th = ids.thread(t, thread);
    let mut out = None;
    for (d, lane) in th.lanes.iter().enumerate() {
        let last = lane.start.partition_point(|&s| s <= ts);
        // The span ending at `ts`, before any zero-length one starting there.
        let i = (last.saturating_sub(2)..last).rev().find(|&i| {
            let f = lane.flags[i];
            lane.end(i) == ts && f & flags::FROM_BEGIN_END != 0 && f & flags::UNFINISHED == 0
        });
        if let Some(i) = i {
            let r = SpanRef {
                thread,
                depth: d as u32,
                index: i as u32,
            };
            out = Some(ids.id(r));
        }
    }
    out
}

/// The thread instant slice `id` is, if it is one.
fn instant<'t>(t: &'t Trace, placed: &Placed, id: u64) -> Option<&'t crate::Instant> {
    match placed.row(id)?.src {
        Src::ThreadInstant(i) => t.instants().get(i as usize),
        _ => None,
    }
}

/// The slice on top of trace_processor's stack for `thread` at `ts`: the slice that began
/// last at or before `ts` (the deepest of those beginning together; a thread instant too),
/// unless a `B`/`E` span holding it has ended by then, whose `E` popped it: then that span's
/// parent. A complete event or an instant stays on the stack after its end, until the next
/// slice begins.
fn topmost(t: &Trace, ids: &SliceIds, placed: &Placed, thread: u32, ts: i64) -> Option<u64> {
    if thread as usize >= t.threads().len() {
        return None;
    }
    let th = ids.thread(t, thread);
    let mut span: Option<(i64, SpanRef)> = None;
    for (d, lane) in th.lanes.iter().enumerate() {
        let Some(i) = lane.start.partition_point(|&s| s <= ts).checked_sub(1) else {
            break;
        };
        if span.is_none_or(|(start, _)| lane.start[i] >= start) {
            let r = SpanRef {
                thread,
                depth: d as u32,
                index: i as u32,
            };
            span = Some((lane.start[i], r));
        }
    }
    let instant = placed
        .instants_in(t, thread, i64::MIN, ts.saturating_add(1))
        .last()
        .and_then(|id| match placed.row(id)?.src {
            Src::ThreadInstant(i) => Some((t.instants()[i as usize].ts, id)),
            _ => None,
        });
    // The top: an instant at or after the last span's start is inside it (or later).
    let (top, mut up) = match (span, instant) {
        (_, Some((its, id))) if span.is_none_or(|(start, _)| its >= start) => {
            let parent = placed.row(id).map_or(-1, |r| r.parent);
            (
                Some(id),
                u64::try_from(parent).ok().and_then(|p| ids.span(p)),
            )
        }
        (Some((_, r)), _) => (Some(ids.id(r)), Some(r)),
        _ => (None, None),
    };
    // Below an ended B/E span nothing is left: the outermost such span's parent is the top.
    let mut bound = top;
    while let Some(r) = up {
        let lane = &th.lanes[r.depth as usize];
        let i = r.index as usize;
        let parent = ids.nest.parent(t, r);
        let popped = lane.flags[i] & flags::FROM_BEGIN_END != 0
            && lane.flags[i] & flags::UNFINISHED == 0
            && lane.end(i) <= ts;
        if popped {
            bound = parent.map(|p| ids.id(p));
        }
        up = parent;
    }
    bound
}
