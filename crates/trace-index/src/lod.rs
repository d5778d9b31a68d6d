//! The level-of-detail walk over one lane.

use std::hint::select_unpredictable;

use trace_model::{Lane, StrId};

#[cfg(target_arch = "x86_64")]
use crate::avx2;
use crate::levels;
use crate::pyramid::{Blocks, Pyramid, FANOUT, SATURATED};
use crate::LaneIndex;

/// One thing to draw: spans `first..=last` of a lane, either one span wide enough to show
/// as itself (`merged == false`) or a box covering a run of narrow spans (`merged == true`,
/// possibly a single span narrower than the visibility threshold).
///
/// A plain record (40 bytes), so a frame's items are written without branching and read
/// without going back to the lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
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

// The layout the vector code writes (`avx2`): a 32-byte row and an 8-byte word per item.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<Item>() == 40 && align_of::<Item>() == 8);
    assert!(offset_of!(Item, start) == 0);
    assert!(offset_of!(Item, end) == 8);
    assert!(offset_of!(Item, busy) == 16);
    assert!(offset_of!(Item, first) == 24);
    assert!(offset_of!(Item, last) == 28);
    assert!(offset_of!(Item, name) == 32);
    assert!(offset_of!(Item, merged) == 36);
    assert!(size_of::<StrId>() == 4);
};

impl Item {
    /// The item of spans `first..=last` covering `start..end`, whose longest span lasts
    /// `longest` and is named `name`, for a query whose spans of `wide` or more stand alone:
    /// a box unless it is one span of `wide` or more.
    #[inline(always)]
    pub(crate) fn of(
        (first, last): (u32, u32),
        (start, end, busy): (i64, i64, i64),
        (longest, name): (i64, StrId),
        wide: i64,
    ) -> Item {
        Item {
            start,
            end,
            busy,
            first,
            last,
            name,
            merged: (first != last) | (longest < wide),
        }
    }

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
    /// Round the resolution down to the grid of stored levels, `√2` apart (default on): the
    /// answer is then at least as detailed as asked (up to `√2` finer), the same for every
    /// resolution in one step of the grid, and with the default `min_px` and `gap_px` it is
    /// a stored level's records as they are, copied rather than merged.
    pub snap: bool,
}

impl Detail {
    pub fn new(ns_per_px: f64) -> Detail {
        Detail {
            ns_per_px,
            min_px: 2.0,
            gap_px: 1.0,
            snap: true,
        }
    }

    /// The resolution the thresholds come from: `ns_per_px`, rounded down to the nearest
    /// level threshold ([`levels::tau`]) when snapping and at least 1.
    pub fn resolution(&self) -> f64 {
        match levels::level_of(self.ns_per_px as i64) {
            Some(k) if self.snap => levels::tau(k) as f64,
            _ => self.ns_per_px,
        }
    }

    /// The narrowest duration returned as a span, in ns (at least 1).
    pub fn min_dur(&self) -> i64 {
        self.thresholds().0
    }

    /// The smallest gap left visible between boxes, in ns (at least 1).
    pub fn min_gap(&self) -> i64 {
        self.thresholds().1
    }

