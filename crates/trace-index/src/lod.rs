//! The level-of-detail walk over one lane.

use trace_model::{Lane, StrId};

use crate::levels;
use crate::pyramid::{Pyramid, FANOUT, SATURATED};
use crate::LaneIndex;

/// One thing to draw: spans `first..=last` of a lane, either one span wide enough to show
/// as itself (`merged == false`) or a box covering a run of narrow spans (`merged == true`,
/// possibly a single span narrower than the visibility threshold).
///
/// A plain record (40 bytes), so a frame's items are written without branching and read
/// without going back to the lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// Start of the first span.
    pub start: i64,
    /// End of the last span (the largest end: lanes do not overlap).
    pub end: i64,
    /// Sum of the spans' durations.
    pub busy: i64,
    pub first: u32,
    pub last: u32,
    /// The name of the first longest span (for a colour or a label).
    pub name: StrId,
    /// A box of narrow spans rather than one visible span.
    pub merged: bool,
}

impl Item {
    /// Number of spans covered.
    pub fn count(&self) -> u32 {
        self.last - self.first + 1
    }

    /// The span's index when this item is one visible span.
    pub fn span(&self) -> Option<u32> {
        (!self.merged).then_some(self.first)
    }
}

/// How finely to look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detail {
    /// Nanoseconds per pixel.
    pub ns_per_px: f64,
    /// Spans at least this many pixels wide are returned as themselves (default 2).
    pub min_px: f64,
    /// Gaps at least this many pixels wide stay visible between boxes (default 1).
    pub gap_px: f64,
}

impl Detail {
    pub fn new(ns_per_px: f64) -> Detail {
        Detail {
            ns_per_px,
            min_px: 2.0,
            gap_px: 1.0,
        }
    }

    /// The narrowest duration returned as a span, in ns (at least 1).
    pub fn min_dur(&self) -> i64 {
        ((self.ns_per_px * self.min_px).ceil() as i64).max(1)
    }

    /// The smallest gap left visible between boxes, in ns (at least 1).
    pub fn min_gap(&self) -> i64 {
        ((self.ns_per_px * self.gap_px).ceil() as i64).max(1)
    }
}

/// The first span of `lane` that ends at or after `t` (lanes never overlap, so ends are
/// sorted): O(log n).
pub fn first_ending_at_or_after(lane: &Lane, t: i64) -> usize {
    first_ending_in(lane, 0..lane.len(), t)
}

/// The first span among `spans` that ends at or after `t` (`spans.end` if none): a binary
/// search.
pub(crate) fn first_ending_in(lane: &Lane, spans: std::ops::Range<usize>, t: i64) -> usize {
    let (mut lo, mut hi) = (spans.start, spans.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if lane.end(mid) < t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Appends to `out` the items of `lane` that overlap `[t0, t1]` at `detail`, from a stored
/// level when one fits the resolution, else by walking the spans.
///
/// Guarantees (property-tested against a brute-force scan):
/// - the items partition exactly the spans overlapping the range (those starting by `t1`
///   and ending at or after `t0`), in time order, each span in one item;
/// - every span at least `min_px` wide is returned as a `Span`: nothing visible hides in a box;
/// - a box covers its spans exactly (first start to last end); boxes stop at gaps of
///   `gap_px` or more, so empty time stays empty;
/// - hence boxes and spans are separated by at least a pixel or are at least two pixels wide,
///   and a lane yields at most about one item per pixel of the range.
///
/// The result depends only on the range and the two thresholds, not on the levels stored.
pub fn query(lane: &Lane, li: &LaneIndex, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
    if lane.is_empty() {
        return;
    }
    let (wide, gap) = (detail.min_dur(), detail.min_gap());
    match li
        .levels
        .as_deref()
        .and_then(|lv| Some((lv, lv.pick(wide, gap)?)))
    {
        Some((lv, l)) => levels::query(lane, &li.pyramid, lv, l, (t0, t1), wide, gap, out),
        None => walk(lane, &li.pyramid, t0, t1, wide, gap, out),
    }
}

/// The span walk: from the first span in range, spans of `wide` or more stand alone, and
/// runs of narrower spans with gaps under `gap` merge, absorbing whole pyramid blocks where
/// a block is aligned, narrow, gap-free and inside the range.
pub fn walk(
    lane: &Lane,
    pyr: &Pyramid,
    t0: i64,
    t1: i64,
    wide: i64,
    gap: i64,
    out: &mut Vec<Item>,
) {
    let (start, dur) = (&lane.start[..], &lane.dur[..]);
    let n = start.len().min(dur.len());
    let mut i = pyr.first_ending_at_or_after(lane, t0);
    while i < n && start[i] <= t1 {
        let d = dur[i];
        if d >= wide {
            out.push(Item {
                start: start[i],
                end: start[i].saturating_add(d),
                busy: d,
                first: i as u32,
                last: i as u32,
                name: lane.name[i],
                merged: false,
            });
            i += 1;
            continue;
        }
        let first = i;
        let mut end = start[i].saturating_add(d);
        let (mut busy, mut longest) = (d, d);
        // The first longest span's name: read at the end, from the lane or a block.
        let (mut longest_at, mut block_name) = (i, None);
        i += 1;
        while i < n {
            let (s, d) = (start[i], dur[i]);
            // Spans do not overlap, so s >= end and the gap fits in a u64.
            if !((s <= t1) & ((s.wrapping_sub(end) as u64) < gap as u64) & (d < wide)) {
                break;
            }
            if i.is_multiple_of(FANOUT) {
                let whole = pyr.largest_fitting(i, |_, b, k| {
                    b.max_dur[k] != SATURATED
                        && (b.max_dur[k] as i64) < wide
                        && b.max_gap[k] != SATURATED
                        && (b.max_gap[k] as i64) < gap
                        && b.last_end[k] <= t1
                });
                if let Some((level, k)) = whole {
                    let b = &pyr.levels[level];
                    end = b.last_end[k];
                    busy = busy.saturating_add(b.busy[k]);
                    if b.max_dur[k] as i64 > longest {
                        longest = b.max_dur[k] as i64;
                        block_name = Some(b.name[k]);
                    }
                    i = (i + Pyramid::span_count(level)).min(n);
                    continue;
                }
            }
            end = s.saturating_add(d);
            busy = busy.saturating_add(d);
            if d > longest {
                (longest, longest_at, block_name) = (d, i, None);
            }
            i += 1;
        }
        out.push(Item {
            start: start[first],
            end,
            busy,
            first: first as u32,
            last: (i - 1) as u32,
            name: block_name.unwrap_or(lane.name[longest_at]),
            merged: true,
        });
    }
}
