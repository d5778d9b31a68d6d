//! The tables as plain Rust over a [`Trace`]: each is a [`Source`] of rows numbered by
//! id, which plans the ids a query's constraints can match (the pushdown) and produces one
//! column of one row on demand. No SQLite here; `vtab.rs` adapts these to virtual tables.

use std::ops::Range;
use std::sync::Arc;

use rusqlite::types::Value;
use trace_model::{flags, ExtId, InstantScope, SpanRef, Trace};

/// A comparison SQLite offers to push into a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    pub(crate) fn code(self) -> char {
        match self {
            Op::Eq => '=',
            Op::Gt => '>',
            Op::Ge => 'g',
            Op::Lt => '<',
            Op::Le => 'l',
        }
    }

    pub(crate) fn from_code(c: char) -> Option<Op> {
        Some(match c {
            '=' => Op::Eq,
            '>' => Op::Gt,
            'g' => Op::Ge,
            '<' => Op::Lt,
            'l' => Op::Le,
            _ => return None,
        })
    }
}

/// A constraint on column `col` with its value.
#[derive(Clone, Debug)]
pub(crate) struct Constraint {
    pub col: usize,
    pub op: Op,
    pub value: Value,
}

/// Inclusive integer bounds from the constraints on one column (a superset: SQLite checks
/// every constraint again, so a bound that cannot be expressed is just left out).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub lo: i64,
    pub hi: i64,
}

impl Bounds {
    pub(crate) fn of(cons: &[Constraint], col: usize) -> Bounds {
        let mut b = Bounds {
            lo: i64::MIN,
            hi: i64::MAX,
        };
        for c in cons.iter().filter(|c| c.col == col) {
            let (lo, hi) = match c.value {
                Value::Integer(v) => (v, v),
                Value::Real(f) if f.is_finite() => (f.ceil() as i64, f.floor() as i64),
                _ => continue,
            };
            match c.op {
                Op::Eq => {
                    b.lo = b.lo.max(lo);
                    b.hi = b.hi.min(hi);
                }
                Op::Gt => b.lo = b.lo.max(if lo == hi { lo.saturating_add(1) } else { lo }),
                Op::Ge => b.lo = b.lo.max(lo),
                Op::Lt => b.hi = b.hi.min(if lo == hi { hi.saturating_sub(1) } else { hi }),
                Op::Le => b.hi = b.hi.min(hi),
            }
        }
        b
    }

    /// The part of `0..len` inside the bounds.
    fn clamp(self, len: usize) -> Range<usize> {
        let lo = self.lo.clamp(0, len as i64) as usize;
        let hi = self.hi.saturating_add(1).clamp(0, len as i64) as usize;
        lo..hi.max(lo)
    }
}

/// One table: rows numbered `0..len`, planned and read column by column.
pub(crate) trait Source: Send + Sync {
    /// The `CREATE TABLE x(...)` SQLite is given.
    fn schema(&self) -> String;
    /// Columns whose constraints `plan` narrows by (others are filtered by SQLite).
    fn pushable(&self, col: usize) -> bool;
    /// Columns whose constraints `plan` applies exactly, so SQLite need not check them
    /// (a table-valued function's hidden argument, which no row holds).
    fn exact(&self, _col: usize) -> bool {
        false
    }
    /// Row ids that may satisfy the constraints, as ascending ranges.
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>>;
    /// A cheap check of one planned row against the constraints (false skips it).
    fn keep(&self, _row: u64, _cons: &[Constraint]) -> bool {
        true
    }
    fn column(&self, row: u64, col: usize) -> Value;
    /// Rows that are expanded into several (`args`: one per key); `None` for one row each.
    fn sub_rows(&self, _row: u64) -> Option<Vec<Vec<Value>>> {
        None
    }
    /// About how many rows a plan with these constraints reads.
    fn estimate(&self, cons: &[(usize, Op)]) -> f64;
}

/// One range of row ids.
fn only(lo: u64, hi: u64) -> Vec<Range<u64>> {
    std::iter::once(lo..hi.max(lo)).collect()
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}

fn ext(t: &Trace, id: ExtId) -> Value {
    match id {
        ExtId::Num(n) => Value::Integer(n),
        ExtId::Str(s) => text(t.str(s)),
    }
}

fn args_id(a: trace_model::ArgsId) -> Value {
    if a.0 == 0 {
        Value::Null
    } else {
        Value::Integer(a.0 as i64)
    }
}

