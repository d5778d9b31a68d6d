//! `slice` and its relatives: the table with its pushdown, ordering by name
//! without a sort, and `ancestor_slice` / `descendant_slice`.

use std::ops::Range;
use std::sync::Arc;

use rusqlite::types::Value;
use trace_model::perfetto::{Scope, Src, View};
use trace_model::{async_flags, flags, SpanRef, Trace};

use crate::source::{
    args_id, argument, argument_estimate, opt_int, Bounds, Cell, Constraint, Op, RowIter, Rows,
    Source,
};

/// `slice(id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts,
/// thread_dur)` in trace_processor's order, plus the hidden columns `spall_utid`,
/// `self_dur` and `unfinished` (hidden, so that `SELECT *` and joins `USING (utid)` see
/// trace_processor's columns only; the view `spall_slice` shows them).
/// The slices are the trace's [`perfetto`](Trace::perfetto) view's: its spans' ids, then
/// its instants and async slices.
#[derive(Clone)]
pub(crate) struct Slices {
    pub t: Arc<Trace>,
}

pub(crate) const SLICE_COLUMNS: &str = "id INTEGER, ts INTEGER, dur INTEGER, track_id INTEGER, category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER, thread_dur INTEGER";
const SLICE_HIDDEN: &str = "spall_utid INTEGER HIDDEN, self_dur INTEGER HIDDEN, unfinished INTEGER HIDDEN, kind TEXT HIDDEN";
const S_ID: usize = 0;
const S_TS: usize = 1;
const S_DUR: usize = 2;
const S_TRACK: usize = 3;
const S_NAME: usize = 5;
const S_DEPTH: usize = 6;
const S_UTID: usize = 11;
const S_KIND: usize = 14;

impl Slices {
    /// The trace's slices as trace_processor has them.
    pub(crate) fn v(&self) -> &View {
        self.t.perfetto()
    }

    /// Column `col` of the extra row `row` (an instant or async slice).
    fn placed_column(&self, id: u64, col: usize) -> Cell<'_> {
        let Some(row) = self.v().row(id) else {
            return Cell::Null;
        };
        let t = &self.t;
        let (ts, dur, cat, name, args, utid, unfinished) = match row.src {
            Src::ThreadInstant(i) | Src::Instant(i) => {
                let e = &t.instants()[i as usize];
                let utid = matches!(row.src, Src::ThreadInstant(_)).then_some(e.thread as i64);
                (e.ts, 0, e.cat, e.name, e.args.0 as i64, utid, false)
            }
            Src::Async(a) => {
                let s = &t.async_slices()[a as usize];
                let unfinished = s.flags & async_flags::UNFINISHED != 0;
                let dur = if unfinished { -1 } else { s.dur() };
                // On a thread's second track: that thread's.
                let utid = match self.v().tracks().get(row.track as usize).map(|k| k.scope) {
                    Some(Scope::Thread(u)) => Some(u as i64),
                    _ => None,
                };
                let args = self.v().arg_set(t, a);
                (s.start, dur, s.cat, s.name, args, utid, unfinished)
            }
        };
        let track = match row.src {
            Src::ThreadInstant(_) => row.track as i64,
            _ => (self.v().first_track() + row.track as u64) as i64,
        };
        match col {
            0 => Cell::Int(id as i64),
            1 => Cell::Int(ts),
            2 => Cell::Int(dur),
            3 => Cell::Int(track),
            4 => match t.str(cat) {
                "" => Cell::Null,
                c => Cell::Text(c),
            },
            5 => Cell::Text(t.str(name)),
            6 => Cell::Int(row.depth as i64),
            7 => opt_int((row.parent >= 0).then_some(row.parent)),
            8 => opt_int((args > 0).then_some(args)),
            11 => opt_int(utid),
            12 if dur == 0 => Cell::Int(0),
            13 => Cell::Int(unfinished as i64),
            S_KIND => Cell::Text(match row.src {
                Src::Async(_) => "async",
                _ => "instant",
            }),
            _ => Cell::Null,
        }
    }

    /// The name id and duration (-1 unfinished) of slice `id`, for ordering by name.
    fn name_dur(&self, id: u64) -> Option<(u32, i64)> {
        if let Some(r) = self.v().span(id) {
            let lane = &self.v().thread(&self.t, r.thread).lanes[r.depth as usize];
            let i = r.index as usize;
            let dur = if lane.flags[i] & flags::UNFINISHED != 0 {
                -1
            } else {
                lane.dur[i]
            };
            return Some((lane.name[i].0, dur));
        }
        let dur = match self.placed_column(id, S_DUR) {
            Cell::Int(d) => d,
            _ => return None,
        };
        let name = match self.v().row(id)?.src {
            Src::ThreadInstant(i) | Src::Instant(i) => self.t.instants()[i as usize].name,
            Src::Async(a) => self.t.async_slices()[a as usize].name,
        };
        Some((name.0, dur))
    }

    pub(crate) fn slice_column(&self, r: SpanRef, col: usize) -> Cell<'_> {
        let th = self.v().thread(&self.t, r.thread);
        let lane = &th.lanes[r.depth as usize];
        let i = r.index as usize;
        let unfinished = lane.flags[i] & flags::UNFINISHED != 0;
        match col {
            0 => Cell::Int(self.v().id(r) as i64),
            1 => Cell::Int(lane.start[i]),
            2 => Cell::Int(if unfinished { -1 } else { lane.dur[i] }),
            3 | 11 => Cell::Int(r.thread as i64),
            4 => match self.t.str(lane.cat[i]) {
                "" => Cell::Null,
                c => Cell::Text(c),
            },
            5 => Cell::Text(self.t.str(lane.name[i])),
            6 => Cell::Int(r.depth as i64),
            7 => opt_int(self.v().parent(&self.t, r).map(|p| self.v().id(p) as i64)),
            8 => args_id(lane.args[i]),
            9 | 10 => Cell::Null,
            12 => Cell::Int(th.self_ns(r.depth as usize, i)),
            13 => Cell::Int(unfinished as i64),
            S_KIND => Cell::Text("span"),
            _ => Cell::Null,
        }
    }
}

