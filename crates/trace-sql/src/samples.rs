//! The tables of samples, as trace_processor names them: `cpu_profile_stack_sample` or
//! `perf_sample` (whichever the trace's format fills in trace_processor; the other is
//! empty), `stack_profile_callsite`, `stack_profile_frame` and `stack_profile_mapping`.
//! Their ids are the model's perfetto view's ([`trace_model::perfetto::SampleIds`]); this
//! file only exposes them. A sample's weight, which trace_processor's tables do not have,
//! is a hidden column (`SELECT weight`).

use std::ops::Range;
use std::sync::Arc;

use trace_model::perfetto::SampleIds;
use trace_model::Trace;

use crate::source::{only, Bounds, Cell, Constraint, Op, Source};

fn ids(t: &Trace) -> &SampleIds {
    t.perfetto().sample_ids(t)
}

/// A table of `len` rows whose column 0 (the id) is pushed down.
fn id_plan(cons: &[Constraint], len: usize) -> Vec<Range<u64>> {
    let r = Bounds::of(cons, 0).clamp(len);
    only(r.start as u64, r.end as u64)
}

fn id_estimate(cons: &[(usize, Op)], len: usize) -> f64 {
    if cons.contains(&(0, Op::Eq)) {
        1.0
    } else {
        len.max(1) as f64
    }
}

/// `cpu_profile_stack_sample(id, ts, callsite_id, utid, process_priority)` when `perf` is
/// false; `perf_sample(id, ts, utid, cpu, cpu_mode, callsite_id, unwind_error,
/// perf_session_id)` when it is true. Each also has a hidden `weight`.
pub(crate) struct Samples {
    pub t: Arc<Trace>,
    pub perf: bool,
}

impl Samples {
    fn len(&self) -> usize {
        let ids = ids(&self.t);
        match ids.perf == self.perf {
            true => ids.sample_count() as usize,
            false => 0,
        }
    }
}

impl Source for Samples {
    fn schema(&self) -> String {
        match self.perf {
            false => "CREATE TABLE x(id INTEGER, ts INTEGER, callsite_id INTEGER, utid INTEGER, process_priority INTEGER, weight INTEGER HIDDEN)",
            true => "CREATE TABLE x(id INTEGER, ts INTEGER, utid INTEGER, cpu INTEGER, cpu_mode TEXT, callsite_id INTEGER, unwind_error TEXT, perf_session_id INTEGER, weight INTEGER HIDDEN)",
        }
        .into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        id_plan(cons, self.len())
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.t;
        let ids = ids(t);
        let Some((track, i)) = ids.sample(row) else {
            return Cell::Null;
        };
        let st = &t.samples()[track as usize];
        let i = i as usize;
        let callsite = || {
            ids.callsite(st.frame[i])
                .map_or(Cell::Null, |c| Cell::Int(c.into()))
        };
        match (self.perf, col) {
            (_, 0) => Cell::Int(row as i64),
            (_, 1) => Cell::Int(st.ts[i]),
            (false, 2) | (true, 5) => callsite(),
            (false, 3) | (true, 2) => Cell::Int(st.thread.into()),
            (false, 4) => Cell::Int(0),
            // perf's kernel frames are in its `[kernel.kallsyms]` module.
            (true, 4) => {
                let leaf = t.frames().get(st.frame[i] as usize);
                let kernel = leaf.is_some_and(|f| t.str(f.file) == "[kernel.kallsyms]");
                Cell::Text(if kernel { "kernel" } else { "user" })
            }
            (true, 3) => match st.cpu.get(i) {
                Some(&c) if c != trace_model::NO_CPU => Cell::Int(c.into()),
                _ => Cell::Null,
            },
            (false, 5) | (true, 8) => Cell::Int(st.weight[i]),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        id_estimate(cons, self.len())
    }
}

/// `stack_profile_callsite(id, depth, parent_id, frame_id)`.
pub(crate) struct Callsites(pub Arc<Trace>);

impl Source for Callsites {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, depth INTEGER, parent_id INTEGER, frame_id INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        id_plan(cons, ids(&self.0).callsite_frame.len())
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let ids = ids(&self.0);
        let r = row as usize;
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(ids.callsite_depth[r].into()),
            2 => ids.callsite_parent[r].map_or(Cell::Null, |p| Cell::Int(p.into())),
            3 => Cell::Int(ids.callsite_frame[r].into()),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        id_estimate(cons, ids(&self.0).callsite_frame.len())
    }
}

/// `stack_profile_frame(id, name, mapping, rel_pc, symbol_set_id, deobfuscated_name)`, and
/// a hidden `line`.
pub(crate) struct Frames(pub Arc<Trace>);

impl Source for Frames {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, name TEXT, mapping INTEGER, rel_pc INTEGER, symbol_set_id INTEGER, deobfuscated_name TEXT, line INTEGER HIDDEN)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        id_plan(cons, ids(&self.0).frames.len())
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        let f = ids(t).frames[row as usize];
        match col {
            0 | 4 => Cell::Int(row as i64),
            1 => Cell::Text(t.str(f.name)),
            2 => Cell::Int(f.mapping.into()),
            3 => Cell::Int(0),
            6 if f.line > 0 => Cell::Int(f.line.into()),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        id_estimate(cons, ids(&self.0).frames.len())
    }
}

/// `stack_profile_mapping(id, build_id, exact_offset, start_offset, start, end, load_bias,
/// name)`: a module (perf) or source file (a V8 profile), with no addresses.
pub(crate) struct Mappings(pub Arc<Trace>);

impl Source for Mappings {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, build_id TEXT, exact_offset INTEGER, start_offset INTEGER, start INTEGER, end INTEGER, load_bias INTEGER, name TEXT)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        id_plan(cons, ids(&self.0).mappings.len())
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Text(""),
            2 | 3 | 4 | 6 => Cell::Int(0),
            // As trace_processor gives a mapping of no known extent.
            5 => Cell::Int(-1),
            7 => Cell::Text(t.str(ids(t).mappings[row as usize])),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        id_estimate(cons, ids(&self.0).mappings.len())
    }
}