/// Slice ids: lanes numbered thread by thread, depth by depth; a span's id is its lane's
/// first id plus its index.
pub(crate) struct SliceIds {
    /// (thread, depth) of each non-empty lane.
    lanes: Vec<(u32, u32)>,
    /// First id of each lane, and the total at the end.
    base: Vec<u64>,
}

impl SliceIds {
    pub(crate) fn new(t: &Trace) -> SliceIds {
        let (mut lanes, mut base) = (Vec::new(), vec![0u64]);
        for (ti, th) in t.threads().iter().enumerate() {
            for (d, lane) in th.lanes.iter().enumerate() {
                if !lane.is_empty() {
                    lanes.push((ti as u32, d as u32));
                    base.push(base.last().unwrap() + lane.len() as u64);
                }
            }
        }
        SliceIds { lanes, base }
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
}

/// `slice(id, ts, dur, name, category, depth, track_id, parent_id, thread_ts, thread_dur,
/// arg_set_id, utid, self_dur, unfinished)`.
pub(crate) struct Slices {
    pub t: Arc<Trace>,
    pub ids: Arc<SliceIds>,
}

pub(crate) const SLICE_COLUMNS: &str = "id INTEGER, ts INTEGER, dur INTEGER, name TEXT, category TEXT, depth INTEGER, track_id INTEGER, parent_id INTEGER, thread_ts INTEGER, thread_dur INTEGER, arg_set_id INTEGER, utid INTEGER, self_dur INTEGER, unfinished INTEGER";
const S_ID: usize = 0;
const S_TS: usize = 1;
const S_DUR: usize = 2;
const S_NAME: usize = 3;
const S_DEPTH: usize = 5;
const S_UTID: usize = 11;

impl Slices {
    pub(crate) fn slice_column(&self, r: SpanRef, col: usize) -> Value {
        let th = &self.t.threads()[r.thread as usize];
        let lane = &th.lanes[r.depth as usize];
        let i = r.index as usize;
        let unfinished = lane.flags[i] & flags::UNFINISHED != 0;
        match col {
            0 => Value::Integer(self.ids.id(r) as i64),
            1 => Value::Integer(lane.start[i]),
            2 => Value::Integer(if unfinished { -1 } else { lane.dur[i] }),
            3 => text(self.t.str(lane.name[i])),
            4 => match self.t.str(lane.cat[i]) {
                "" => Value::Null,
                c => text(c),
            },
            5 => Value::Integer(r.depth as i64),
            6 => Value::Integer(r.thread as i64),
            7 => opt_int(self.t.parent(r).map(|p| self.ids.id(p) as i64)),
            8 | 9 => Value::Null,
            10 => args_id(lane.args[i]),
            11 => Value::Integer(r.thread as i64),
            12 => Value::Integer(th.self_ns(r.depth as usize, i)),
            13 => Value::Integer(unfinished as i64),
            _ => Value::Null,
        }
    }
}

impl Source for Slices {
    fn schema(&self) -> String {
        format!("CREATE TABLE x({SLICE_COLUMNS})")
    }

    fn pushable(&self, col: usize) -> bool {
        matches!(col, S_ID | S_TS | S_DUR | S_NAME | S_DEPTH | S_UTID)
    }

    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let id = Bounds::of(cons, S_ID);
        let (utid, depth, ts) = (
            Bounds::of(cons, S_UTID),
            Bounds::of(cons, S_DEPTH),
            Bounds::of(cons, S_TS),
        );
        let ids = id.clamp(self.ids.len() as usize);
        let mut out = Vec::new();
        for (k, &(thread, d)) in self.ids.lanes.iter().enumerate() {
            if (thread as i64) < utid.lo || (thread as i64) > utid.hi {
                continue;
            }
            if (d as i64) < depth.lo || (d as i64) > depth.hi {
                continue;
            }
            let lane = &self.t.threads()[thread as usize].lanes[d as usize];
            let lo = lane.start.partition_point(|&s| s < ts.lo) as u64;
            let hi = lane.start.partition_point(|&s| s <= ts.hi) as u64;
            let (a, b) = (
                (self.ids.base[k] + lo).max(ids.start as u64),
                (self.ids.base[k] + hi).min(ids.end as u64),
            );
            if a < b {
                out.push(a..b);
            }
        }
        out
    }

