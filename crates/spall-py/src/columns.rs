//! The model's columns as Arrow record batches: what `Trace.slices()`, `.threads()`,
//! `.counters()`, `.instants()`, `.flows()` and `.samples()` hand to pyarrow.
//!
//! Each column is copied once out of the model (a lane's `start` and `dur` vectors are
//! appended whole); names are dictionary-encoded with only the names the column uses, so
//! pandas reads them as categoricals and 10M spans cost no 10M strings. Slices come
//! thread by thread, each thread's depth by depth, each depth in time order; `flows()`
//! names the spans an arrow joins by their rows in `slices()`. `thread` and
//! `process` are the model's indices (rows of `threads()`), not SQL's `utid` and `upid`:
//! the SQL tables, with trace_processor's ids, are `Trace.table(name)` (trace-sql's own
//! Arrow batches), which cost more per span than these copies (docs/PERFORMANCE.md).

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::ArrowError;
use trace_model::{ExtId, InstantScope, Lane, SpanRef, StrId, Trace, NO_CPU, NO_FRAME};

/// Interned strings to dictionary keys: the values are only the strings used, in order of
/// first use.
struct Dict<'a> {
    t: &'a Trace,
    key_of: Vec<i32>,
    values: StringBuilder,
    len: i32,
}

impl<'a> Dict<'a> {
    fn new(t: &'a Trace) -> Dict<'a> {
        Dict {
            t,
            key_of: vec![-1; t.strings().len()],
            values: StringBuilder::new(),
            len: 0,
        }
    }

    #[inline]
    fn key(&mut self, id: StrId) -> i32 {
        let k = &mut self.key_of[id.0 as usize];
        if *k < 0 {
            *k = self.len;
            self.len += 1;
            self.values.append_value(self.t.str(id));
        }
        *k
    }

    fn column(mut self, keys: Vec<i32>) -> Result<ArrayRef, ArrowError> {
        let values: ArrayRef = Arc::new(self.values.finish());
        let keys = Int32Array::from(keys);
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            keys, values,
        )?))
    }

    fn keys(
        t: &'a Trace,
        ids: impl ExactSizeIterator<Item = StrId>,
    ) -> Result<ArrayRef, ArrowError> {
        let mut d = Dict::new(t);
        let keys: Vec<i32> = ids.map(|id| d.key(id)).collect();
        d.column(keys)
    }
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch, ArrowError> {
    RecordBatch::try_from_iter(columns)
}

/// The row of each thread's first slice at each depth (`first[thread][depth]`), and the
/// total: slices are numbered in [`slices`]' order.
pub fn slice_rows(t: &Trace) -> (Vec<Vec<u64>>, u64) {
    let mut next = 0u64;
    let first = t
        .threads()
        .iter()
        .map(|th| {
            th.lanes
                .iter()
                .map(|lane| {
                    let at = next;
                    next += lane.len() as u64;
                    at
                })
                .collect()
        })
        .collect();
    (first, next)
}

