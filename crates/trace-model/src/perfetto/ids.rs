//! Slice ids for spans: stable, dense, and found again from a `SpanRef` without a map.

use super::nesting::Nesting;
use crate::span::{SpanRef, Thread};
use crate::trace::Trace;

/// Slice ids: lanes numbered thread by thread, depth by depth; a span's id is its lane's
/// first id plus its index. The lanes are `slice`'s, nested as trace_processor nests them
/// ([`Nesting`]); a `SpanRef` here is into those lanes, not the model's.
pub(crate) struct SliceIds {
    /// (thread, depth) of each non-empty lane.
    pub(crate) lanes: Vec<(u32, u32)>,
    /// First id of each lane, and the total at the end.
    pub(crate) base: Vec<u64>,
    pub(crate) nest: Nesting,
}

impl SliceIds {
    pub(crate) fn new(t: &Trace) -> SliceIds {
        let nest = Nesting::new(t);
        let (mut lanes, mut base) = (Vec::new(), vec![0u64]);
        for ti in 0..t.threads().len() as u32 {
            for (d, lane) in nest.thread(t, ti).lanes.iter().enumerate() {
                if !lane.is_empty() {
                    lanes.push((ti, d as u32));
                    base.push(base.last().unwrap() + lane.len() as u64);
                }
            }
        }
        SliceIds { lanes, base, nest }
    }

    pub(crate) fn len(&self) -> u64 {
        *self.base.last().unwrap()
    }

    pub(crate) fn span(&self, id: u64) -> Option<SpanRef> {
        if id >= self.len() {
            return None;
        }
        let k = self.base.partition_point(|&b| b <= id) - 1;
        let (thread, depth) = self.lanes[k];
        Some(SpanRef {
            thread,
            depth,
            index: (id - self.base[k]) as u32,
        })
    }

    pub(crate) fn id(&self, r: SpanRef) -> u64 {
        let k = self.lanes.partition_point(|&l| l < (r.thread, r.depth));
        self.base[k] + r.index as u64
    }

    /// The id of the model's span `r`, if `slice` holds it.
    pub(crate) fn of_model(&self, r: SpanRef) -> Option<u64> {
        self.nest.here(r).map(|r| self.id(r))
    }

    /// Thread `i` with `slice`'s lanes.
    pub(crate) fn thread<'a>(&'a self, t: &'a Trace, i: u32) -> &'a Thread {
        self.nest.thread(t, i)
    }
}
