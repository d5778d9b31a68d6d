//! Visible-range queries with level of detail over a [`trace_model::Trace`], with the cost of
//! a frame bounded by pixels, not events.
//!
//! A [`TraceIndex`] answers "what is drawn in this lane between these two times at this many
//! nanoseconds per pixel" with about one [`Item`] per pixel: spans wide enough to see come
//! back as themselves, and runs of narrow spans as merged boxes that cover every span in
//! them. [`Detail`] says how wide "wide enough" is. A [`SeriesIndex`] does the same for a
//! counter: the minimum and maximum of any range of samples, for one pixel column. The design and its guarantees are in
//! `docs/INDEX.md`.
//!
//! # Example
//!
//! ```
//! use trace_index::{Detail, TraceIndex};
//!
//! let trace = trace_model::load("../../tests/fixtures/real/catapult_big_trace.json").unwrap();
//! let index = TraceIndex::build(&trace);
//! // Thread 0's top lane, the whole trace on 1000 pixels.
//! let detail = Detail::new(trace.duration_ns() as f64 / 1000.0);
//! let items = index.query(&trace, 0, 0, trace.start_ns(), trace.end_ns(), detail);
//! assert!(!items.is_empty() && items.len() <= 1000);
//! for it in &items {
//!     match it.span() {
//!         Some(i) => println!("span {i} ({}) at {} ns", trace.str(it.name), it.start),
//!         None => println!("{} narrow spans from {} to {} ns", it.count(), it.start, it.end),
//!     }
//! }
//! ```

#![warn(missing_docs)]

mod arch;
mod async_groups;
mod cpu_lanes;
mod detail;
mod events;
mod item;
mod lane;
mod levels;
mod pyramid;
mod sample_stacks;
mod series;
mod transfer;
mod walk;

#[cfg(test)]
mod properties;

pub use async_groups::AsyncGroup;
pub use cpu_lanes::CpuLanes;
pub use detail::Detail;
pub use events::{CounterGroup, EventIndex};
pub use item::Item;
pub use sample_stacks::SampleStacks;
pub use series::SeriesIndex;
pub use transfer::IndexIn;

use std::sync::OnceLock;

use rayon::prelude::*;
use trace_model::Trace;

use lane::LaneIndex;
use levels::{Levels, ITEM_BYTES, SKIP};
use pyramid::Pyramid;

/// Heap bytes per span the whole index may use: the pyramids (under 2 bytes per span) and,
/// in what they leave, the stored levels.
const INDEX_BUDGET_PER_SPAN: usize = 8;

/// Level-of-detail summaries for every lane of a trace.
#[derive(Clone, Debug, Default)]
pub struct TraceIndex {
    /// `threads[t][d]`: the index of thread `t`'s lane at depth `d`.
    threads: Vec<Vec<LaneIndex>>,
    /// Per thread, its samples' stacks over time, where they were added
    /// ([`add_sample_stacks`](Self::add_sample_stacks)); else empty.
    samples: Vec<SampleStacks>,
    /// Every lane's stored levels (their pyramids empty), where they came after the
    /// pyramids ([`set_levels`](Self::set_levels)); queries read them rather than
    /// `threads`' levels once set.
    later: OnceLock<Vec<Vec<LaneIndex>>>,
}

/// The stored levels each lane of a trace keeps, as [`TraceIndex::build_pyramids`] chose
/// them, for [`TraceIndex::add_levels`].
#[derive(Clone, Debug, Default)]
pub struct LevelPlan(Vec<Vec<Vec<(usize, usize)>>>);

/// Every lane's stored levels without its pyramid ([`TraceIndex::take_levels`]): what a
/// page adds to the index of pyramids it drew from first ([`TraceIndex::set_levels`]),
/// sent with [`IndexLevels::to_transfer_pieces`] and read with [`IndexIn::levels`].
#[derive(Clone, Debug, Default)]
pub struct IndexLevels(Vec<Vec<LaneIndex>>);

impl TraceIndex {
    /// Builds the summaries, threads in parallel: O(spans), at most 8 bytes per span.
    ///
    /// Every lane gets its pyramid. Stored levels are chosen across the whole trace: the
    /// candidates of every lane, smallest first, while the index fits in its budget. Small
    /// levels are the coarse views of a lane, where walking the spans would read many spans
    /// per pixel; the large levels left out are fine views, where few spans fall in a pixel
    /// and the walk reads little more.
    pub fn build(trace: &Trace) -> TraceIndex {
        let (mut index, plan) = TraceIndex::build_pyramids(trace);
        index.add_levels(trace, plan);
        index
    }