/// Every span: `ts`, `dur`, `name`, `category`, `depth`, `thread`, `flags` (bits:
/// 1 unfinished, 2 partial overlap, 4 from a B/E pair). Columns are filled side by side,
/// each on a thread of its own.
pub fn slices(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let n = t.span_count() as usize;
    let lanes: Vec<(u32, u32, &Lane)> = t
        .threads()
        .iter()
        .enumerate()
        .flat_map(|(u, th)| {
            th.lanes
                .iter()
                .enumerate()
                .map(move |(d, lane)| (u as u32, d as u32, lane))
        })
        .collect();
    let lanes = &lanes;
    let times = |col: fn(&Lane) -> &Vec<i64>| {
        let mut v = Vec::with_capacity(n);
        lanes.iter().for_each(|l| v.extend_from_slice(col(l.2)));
        Int64Array::from(v)
    };
    let place = || {
        let (mut depth, mut thread, mut flags) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for &(u, d, lane) in lanes {
            depth.resize(depth.len() + lane.len(), d);
            thread.resize(thread.len() + lane.len(), u);
            flags.extend_from_slice(&lane.flags);
        }
        (
            UInt32Array::from(depth),
            UInt32Array::from(thread),
            UInt8Array::from(flags),
        )
    };
    let names = |col: fn(&Lane) -> &Vec<StrId>| {
        let mut d = Dict::new(t);
        let mut keys = Vec::with_capacity(n);
        lanes
            .iter()
            .for_each(|l| keys.extend(col(l.2).iter().map(|&s| d.key(s))));
        d.column(keys)
    };
    let (ts, dur, (depth, thread, flags), name, cat) = std::thread::scope(|s| {
        let ts = s.spawn(|| times(|l| &l.start));
        let dur = s.spawn(|| times(|l| &l.dur));
        let place = s.spawn(place);
        let name = s.spawn(|| names(|l| &l.name));
        let cat = names(|l| &l.cat);
        (join(ts), join(dur), join(place), join(name), cat)
    });
    batch(vec![
        ("ts", Arc::new(ts)),
        ("dur", Arc::new(dur)),
        ("name", name?),
        ("category", cat?),
        ("depth", Arc::new(depth)),
        ("thread", Arc::new(thread)),
        ("flags", Arc::new(flags)),
    ])
}

/// A scoped thread's result; its panic goes on in this thread (to `errors::guard`).
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Process and thread ids as the file wrote them: integers, or text when any is text.
fn ext_ids(t: &Trace, ids: &[ExtId]) -> ArrayRef {
    if ids.iter().all(|i| matches!(i, ExtId::Num(_))) {
        let v: Vec<i64> = ids
            .iter()
            .map(|i| match i {
                ExtId::Num(n) => *n,
                ExtId::Str(_) => 0,
            })
            .collect();
        Arc::new(Int64Array::from(v))
    } else {
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|&i| t.ext_id(i)),
        ))
    }
}

/// Every thread: `thread` (its index, as in `slices()`), `process`, `pid`, `tid`, `name`,
/// `process_name`, `spans`, `max_depth`.
pub fn threads(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let th = t.threads();
    let name = |n: Option<StrId>| n.map(|n| t.str(n));
    let pids: Vec<ExtId> = th.iter().map(|x| x.pid).collect();
    let tids: Vec<ExtId> = th.iter().map(|x| x.tid).collect();
    batch(vec![
        (
            "thread",
            Arc::new(UInt32Array::from_iter_values(0..th.len() as u32)),
        ),
        (
            "process",
            Arc::new(UInt32Array::from_iter_values(th.iter().map(|x| x.process))),
        ),
        ("pid", ext_ids(t, &pids)),
        ("tid", ext_ids(t, &tids)),
        (
            "name",
            Arc::new(StringArray::from_iter(th.iter().map(|x| name(x.name)))),
        ),
        (
            "process_name",
            Arc::new(StringArray::from_iter(
                th.iter()
                    .map(|x| name(t.processes()[x.process as usize].name)),
            )),
        ),
        (
            "spans",
            Arc::new(UInt64Array::from_iter_values(
                th.iter().map(|x| x.span_count()),
            )),
        ),
        (
            "max_depth",
            Arc::new(UInt32Array::from_iter_values(
                th.iter().map(|x| x.lanes.len() as u32),
            )),
        ),
    ])
}

/// Every counter sample: `series` (index of its series), `name`, `key`, `process`, `thread`
/// (null for a process counter), `ts`, `value`.
pub fn counters(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let c = t.counters();
    let n = t.counter_samples() as usize;
    let (mut series, mut upid, mut utid) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut ts, mut value) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut names, mut keys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (i, s) in c.iter().enumerate() {
        let k = s.ts.len();
        series.resize(series.len() + k, i as u32);
        upid.resize(upid.len() + k, s.process);
        utid.resize(utid.len() + k, s.thread);
        names.resize(names.len() + k, s.name);
        keys.resize(keys.len() + k, s.key);
        ts.extend_from_slice(&s.ts);
        value.extend_from_slice(&s.values);
    }
    batch(vec![
        ("series", Arc::new(UInt32Array::from(series))),
        ("name", Dict::keys(t, names.into_iter())?),
        ("key", Dict::keys(t, keys.into_iter())?),
        ("process", Arc::new(UInt32Array::from(upid))),
        ("thread", Arc::new(UInt32Array::from(utid))),
        ("ts", Arc::new(Int64Array::from(ts))),
        ("value", Arc::new(Float64Array::from(value))),
    ])
}

