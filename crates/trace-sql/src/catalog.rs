//! Every table of a trace, built once: the SQLite virtual tables (`lib.rs`) and the Arrow
//! batches (`arrow.rs`) read the same [`Source`]s, so their columns cannot drift apart.

use std::sync::Arc;

use trace_model::Trace;

use crate::samples::{Callsites, Frames, Mappings, Samples};
use crate::sched::{CpuCounterTracks, Sched, ThreadStates};
use crate::slices::Slices;
use crate::source::Source;
use crate::tables::{
    AllTracks, Args, CounterTracks, Counters, Flows, Instants, Processes, ThreadTracks, Threads,
};

/// The tables over one trace, by name, in the order `docs/SQL.md` lists them.
#[derive(Clone)]
pub(crate) struct Catalog {
    pub slices: Slices,
    pub flows: Arc<Flows>,
    pub tables: Vec<(&'static str, Arc<dyn Source>)>,
}

impl Catalog {
    /// O(threads + counter series), and the trace's [`perfetto`](Trace::perfetto) view at
    /// its first use: no rows are copied.
    pub(crate) fn new(trace: Arc<Trace>) -> Catalog {
        // The view's slices are placed now, its flows bound at the first read of them.
        trace.perfetto();
        let slices = Slices { t: trace.clone() };
        let tracks = |process_only| {
            Arc::new(AllTracks {
                t: trace.clone(),
                process_only,
            })
        };
        let flows = Arc::new(Flows { t: trace.clone() });
        let samples = |perf| -> Arc<dyn Source> {
            Arc::new(Samples {
                t: trace.clone(),
                perf,
            })
        };
        let tables: Vec<(&'static str, Arc<dyn Source>)> = vec![
            ("slice", Arc::new(slices.clone())),
            ("thread", Arc::new(Threads::new(trace.clone()))),
            ("process", Arc::new(Processes(trace.clone()))),
            ("track", tracks(false)),
            ("thread_track", Arc::new(ThreadTracks(trace.clone()))),
            ("process_track", tracks(true)),
            ("counter_track", Arc::new(CounterTracks(trace.clone()))),
            (
                "process_counter_track",
                Arc::new(CounterTracks(trace.clone())),
            ),
            ("counter", Arc::new(Counters::new(trace.clone()))),
            ("instant", Arc::new(Instants(trace.clone()))),
            ("flow", flows.clone()),
            ("args", Arc::new(Args::new(trace.clone()))),
            ("cpu_profile_stack_sample", samples(false)),
            ("perf_sample", samples(true)),
            ("stack_profile_callsite", Arc::new(Callsites(trace.clone()))),
            ("stack_profile_frame", Arc::new(Frames(trace.clone()))),
            ("stack_profile_mapping", Arc::new(Mappings(trace.clone()))),
            ("sched", Arc::new(Sched(trace.clone()))),
            ("sched_slice", Arc::new(Sched(trace.clone()))),
            ("thread_state", Arc::new(ThreadStates(trace.clone()))),
            (
                "cpu_counter_track",
                Arc::new(CpuCounterTracks(trace.clone())),
            ),
        ];
        Catalog {
            slices,
            flows,
            tables,
        }
    }

    /// The table `name`.
    #[cfg(feature = "arrow")]
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Source>> {
        self.tables.iter().find(|(n, _)| *n == name).map(|(_, s)| s)
    }
}

/// One declared column of a table: its name, SQLite type (empty when untyped) and whether
/// it is hidden from `SELECT *`.
#[cfg(feature = "arrow")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub ty: String,
    pub hidden: bool,
}

/// The columns of a `CREATE TABLE x(name TYPE [HIDDEN], ...)` as [`Source::schema`] gives.
#[cfg(feature = "arrow")]
pub(crate) fn columns(schema: &str) -> Vec<Column> {
    let inner = schema
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map_or("", |(cols, _)| cols);
    inner
        .split(',')
        .filter_map(|c| {
            let mut words = c.split_whitespace();
            let name = words.next()?.to_string();
            let rest: Vec<&str> = words.collect();
            let hidden = rest.contains(&"HIDDEN");
            let ty = rest.iter().find(|w| **w != "HIDDEN").unwrap_or(&"");
            Some(Column {
                name,
                ty: ty.to_string(),
                hidden,
            })
        })
        .collect()
}

#[cfg(all(test, feature = "arrow"))]
mod tests {
    use super::*;

    #[test]
    fn columns_read_types_and_hidden() {
        let c = columns("CREATE TABLE x(id INTEGER, tid, kind TEXT HIDDEN, slice_id HIDDEN)");
        let got: Vec<(&str, &str, bool)> = c
            .iter()
            .map(|c| (c.name.as_str(), c.ty.as_str(), c.hidden))
            .collect();
        assert_eq!(
            got,
            [
                ("id", "INTEGER", false),
                ("tid", "", false),
                ("kind", "TEXT", true),
                ("slice_id", "", true)
            ]
        );
    }
}