    /// The first of [`build`](Self::build)'s two passes: every lane's pyramid and the
    /// levels it will keep, none stored yet. The index answers every query as `build`'s
    /// does (the result depends only on the range and the thresholds), by walking the
    /// spans with the pyramid's help: a frame costs more where many spans fall in a pixel.
    /// A browser's page draws from it while its worker builds the levels
    /// ([`add_levels`](Self::add_levels), then [`set_levels`](Self::set_levels)).
    pub fn build_pyramids(trace: &Trace) -> (TraceIndex, LevelPlan) {
        let first: Vec<Vec<Planned>> = trace
            .threads()
            .par_iter()
            .map(|t| t.lanes.iter().map(plan).collect())
            .collect();
        // The levels fill what the lanes' own records and pyramids leave of the budget.
        let spans = trace.span_count() as usize;
        let pyramids: usize = first.iter().flatten().map(|(p, _)| p.heap_bytes()).sum();
        let lanes = TraceIndex::table_bytes(first.iter().map(Vec::len));
        let room = (spans * INDEX_BUDGET_PER_SPAN).saturating_sub(pyramids + lanes);
        let keep = within_budget(&first, room);
        let threads = (first.into_iter().zip(trace.threads()))
            .map(|(lanes, t)| {
                let lanes = lanes.into_iter().zip(&t.lanes);
                lanes.map(|((p, _), l)| LaneIndex::new(l, p, &[])).collect()
            })
            .collect();
        let index = TraceIndex {
            threads,
            samples: Vec::new(),
            later: OnceLock::new(),
        };
        (index, LevelPlan(keep))
    }

    /// The second pass: the levels `plan` chose for `trace`, whose pyramids this index
    /// holds ([`build_pyramids`](Self::build_pyramids)).
    pub fn add_levels(&mut self, trace: &Trace, plan: LevelPlan) {
        (self.threads.par_iter_mut())
            .zip(trace.threads().par_iter().zip(plan.0.into_par_iter()))
            .for_each(|(lanes, (t, ks))| {
                (lanes.par_iter_mut())
                    .zip(t.lanes.par_iter().zip(ks.into_par_iter()))
                    .for_each(|(li, (l, ks))| li.add_levels(l, &ks))
            });
    }

    /// The index's stored levels, its pyramids and samples' stacks dropped.
    pub fn take_levels(self) -> IndexLevels {
        let lanes = |l: Vec<LaneIndex>| l.into_iter().map(LaneIndex::levels_only).collect();
        IndexLevels(self.threads.into_iter().map(lanes).collect())
    }

    /// Adds `levels`, another index's of the same trace ([`take_levels`](Self::take_levels),
    /// sent across with [`IndexIn::levels`]): queries read them from then on. Through
    /// `&self`, so that a page adds them to an index its views already share. False, and
    /// nothing changes, where `levels` has another shape of lanes or levels were set
    /// already.
    pub fn set_levels(&self, levels: IndexLevels) -> bool {
        let same = levels.0.len() == self.threads.len()
            && (levels.0.iter().zip(&self.threads)).all(|(a, b)| a.len() == b.len());
        same && self.later.set(levels.0).is_ok()
    }

    /// Adds the samples' stacks over time ([`SampleStacks::by_thread`]), which
    /// [`EventIndex`] otherwise builds: a browser's worker builds them with the index, and
    /// the page, which draws, takes them with it
    /// ([`take_sample_stacks`](Self::take_sample_stacks)). Nothing for a trace without
    /// samples.
    pub fn add_sample_stacks(&mut self, trace: &Trace) {
        if !trace.samples().is_empty() {
            self.samples = SampleStacks::by_thread(trace);
        }
    }

    /// The samples' stacks added ([`add_sample_stacks`](Self::add_sample_stacks)), by
    /// thread, for [`EventIndex::with_sample_stacks`]; empty if none were.
    pub fn take_sample_stacks(&mut self) -> Vec<SampleStacks> {
        std::mem::take(&mut self.samples)
    }