    fn keep(&self, row: u64, cons: &[Constraint]) -> bool {
        let Some(r) = self.ids.span(row) else {
            return false;
        };
        let lane = &self.t.threads()[r.thread as usize].lanes[r.depth as usize];
        cons.iter().all(|c| match (c.col, c.op, &c.value) {
            (S_NAME, Op::Eq, Value::Text(want)) => self.t.str(lane.name[r.index as usize]) == want,
            _ => true,
        })
    }

    fn column(&self, row: u64, col: usize) -> Value {
        self.ids
            .span(row)
            .map_or(Value::Null, |r| self.slice_column(r, col))
    }

    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        let mut n = self.ids.len().max(1) as f64;
        for &(col, op) in cons {
            n /= match (col, op) {
                (S_ID, Op::Eq) => n,
                (S_UTID, Op::Eq) => self.t.threads().len().max(1) as f64,
                (S_DEPTH, Op::Eq) => 4.0,
                (S_TS, _) => 4.0,
                (S_NAME, Op::Eq) => 20.0,
                _ => 1.0,
            };
        }
        n.max(1.0)
    }
}

/// `ancestor_slice(id)` and `descendant_slice(id)`: the slice columns, plus the hidden
/// argument `slice_id`.
pub(crate) struct Related {
    pub slices: Slices,
    pub ancestors: bool,
}

const HIDDEN: usize = 14;

impl Source for Related {
    fn schema(&self) -> String {
        format!("CREATE TABLE x({SLICE_COLUMNS}, slice_id HIDDEN)")
    }

    fn pushable(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn exact(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let b = Bounds::of(cons, HIDDEN);
        let ids = &self.slices.ids;
        let Some(r) = (b.lo == b.hi && b.lo >= 0)
            .then(|| ids.span(b.lo as u64))
            .flatten()
        else {
            return Vec::new();
        };
        let t = &self.slices.t;
        if self.ancestors {
            let mut out = Vec::new();
            let mut cur = r;
            while let Some(p) = t.parent(cur) {
                let id = ids.id(p);
                out.push(id..id + 1);
                cur = p;
            }
            out.reverse();
            return out;
        }
        // Descendants are, lane by lane below, the spans starting inside this one.
        let th = &t.threads()[r.thread as usize];
        let lane = &th.lanes[r.depth as usize];
        let (s, e) = (lane.start[r.index as usize], lane.end(r.index as usize));
        let mut out = Vec::new();
        for d in r.depth as usize + 1..th.lanes.len() {
            let down = &th.lanes[d];
            let lo = down.start.partition_point(|&x| x < s);
            let hi = down.start.partition_point(|&x| x < e);
            if lo < hi {
                let first = ids.id(SpanRef {
                    thread: r.thread,
                    depth: d as u32,
                    index: lo as u32,
                });
                out.push(first..first + (hi - lo) as u64);
            }
        }
        out
    }

    fn column(&self, row: u64, col: usize) -> Value {
        self.slices.column(row, col)
    }

    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.iter().any(|&(c, op)| c == HIDDEN && op == Op::Eq) {
            10.0
        } else {
            1e18
        }
    }
}

/// `thread(utid, tid, name, upid, sort_index, pid)`.
pub(crate) struct Threads(pub Arc<Trace>);

