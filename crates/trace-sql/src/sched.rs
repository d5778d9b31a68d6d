//! A system trace's tables, as trace_processor names them: `sched` (and its other name
//! `sched_slice`), `thread_state` and `cpu_counter_track` (whose values are `counter`
//! rows, see `tables::Counters`). Threads are `thread` rows (utid = the model's thread
//! index); traces with no scheduler records have these tables, empty.

use std::ops::Range;
use std::sync::Arc;

use trace_model::sched::{SchedData, TaskState};
use trace_model::Trace;

use crate::source::{only, opt_int, Bounds, Cell, Constraint, Op, Source};

static EMPTY: SchedData = SchedData::empty();

pub(crate) fn data(t: &Trace) -> &SchedData {
    t.sched().unwrap_or(&EMPTY)
}

fn state<'a>(s: TaskState) -> Cell<'a> {
    match s {
        TaskState::RUNNING => Cell::Text("Running"),
        TaskState::RUNNABLE => Cell::Text("R"),
        TaskState::PREEMPTED => Cell::Text("R+"),
        s => s.text().map_or(Cell::Null, Cell::Owned),
    }
}

/// `sched(id, ts, dur, cpu, utid, end_state, priority, ucpu)`: one row per scheduling
/// slice, by CPU, then time (`dur` -1 and `end_state` NULL for a slice still running).
pub(crate) struct Sched(pub Arc<Trace>);

impl Source for Sched {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, cpu INTEGER, utid INTEGER, end_state TEXT, priority INTEGER, ucpu INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(data(&self.0).slices.len());
        only(r.start as u64, r.end as u64)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let d = data(&self.0);
        let s = &d.slices[row as usize];
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(s.ts),
            2 => Cell::Int(s.dur),
            3 | 7 => Cell::Int(d.slice_cpu(row as usize) as i64),
            4 => Cell::Int(s.thread as i64),
            5 if s.dur < 0 => Cell::Null,
            5 => state(s.end_state),
            6 => Cell::Int(s.priority as i64),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            1.0
        } else {
            data(&self.0).slices.len().max(1) as f64
        }
    }
}

/// `thread_state(id, ts, dur, cpu, utid, state, io_wait, blocked_function, waker_utid,
/// irq_context, ucpu)`: every thread's states, in time order.
pub(crate) struct ThreadStates(pub Arc<Trace>);

impl Source for ThreadStates {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, ts INTEGER, dur INTEGER, cpu INTEGER, utid INTEGER, state TEXT, io_wait INTEGER, blocked_function TEXT, waker_utid INTEGER, irq_context INTEGER, ucpu INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(data(&self.0).state_count());
        only(r.start as u64, r.end as u64)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        let s = data(t).state(row as usize);
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(s.ts),
            2 => Cell::Int(s.dur()),
            3 | 10 => opt_int(s.cpu().map(i64::from)),
            4 => Cell::Int(s.thread as i64),
            5 => state(s.state()),
            6 => opt_int(s.io_wait().map(i64::from)),
            7 => (s.blocked_function()).map_or(Cell::Null, |f| Cell::Text(t.str(f))),
            8 => opt_int(s.waker().map(i64::from)),
            9 => opt_int(s.irq().map(i64::from)),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            1.0
        } else {
            data(&self.0).state_count().max(1) as f64
        }
    }
}

/// The id of the first CPU counter track: after every other track.
pub(crate) fn first_cpu_track(t: &Trace) -> u64 {
    let v = t.perfetto();
    v.first_track() + v.tracks().len() as u64
}

/// `cpu_counter_track(id, name, type, cpu, ucpu)`: one track per CPU counter
/// (`cpufreq`, `cpuidle`), ids after every other track's.
pub(crate) struct CpuCounterTracks(pub Arc<Trace>);

impl Source for CpuCounterTracks {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, name TEXT, type TEXT, cpu INTEGER, ucpu INTEGER)".into()
    }
    fn pushable(&self, _col: usize) -> bool {
        false
    }
    fn plan(&self, _cons: &[Constraint]) -> Vec<Range<u64>> {
        only(0, data(&self.0).counters.len() as u64)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let c = &data(&self.0).counters[row as usize];
        match col {
            0 => Cell::Int((first_cpu_track(&self.0) + row) as i64),
            1 => Cell::Text(c.kind.name()),
            2 => Cell::Text("cpu_counter_track"),
            3 | 4 => Cell::Int(c.cpu as i64),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        data(&self.0).counters.len().max(1) as f64
    }
}
