//! Visible-range queries, level of detail, hit testing and navigation over a
//! [`trace_model::Trace`], with the cost of a frame bounded by pixels, not events.
//!
//! Each lane (a thread at one depth) is already sorted with no overlaps, so a range query is
//! a binary search and a walk. On top, [`TraceIndex`] keeps per lane a pyramid of block
//! summaries (16, 256, 4096, ... spans) so that at any zoom a lane yields about one
//! [`Item`] per pixel: spans wide enough to see come back as themselves, and runs of narrow
//! spans come back as merged boxes that cover every span in them. See `docs/INDEX.md`.
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
//! assert!(matches!(items[0], Item::Merged(m) if m.count() == 1000));
//! assert!(matches!(items[1], Item::Span(1000)));
//! ```

mod lod;
mod nav;
mod pyramid;

pub use lod::{first_ending_at_or_after, query as query_lane, Detail, Item, Merged};
pub use nav::{children, hit_test, occurrences, occurrences_of, parent, Hit};
pub use pyramid::{Block, Pyramid, FANOUT};

use rayon::prelude::*;
use trace_model::Trace;

/// Level-of-detail summaries for every lane of a trace.
#[derive(Clone, Debug, Default)]
pub struct TraceIndex {
    /// `threads[t][d]`: the pyramid of thread `t`'s lane at depth `d`.
    pub threads: Vec<Vec<Pyramid>>,
}

impl TraceIndex {
    /// Builds the summaries, threads in parallel. O(spans).
    pub fn build(trace: &Trace) -> TraceIndex {
        TraceIndex {
            threads: trace
                .threads
                .par_iter()
                .map(|t| t.lanes.iter().map(Pyramid::build).collect())
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
        let pyr = &self.threads[thread][depth];
        lod::query(lane, pyr, t0, t1, detail, out);
    }

    /// Heap bytes held by the summaries.
    pub fn heap_bytes(&self) -> usize {
        self.threads.iter().flatten().map(Pyramid::heap_bytes).sum()
    }
}
