//! Visible-range queries, level of detail, hit testing and navigation over a
//! [`trace_model::Trace`], with the cost of a frame bounded by pixels, not events.
//!
//! Each lane (a thread at one depth) is already sorted with no overlaps, so a range query is
//! a binary search and a walk. On top, [`TraceIndex`] keeps per lane a pyramid of block
//! summaries (16, 256, 4096, ... spans) so that at any zoom a lane yields about one
//! [`Item`] per pixel: spans wide enough to see come back as themselves, and runs of narrow
//! spans come back as merged boxes that cover every span in them.
//! [`TraceIndex::query_thread`] queries a thread's lanes from the top and skips those below
//! an empty lane that cannot hold anything there either. See `docs/INDEX.md`.
//!
//! # Example
//!
//! ```
//! use trace_index::{Detail, Item, TraceIndex};
//!
//! let mut json = String::from("[");
//! for i in 0..1000 {
//!     json.push_str(&format!(r#"{{"ph":"X","name":"tick","ts":{i},"dur":0.5,"pid":1,"tid":1}},"#));
//! }
//! json.push_str(r#"{"ph":"X","name":"long","ts":1000,"dur":500,"pid":1,"tid":1}]"#);
//! let trace = trace_model::load_bytes(json.as_bytes()).unwrap();
//! let index = TraceIndex::build(&trace);
//!
//! // The whole trace (1.5 ms) on 1000 pixels: 1.5 µs per pixel.
//! let items = index.query(&trace, 0, 0, trace.start_ns, trace.end_ns, Detail::new(1500.0));
//! // The 1000 ticks (each 0.5 µs, a third of a pixel, 1 µs apart) merge into one box;
//! // the long span is wide enough to stand alone.
//! assert_eq!(items.len(), 2);
//! assert!(items[0].merged && items[0].count() == 1000);
//! assert_eq!(items[1].span(), Some(1000));
//! ```

#[cfg(target_arch = "x86_64")]
mod avx2;
mod frame;
mod levels;
mod lod;
mod nav;
mod pyramid;

pub use levels::{level_of, tau, LevelItem, Levels, ITEM_BYTES, LEVELS};
pub use lod::{first_ending_at_or_after, query as query_lane, Detail, Item};
pub use nav::{children, hit_test, occurrences, occurrences_of, parent, Hit};
pub use pyramid::{Aggregate, Blocks, Pyramid, FANOUT, SATURATED};

use rayon::prelude::*;
use trace_model::{Lane, Trace};

/// Heap bytes per span the whole index may use, over the whole trace: the pyramids (under 2
/// bytes per span) and, in what they leave, the stored levels.
pub const INDEX_BUDGET_PER_SPAN: usize = 8;

/// The index of one lane: its pyramid, and the levels it keeps.
#[derive(Clone, Debug, Default)]
pub struct LaneIndex {
    pyramid: Pyramid,
    levels: Option<Box<Levels>>,
    /// Bit `k` set when level `k` is stored: a query finds its level (or that it must walk)
    /// without reading the boxed levels, a cache miss per lane in a frame of 800 lanes.
    stored: u128,
    /// Every span of this lane lies inside a span of the lane above (set by
    /// [`TraceIndex::build`]; false for lane 0 and for a lane indexed on its own).
    contained: bool,
}

impl LaneIndex {
    /// The pyramid and every level worth keeping (see docs/INDEX.md), with no memory
    /// budget across lanes.
    pub fn build(lane: &Lane) -> LaneIndex {
        let ks: Vec<usize> = levels::candidates(lane)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        LaneIndex::with_levels(lane, &ks)
    }

    /// The pyramid and the given levels (ascending; none: every query walks the spans).
    pub fn with_levels(lane: &Lane, ks: &[usize]) -> LaneIndex {
        LaneIndex::from_parts(lane, Pyramid::build(lane), ks)
    }

    fn from_parts(lane: &Lane, pyramid: Pyramid, ks: &[usize]) -> LaneIndex {
        LaneIndex {
            pyramid,
            levels: (!ks.is_empty()).then(|| Box::new(Levels::build(lane, ks))),
            stored: ks.iter().fold(0, |m, &k| m | 1 << k),
            contained: false,
        }
    }

    /// Whether every span of this lane lies inside a span of the lane above it (its start
    /// at or after the parent's, its end at or before the parent's), as the model nests
    /// spans unless one outlives its parent (a partial overlap). Then where the lane above
    /// has nothing, this lane has nothing either: [`TraceIndex::query_thread`] skips it.
    /// Known only to a [`TraceIndex`]; false for a lane indexed on its own. Read from the
    /// model's `PARTIAL_OVERLAP` flags, so it assumes lanes nested by the model: a trace
    /// whose lanes were filled by hand, unflagged, may have lanes wrongly marked contained.
    pub fn contained(&self) -> bool {
        self.contained
    }

    pub fn pyramid(&self) -> &Pyramid {
        &self.pyramid
    }

    /// The stored levels, if any.
    pub fn levels(&self) -> Option<&Levels> {
        self.levels.as_deref()
    }

    /// The stored level (an index into [`Levels::ks`]) to answer a query whose spans of
    /// `wide` ns or more stand alone and whose gaps of `gap` ns or more stay visible: the
    /// coarsest with `τ <= gap` and `2τ <= wide`, found in the lane's set of stored levels
    /// without reading the levels themselves.
    #[inline]
    pub fn pick(&self, wide: i64, gap: i64) -> Option<(&Levels, usize)> {
        let k = level_of(gap.min(wide / 2))?;
        let below = self.stored & (u128::MAX >> (127 - k));
        let l = below.count_ones().checked_sub(1)?;
        Some((self.levels.as_deref()?, l as usize))
    }

