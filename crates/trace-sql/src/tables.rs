//! The tables other than `slice`: threads, processes, tracks, counters, instants, flows
//! and args.

use std::ops::Range;
use std::sync::Arc;

use rusqlite::types::Value;
use trace_model::perfetto::{FlowRow, Scope};
use trace_model::tagged::{self, Tagged};
use trace_model::{ExtId, InstantScope, Trace};

use crate::source::{args_id, ext, only, opt_int, text, Bounds, Cell, Constraint, Op, Source};

/// `thread(utid, tid, name, upid, sort_index, pid)`: the model's threads but those merged
/// into their main thread, then the main threads trace_processor adds (tid = pid, no name)
/// to each process that has none ([`trace_model::perfetto::View::added_main_threads`]).
pub(crate) struct Threads {
    pub t: Arc<Trace>,
    /// The threads merged into their main thread, sorted.
    merged: Vec<u64>,
}

impl Threads {
    pub(crate) fn new(t: Arc<Trace>) -> Threads {
        let v = t.perfetto();
        let merged: Vec<u64> = (0..t.threads().len() as u32)
            .filter(|&i| v.is_merged(i))
            .map(u64::from)
            .collect();
        Threads { t, merged }
    }

    fn len(&self) -> usize {
        self.t.threads().len() + self.t.perfetto().added_main_threads().len()
    }
}

impl Source for Threads {
    fn schema(&self) -> String {
        "CREATE TABLE x(utid INTEGER, tid, name TEXT, upid INTEGER, sort_index INTEGER, pid)".into()
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let r = Bounds::of(cons, 0).clamp(self.len());
        without(r.start as u64..r.end as u64, &self.merged)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.t;
        let Some(th) = t.threads().get(row as usize) else {
            let upid = t.perfetto().added_main_threads()[row as usize - t.threads().len()];
            return match col {
                0 => Cell::Int(row as i64),
                1 | 5 => ext(t, t.processes()[upid as usize].pid),
                3 => Cell::Int(upid as i64),
                _ => Cell::Null,
            };
        };
        match col {
            0 => Cell::Int(row as i64),
            1 => ext(t, t.perfetto().tid(th)),
            // trace_processor keeps no empty thread name (`thread_name` with `""`), and
            // names a thread by its tid when that is a string (`""` too).
            2 => match (th.name.map(|n| t.str(n)), th.tid) {
                (None | Some(""), ExtId::Str(s)) => Cell::Text(t.str(s)),
                (None | Some(""), _) => Cell::Null,
                (Some(n), _) => Cell::Text(n),
            },
            3 => opt_int(t.perfetto().upid(t, th).map(i64::from)),
            4 => opt_int(th.sort_index),
            5 => match t.perfetto().upid(t, th) {
                Some(_) => ext(t, th.pid),
                None => Cell::Null,
            },
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            1.0
        } else {
            self.len().max(1) as f64
        }
    }
}

/// `rows` without the sorted rows `gone`.
fn without(rows: Range<u64>, gone: &[u64]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    let mut at = rows.start;
    for &g in gone.iter().filter(|&&g| rows.contains(&g)) {
        if at < g {
            out.push(at..g);
        }
        at = g + 1;
    }
    if at < rows.end {
        out.push(at..rows.end);
    }
    out
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
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        let p = &t.processes()[row as usize];
        match col {
            0 => Cell::Int(row as i64),
            1 => ext(t, p.pid),
            // trace_processor names a process by its pid when that is a string.
            2 => match (p.name, p.pid) {
                (Some(n), _) | (None, ExtId::Str(n)) => Cell::Text(t.str(n)),
                (None, ExtId::Num(_)) => Cell::Null,
            },
            3 => opt_int(p.sort_index),
            4 if p.labels.is_empty() => Cell::Null,
            4 => Cell::Owned(
                p.labels
                    .iter()
                    .map(|&l| t.str(l))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.processes().len().max(1) as f64
    }
}

/// `thread_track(id, name, type, utid)`: one track per thread, its id the thread's utid,
/// then the threads' second tracks (a protobuf descriptor's below a thread's track).
pub(crate) struct ThreadTracks(pub Arc<Trace>);

impl ThreadTracks {
    /// The ids of the second tracks.
    fn extra(&self) -> Range<u64> {
        let v = self.0.perfetto();
        let (process, thread) = v.track_counts();
        let first = v.first_track() + process as u64;
        first..first + thread as u64
    }
}

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
        let mut out = only(lo as u64, hi.max(lo) as u64);
        // The second tracks' ids are not their utids: bounded by id only.
        let (extra, id) = (self.extra(), Bounds::of(cons, 0));
        let lo = (id.lo.max(0) as u64).max(extra.start);
        let hi = (id.hi.saturating_add(1).max(0) as u64).min(extra.end);
        out.extend(only(lo, hi));
        out
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let (t, v) = (&self.0, self.0.perfetto());
        let (name, utid) = match t.threads().get(row as usize) {
            Some(th) => (th.name, row as u32),
            None => {
                let k = &v.tracks()[(row - v.first_track()) as usize];
                let Scope::Thread(utid) = k.scope else {
                    return Cell::Null;
                };
                (k.name, utid)
            }
        };
        match col {
            0 => Cell::Int(row as i64),
            1 => name.map_or(Cell::Null, |n| Cell::Text(t.str(n))),
            2 => Cell::Text("thread_track"),
            3 => Cell::Int(utid as i64),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        let (_, thread) = self.0.perfetto().track_counts();
        (self.0.threads().len() + thread).max(1) as f64
    }
}

