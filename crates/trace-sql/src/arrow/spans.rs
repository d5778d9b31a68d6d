//! `slice`'s spans straight from the lanes: thread by thread, each thread's lanes merged in
//! time order (the outer span first at equal times), which also finds each span's parent
//! and direct children without a search. A batch gathers its spans' fields in one pass,
//! then fills each column in a loop of its own. Text is either copied per span or, for
//! [`Tables::dictionary_batches`](super::Tables::dictionary_batches), given as the spans'
//! string ids over the trace's string table.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{ArrowError, DataType, SchemaRef};
use trace_model::{flags, SpanRef, Thread};

use super::{Col, Kind};
use crate::slices::Slices;

/// One gathered span.
#[derive(Clone, Copy)]
struct Span {
    id: u64,
    ts: i64,
    /// -1 when unfinished.
    dur: i64,
    self_ns: i64,
    /// The parent's slice id, or -1.
    parent: i64,
    thread: u32,
    depth: u32,
    index: u32,
    name: u32,
    cat: u32,
    args: u32,
    unfinished: bool,
}

/// What a column of `slice` is, for a span.
#[derive(Clone)]
enum Field {
    Id,
    Ts,
    Dur,
    Thread,
    Category,
    Name,
    Depth,
    Parent,
    Args,
    SelfDur,
    Unfinished,
    Kind,
    /// Always NULL for a span (`thread_ts`, `thread_dur`: not modelled).
    Null(DataType),
    /// Any other column: read through the table's source.
    Other(usize, Kind),
}

pub(super) struct Walk {
    s: Slices,
    fields: Vec<Field>,
    thread: usize,
    /// Per depth of the current thread: the next span's index, its [`head`], and the
    /// lane's first slice id.
    next: Vec<usize>,
    heads: Vec<u128>,
    base: Vec<u64>,
    buf: Vec<Span>,
    /// Dictionary text: the trace's string table (keys are string ids), `kind`'s one
    /// value, and the id of the empty string (a NULL `category`).
    dict: Option<(ArrayRef, ArrayRef, Option<u32>)>,
}