    /// The items of lane `depth` of thread `thread` (indices into `trace.threads()` and its
    /// `lanes`) that overlap `[t0, t1]`, at `detail`. `trace` must be the trace the index
    /// was built from.
    ///
    /// The guarantees (property-tested against a brute-force scan):
    /// - the items partition exactly the spans overlapping the range (those starting by `t1`
    ///   and ending at or after `t0`), in time order, each span in one item;
    /// - every span at least [`Detail::min_dur`] long is returned on its own
    ///   (`merged == false`): nothing visible hides in a box;
    /// - a box covers its spans exactly (first start to last end), and boxes stop at gaps of
    ///   [`Detail::min_gap`] or more, so empty time stays empty;
    /// - hence items are separated by a visible gap or are visible spans, and a lane yields
    ///   at most about one item per pixel of the range.
    ///
    /// The result depends only on the range and the two thresholds, not on what the index
    /// stores. The cost follows the items returned, not the spans in range.
    ///
    /// # Panics
    /// If `thread` or `depth` names no lane of the trace.
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
        let lane = &trace.threads()[thread].lanes[depth];
        let li = &self.threads[thread][depth];
        let stored = self.later.get().map_or(li, |l| &l[thread][depth]);
        li.query_with(stored, lane, (t0, t1), detail, out);
    }

    /// Heap bytes held by the index.
    pub fn heap_bytes(&self) -> usize {
        let lanes: usize = (self.threads.iter().flatten())
            .map(LaneIndex::heap_bytes)
            .sum();
        let samples: usize = self.samples.iter().map(SampleStacks::heap_bytes).sum();
        let later = self.later.get().map_or(0, |l| {
            let lanes: usize = l.iter().flatten().map(LaneIndex::heap_bytes).sum();
            lanes + TraceIndex::table_bytes(l.iter().map(Vec::len))
        });
        lanes + samples + later + TraceIndex::table_bytes(self.threads.iter().map(Vec::len))
    }

    /// Bytes of the per-thread tables of lane records, for threads of the given lane counts.
    fn table_bytes(lanes: impl ExactSizeIterator<Item = usize>) -> usize {
        let threads = lanes.len() * std::mem::size_of::<Vec<LaneIndex>>();
        threads + lanes.sum::<usize>() * std::mem::size_of::<LaneIndex>()
    }
}

/// A lane's pyramid and its candidate levels, `(level, items)`, before the budget.
type Planned = (Pyramid, Vec<(usize, usize)>);

/// A lane's pyramid and candidate levels, from one pass over its spans.
fn plan(lane: &trace_model::Lane) -> Planned {
    if !levels::wants_levels(lane.len()) {
        return (Pyramid::build(lane), Vec::new());
    }
    let mut hist = vec![0; detail::LEVELS];
    let pyramid = Pyramid::build_counting::<true>(lane, &mut hist);
    (pyramid, levels::candidates(&hist, lane.len()))
}