/// `track(id, name, type)`: every track, the threads' (ids = utids), the counters', then
/// the process, second thread and global tracks of instants and async slices; with
/// `process_only`,
/// `process_track(id, name, type, upid)`: the process ones.
pub(crate) struct AllTracks {
    pub t: Arc<Trace>,
    pub process_only: bool,
}

impl AllTracks {
    /// Row ids: the track ids (`process_track`'s start at the first placed track).
    fn ids(&self) -> Range<u64> {
        let v = self.t.perfetto();
        let first = v.first_track();
        if self.process_only {
            first..first + v.track_counts().0 as u64
        } else {
            let cpu = crate::sched::data(&self.t).counters.len() as u64;
            0..first + v.tracks().len() as u64 + cpu
        }
    }
}

impl Source for AllTracks {
    fn schema(&self) -> String {
        if self.process_only {
            "CREATE TABLE x(id INTEGER, name TEXT, type TEXT, upid INTEGER)".into()
        } else {
            "CREATE TABLE x(id INTEGER, name TEXT, type TEXT)".into()
        }
    }
    fn pushable(&self, col: usize) -> bool {
        col == 0
    }
    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let all = self.ids();
        let b = Bounds::of(cons, 0);
        let lo = (b.lo.max(0) as u64).max(all.start);
        let hi = (b.hi.saturating_add(1).max(0) as u64).min(all.end);
        only(lo, hi)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let (t, v) = (&self.t, self.t.perfetto());
        let (threads, first) = (t.threads().len(), v.first_track());
        let (name, ty, upid) = match t.threads().get(row as usize) {
            Some(th) => (th.name, "thread_track", None),
            None if row < first => {
                let c = &t.counters()[row as usize - threads];
                return match col {
                    0 => Cell::Int(row as i64),
                    1 => counter_name(t, c),
                    2 => Cell::Text("process_counter_track"),
                    _ => Cell::Null,
                };
            }
            None if row >= first + v.tracks().len() as u64 => {
                let k = (row - first) as usize - v.tracks().len();
                let c = &crate::sched::data(t).counters[k];
                return match col {
                    0 => Cell::Int(row as i64),
                    1 => Cell::Text(c.kind.name()),
                    2 => Cell::Text("cpu_counter_track"),
                    _ => Cell::Null,
                };
            }
            None => {
                let k = &v.tracks()[(row - first) as usize];
                match k.scope {
                    Scope::Process(p) => (k.name, "process_track", Some(p)),
                    Scope::Thread(_) => (k.name, "thread_track", None),
                    Scope::Global => (k.name, "global_track", None),
                }
            }
        };
        match col {
            0 => Cell::Int(row as i64),
            1 => name.map_or(Cell::Null, |n| Cell::Text(t.str(n))),
            2 => Cell::Text(ty),
            3 => opt_int(upid.map(i64::from)),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        if cons.contains(&(0, Op::Eq)) {
            1.0
        } else {
            (self.ids().end - self.ids().start).max(1) as f64
        }
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
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        let c = &t.counters()[row as usize];
        match col {
            0 => Cell::Int((t.threads().len() as u64 + row) as i64),
            1 => counter_name(t, c),
            2 => Cell::Text("process_counter_track"),
            3 => Cell::Int(c.process as i64),
            4 => Cell::Text(t.str(c.key)),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.counters().len().max(1) as f64
    }
}

/// A counter track's name as trace_processor gives it: a JSON `C` event's series are
/// `NAME KEY` (`memory heap`, `fps value`), `NAME id: ID KEY` for an event with an `id`; a
/// named counter track (a Perfetto protobuf one, an atrace counter in any trace, a JSON
/// trace's `systemTraceEvents` too) keeps its name.
fn counter_name<'a>(t: &'a Trace, c: &trace_model::CounterSeries) -> Cell<'a> {
    let (name, key) = (t.str(c.name), t.str(c.key));
    if c.from_track {
        return Cell::Text(name);
    }
    // The model's name is Chrome's, `NAME ID`.
    let with_id = c.id.map(|id| t.str(id)).and_then(|id| {
        let base = name.strip_suffix(id)?.strip_suffix(' ')?;
        Some(format!("{base} id: {id} {key}"))
    });
    Cell::Owned(with_id.unwrap_or_else(|| format!("{name} {key}")))
}

