//! [`SampleStacks`]: a thread's samples as stacks over time, one lane of merged boxes per
//! depth ([`SampleTrack::stack_lanes`](trace_model::SampleTrack::stack_lanes)), each with
//! a span lane's index, so that a timeline draws them as it draws spans: about one item
//! per pixel, whatever the number of samples.

use rayon::prelude::*;
use trace_model::{Lane, Trace};

use crate::detail::Detail;
use crate::item::Item;
use crate::lane::LaneIndex;
use crate::pyramid::Pyramid;

/// One sample track's stacks over time, indexed.
#[derive(Clone, Debug, Default)]
pub struct SampleStacks {
    /// Index into `Trace::samples`.
    pub track: u32,
    /// `lanes[d]`: the boxes at depth `d` (0 is the outermost frame).
    pub lanes: Vec<Lane>,
    pub(crate) index: Vec<LaneIndex>,
}

impl SampleStacks {
    /// The stacks of `t.samples()[track]`, given its frames' depths
    /// ([`trace_model::frame_depths`]): O(boxes).
    pub fn build(t: &Trace, track: u32, depths: &[u32]) -> SampleStacks {
        let lanes = t.samples()[track as usize].stack_lanes_at(t.frames(), depths);
        // The pyramid alone bounds a query's cost by its items; stored levels would only
        // speed up the coarsest views of lanes that are rarely millions of boxes long.
        let index = (lanes.iter())
            .map(|l| LaneIndex::new(l, Pyramid::build(l), &[]))
            .collect();
        SampleStacks {
            track,
            lanes,
            index,
        }
    }

    /// Per thread of `t`, its sample track's stacks (empty where it has none), the tracks
    /// in parallel.
    pub fn by_thread(t: &Trace) -> Vec<SampleStacks> {
        let mut by_thread: Vec<Option<u32>> = vec![None; t.threads().len()];
        for (i, s) in t.samples().iter().enumerate() {
            by_thread[s.thread as usize] = Some(i as u32);
        }
        let depths = trace_model::frame_depths(t.frames());
        (by_thread.par_iter())
            .map(|s| {
                s.map_or_else(SampleStacks::default, |s| {
                    SampleStacks::build(t, s, &depths)
                })
            })
            .collect()
    }

    /// The number of depths.
    pub fn depth(&self) -> usize {
        self.lanes.len()
    }

    /// Appends the boxes of depth `depth` overlapping `[t0, t1]` at `detail` to `out`, with
    /// the guarantees of [`TraceIndex::query`](crate::TraceIndex::query) (an item's span
    /// index is the box's index in its lane).
    pub fn query_into(&self, depth: usize, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
        if let (Some(lane), Some(ix)) = (self.lanes.get(depth), self.index.get(depth)) {
            ix.query(lane, t0, t1, detail, out);
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let lanes: usize = self.lanes.iter().map(Lane::heap_bytes).sum();
        lanes + self.index.iter().map(LaneIndex::heap_bytes).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_returns_boxes_not_samples() {
        // 1000 samples of one stack, then 1000 of another: two boxes per depth at any zoom.
        let mut text = String::new();
        for _ in 0..1000 {
            text.push_str("main;a 1\n");
        }
        for _ in 0..1000 {
            text.push_str("main;b 1\n");
        }
        let t = trace_model::load_bytes(text.as_bytes()).unwrap();
        let st = SampleStacks::build(&t, 0, &trace_model::frame_depths(t.frames()));
        assert_eq!(st.depth(), 2);
        let mut out = Vec::new();
        st.query_into(1, 0, 2000, Detail::new(0.5), &mut out);
        let names: Vec<&str> = out.iter().map(|i| t.str(i.name)).collect();
        assert_eq!(names, vec!["a", "b"]);
        out.clear();
        st.query_into(0, 0, 2000, Detail::new(100.0), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].start, out[0].end), (0, 2000));
    }
}
