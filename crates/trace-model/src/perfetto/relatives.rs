//! A slice's ancestors and descendants by id (`ancestor_slice`, `descendant_slice`): a
//! span's along the view's lanes, an instant's up through the span it is nested in, an
//! async slice's down its operation (its descendants are the ids right after it).

use std::ops::Range;

use super::placed::{held, Src};
use super::View;
use crate::span::{SpanRef, Thread};
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
    // The instants at its end too, if trace_processor had it open then: all of them, or
    // (a protobuf trace) those written before its end.
    let mut instants = placed.instants_in(t, r.thread, s, e);
    if held(th, r.depth as usize, e) {
        instants = placed.instants_in(t, r.thread, s, e.saturating_add(1));
    } else if t.decode_summary().format.name() == "perfetto" && e > s {
        instants.end += placed.held_at(t, r.thread, e, end_rank(th, r, e));
    }
    if t.decode_summary().format.name() == "perfetto" && e > s {
        let before = placed.before_at(t, r.thread, s, start_rank(th, r, s));
        instants.start = (instants.start + before).min(instants.end);
    }
    if !instants.is_empty() {
        out.push(instants);
    }
    out
}

/// Span `r`'s place among the spans of its thread ending at `e` (its end) that hold it:
/// 1 + its ancestors that end there too (none ended with its parent).
fn end_rank(th: &Thread, r: SpanRef, e: i64) -> u8 {
    let ends_at = |d: usize| {
        let lane = &th.lanes[d];
        let i = lane.start.partition_point(|&x| x <= e).checked_sub(1);
        i.is_some_and(|i| lane.end(i) == e)
    };
    let above = (0..r.depth as usize).filter(|&d| ends_at(d)).count();
    u8::try_from(above + 1).unwrap_or(u8::MAX)
}

/// Span `r`'s place among the spans of its thread starting at `s` (its start) that do not
/// hold what came before its `B`: 1 + the spans inside it that start there too.
fn start_rank(th: &Thread, r: SpanRef, s: i64) -> u8 {
    let starts_at = |d: usize| {
        let lane = &th.lanes[d];
        let i = lane.start.partition_point(|&x| x <= s).checked_sub(1);
        i.is_some_and(|i| lane.start[i] == s)
    };
    let below = (r.depth as usize + 1..th.lanes.len())
        .take_while(|&d| starts_at(d))
        .count();
    u8::try_from(below + 1).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    /// An instant's place among the `B`s and `E`s of its time, in file order: what came
    /// after it is counted.
    #[test]
    fn instants_count_the_begins_and_ends_after_them_at_their_time() {
        let t = crate::load_bytes(
            br#"[{"ph":"B","name":"a","ts":1,"pid":1,"tid":1},
                {"ph":"i","name":"in","ts":5,"pid":1,"tid":1},
                {"ph":"E","ts":5,"pid":1,"tid":1},
                {"ph":"i","name":"out","ts":5,"pid":1,"tid":1},
                {"ph":"B","name":"b","ts":5,"pid":1,"tid":1},
                {"ph":"E","ts":6,"pid":1,"tid":1}]"#,
        )
        .unwrap();
        let counts: Vec<(&str, u8, u8)> = (t.instants().iter())
            .map(|i| (t.str(i.name), i.ends_after, i.begins_after))
            .collect();
        assert_eq!(counts, [("in", 1, 1), ("out", 0, 1)]);
    }
}