impl Source for Slices {
    fn schema(&self) -> String {
        format!("CREATE TABLE x({SLICE_COLUMNS}, {SLICE_HIDDEN})")
    }

    fn pushable(&self, col: usize) -> bool {
        matches!(
            col,
            S_ID | S_TS | S_DUR | S_TRACK | S_NAME | S_DEPTH | S_UTID | S_KIND
        )
    }

    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let id = Bounds::of(cons, S_ID);
        // A span's track is its thread's: track_id and spall_utid narrow alike.
        let (t1, t2) = (Bounds::of(cons, S_UTID), Bounds::of(cons, S_TRACK));
        let (utid, depth, ts) = (
            Bounds {
                lo: t1.lo.max(t2.lo),
                hi: t1.hi.min(t2.hi),
            },
            Bounds::of(cons, S_DEPTH),
            Bounds::of(cons, S_TS),
        );
        let v = self.v();
        let ids = id.clamp(v.len() as usize);
        let mut out = Vec::new();
        for (thread, d, base) in v.span_lanes() {
            if (thread as i64) < utid.lo || (thread as i64) > utid.hi {
                continue;
            }
            if (d as i64) < depth.lo || (d as i64) > depth.hi {
                continue;
            }
            let lane = &v.thread(&self.t, thread).lanes[d as usize];
            let lo = lane.start.partition_point(|&s| s < ts.lo) as u64;
            let hi = lane.start.partition_point(|&s| s <= ts.hi) as u64;
            let (a, b) = (
                (base + lo).max(ids.start as u64),
                (base + hi).min(ids.end as u64),
            );
            if a < b {
                out.push(a..b);
            }
        }
        // The instants and async slices: SQLite checks their constraints.
        let spans_only = cons
            .iter()
            .any(|c| c.col == S_KIND && c.op == Op::Eq && c.value == Value::Text("span".into()));
        if spans_only {
            return out;
        }
        let (a, b) = (
            v.span_slices().max(ids.start as u64),
            v.len().min(ids.end as u64),
        );
        if a < b {
            out.push(a..b);
        }
        out
    }

    fn groupable(&self, col: usize) -> bool {
        col == S_NAME
    }

    fn grouped(&self, cons: &[Constraint], _col: usize, desc: bool) -> RowIter {
        Box::new(ByName::new(self.clone(), self.plan(cons), desc, BATCH))
    }

    fn keep(&self, row: u64, cons: &[Constraint]) -> bool {
        let Some((name, _)) = self.name_dur(row) else {
            return false;
        };
        let name = self.t.str(trace_model::StrId(name));
        cons.iter().all(|c| match (c.col, c.op, &c.value) {
            (S_NAME, Op::Eq, Value::Text(want)) => name == want,
            _ => true,
        })
    }

    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        match self.v().span(row) {
            Some(r) => self.slice_column(r, col),
            None => self.placed_column(row, col),
        }
    }

    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        let mut n = self.v().len().max(1) as f64;
        for &(col, op) in cons {
            n /= match (col, op) {
                (S_ID, Op::Eq) => n,
                (S_UTID | S_TRACK, Op::Eq) => self.t.threads().len().max(1) as f64,
                (S_DEPTH, Op::Eq) => 4.0,
                (S_TS, _) => 4.0,
                (S_NAME, Op::Eq) => 20.0,
                _ => 1.0,
            };
        }
        n.max(1.0)
    }
}