/// `counter(id, ts, value, track_id)`: every sample of every series, series by series:
/// the counter series', then the CPU counters' (`sched.rs`).
pub(crate) struct Counters {
    pub t: Arc<Trace>,
    /// First id of each series, and the total at the end.
    pub base: Vec<u64>,
    /// The track id of the first CPU counter.
    cpu_track: i64,
}

impl Counters {
    pub(crate) fn new(t: Arc<Trace>) -> Counters {
        let mut base = vec![0u64];
        let cpu = crate::sched::data(&t).counters.iter().map(|c| c.ts.len());
        for n in t.counters().iter().map(|c| c.ts.len()).chain(cpu) {
            base.push(base.last().unwrap() + n as u64);
        }
        let cpu_track = crate::sched::first_cpu_track(&t) as i64;
        Counters { t, base, cpu_track }
    }

    /// Series `k`: its times, values and track id.
    fn series(&self, k: usize) -> (&[i64], &[f64], i64) {
        let n = self.t.counters().len();
        match self.t.counters().get(k) {
            Some(c) => (&c.ts, &c.values, (self.t.threads().len() + k) as i64),
            None => {
                let c = &crate::sched::data(&self.t).counters[k - n];
                (&c.ts, &c.values, self.cpu_track + (k - n) as i64)
            }
        }
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
        let (track, ts) = (Bounds::of(cons, 3), Bounds::of(cons, 1));
        let mut out = Vec::new();
        for k in 0..self.base.len() - 1 {
            let (times, _, id) = self.series(k);
            if id < track.lo || id > track.hi {
                continue;
            }
            let lo = times.partition_point(|&s| s < ts.lo) as u64;
            let hi = times.partition_point(|&s| s <= ts.hi) as u64;
            if lo < hi {
                out.push(self.base[k] + lo..self.base[k] + hi);
            }
        }
        out
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let k = self.base.partition_point(|&b| b <= row) - 1;
        let (ts, values, id) = self.series(k);
        let i = (row - self.base[k]) as usize;
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(ts[i]),
            2 => Cell::Real(values[i]),
            3 => Cell::Int(id),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        let n = *self.base.last().unwrap() as f64;
        if cons.iter().any(|&(c, _)| c == 3) {
            n / (self.base.len() - 1).max(1) as f64
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
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let t = &self.0;
        let e = &t.instants()[row as usize];
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(e.ts),
            2 => Cell::Text(t.str(e.name)),
            3 => match t.str(e.cat) {
                "" => Cell::Null,
                c => Cell::Text(c),
            },
            4 => Cell::Text(match e.scope {
                InstantScope::Global => "global",
                InstantScope::Process => "process",
                InstantScope::Thread => "thread",
            }),
            5 if e.scope == InstantScope::Thread => Cell::Int(e.thread as i64),
            6 if e.scope != InstantScope::Global => Cell::Int(e.process as i64),
            7 => args_id(e.args),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.0.instants().len().max(1) as f64
    }
}

/// `args(arg_set_id, flat_key, key, int_value, string_value, real_value, value_type)`:
/// parsed from the raw JSON of each argument set only when read. After the model's sets
/// come the merged ones of async slices whose `b` and `e` both had args
/// ([`trace_model::perfetto::View::arg_set`]): the `b`'s keys, then the `e`'s, an `e`'s
/// value replacing the `b`'s of the same key.
pub(crate) struct Args(
    pub Arc<Trace>,
    /// trace_processor's utid of each thread (pid, tid) it met, made at first use.
    pub std::sync::OnceLock<std::collections::HashMap<(i64, i64), i64>>,
);

impl Args {
    /// One past the last argument set id.
    fn sets(&self) -> u64 {
        self.0.args().count() as u64 + 1 + self.0.perfetto().merged_args().len() as u64
    }

