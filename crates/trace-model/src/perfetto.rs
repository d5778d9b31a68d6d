//! The trace as Perfetto's trace_processor sees it: its `slice` table's ids, nesting and
//! tracks, and its flows. Computed once per trace, at first use ([`Trace::perfetto`]): a
//! load that never asks for SQL pays nothing, and every reader (trace-sql's tables, the
//! viewer's query panel turning a row's `slice_id` back into a span, `spall-cli export`,
//! the Python package, the web page) reads the same ids. The web page's trace, handed over
//! by the transfer, computes it on the page at its first query too: the transfer does not
//! carry it.
//!
//! The model keeps what the file says, for the viewer and the statistics; trace_processor
//! settles some events otherwise, and SQL answers as it does. Each rule lives here once:
//!
//! - **Nesting** (`nesting`): a span that outlives the slice it starts in (kept by the
//!   model one level deeper) and a span before time 0 are not slices; two zero-length spans
//!   at one time nest one inside the other; a negative tid's spans join their process's
//!   main thread. Only the threads that need it are renested; the others are the model's.
//! - **Slice ids** (`ids`): spans first, thread by thread and depth by depth, mapped to the
//!   model's [`SpanRef`]s both ways ([`View::model_span`], [`View::slice_of`]).
//! - **Placement** (`placed`): thread instants nested inside the deepest span open at
//!   their time, process and global instants on tracks of their own, nestable async slices
//!   on global, process or second thread tracks, as trace_processor places them.
//! - **Flows** (`flows`): trace_processor's flow binding and chaining. The model binds
//!   flows its own way too ([`Trace::flow_links`], chrome://tracing's rule: an `s` leaves
//!   the *enclosing* span, an `f` ends the flow), because the viewer draws its arrows as
//!   chrome://tracing draws them, between spans it shows; trace_processor leaves from the
//!   slice on top of its stack (an instant too), keeps a flow going past an `f`, and binds
//!   to slices the model keeps but trace_processor drops. Both exist on purpose: the viewer
//!   agrees with chrome://tracing, SQL with trace_processor.
//! - **Threads**: the main thread (tid = pid) trace_processor adds to each process that
//!   has none, and reads a tid of 0 as ([`View::added_main_threads`], [`View::tid`]).
//! - **Relatives** (`relatives`): the ids of a slice's ancestors and descendants.
//! - **Samples** (`samples`): callsite, frame, mapping and sample ids of the sample
//!   tables (V8's `(root)` kept as trace_processor keeps it).
//!
//! The rules and their reasons, with the differences that remain, are in docs/SQL.md.

mod flows;
mod ids;
mod nesting;
mod placed;
mod relatives;
mod samples;
mod threads;

use std::ops::Range;
use std::sync::OnceLock;

use crate::span::{ExtId, SpanRef, Thread};
use crate::trace::Trace;

pub use flows::FlowRow;
pub use placed::{Row, Scope, Src, Track};
pub use samples::{SampleIds, SqlFrame};

use ids::SliceIds;
use placed::Placed;
use threads::MainThreads;

/// trace_processor's view of one trace (see the module docs). Its methods that take a
/// [`Trace`] must be given the trace it was computed for.
pub struct View {
    ids: SliceIds,
    placed: Placed,
    mains: MainThreads,
    /// Bound at the first use: a query that never reads `flow` does not bind them.
    flows: OnceLock<Vec<FlowRow>>,
    /// Made at the first use, as the flows are.
    samples: OnceLock<SampleIds>,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("spans", &self.span_slices())
            .field("slices", &self.len())
            .field("tracks", &self.placed.tracks.len())
            .finish()
    }
}

impl View {
    /// O(spans) to find the threads to renest, O(n log n) in those threads' spans,
    /// O(instants × depth + async slices) to place the rest.
    pub(crate) fn new(t: &Trace) -> View {
        let ids = SliceIds::new(t);
        let placed = Placed::new(t, &ids);
        let mains = MainThreads::new(t);
        View {
            ids,
            placed,
            mains,
            flows: OnceLock::new(),
            samples: OnceLock::new(),
        }
    }

    /// The number of slices: ids are `0..len()`.
    pub fn len(&self) -> u64 {
        self.placed.end()
    }

    /// Whether the trace has no slice at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of span slices: ids `0..span_slices()` are spans, the rest instants and
    /// async slices ([`row`](View::row)).
    pub fn span_slices(&self) -> u64 {
        self.ids.len()
    }

    /// The span of slice `id`, in the view's lanes ([`thread`](View::thread)); `None` for
    /// an instant, an async slice or no slice.
    pub fn span(&self, id: u64) -> Option<SpanRef> {
        self.ids.span(id)
    }

    /// The slice id of span `r` of the view's lanes.
    pub fn id(&self, r: SpanRef) -> u64 {
        self.ids.id(r)
    }