/// Planned slices ordered by name (byte order, SQLite's BINARY collation; equal names in
/// id order), for a GROUP BY or ORDER BY on name without a sort: one pass counts the names,
/// then each batch of names totalling at most [`BATCH`] spans is placed by a counting sort
/// in one more sequential pass, gathering the names and durations on the way (a name with
/// more spans than a batch is streamed by a filtering pass of its own). Memory: 20 bytes per
/// span of a batch.
struct ByName {
    s: Slices,
    ranges: Vec<Range<u64>>,
    /// Planned spans per name id.
    counts: Vec<u64>,
    /// Name ids with spans, in output order, and each name id's place in it.
    order: Vec<u32>,
    rank: Vec<u32>,
    /// The next place in `order` not yet emitted.
    next: usize,
    buf: Vec<u64>,
    /// The batch's names and durations (-1 unfinished), gathered in the same sequential pass
    /// as `buf`: reading them through the row id would be a cache miss per row.
    names: Vec<u32>,
    durs: Vec<i64>,
    pos: usize,
    /// A name streamed by filtering: its id, and where in `ranges` the scan is.
    single: Option<(u32, usize, u64)>,
    /// Spans per batch ([`BATCH`]; smaller in tests).
    batch: u64,
}

const BATCH: u64 = 1 << 19;

impl ByName {
    fn new(s: Slices, ranges: Vec<Range<u64>>, desc: bool, batch: u64) -> ByName {
        let mut counts = vec![0u64; s.t.strings().len()];
        let mut b = ByName {
            s,
            ranges,
            counts: Vec::new(),
            order: Vec::new(),
            rank: Vec::new(),
            next: 0,
            buf: Vec::new(),
            names: Vec::new(),
            durs: Vec::new(),
            pos: 0,
            single: None,
            batch,
        };
        b.each(|_, name, _| counts[name as usize] += 1);
        let mut order: Vec<u32> = (0..counts.len() as u32)
            .filter(|&n| counts[n as usize] > 0)
            .collect();
        order.sort_unstable_by(|&x, &y| {
            let (x, y) = (
                b.s.t.str(trace_model::StrId(x)),
                b.s.t.str(trace_model::StrId(y)),
            );
            x.as_bytes().cmp(y.as_bytes())
        });
        if desc {
            order.reverse();
        }
        let mut rank = vec![u32::MAX; counts.len()];
        for (i, &n) in order.iter().enumerate() {
            rank[n as usize] = i as u32;
        }
        (b.counts, b.order, b.rank) = (counts, order, rank);
        b
    }

    /// Calls `f(id, name, dur)` for every planned span (`dur` -1 when unfinished).
    fn each(&self, mut f: impl FnMut(u64, u32, i64)) {
        for r in &self.ranges {
            let Some(first) = self.s.v().span(r.start) else {
                for id in r.clone() {
                    if let Some((name, dur)) = self.s.name_dur(id) {
                        f(id, name, dur);
                    }
                }
                continue;
            };
            let lane = &self.s.v().thread(&self.s.t, first.thread).lanes[first.depth as usize];
            let i0 = first.index as u64;
            for id in r.clone() {
                let i = (i0 + id - r.start) as usize;
                let dur = if lane.flags[i] & flags::UNFINISHED != 0 {
                    -1
                } else {
                    lane.dur[i]
                };
                f(id, lane.name[i].0, dur);
            }
        }
    }