    /// Set `set`'s rows, flattened from the JSON of the model's set or sets.
    fn flat(&self, set: u64) -> Vec<Vec<Value>> {
        let json = |id: trace_model::ArgsId| self.0.args().tagged_json(id);
        let mut out = Vec::new();
        let count = self.0.args().count() as u64;
        if set <= count {
            if let Some(v) = json(trace_model::ArgsId(set as u32)) {
                flatten(set, &v, "args", "args", &mut out);
            }
            return out;
        }
        let merged = self.0.perfetto().merged_args();
        let Some(&a) = merged.get((set - count - 1) as usize) else {
            return out;
        };
        let s = &self.0.async_slices()[a as usize];
        if let Some(v) = json(s.args) {
            flatten(set, &v, "args", "args", &mut out);
        }
        let mut end = Vec::new();
        if let Some(v) = json(s.end_args) {
            flatten(set, &v, "args", "args", &mut end);
        }
        out.retain(|r| !end.iter().any(|e| e[2] == r[2]));
        out.extend(end);
        out
    }

    /// The value of `key` in set `set` (the first of `int_value`, `string_value`,
    /// `real_value` that is not NULL), for `EXTRACT_ARG`.
    pub(crate) fn value(&self, set: i64, key: &str) -> Option<Value> {
        let set = u32::try_from(set).ok().filter(|&s| s > 0)?;
        let rows = self.sub_rows(set as u64)?;
        let row = rows
            .into_iter()
            .find(|r| matches!(&r[2], Value::Text(k) if k == key))?;
        row.into_iter().skip(3).take(3).find(|v| *v != Value::Null)
    }
}

impl Args {
    /// The args of `trace`.
    pub(crate) fn new(trace: Arc<Trace>) -> Args {
        Args(trace, Default::default())
    }

    /// trace_processor's utid of the thread a [`Tagged::Thread`] value (in `v`) names
    /// (`legacy_event.passthrough_utid`); NULL for a thread its importer never met.
    fn utid(&self, v: &Value) -> Value {
        let Value::Integer(x) = *v else {
            return Value::Null;
        };
        let t = Tagged::thread_ids(x as u64);
        let order = self.0.importer_threads();
        let utids = self.1.get_or_init(|| {
            let n = order.len() as i64;
            order.iter().copied().zip(1..=n).collect()
        });
        utids.get(&t).map_or(Value::Null, |&u| Value::Integer(u))
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
    fn column(&self, _row: u64, _col: usize) -> Cell<'_> {
        Cell::Null
    }
    fn sub_rows(&self, row: u64) -> Option<Vec<Vec<Value>>> {
        let mut out = self.flat(row);
        // A Perfetto protobuf event's args: the decoder keys them as trace_processor does
        // (`debug.NAME`, `task.posted_from.file_name`, `source.line_number`), under `args`.
        if self.0.decode_summary().format.name() == "perfetto" {
            for r in &mut out {
                if r[6] == text("thread") {
                    (r[3], r[6]) = (self.utid(&r[3]), text("uint"));
                }
                for k in &mut r[1..3] {
                    if let Value::Text(s) = k {
                        if let Some(rest) = s.strip_prefix("args.") {
                            *s = rest.to_string();
                        }
                    }
                }
            }
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
    if let Some(t) = tagged::read(v) {
        // trace_processor keeps a `uint` or `pointer` in `int_value`, as 64 bits.
        let (x, ty) = match t {
            Tagged::Uint(x) => (x, "uint"),
            Tagged::Pointer(x) => (x, "pointer"),
            // Numbered by `Args::sub_rows`, which knows the trace's threads.
            Tagged::Thread(x) => (x, "thread"),
        };
        out.push(row(Value::Integer(x as i64), Value::Null, Value::Null, ty));
        return;
    }
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

/// `flow(id, slice_out, slice_in, name, category)`: one row per arrow, in the order of the
/// flows, as trace_processor binds and chains them ([`trace_model::perfetto::View::flows`]).
pub(crate) struct Flows {
    pub t: Arc<Trace>,
}

impl Flows {
    fn rows(&self) -> &[FlowRow] {
        self.t.perfetto().flows(&self.t)
    }

    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.rows().len()
    }

    /// Row `row`'s (slice_out, slice_in).
    pub(crate) fn ends(&self, row: u64) -> (u64, u64) {
        let f = &self.rows()[row as usize];
        (f.slice_out, f.slice_in)
    }
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
        only(0, self.len() as u64)
    }
    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        let r = self.rows()[row as usize];
        let f = &self.t.flows()[r.flow as usize];
        match col {
            0 => Cell::Int(row as i64),
            1 => Cell::Int(r.slice_out as i64),
            2 => Cell::Int(r.slice_in as i64),
            3 => Cell::Text(self.t.str(f.name)),
            4 => Cell::Text(self.t.str(f.cat)),
            _ => Cell::Null,
        }
    }
    fn estimate(&self, _cons: &[(usize, Op)]) -> f64 {
        self.len().max(1) as f64
    }
}