    /// Each non-empty lane of the view: (thread, depth, its first span's id); a lane's
    /// spans have consecutive ids.
    pub fn span_lanes(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        (self.ids.lanes.iter().zip(&self.ids.base)).map(|(&(t, d), &b)| (t, d, b))
    }

    /// The model's span of slice `id` (a span slice's): what a UI selects for a row.
    /// O(log lanes).
    pub fn model_span(&self, id: u64) -> Option<SpanRef> {
        Some(self.ids.nest.to_model(self.ids.span(id)?))
    }

    /// The slice id of the model's span `r`; `None` where trace_processor has no such
    /// slice (a partial overlap, a span before time 0).
    pub fn slice_of(&self, r: SpanRef) -> Option<u64> {
        self.ids.of_model(r)
    }

    /// Thread `i` with the view's lanes (the model's own where nothing differs; none for
    /// a thread merged into its main thread).
    pub fn thread<'a>(&'a self, t: &'a Trace, i: u32) -> &'a Thread {
        self.ids.thread(t, i)
    }

    /// The parent of span `r` of the view's lanes.
    pub fn parent(&self, t: &Trace, r: SpanRef) -> Option<SpanRef> {
        self.ids.nest.parent(t, r)
    }

    /// Whether thread `i`'s events are on its process's main thread's track (a tid that
    /// is no 32-bit unsigned number), the thread absent from `thread`.
    pub fn is_merged(&self, i: u32) -> bool {
        self.ids.nest.is_merged(i)
    }

    /// The instant or async slice with id `id`.
    pub fn row(&self, id: u64) -> Option<&Row> {
        self.placed.row(id)
    }

    /// Every instant and async slice, in id order from [`span_slices`](View::span_slices).
    pub fn rows(&self) -> &[Row] {
        &self.placed.rows
    }

    /// The tracks beyond the threads' and the counters', from id
    /// [`first_track`](View::first_track): the process tracks, then the threads' second
    /// tracks, then the global ones.
    pub fn tracks(&self) -> &[Track] {
        &self.placed.tracks
    }

    /// The id of the first of [`tracks`](View::tracks) (threads' tracks, then counters',
    /// come before).
    pub fn first_track(&self) -> u64 {
        self.placed.first_track
    }

    /// How many of [`tracks`](View::tracks) are process tracks, and threads' second tracks.
    pub fn track_counts(&self) -> (usize, usize) {
        (self.placed.process_tracks, self.placed.thread_tracks)
    }

    /// The arg set id of async slice `a` (an index into [`Trace::async_slices`]): its
    /// `b`'s and `e`'s args together, as trace_processor keeps them; a set of both has an
    /// id after the model's ([`merged_args`](View::merged_args)).
    pub fn arg_set(&self, t: &Trace, a: u32) -> i64 {
        self.placed.arg_set(t, a)
    }

    /// The async slices whose `b` and `e` both had args, sorted: arg set
    /// `t.args().count() + 1 + k` holds the `k`-th's.
    pub fn merged_args(&self) -> &[u32] {
        &self.placed.merged_args
    }

    /// The ids of slice `id`'s ancestors, as ascending ranges (outermost first).
    pub fn ancestor_ids(&self, t: &Trace, id: u64) -> Vec<Range<u64>> {
        relatives::ancestors(self, t, id)
    }

    /// The ids of slice `id`'s descendants, as ascending ranges, lane by lane.
    pub fn descendant_ids(&self, t: &Trace, id: u64) -> Vec<Range<u64>> {
        relatives::descendants(self, t, id)
    }

    /// The flows, bound and chained as trace_processor binds and chains them (bound at the
    /// first call).
    pub fn flows(&self, t: &Trace) -> &[FlowRow] {
        self.flows.get_or_init(|| flows::bind(t, self))
    }

    /// The ids of the sample tables (made at the first call).
    pub fn sample_ids(&self, t: &Trace) -> &SampleIds {
        self.samples.get_or_init(|| SampleIds::new(t))
    }

    /// The processes given a main thread (tid = pid, no name, no track) that the trace
    /// does not have, in order: `thread`'s rows after the model's threads.
    pub fn added_main_threads(&self) -> &[u32] {
        &self.mains.added
    }

    /// The tid trace_processor gives a thread of the model: a tid of 0 in a process whose
    /// pid is not 0 and that has no main thread is that main thread.
    pub fn tid(&self, th: &Thread) -> ExtId {
        self.mains.tid(th)
    }

    /// The process trace_processor puts a thread of the model in: none for a thread of a
    /// system trace that only the scheduler names (no process tree, tgid column or new
    /// task places it), which the model keeps in process 0 beside the idle task.
    pub fn upid(&self, t: &Trace, th: &Thread) -> Option<u32> {
        let unplaced = th.pid == ExtId::Num(0) && th.tid != ExtId::Num(0) && t.sched().is_some();
        (!unplaced).then_some(th.process)
    }
}