    /// Fills `buf` with the next batch; false when every name is done.
    fn refill(&mut self) -> bool {
        let p0 = self.next;
        let Some(&first) = self.order.get(p0) else {
            return false;
        };
        let count = |p: usize| self.counts[self.order[p] as usize];
        if count(p0) > self.batch {
            self.single = Some((first, 0, self.ranges.first().map_or(0, |r| r.start)));
            self.next += 1;
            return true;
        }
        let (mut p1, mut total) = (p0, 0u64);
        while p1 < self.order.len() && total + count(p1) <= self.batch {
            total += count(p1);
            p1 += 1;
        }
        let mut at: Vec<u64> = Vec::with_capacity(p1 - p0);
        let mut sum = 0;
        for p in p0..p1 {
            at.push(sum);
            sum += count(p);
        }
        let (mut buf, mut names, mut durs) = (
            std::mem::take(&mut self.buf),
            std::mem::take(&mut self.names),
            std::mem::take(&mut self.durs),
        );
        buf.clear();
        buf.resize(total as usize, 0);
        names.clear();
        names.resize(total as usize, 0);
        durs.clear();
        durs.resize(total as usize, 0);
        let (lo, hi) = (p0 as u32, p1 as u32);
        self.each(|id, name, dur| {
            let r = self.rank[name as usize];
            if (lo..hi).contains(&r) {
                let slot = &mut at[(r - lo) as usize];
                let k = *slot as usize;
                (buf[k], names[k], durs[k]) = (id, name, dur);
                *slot += 1;
            }
        });
        (self.buf, self.names, self.durs) = (buf, names, durs);
        self.pos = 0;
        self.next = p1;
        true
    }
}

impl Rows for ByName {
    fn cached(&self, col: usize) -> Option<Cell<'_>> {
        if self.single.is_some() || self.pos == 0 {
            return None;
        }
        let k = self.pos - 1;
        match col {
            S_NAME => Some(Cell::Text(self.s.t.str(trace_model::StrId(self.names[k])))),
            S_DUR => Some(Cell::Int(self.durs[k])),
            _ => None,
        }
    }
}

impl Iterator for ByName {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            if let Some((name, k, row)) = &mut self.single {
                while *k < self.ranges.len() {
                    let r = &self.ranges[*k];
                    if *row < r.start {
                        *row = r.start;
                    }
                    if *row >= r.end {
                        *k += 1;
                        continue;
                    }
                    let id = *row;
                    *row += 1;
                    if self.s.name_dur(id).is_some_and(|(n, _)| n == *name) {
                        return Some(id);
                    }
                }
                self.single = None;
            }
            if self.pos < self.buf.len() {
                self.pos += 1;
                return Some(self.buf[self.pos - 1]);
            }
            if !self.refill() {
                return None;
            }
        }
    }
}

/// `ancestor_slice(id)` and `descendant_slice(id)`: the slice columns, plus the hidden
/// argument `slice_id`.
pub(crate) struct Related {
    pub slices: Slices,
    pub ancestors: bool,
}

impl Related {
    /// The ids of slice `id`'s ancestors or descendants, as ascending ranges.
    pub(crate) fn of(&self, id: u64) -> Vec<Range<u64>> {
        let (t, v) = (&self.slices.t, self.slices.v());
        match self.ancestors {
            true => v.ancestor_ids(t, id),
            false => v.descendant_ids(t, id),
        }
    }
}

/// The argument: the first hidden column (a table-valued function's arguments go to its
/// hidden columns in order), before `slice`'s own hidden ones.
const HIDDEN: usize = 11;

impl Source for Related {
    fn schema(&self) -> String {
        format!("CREATE TABLE x({SLICE_COLUMNS}, slice_id HIDDEN, {SLICE_HIDDEN})")
    }

    fn pushable(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn exact(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        argument(cons, HIDDEN).map_or_else(Vec::new, |id| self.of(id))
    }

    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        match col {
            HIDDEN => Cell::Null,
            c if c > HIDDEN => self.slices.column(row, c - 1),
            c => self.slices.column(row, c),
        }
    }

    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        argument_estimate(cons, HIDDEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grouping by name in small batches (and streaming names larger than a batch) gives
    /// every planned span exactly once, with each name's spans together.
    #[test]
    fn by_name_groups_every_span_once_in_any_batch_size() {
        let mut bytes = Vec::new();
        spall_format::synth::Synth {
            spans: 5_000,
            names: 40,
            ..Default::default()
        }
        .write_spall(&mut bytes)
        .unwrap();
        let t = Arc::new(trace_model::load_bytes(&bytes).unwrap());
        let slices = Slices { t: t.clone() };
        let n = t.perfetto().len();
        let ranges = slices.plan(&[]);
        for batch in [1, 7, 100, 1 << 20] {
            let got: Vec<u64> = ByName::new(slices.clone(), ranges.clone(), false, batch).collect();
            assert_eq!(got.len() as u64, n, "batch {batch}");
            let mut sorted = got.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len() as u64, n, "each once");
            let names: Vec<Cell<'_>> = got.iter().map(|&r| slices.column(r, S_NAME)).collect();
            let text = |c: &Cell<'_>| match c {
                Cell::Text(s) => s.to_string(),
                _ => panic!("{c:?}"),
            };
            for w in names.windows(2) {
                assert!(text(&w[0]) <= text(&w[1]), "batch {batch}: out of order");
            }
        }
    }
}
