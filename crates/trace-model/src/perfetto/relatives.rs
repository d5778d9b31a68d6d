//! A slice's ancestors and descendants by id (`ancestor_slice`, `descendant_slice`): a
//! span's along the view's lanes, an instant's up through the span it is nested in, an
//! async slice's down its operation (its descendants are the ids right after it).

use std::ops::Range;

use super::placed::{held, Src};
use super::View;
use crate::span::SpanRef;
use crate::trace::Trace;

/// The ids of slice `id`'s ancestors, outermost first, one range each.
pub(super) fn ancestors(v: &View, t: &Trace, id: u64) -> Vec<Range<u64>> {
    let ids = &v.ids;
    if let Some(r) = ids.span(id) {
        let mut out: Vec<Range<u64>> = (ids.nest.ancestors(t, r).map(|p| ids.id(p)))
            .map(|id| id..id + 1)
            .collect();
        out.reverse();
        return out;
    }
    let Some(row) = v.placed.row(id) else {
        return Vec::new();
    };
    // Up the parents' chain; a thread instant's reaches into the spans.
    let mut out = Vec::new();
    let mut p = row.parent;
    while p >= 0 {
        let up = p as u64;
        out.push(up..up + 1);
        if let Some(span) = ids.span(up) {
            let up = ids.nest.ancestors(t, span).map(|a| ids.id(a));
            out.extend(up.map(|a| a..a + 1));
            break;
        }
        p = v.placed.row(up).map_or(-1, |r| r.parent);
    }
    out.reverse();
    out
}

/// The ids of slice `id`'s descendants, as ascending ranges: a span's lane by lane below
/// it, then the thread instants inside it; an async slice's or a thread instant's, the ids
/// right after it.
pub(super) fn descendants(v: &View, t: &Trace, id: u64) -> Vec<Range<u64>> {
    let (ids, placed) = (&v.ids, &v.placed);
    let Some(r) = ids.span(id) else {
        return match placed.row(id) {
            Some(row) if !matches!(row.src, Src::Instant(_)) && id + 1 < row.end => {
                std::iter::once(id + 1..row.end).collect()
            }
            _ => Vec::new(),
        };
    };
    // Descendants are, lane by lane below, the spans starting inside this one.
    let th = ids.thread(t, r.thread);
    let lane = &th.lanes[r.depth as usize];
    let (s, e) = (lane.start[r.index as usize], lane.end(r.index as usize));
    let mut out = Vec::new();
    for d in r.depth as usize + 1..th.lanes.len() {
        let down = &th.lanes[d];
        let lo = down.start.partition_point(|&x| x < s);
        let hi = down.start.partition_point(|&x| x < e);
        if lo < hi {
            let first = ids.id(SpanRef {
                thread: r.thread,
                depth: d as u32,
                index: lo as u32,
            });
            out.push(first..first + (hi - lo) as u64);
        }
    }
    // The instants at its end too, if trace_processor had it open then.
    let e_in = match held(th, r.depth as usize, e) {
        true => e.saturating_add(1),
        false => e,
    };
    let instants = placed.instants_in(t, r.thread, s, e_in);
    if !instants.is_empty() {
        out.push(instants);
    }
    out
}