    /// [`min_dur`](Detail::min_dur) and [`min_gap`](Detail::min_gap), from one rounding of
    /// the resolution (a query needs both, for every lane).
    pub fn thresholds(&self) -> (i64, i64) {
        let r = self.resolution();
        let ns = |px: f64| ((r * px).ceil() as i64).max(1);
        (ns(self.min_px), ns(self.gap_px))
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
/// - every span at least `min_px` wide is returned on its own (`merged == false`): nothing
///   visible hides in a box;
/// - a box covers its spans exactly (first start to last end); boxes stop at gaps of
///   `gap_px` or more, so empty time stays empty;
/// - hence boxes and spans are separated by at least a pixel or are at least two pixels wide,
///   and a lane yields at most about one item per pixel of the range.
///
/// The result depends only on the range and the two thresholds ([`Detail::min_dur`],
/// [`Detail::min_gap`]), not on the levels stored.
pub fn query(lane: &Lane, li: &LaneIndex, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
    if lane.is_empty() {
        return;
    }
    let (wide, gap) = detail.thresholds();
    match li.pick(wide, gap) {
        Some((lv, l)) => levels::query(lane, li.pyramid(), lv, l, (t0, t1), wide, gap, out),
        None => walk(lane, li.pyramid(), t0, t1, wide, gap, out),
    }
}

/// The span walk: from the first span in range, spans of `wide` or more stand alone, and
/// runs of narrower spans with gaps under `gap` merge, absorbing whole pyramid blocks where
/// a block is aligned, narrow, gap-free and inside the range.
///
/// Written like the merge of stored levels: whether a span joins the current item follows
/// the data, so the loop does not branch on it. Each step writes the current item to the
/// next free slot and moves past the slot only when the span starts a new item. On x86-64
/// CPUs with AVX2, blocks of spans go 4 at a time through vector code (`avx2/mod.rs`), with the
/// same answer.
pub fn walk(
    lane: &Lane,
    pyr: &Pyramid,
    t0: i64,
    t1: i64,
    wide: i64,
    gap: i64,
    out: &mut Vec<Item>,
) {
    if pyr.sums_fit {
        walk_adding::<true>(lane, pyr, (t0, t1), (wide, gap), simd(), out)
    } else {
        walk_adding::<false>(lane, pyr, (t0, t1), (wide, gap), false, out)
    }
}

/// `a + b`, wrapping when `WRAP` (the caller knows it cannot overflow), else saturating.
#[inline(always)]
fn add<const WRAP: bool>(a: i64, b: i64) -> i64 {
    if WRAP {
        a.wrapping_add(b)
    } else {
        a.saturating_add(b)
    }
}

/// Whether this CPU runs the vector code ([`avx2`]).
#[inline]
pub(crate) fn simd() -> bool {
    #[cfg(target_arch = "x86_64")]
    return avx2::available();
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// A block boundary tries to absorb whole pyramid blocks only when the open item already
/// holds this many spans. A short item means visible spans or gaps nearby, where a block
/// rarely fits, and each try reads the pyramid: a cache miss or two per lane, 13% of a
/// frame at 1/100 of the trace. A missed chance costs one block walked span by span.
const ABSORB_AFTER: usize = 8;

/// [`walk`], with plain adds when `WRAP`, and blocks of spans in vector code when `simd`
/// (only with `WRAP`: the vector code adds without saturating).
#[inline(never)]
fn walk_adding<const WRAP: bool>(
    lane: &Lane,
    pyr: &Pyramid,
    (t0, t1): (i64, i64),
    (wide, gap): (i64, i64),
    simd: bool,
    out: &mut Vec<Item>,
) {
    let simd = WRAP && simd;
    let (start, dur, names) = (&lane.start[..], &lane.dur[..], &lane.name[..]);
    let n = start.len().min(dur.len()).min(names.len());
    let mut i = pyr.first_ending_at_or_after(lane, t0);
    if i >= n || start[i] > t1 {
        return;
    }
    // The current item: spans first..i.
    let (mut first, mut from, mut end) = (i, start[i], start[i].saturating_add(dur[i]));
    let (mut busy, mut longest, mut name) = (dur[i], dur[i], names[i]);
    i += 1;
    while i < n {
        // At a block boundary the open item may absorb whole blocks.
        if i.is_multiple_of(FANOUT)
            && i - first >= ABSORB_AFTER
            && levels::joins(longest, end, dur[i], start[i], wide, gap)
        {
            if let Some((level, b)) = absorbable(pyr, i, wide, gap, t1) {
                let blk = &pyr.levels[level];
                end = blk.last_end[b];
                busy = busy.saturating_add(blk.busy[b]);
                if blk.max_dur[b] as i64 > longest {
                    (longest, name) = (blk.max_dur[b] as i64, blk.name[b]);
                }
                i = n.min(i + Pyramid::span_count(level));
                continue;
            }
        }
        // Spans i..lim: up to the next block boundary, and none starting after t1, so
        // the loop over them checks neither.
        let mut lim = n.min((i / FANOUT + 1) * FANOUT);
        let last = start[lim - 1] > t1;
        if last {
            lim = i + start[i..lim].partition_point(|&s| s <= t1);
        }
        if simd && lim > i && i + (lim - i).next_multiple_of(4) <= n {
            #[cfg(target_arch = "x86_64")]
            {
                let mut cur = avx2::Open {
                    first: first as u32,
                    from,
                    end,
                    busy,
                    longest,
                    name,
                };
                avx2::walk_block((start, dur, names), i..lim, (wide, gap), &mut cur, out);
                (first, from, end) = (cur.first as usize, cur.from, cur.end);
                (busy, longest, name) = (cur.busy, cur.longest, cur.name);
            }
        } else {
            // At most one item per span.
            out.reserve(FANOUT);
            let base = out.len();
            let slots = &mut out.spare_capacity_mut()[..FANOUT];
            let mut k = 0;
            for i in i..lim {
                let (s, d) = (start[i], dur[i]);
                let joins = levels::joins(longest, end, d, s, wide, gap);
                let span = (first as u32, (i - 1) as u32);
                slots[k].write(Item::of(span, (from, end, busy), (longest, name), wide));
                k += !joins as usize;
                first = select_unpredictable(joins, first, i);
                from = select_unpredictable(joins, from, s);
                end = add::<WRAP>(s, d);
                busy = add::<WRAP>(select_unpredictable(joins, busy, 0), d);
                let take = !joins | (d > longest);
                name = select_unpredictable(take, names[i], name);
                longest = select_unpredictable(take, d, longest);
            }
            // SAFETY: slots 0..k were written above (each step writes slot k before k
            // grows), and k is at most the number of spans stepped, at most FANOUT, the
            // slots reserved.
            #[allow(unsafe_code)]
            unsafe {
                out.set_len(base + k);
            }
        }
        i = lim;
        if last {
            break;
        }
    }
    let span = (first as u32, (i - 1) as u32);
    out.push(Item::of(span, (from, end, busy), (longest, name), wide));
}

/// The largest block starting at span `i` whose spans are all narrower than `wide`, whose
/// gaps are all narrower than `gap`, and which ends by `t1`: `(level, block)`. A larger
/// block fits only if its first level-0 block does, so that one is tried first.
#[inline]
fn absorbable(pyr: &Pyramid, i: usize, wide: i64, gap: i64, t1: i64) -> Option<(usize, usize)> {
    let fits = |_: usize, b: &Blocks, k: usize| {
        b.max_dur[k] != SATURATED
            && (b.max_dur[k] as i64) < wide
            && b.max_gap[k] != SATURATED
            && (b.max_gap[k] as i64) < gap
            && b.last_end[k] <= t1
    };
    let l0 = pyr.levels.first()?;
    let b0 = i / FANOUT;
    if b0 >= l0.len() || !fits(0, l0, b0) {
        return None;
    }
    pyr.largest_fitting(i, fits)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A lane from (gap, dur, name) triples: only the columns the walk reads.
    fn lane(spec: &[(i64, i64, u32)]) -> Lane {
        let ends = spec.iter().scan(0, |t, &(gap, dur, _)| {
            *t += gap + dur;
            Some(*t)
        });
        Lane {
            start: ends.zip(spec).map(|(e, s)| e - s.1).collect(),
            dur: spec.iter().map(|s| s.1).collect(),
            name: spec.iter().map(|s| StrId(s.2)).collect(),
            ..Lane::default()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The vector walk returns the scalar walk's items: random lanes whose gaps and
        /// durations straddle the thresholds, cut anywhere, so blocks of every length and
        /// alignment, lane ends and absorbed pyramid blocks all occur.
        #[test]
        fn vector_and_scalar_walks_agree(
            spec in prop::collection::vec((0i64..12, 0i64..12, 0u32..4), 1..600),
            (wide, gap) in (1i64..14, 1i64..14),
            (from, len) in (0i64..4000, 0i64..8000),
        ) {
            if !avx2::available() {
                return Ok(());
            }
            let lane = lane(&spec);
            let pyr = Pyramid::build(&lane);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let range = (from, from + len);
            walk_adding::<true>(&lane, &pyr, range, (wide, gap), false, &mut a);
            walk_adding::<true>(&lane, &pyr, range, (wide, gap), true, &mut b);
            prop_assert_eq!(a, b);
        }
    }
}