impl Source for Threads {
    fn schema(&self) -> String {
        "CREATE TABLE x(utid INTEGER, tid, name TEXT, upid INTEGER, sort_index INTEGER, pid)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(self.0.threads().len());
        only(r.start as u64, r.end as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let t = &self.0;
        let th = &t.threads()[row as usize];
        match col {
            0 => Value::Integer(row as i64),
            1 => ext(t, th.tid),
            2 => th.name.map_or(Value::Null, |n| text(t.str(n))),
            3 => Value::Integer(th.process as i64),
            4 => opt_int(th.sort_index),
            5 => ext(t, th.pid),
            _ => Value::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            1.0
        } else {
            self.0.threads().len().max(1) as f64
        }
    }
}

/// `process(upid, pid, name, sort_index, labels)`.
pub(crate) struct Processes(pub Arc<Trace>);

impl Source for Processes {
    fn schema(&self) -> String {
        "CREATE TABLE x(upid INTEGER, pid, name TEXT, sort_index INTEGER, labels TEXT)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(self.0.processes().len());
        only(r.start as u64, r.end as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let t = &self.0;
        let p = &t.processes()[row as usize];
        match col {
            0 => Value::Integer(row as i64),
            1 => ext(t, p.pid),
            2 => p.name.map_or(Value::Null, |n| text(t.str(n))),
            3 => opt_int(p.sort_index),
            4 if p.labels.is_empty() => Value::Null,
            4 => text(
                &p.labels
                    .iter()
                    .map(|&l| t.str(l))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => Value::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.processes().len().max(1) as f64
    }
}

/// `thread_track(id, name, type, utid)`: one track per thread, its id the thread's utid.
pub(crate) struct ThreadTracks(pub Arc<Trace>);

impl Source for ThreadTracks {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, name TEXT, type TEXT, utid INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0 || col == 3
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let n = self.0.threads().len();
        let (a, b) = (Bounds::of(cons, 0).clamp(n), Bounds::of(cons, 3).clamp(n));
        let (lo, hi) = (a.start.max(b.start), a.end.min(b.end));
        only(lo as u64, hi.max(lo) as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let th = &self.0.threads()[row as usize];
        match col {
            0 | 3 => Value::Integer(row as i64),
            1 => th.name.map_or(Value::Null, |n| text(self.0.str(n))),
            2 => text("thread_track"),
            _ => Value::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.threads().len().max(1) as f64
    }
}

/// `counter_track(id, name, type, upid, key)`: one per counter series; ids follow the
/// thread tracks'.
pub(crate) struct CounterTracks(pub Arc<Trace>);

impl Source for CounterTracks {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, name TEXT, type TEXT, upid INTEGER, key TEXT)".into()
    }
    fn pushable(&self, _col: usize) -> bool {
        false
    }
    fn plan(&self, _cons: &[Constraint]) -> Vec<Range<u64>> {
        only(0, self.0.counters().len() as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let t = &self.0;
        let c = &t.counters()[row as usize];
        match col {
            0 => Value::Integer((t.threads().len() as u64 + row) as i64),
            1 => text(t.str(c.name)),
            2 => text("process_counter_track"),
            3 => Value::Integer(c.process as i64),
            4 => text(t.str(c.key)),
            _ => Value::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.counters().len().max(1) as f64
    }
}

/// `counter(id, ts, value, track_id)`: every sample of every series, series by series.
pub(crate) struct Counters {
    pub t: Arc<Trace>,
    /// First id of each series, and the total at the end.
    pub base: Vec<u64>,
}

impl Counters {
    pub(crate) fn new(t: Arc<Trace>) -> Counters {
        let mut base = vec![0u64];
        for c in t.counters() {
            base.push(base.last().unwrap() + c.ts.len() as u64);
        }
        Counters { t, base }
    }
}

impl Source for Counters {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, ts INTEGER, value REAL, track_id INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 1 || col == 3
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let first = self.t.threads().len() as i64;
        let (track, ts) = (Bounds::of(cons, 3), Bounds::of(cons, 1));
        let series = Bounds {
            lo: track.lo.saturating_sub(first),
            hi: track.hi.saturating_sub(first),
        }
        .clamp(self.t.counters().len());
        let mut out = Vec::new();
        for k in series {
            let c = &self.t.counters()[k];
            let lo = c.ts.partition_point(|&s| s < ts.lo) as u64;
            let hi = c.ts.partition_point(|&s| s <= ts.hi) as u64;
            if lo < hi {
                out.push(self.base[k] + lo..self.base[k] + hi);
            }
        }
        out
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let k = self.base.partition_point(|&b| b <= row) - 1;
        let c = &self.t.counters()[k];
        let i = (row - self.base[k]) as usize;
        match col {
            0 => Value::Integer(row as i64),
            1 => Value::Integer(c.ts[i]),
            2 => Value::Real(c.values[i]),
            3 => Value::Integer(self.t.threads().len() as i64 + k as i64),
            _ => Value::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        let n = *self.base.last().unwrap() as f64;
        if cons.iter().any(|&(c, _)| c == 3) {
            n / self.t.counters().len().max(1) as f64
        } else {
            n.max(1.0)
        }
    }
}

/// `instant(id, ts, name, category, scope, utid, upid, arg_set_id)`.
pub(crate) struct Instants(pub Arc<Trace>);

impl Source for Instants {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, ts INTEGER, name TEXT, category TEXT, scope TEXT, utid INTEGER, upid INTEGER, arg_set_id INTEGER)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(self.0.instants().len());
        only(r.start as u64, r.end as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let t = &self.0;
        let e = &t.instants()[row as usize];
        match col {
            0 => Value::Integer(row as i64),
            1 => Value::Integer(e.ts),
            2 => text(t.str(e.name)),
            3 => match t.str(e.cat) {
                "" => Value::Null,
                c => text(c),
            },
            4 => text(match e.scope {
                InstantScope::Global => "global",
                InstantScope::Process => "process",
                InstantScope::Thread => "thread",
            }),
            5 if e.scope == InstantScope::Thread => Value::Integer(e.thread as i64),
            6 if e.scope != InstantScope::Global => Value::Integer(e.process as i64),
            7 => args_id(e.args),
            _ => Value::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.instants().len().max(1) as f64
    }
}

/// `flow(id, slice_out, slice_in, name, category)`: flows bound to spans.
pub(crate) struct Flows {
    pub t: Arc<Trace>,
    pub ids: Arc<SliceIds>,
}

impl Source for Flows {
    fn schema(&self) -> String {
        "CREATE TABLE x(id INTEGER, slice_out INTEGER, slice_in INTEGER, name TEXT, category TEXT)"
            .into()
    }
    fn pushable(&self, _col: usize) -> bool {
        false
    }
    fn plan(&self, _cons: &[Constraint]) -> Vec<Range<u64>> {
        only(0, self.t.flow_links().len() as u64)
    }
    fn column(&self, row: u64, col: usize) -> Value {
        let l = &self.t.flow_links()[row as usize];
        let f = &self.t.flows()[l.flow as usize];
        match col {
            0 => Value::Integer(row as i64),
            1 => Value::Integer(self.ids.id(l.from) as i64),
            2 => Value::Integer(self.ids.id(l.to) as i64),
            3 => text(self.t.str(f.name)),
            4 => text(self.t.str(f.cat)),
            _ => Value::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.t.flow_links().len().max(1) as f64
    }
}

/// `args(arg_set_id, flat_key, key, int_value, string_value, real_value, value_type)`:
/// parsed from the raw JSON of each argument set only when read.
pub(crate) struct Args(pub Arc<Trace>);

impl Args {
    /// One past the last argument set id.
    fn sets(&self) -> u64 {
        self.0.args().count() as u64 + 1
    }
}

impl Source for Args {
    fn schema(&self) -> String {
        "CREATE TABLE x(arg_set_id INTEGER, flat_key TEXT, key TEXT, int_value INTEGER, string_value TEXT, real_value REAL, value_type TEXT)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(self.sets() as usize);
        only((r.start as u64).max(1), r.end as u64)
    }
    fn column(&self, _row: u64, _col: usize) -> Value {
        Value::Null
    }
    fn sub_rows(&self, row: u64) -> Option<Vec<Vec<Value>>> {
        let mut out = Vec::new();
        if let Some(v) = self.0.args().json(trace_model::ArgsId(row as u32)) {
            flatten(row, &v, "args", "args", &mut out);
        }
        Some(out)
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            4.0
        } else {
            self.sets() as f64 * 4.0
        }
    }
}

/// One row per leaf value: `flat_key` without array indices, `key` with them (Perfetto's
/// `args.foo.bar` and `args.list[0]`).
fn flatten(set: u64, v: &serde_json::Value, flat: &str, key: &str, out: &mut Vec<Vec<Value>>) {
    use serde_json::Value as J;
    let row = |int: Value, s: Value, real: Value, ty: &str| {
        vec![
            Value::Integer(set as i64),
            text(flat),
            text(key),
            int,
            s,
            real,
            text(ty),
        ]
    };
    match v {
        J::Object(m) => {
            for (k, x) in m {
                flatten(set, x, &format!("{flat}.{k}"), &format!("{key}.{k}"), out);
            }
        }
        J::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(set, x, flat, &format!("{key}[{i}]"), out);
            }
        }
        J::Null => out.push(row(Value::Null, Value::Null, Value::Null, "null")),
        J::Bool(b) => out.push(row(
            Value::Integer(*b as i64),
            Value::Null,
            Value::Null,
            "bool",
        )),
        J::Number(n) => match n.as_i64() {
            Some(i) => out.push(row(Value::Integer(i), Value::Null, Value::Null, "int")),
            None => out.push(row(
                Value::Null,
                Value::Null,
                Value::Real(n.as_f64().unwrap_or(f64::NAN)),
                "real",
            )),
        },
        J::String(s) => out.push(row(Value::Null, text(s), Value::Null, "string")),
    }
}