/// The levels each lane keeps: the candidates of all lanes, smallest first, while they fit
/// in `room` bytes. A lane's coarser levels are smaller, so each lane keeps its coarsest
/// candidates.
fn within_budget(lanes: &[Vec<Planned>], room: usize) -> Vec<Vec<Vec<(usize, usize)>>> {
    // (items, thread, lane, level)
    let mut all: Vec<(usize, usize, usize, usize)> = Vec::new();
    for (t, lanes) in lanes.iter().enumerate() {
        for (d, (_, c)) in lanes.iter().enumerate() {
            all.extend(c.iter().map(|&(k, items)| (items, t, d, k)));
        }
    }
    all.sort_unstable();
    let mut keep: Vec<Vec<Vec<(usize, usize)>>> =
        lanes.iter().map(|l| vec![Vec::new(); l.len()]).collect();
    let mut room = room;
    for (items, t, d, k) in all {
        // The records, their skip index and what the level adds to the lane's table.
        let kept = keep[t][d].len();
        let table = Levels::table_bytes(kept + 1) - Levels::table_bytes(kept);
        let bytes = items * ITEM_BYTES + items.div_ceil(SKIP) * 8 + table;
        if bytes > room {
            break;
        }
        room -= bytes;
        keep[t][d].push((k, items));
    }
    for lane in keep.iter_mut().flatten() {
        lane.sort_unstable();
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lane::Plan;

    /// A generated trace and three real ones (tests/fixtures/README.md has their provenance).
    fn traces() -> Vec<(String, Trace)> {
        let s = spall_format::synth::Synth {
            seed: 3,
            spans: 50_000,
            threads: 4,
            processes: 2,
            max_depth: 30,
            ..Default::default()
        };
        let mut b = Vec::new();
        s.write_spall(&mut b).unwrap();
        let mut traces = vec![(
            "generated".to_string(),
            trace_model::load_bytes(&b).unwrap(),
        )];
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/real");
        for f in [
            "bazel_profile_with_queuing.json.gz",
            "chrome116_devtools_export.json",
            "pytorch_kineto_trace_diff_test.json.gz",
        ] {
            let t = trace_model::load(format!("{fixtures}/{f}")).unwrap();
            traces.push((f.to_string(), t));
        }
        traces
    }

    #[test]
    fn the_index_adds_at_most_8_bytes_per_span() {
        let (_, t) = &traces()[0];
        let per_span = TraceIndex::build(t).heap_bytes() as f64 / t.span_count() as f64;
        assert!(per_span <= 8.0, "{per_span} bytes per span");
    }

    /// The queries of `a` and `b` over every lane at several zooms, and how many of `a`'s
    /// lanes answered from a stored level.
    fn same_answers(t: &Trace, a: &TraceIndex, b: &TraceIndex) -> usize {
        let (s, e) = (t.start_ns(), t.end_ns());
        let mut from_levels = 0;
        for (t0, t1) in [(s, e), (s + (e - s) / 3, s + (e - s) / 2)] {
            let detail = Detail::new((t1 - t0).max(1) as f64 / 1920.0);
            for (ti, th) in t.threads().iter().enumerate() {
                for d in 0..th.lanes.len() {
                    let stored = a.later.get().map_or(&a.threads[ti][d], |l| &l[ti][d]);
                    let plan = stored.plan(detail.min_dur(), detail.min_gap());
                    from_levels += (plan != Plan::Walk) as usize;
                    let got = a.query(t, ti, d, t0, t1, detail);
                    assert_eq!(
                        got,
                        b.query(t, ti, d, t0, t1, detail),
                        "thread {ti} depth {d}"
                    );
                }
            }
        }
        from_levels
    }

    /// A page draws from the pyramids alone, then from the levels its worker sends after
    /// them: each answers as the whole build does, and the levels, once set, are used, sent
    /// on, and set only once.
    #[test]
    fn levels_set_after_the_pyramids_answer_as_the_whole_build() {
        let (_, t) = &traces()[0];
        let whole = TraceIndex::build(t);
        let (coarse, plan) = TraceIndex::build_pyramids(t);
        assert_eq!(
            same_answers(t, &coarse, &whole),
            0,
            "no levels before they are set"
        );
        let mut full = TraceIndex::build_pyramids(t).0;
        full.add_levels(t, plan);
        let sent = transfer::tests::levels_in_pieces(t, full.take_levels()).unwrap();
        assert!(coarse.set_levels(sent));
        assert!(
            same_answers(t, &coarse, &whole) > 0,
            "the levels set are used"
        );
        assert_eq!(coarse.to_transfer(), whole.to_transfer());
        let table = TraceIndex::table_bytes(t.threads().iter().map(|th| th.lanes.len()));
        assert_eq!(coarse.heap_bytes(), whole.heap_bytes() + table);
        assert!(!coarse.set_levels(whole.take_levels()), "set once");
        let other = &traces()[1].1;
        let levels = TraceIndex::build(other).take_levels();
        assert!(!TraceIndex::build_pyramids(t).0.set_levels(levels));
    }

    /// The budgeted index of whole traces answers every lane at several zooms exactly as
    /// walking the spans does (the generated trace through its stored levels).
    #[test]
    fn the_trace_index_answers_like_the_walk_on_real_traces() {
        for (name, t) in &traces() {
            let idx = TraceIndex::build(t);
            let (s, e) = (t.start_ns(), t.end_ns());
            let mid = s + (e - s) / 2;
            let mut from_levels = 0;
            let views = [
                (s, e),
                (mid, mid + (e - s) / 10),
                (mid, mid + (e - s) / 100),
            ];
            // Visible gaps of 1 and 3 pixels: the level picked depends on both thresholds.
            for ((t0, t1), gap_px) in views.into_iter().flat_map(|v| [(v, 1.0), (v, 3.0)]) {
                let mut detail = Detail::new((t1 - t0).max(1) as f64 / 1920.0);
                detail.gap_px = gap_px;
                for (ti, th) in t.threads().iter().enumerate() {
                    for (d, lane) in th.lanes.iter().enumerate() {
                        let li = &idx.threads[ti][d];
                        let plan = li.plan(detail.min_dur(), detail.min_gap());
                        from_levels += (plan != Plan::Walk) as usize;
                        let mut got = Vec::new();
                        idx.query_into(t, ti, d, t0, t1, detail, &mut got);
                        let mut walked = Vec::new();
                        let walk_only = LaneIndex::with_levels(lane, &[]);
                        walk_only.query(lane, t0, t1, detail, &mut walked);
                        assert_eq!(got, walked, "{name}: thread {ti} depth {d}");
                    }
                }
            }
            // Real traces with short lanes may keep no levels; the generated one must use them.
            assert!(
                name != "generated" || from_levels > 0,
                "no lane used a stored level"
            );
        }
    }
}