    pub fn heap_bytes(&self) -> usize {
        self.pyramid.heap_bytes() + self.levels.as_ref().map_or(0, |l| l.heap_bytes())
    }
}

/// Level-of-detail summaries for every lane of a trace.
#[derive(Clone, Debug, Default)]
pub struct TraceIndex {
    /// `threads[t][d]`: the index of thread `t`'s lane at depth `d`.
    pub threads: Vec<Vec<LaneIndex>>,
}

impl TraceIndex {
    /// Builds the summaries, threads in parallel: O(spans).
    ///
    /// Every lane gets its pyramid. Stored levels are chosen across the whole trace: the
    /// candidates of every lane, smallest first, while the index fits in
    /// [`INDEX_BUDGET_PER_SPAN`] bytes per span of the trace. Small levels are the coarse
    /// views of a lane, where walking the spans would read many spans per pixel; the large levels left out are
    /// fine views, where few spans fall in a pixel and the walk reads little more.
    pub fn build(trace: &Trace) -> TraceIndex {
        // Pass 1: every lane's pyramid and candidate levels.
        let first: Vec<Vec<Planned>> = trace
            .threads
            .par_iter()
            .map(|t| {
                t.lanes
                    .iter()
                    .map(|l| (Pyramid::build(l), levels::candidates(l)))
                    .collect()
            })
            .collect();
        // The levels fill what the lanes' own records and pyramids leave of the budget.
        let spans = trace.span_count() as usize;
        let pyramids: usize = first.iter().flatten().map(|(p, _)| p.heap_bytes()).sum();
        let lanes = TraceIndex::table_bytes(first.iter().map(Vec::len));
        let room = (spans * INDEX_BUDGET_PER_SPAN).saturating_sub(pyramids + lanes);
        let keep = within_budget(&first, room);
        // Pass 2: the kept levels.
        TraceIndex {
            threads: trace
                .threads
                .par_iter()
                .zip(first.into_par_iter().zip(keep.into_par_iter()))
                .map(|(t, (lanes, ks))| {
                    t.lanes
                        .par_iter()
                        .zip(lanes.into_par_iter().zip(ks.into_par_iter()))
                        .enumerate()
                        .map(|(d, (l, ((pyramid, _), ks)))| LaneIndex {
                            contained: d > 0 && frame::contained(l),
                            ..LaneIndex::from_parts(l, pyramid, &ks)
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// The items of one lane overlapping `[t0, t1]`, at `detail`.
    pub fn query(
        &self,
        trace: &Trace,
        thread: usize,
        depth: usize,
        t0: i64,
        t1: i64,
        detail: Detail,
    ) -> Vec<Item> {
        let mut out = Vec::new();
        self.query_into(trace, thread, depth, t0, t1, detail, &mut out);
        out
    }

    /// [`query`](TraceIndex::query), appending to a reused buffer.
    #[allow(clippy::too_many_arguments)]
    pub fn query_into(
        &self,
        trace: &Trace,
        thread: usize,
        depth: usize,
        t0: i64,
        t1: i64,
        detail: Detail,
        out: &mut Vec<Item>,
    ) {
        let lane = &trace.threads[thread].lanes[depth];
        lod::query(lane, &self.threads[thread][depth], t0, t1, detail, out);
    }

    /// Heap bytes held by the index: the lanes' own records (a pyramid's table, a pointer to
    /// the stored levels and the set of them) and what they point to.
    pub fn heap_bytes(&self) -> usize {
        let lanes: usize = (self.threads.iter().flatten())
            .map(LaneIndex::heap_bytes)
            .sum();
        lanes + TraceIndex::table_bytes(self.threads.iter().map(Vec::len))
    }

    /// Bytes of the per-thread tables of lane records, for threads of the given lane counts.
    fn table_bytes(lanes: impl ExactSizeIterator<Item = usize>) -> usize {
        let threads = lanes.len() * std::mem::size_of::<Vec<LaneIndex>>();
        threads + lanes.sum::<usize>() * std::mem::size_of::<LaneIndex>()
    }

    /// Items held in stored levels, over all lanes.
    pub fn level_items(&self) -> usize {
        let lanes = self.threads.iter().flatten();
        lanes
            .filter_map(LaneIndex::levels)
            .map(|l| l.items.len())
            .sum()
    }
}

/// A lane's pyramid and its candidate levels, `(level, items)`, before the budget.
type Planned = (Pyramid, Vec<(usize, usize)>);

/// The levels each lane keeps: the candidates of all lanes, smallest first, while they fit
/// in `room` bytes. A lane's coarser levels are smaller, so each lane keeps its coarsest
/// candidates.
fn within_budget(lanes: &[Vec<Planned>], room: usize) -> Vec<Vec<Vec<usize>>> {
    // (items, thread, lane, level)
    let mut all: Vec<(usize, usize, usize, usize)> = Vec::new();
    for (t, lanes) in lanes.iter().enumerate() {
        for (d, (_, c)) in lanes.iter().enumerate() {
            all.extend(c.iter().map(|&(k, items)| (items, t, d, k)));
        }
    }
    all.sort_unstable();
    let mut keep: Vec<Vec<Vec<usize>>> = lanes.iter().map(|l| vec![Vec::new(); l.len()]).collect();
    let mut room = room;
    for (items, t, d, k) in all {
        // The records, their skip index and what the level adds to the lane's table.
        let kept = keep[t][d].len();
        let table = Levels::table_bytes(kept + 1) - Levels::table_bytes(kept);
        let bytes = items * ITEM_BYTES + items.div_ceil(levels::SKIP) * 8 + table;
        if bytes > room {
            break;
        }
        room -= bytes;
        keep[t][d].push(k);
    }
    for lane in keep.iter_mut().flatten() {
        lane.sort_unstable();
    }
    keep
}