/// Every instant event: `ts`, `name`, `category`, `scope` (`thread`, `process` or
/// `global`), `process`, `thread`.
pub fn instants(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let i = t.instants();
    let scope = |s: InstantScope| match s {
        InstantScope::Thread => "thread",
        InstantScope::Process => "process",
        InstantScope::Global => "global",
    };
    batch(vec![
        (
            "ts",
            Arc::new(Int64Array::from_iter_values(i.iter().map(|x| x.ts))),
        ),
        ("name", Dict::keys(t, i.iter().map(|x| x.name))?),
        ("category", Dict::keys(t, i.iter().map(|x| x.cat))?),
        (
            "scope",
            Arc::new(StringArray::from_iter_values(
                i.iter().map(|x| scope(x.scope)),
            )),
        ),
        (
            "process",
            Arc::new(UInt32Array::from_iter_values(i.iter().map(|x| x.process))),
        ),
        (
            "thread",
            Arc::new(UInt32Array::from_iter_values(i.iter().map(|x| x.thread))),
        ),
    ])
}

/// Every arrow between two spans: `flow` (index of its flow), `flow_id` (the id the file
/// gave), `name`, `category`, `slice_out` and `slice_in` (ids in `slices()`), `ts_out`
/// and `ts_in` (those spans' starts).
pub fn flows(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let links = t.flow_links();
    let flows = t.flows();
    let (first, _) = slice_rows(t);
    let id = |r: SpanRef| (first[r.thread as usize][r.depth as usize] + r.index as u64) as i64;
    let start = |r: SpanRef| t.span(r).start;
    let flow = |i: u32| &flows[i as usize];
    batch(vec![
        (
            "flow",
            Arc::new(UInt32Array::from_iter_values(links.iter().map(|l| l.flow))),
        ),
        (
            "flow_id",
            Dict::keys(t, links.iter().map(|l| flow(l.flow).id))?,
        ),
        (
            "name",
            Dict::keys(t, links.iter().map(|l| flow(l.flow).name))?,
        ),
        (
            "category",
            Dict::keys(t, links.iter().map(|l| flow(l.flow).cat))?,
        ),
        (
            "slice_out",
            Arc::new(Int64Array::from_iter_values(
                links.iter().map(|l| id(l.from)),
            )),
        ),
        (
            "slice_in",
            Arc::new(Int64Array::from_iter_values(links.iter().map(|l| id(l.to)))),
        ),
        (
            "ts_out",
            Arc::new(Int64Array::from_iter_values(
                links.iter().map(|l| start(l.from)),
            )),
        ),
        (
            "ts_in",
            Arc::new(Int64Array::from_iter_values(
                links.iter().map(|l| start(l.to)),
            )),
        ),
    ])
}