impl Trace {
    /// trace_processor's view of this trace: its slice ids, nesting, tracks and flows,
    /// computed at the first call (see [`View`]).
    pub fn perfetto(&self) -> &View {
        self.derived.perfetto(|| View::new(self))
    }
}

#[cfg(test)]
mod tests {
    use crate::span::{flags, SpanRef};

    /// On a real trace with negative tids merged into their main threads (PyTorch's CUDA
    /// runtime threads), every span slice maps to a model span and back, and a model span
    /// without a slice is on a renested thread; the view is computed once.
    #[test]
    fn slice_ids_map_to_model_spans_both_ways_on_a_real_trace() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/pytorch_kineto_trace_diff_test.json.gz"
        );
        let t = crate::load_bytes(&std::fs::read(path).unwrap()).unwrap();
        let v = t.perfetto();
        assert!(std::ptr::eq(v, t.perfetto()), "computed once");
        let merged = (0..t.threads().len() as u32).filter(|&i| v.is_merged(i));
        assert!(merged.count() > 0, "the fixture has negative tids");
        for id in 0..v.span_slices() {
            let r = v.model_span(id).expect("a span slice");
            assert_eq!(v.slice_of(r), Some(id), "{r:?}");
            // The view's span is the model's, moved.
            let here = v.span(id).unwrap();
            let lane = &v.thread(&t, here.thread).lanes[here.depth as usize];
            assert_eq!(lane.start[here.index as usize], t.span(r).start);
            assert_eq!(lane.name[here.index as usize], t.span(r).name);
        }
        let mut kept = 0;
        for (ti, th) in t.threads().iter().enumerate() {
            for (d, lane) in th.lanes.iter().enumerate() {
                for i in 0..lane.len() {
                    let r = SpanRef {
                        thread: ti as u32,
                        depth: d as u32,
                        index: i as u32,
                    };
                    match v.slice_of(r) {
                        Some(id) => {
                            kept += 1;
                            assert_eq!(v.model_span(id), Some(r));
                        }
                        // A partial overlap, a span before time 0, or one that overlaps a
                        // span of a thread merged with its own.
                        None => assert!(
                            lane.flags[i] & flags::PARTIAL_OVERLAP != 0
                                || lane.start[i] < 0
                                || !std::ptr::eq(v.thread(&t, ti as u32), th),
                            "{r:?} dropped"
                        ),
                    }
                }
            }
        }
        assert_eq!(kept, v.span_slices());
        assert_eq!(v.model_span(v.span_slices()), None, "an instant or none");
    }

    /// JSON async operations share tracks as trace_processor's track compressor shares
    /// them: every operation of one id is on the track of its id's first name (Chrome's
    /// `performance.mark` steps of one `id2.local`), an `n` after its operation ended too,
    /// and an id goes back to the track it had, not to the first one free.
    #[test]
    fn json_async_operations_of_one_id_share_its_first_names_track() {
        let t = crate::load_bytes(
            br#"[
            {"ph":"b","name":"step-0","cat":"u","ts":0,"pid":1,"tid":1,"id2":{"local":"0x1"}},
            {"ph":"e","name":"step-0","cat":"u","ts":10,"pid":1,"tid":1,"id2":{"local":"0x1"}},
            {"ph":"b","name":"step-1","cat":"u","ts":20,"pid":1,"tid":1,"id2":{"local":"0x1"}},
            {"ph":"b","name":"step-0","cat":"u","ts":25,"pid":1,"tid":1,"id2":{"local":"0x2"}},
            {"ph":"e","name":"step-1","cat":"u","ts":30,"pid":1,"tid":1,"id2":{"local":"0x1"}},
            {"ph":"n","name":"mark","cat":"u","ts":40,"pid":1,"tid":1,"id2":{"local":"0x1"}},
            {"ph":"e","name":"step-0","cat":"u","ts":45,"pid":1,"tid":1,"id2":{"local":"0x2"}},
            {"ph":"b","name":"again","cat":"u","ts":50,"pid":1,"tid":1,"id2":{"local":"0x2"}},
            {"ph":"e","name":"again","cat":"u","ts":60,"pid":1,"tid":1,"id2":{"local":"0x2"}}
        ]"#,
        )
        .unwrap();
        let v = t.perfetto();
        let track = |name: &str, ts: i64| {
            let row = v.rows().iter().find(|r| match r.src {
                super::Src::Async(a) => {
                    let s = &t.async_slices()[a as usize];
                    t.str(s.name) == name && s.start == ts * 1000
                }
                _ => false,
            });
            row.expect(name).track
        };
        let first = track("step-0", 0);
        assert_eq!(track("step-1", 20), first);
        assert_eq!(track("mark", 40), first);
        // 0x2 began while 0x1 was open: a second track, which it keeps.
        let second = track("step-0", 25);
        assert_ne!(second, first);
        assert_eq!(track("again", 50), second);
        assert_eq!(v.tracks().len(), 2, "{:?}", v.tracks());
    }
}