impl Walk {
    pub(super) fn new(s: Slices, schema: &SchemaRef) -> Walk {
        let fields = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(k, f)| match f.name().as_str() {
                "id" => Field::Id,
                "ts" => Field::Ts,
                "dur" => Field::Dur,
                "track_id" | "utid" => Field::Thread,
                "category" => Field::Category,
                "name" => Field::Name,
                "depth" => Field::Depth,
                "parent_id" => Field::Parent,
                "arg_set_id" => Field::Args,
                "self_dur" => Field::SelfDur,
                "unfinished" => Field::Unfinished,
                "kind" => Field::Kind,
                "thread_ts" | "thread_dur" => Field::Null(f.data_type().clone()),
                _ => Field::Other(k, Kind::of_arrow(f.data_type())),
            })
            .collect();
        let dictionary = |n: &str| {
            (schema.field_with_name(n).ok())
                .is_some_and(|f| matches!(f.data_type(), DataType::Dictionary(..)))
        };
        let dict = ["name", "category", "kind"]
            .iter()
            .any(|n| dictionary(n))
            .then(|| {
                let st = s.t.strings();
                let bytes = st.iter().map(|(_, t)| t.len()).sum();
                let mut b = StringBuilder::with_capacity(st.len(), bytes);
                for (_, t) in st.iter() {
                    b.append_value(t);
                }
                let table: ArrayRef = Arc::new(b.finish());
                let kind: ArrayRef = Arc::new(StringArray::from(vec!["span"]));
                (table, kind, st.lookup("").map(|i| i.0))
            });
        let mut w = Walk {
            s,
            fields,
            thread: 0,
            next: Vec::new(),
            heads: Vec::new(),
            base: Vec::new(),
            buf: Vec::new(),
            dict,
        };
        w.enter(0);
        w
    }

    /// Starts thread `ti` (past the last: the walk is done).
    fn enter(&mut self, ti: usize) {
        self.thread = ti;
        let t = self.s.t.clone();
        if ti >= t.threads().len() {
            self.heads.clear();
            return;
        }
        // `slice`'s lanes: a thread whose spans overlap is renested as trace_processor's.
        let th = self.s.v().thread(&t, ti as u32);
        let n = th.lanes.len();
        self.next = vec![0; n];
        self.heads = (th.lanes.iter().enumerate())
            .map(|(d, l)| head(l.start.first(), d))
            .collect();
        self.base = (0..n)
            .map(|d| {
                self.s.v().id(SpanRef {
                    thread: ti as u32,
                    depth: d as u32,
                    index: 0,
                })
            })
            .collect();
    }

    /// Gathers up to `max` spans into `buf`.
    fn gather(&mut self, max: usize) {
        self.buf.clear();
        let t = self.s.t.clone();
        while self.buf.len() < max && self.thread < t.threads().len() {
            let th = t.perfetto().thread(&t, self.thread as u32);
            if !self.thread_spans(th, max) {
                self.enter(self.thread + 1);
            }
        }
    }

    /// Gathers the current thread's next spans until `buf` holds `max`; false once the
    /// thread has none left.
    fn thread_spans(&mut self, th: &Thread, max: usize) -> bool {
        while self.buf.len() < max {
            // The lane whose next span starts first; the outer one at equal starts.
            let key = self.heads.iter().copied().min().unwrap_or(u128::MAX);
            if key == u128::MAX {
                return false;
            }
            let d = (key & 0xffff_ffff) as usize;
            let lane = &th.lanes[d];
            let i = self.next[d];
            let (s, e) = (lane.start[i], lane.end(i));
            // Every span of the lane above starting at or before `s` is already out: the
            // last one is the parent if it reaches `s` (as `Trace::parent`).
            let parent = match d.checked_sub(1) {
                Some(u) if self.next[u] > 0 && th.lanes[u].end(self.next[u] - 1) >= s => {
                    (self.base[u] + self.next[u] as u64 - 1) as i64
                }
                _ => -1,
            };
            // The direct children (as `Thread::self_ns`): the lane below's spans starting in
            // [s, e), which begin at its next span since none there starting at or after
            // `s` is out yet.
            let mut children = 0;
            if let Some(down) = th.lanes.get(d + 1) {
                let mut j = self.next[d + 1];
                while j < down.len() && down.start[j] < e {
                    children += down.end(j).min(e) - down.start[j];
                    j += 1;
                }
            }
            let unfinished = lane.flags[i] & flags::UNFINISHED != 0;
            self.buf.push(Span {
                id: self.base[d] + i as u64,
                ts: s,
                dur: if unfinished { -1 } else { lane.dur[i] },
                self_ns: lane.dur[i] - children,
                parent,
                thread: self.thread as u32,
                depth: d as u32,
                index: i as u32,
                name: lane.name[i].0,
                cat: lane.cat[i].0,
                args: lane.args[i].0,
                unfinished,
            });
            self.next[d] = i + 1;
            self.heads[d] = head(lane.start.get(i + 1), d);
        }
        true
    }

    /// The next batch of at most `rows` spans; `None` when every span is out.
    pub(super) fn batch(
        &mut self,
        rows: usize,
        schema: &SchemaRef,
    ) -> Option<Result<RecordBatch, ArrowError>> {
        self.gather(rows);
        if self.buf.is_empty() {
            return None;
        }
        let arrays: Result<Vec<_>, _> = (0..self.fields.len()).map(|k| self.column(k)).collect();
        Some(arrays.and_then(|a| RecordBatch::try_new(schema.clone(), a)))
    }

    fn column(&self, k: usize) -> Result<ArrayRef, ArrowError> {
        let (buf, t) = (&self.buf, &self.s.t);
        let str_of = |id: u32| t.str(trace_model::StrId(id));
        if let Some((table, kind, empty)) = &self.dict {
            let keys = match &self.fields[k] {
                Field::Name => Some((
                    UInt32Array::from_iter_values(buf.iter().map(|s| s.name)),
                    table,
                )),
                Field::Category => Some((
                    buf.iter()
                        .map(|s| (Some(s.cat) != *empty).then_some(s.cat))
                        .collect(),
                    table,
                )),
                Field::Kind => Some((UInt32Array::from(vec![0; buf.len()]), kind)),
                _ => None,
            };
            if let Some((keys, values)) = keys {
                let a = DictionaryArray::<UInt32Type>::try_new(keys, values.clone())?;
                return Ok(Arc::new(a));
            }
        }
        Ok(match &self.fields[k] {
            Field::Id => ints(buf, |s| s.id as i64),
            Field::Ts => ints(buf, |s| s.ts),
            Field::Dur => ints(buf, |s| s.dur),
            Field::Thread => ints(buf, |s| s.thread as i64),
            Field::Depth => ints(buf, |s| s.depth as i64),
            Field::Parent => opt_ints(buf, |s| (s.parent >= 0).then_some(s.parent)),
            Field::Args => opt_ints(buf, |s| (s.args != 0).then_some(s.args as i64)),
            Field::SelfDur => ints(buf, |s| s.self_ns),
            Field::Unfinished => ints(buf, |s| s.unfinished as i64),
            Field::Name => texts(buf, |s| Some(str_of(s.name))),
            Field::Category => texts(buf, |s| Some(str_of(s.cat)).filter(|c| !c.is_empty())),
            Field::Kind => texts(buf, |_| Some("span")),
            Field::Null(t) => arrow_array::new_null_array(t, buf.len()),
            &Field::Other(k, kind) => {
                let mut c = Col::new(kind, buf.len());
                for s in buf {
                    let r = SpanRef {
                        thread: s.thread,
                        depth: s.depth,
                        index: s.index,
                    };
                    c.push(&self.s.slice_column(r, k));
                }
                c.finish()
            }
        })
    }
}

/// A lane's next span as one number ordered by (start, depth), so that the next span of the
/// thread is a branchless minimum; `u128::MAX` for a lane with none left.
fn head(start: Option<&i64>, depth: usize) -> u128 {
    match start {
        Some(&s) => ((s as u64 ^ 1 << 63) as u128) << 32 | depth as u128,
        None => u128::MAX,
    }
}

fn ints(buf: &[Span], f: impl Fn(&Span) -> i64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(buf.iter().map(f)))
}

fn opt_ints(buf: &[Span], f: impl Fn(&Span) -> Option<i64>) -> ArrayRef {
    Arc::new(buf.iter().map(f).collect::<Int64Array>())
}

fn texts<'a>(buf: &[Span], f: impl Fn(&Span) -> Option<&'a str>) -> ArrayRef {
    let bytes = buf.iter().map(|s| f(s).map_or(0, str::len)).sum();
    let mut b = StringBuilder::with_capacity(buf.len(), bytes);
    for s in buf {
        b.append_option(f(s));
    }
    Arc::new(b.finish())
}
