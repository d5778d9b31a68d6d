//! The level-of-detail walk over one lane.

use trace_model::{Lane, StrId};

use crate::pyramid::Pyramid;

/// One thing to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A span wide enough to show as itself: its index in the lane.
    Span(u32),
    /// A run of narrow spans, drawn as one box that covers every one of them.
    Merged(Merged),
}

/// A summary box for spans `first..=last` of the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merged {
    pub start: i64,
    pub end: i64,
    pub first: u32,
    pub last: u32,
    /// Sum of the merged spans' durations.
    pub busy: i64,
    /// The name of the longest merged span (for a colour or a label).
    pub name: StrId,
}

impl Merged {
    pub fn count(&self) -> u32 {
        self.last - self.first + 1
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
    if lane.start.first().is_none_or(|&s| s >= t) {
        return 0;
    }
    let (mut lo, mut hi) = (0, lane.len());
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

/// Appends to `out` the items of `lane` that overlap `[t0, t1]` at `detail`.
///
/// Guarantees (property-tested against a brute-force scan):
/// - every span overlapping the range is represented exactly once, by a `Span` item or
///   inside one `Merged` box, in time order;
/// - every span at least `min_px` wide is returned as a `Span`: nothing visible hides in a box;
/// - a box covers its spans exactly (first start to last end); boxes stop at gaps of a pixel
///   or more, so empty time stays empty;
/// - hence boxes and spans are separated by at least a pixel or are at least two pixels wide,
///   and a lane yields at most about one item per pixel of the range.
pub fn query(lane: &Lane, pyr: &Pyramid, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
    let n = lane.len();
    let (wide, gap) = (detail.min_dur(), detail.min_gap());
    let mut i = first_ending_at_or_after(lane, t0);
    while i < n && lane.start[i] <= t1 {
        if lane.dur[i] >= wide {
            out.push(Item::Span(i as u32));
            i += 1;
            continue;
        }
        let mut m = Merged {
            start: lane.start[i],
            end: lane.end(i),
            first: i as u32,
            last: i as u32,
            busy: lane.dur[i],
            name: lane.name[i],
        };
        let mut longest = lane.dur[i];
        i += 1;
        while i < n && lane.start[i] <= t1 && lane.start[i] - m.end < gap && lane.dur[i] < wide {
            let end = m.end;
            let whole = pyr.largest_fitting(i, |b| {
                b.max_dur < wide && b.max_gap < gap && b.first_start - end < gap
            });
            match whole {
                Some((level, b)) => {
                    let count = Pyramid::span_count(level).min(n - i);
                    m.end = m.end.max(b.last_end);
                    m.busy = m.busy.saturating_add(b.busy);
                    if b.max_dur > longest {
                        longest = b.max_dur;
                        m.name = b.name;
                    }
                    i += count;
                }
                None => {
                    m.end = m.end.max(lane.end(i));
                    m.busy = m.busy.saturating_add(lane.dur[i]);
                    if lane.dur[i] > longest {
                        longest = lane.dur[i];
                        m.name = lane.name[i];
                    }
                    i += 1;
                }
            }
            m.last = (i - 1) as u32;
        }
        out.push(Item::Merged(m));
    }
}