/// Every sample of every sample track: `ts` (laid end to end by weight where the format
/// has no times: `timed` is false), `weight`, `unit` (`count`, `nanoseconds` or `bytes`), `kind`
/// (`cycles`, `cpu`, `samples`, ...), `thread` and `process` (rows of `threads()`), `cpu`
/// (the CPU it was taken on, as `perf script` prints it for system-wide recordings; null
/// where the format does not say), and its stack: `frame` (the leaf frame's index, null for an empty stack), `name`, `file`
/// and `line` (the leaf function's; line 0 where not given), `depth` (frames in the
/// stack), `stack` (outermost to leaf, `;`-separated as `flame --format folded` writes;
/// dictionary-encoded, each distinct stack one string).
pub fn samples(t: &Trace) -> Result<RecordBatch, ArrowError> {
    let n: usize = t.samples().iter().map(|s| s.ts.len()).sum();
    let (mut ts, mut weight) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut thread, mut process) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut unit, mut kind, mut timed) = (Vec::new(), Vec::new(), Vec::new());
    let mut frame: Vec<Option<u32>> = Vec::with_capacity(n);
    let mut cpu: Vec<Option<u32>> = Vec::with_capacity(n);
    for st in t.samples() {
        let k = st.ts.len();
        // A track's CPUs are empty when none of its samples has one.
        cpu.extend((0..k).map(|i| st.cpu.get(i).copied().filter(|&c| c != NO_CPU)));
        ts.extend_from_slice(&st.ts);
        weight.extend_from_slice(&st.weight);
        thread.resize(thread.len() + k, st.thread);
        let p = t.threads()[st.thread as usize].process;
        process.resize(process.len() + k, p);
        unit.resize(unit.len() + k, st.unit.name());
        kind.resize(kind.len() + k, st.kind);
        timed.resize(timed.len() + k, st.timed);
        frame.extend(st.frame.iter().map(|&f| (f != NO_FRAME).then_some(f)));
    }
    let frames = t.frames();
    let leaf = |f: &Option<u32>| f.map(|f| frames[f as usize]);
    // Each stack's text once, keyed by its leaf frame.
    let mut stack_key = vec![-1i32; frames.len()];
    let mut stacks = StringBuilder::new();
    let mut stack_keys = Vec::with_capacity(n);
    let mut text = String::new();
    let mut by_text: std::collections::HashMap<String, i32> = Default::default();
    let mut next = 0;
    for f in &frame {
        let Some(f) = *f else {
            stack_keys.push(None);
            continue;
        };
        if stack_key[f as usize] < 0 {
            // Frames that differ only by line share their text: one value.
            folded(t, f, &mut text);
            stack_key[f as usize] = *by_text.entry(text.clone()).or_insert_with(|| {
                stacks.append_value(&text);
                next += 1;
                next - 1
            });
        }
        stack_keys.push(Some(stack_key[f as usize]));
    }
    let stack: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(stack_keys),
        Arc::new(stacks.finish()),
    )?);
    let depth = frame.iter().map(|&f| f.map_or(0, |f| stack_depth(t, f)));
    batch(vec![
        ("ts", Arc::new(Int64Array::from(ts))),
        ("weight", Arc::new(Int64Array::from(weight))),
        ("unit", Arc::new(StringArray::from(unit))),
        ("kind", Dict::keys(t, kind.into_iter())?),
        ("timed", Arc::new(BooleanArray::from(timed))),
        ("thread", Arc::new(UInt32Array::from(thread))),
        ("process", Arc::new(UInt32Array::from(process))),
        ("cpu", Arc::new(UInt32Array::from(cpu))),
        (
            "name",
            Dict::keys(
                t,
                frame
                    .iter()
                    .map(|f| leaf(f).map_or(StrId::EMPTY, |x| x.name)),
            )?,
        ),
        (
            "file",
            Dict::keys(
                t,
                frame
                    .iter()
                    .map(|f| leaf(f).map_or(StrId::EMPTY, |x| x.file)),
            )?,
        ),
        (
            "line",
            Arc::new(UInt32Array::from_iter_values(
                frame.iter().map(|f| leaf(f).map_or(0, |x| x.line)),
            )),
        ),
        ("depth", Arc::new(UInt32Array::from_iter_values(depth))),
        ("frame", Arc::new(UInt32Array::from(frame))),
        ("stack", stack),
    ])
}

/// The names from the outermost frame down to `f`, `;`-separated, into `out`.
fn folded(t: &Trace, f: u32, out: &mut String) {
    let mut names = Vec::new();
    let mut at = f;
    while let Some(fr) = t.frames().get(at as usize) {
        names.push(t.str(fr.name));
        at = fr.parent;
    }
    out.clear();
    for (i, n) in names.iter().rev().enumerate() {
        if i > 0 {
            out.push(';');
        }
        out.push_str(n);
    }
}

/// The number of frames in the stack whose leaf is `f`.
fn stack_depth(t: &Trace, f: u32) -> u32 {
    let mut d = 0;
    let mut at = f;
    while let Some(fr) = t.frames().get(at as usize) {
        d += 1;
        at = fr.parent;
    }
    d
}
