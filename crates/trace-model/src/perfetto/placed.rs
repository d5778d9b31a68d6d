//! The rows of `slice` beyond the thread spans, placed as trace_processor places them:
//! thread instants (`dur = 0`, nested inside the deepest span open at their time), process
//! and global instants (depth 0 on a process or global track; a protobuf trace's marks on
//! a track of their own beside their thread's), and nestable async slices
//! (`b`/`n`/`e`; an `n` is a zero-length child, an unfinished one has `dur = -1`) on a
//! global track, or a process track for `id2.local` ids, merged as trace_processor's track
//! compressor merges them: ids that share the name of their first event share tracks, an id
//! keeping the track it had; a protobuf trace's on its descriptor's track, merged alike:
//! descriptors below one thread, one process or none that share a name share tracks (a
//! thread's, a process's or a global one) while their slices do not overlap. Legacy async
//! (`S`/`T`/`F`) is left out, as trace_processor drops it.
//!
//! Their ids follow the spans': thread instants thread by thread in time order, then process
//! and global instants, then async slices operation by operation, each operation's slices in
//! depth-first order (so a slice's descendants are the ids right after it). Depth, parent
//! and track are computed once per trace ([`View`](super::View)): O(instants × depth +
//! async).

use std::collections::HashMap;
use std::ops::Range;

use super::ids::SliceIds;
use crate::args::ArgsId;
use crate::asyncs::{async_flags, AsyncSlice, NO_PARENT};
use crate::event_kinds::{Instant, InstantScope};
use crate::span::{ExtId, SpanRef, Thread};
use crate::strings::StrId;
use crate::trace::Trace;

/// The slot of a thread's track of marks, apart from its async tracks' slots.
const MARKS: u32 = u32::MAX;

/// What an instant or async slice row is, and where its event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// Index into [`Trace::instants`], thread-scoped.
    ThreadInstant(u32),
    /// Index into [`Trace::instants`], process- or global-scoped.
    Instant(u32),
    /// Index into [`Trace::async_slices`].
    Async(u32),
}

/// One slice that is not a span: an instant or an async slice.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// Its event.
    pub src: Src,
    /// Its depth on its track.
    pub depth: u32,
    /// The parent's slice id, or -1.
    pub parent: i64,
    /// Its track: a thread instant's, its thread's (the thread track's id); the others', an
    /// index into [`View::tracks`](super::View::tracks).
    pub track: u32,
    /// Async and thread instants: one past the id of its last descendant (its descendants
    /// are `id + 1..end`).
    pub end: u64,
}

/// A track beyond the threads' and counters': a process's, a thread's second one, or the
/// whole trace's.
#[derive(Clone, Copy, Debug)]
pub struct Track {
    /// Its name, if any.
    pub name: Option<StrId>,
    /// What it belongs to.
    pub scope: Scope,
}

/// What a track belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// A process (`process_track.upid`).
    Process(u32),
    /// A thread (`thread_track.utid`).
    Thread(u32),
    /// The whole trace.
    Global,
}

/// The extra rows and tracks.
pub(crate) struct Placed {
    /// The id of the first extra row (the number of spans).
    pub first: u64,
    pub rows: Vec<Row>,
    /// Per thread, the (local) indices into `rows` of its instants, sorted by time.
    pub by_thread: Vec<Range<u32>>,
    /// The id of the first extra track (threads + counter series).
    pub first_track: u64,
    /// Process tracks first (`process_track` is `0..process_tracks`), then thread tracks
    /// (`process_tracks..process_tracks + thread_tracks`), then global ones.
    pub tracks: Vec<Track>,
    pub process_tracks: usize,
    pub thread_tracks: usize,
    /// The async slices whose `b` and `e` both had args, sorted: one merged arg set each,
    /// numbered after the model's (see [`Placed::arg_set`]).
    pub merged_args: Vec<u32>,
}

/// A track's key: what it belongs to, its name, and its slot among the tracks of one
/// scope and name.
type Key = (Scope, Option<StrId>, u32);

impl Placed {
    pub(crate) fn new(t: &Trace, ids: &SliceIds) -> Placed {
        let first = ids.len();
        let proto = t.decode_summary().format.name() == "perfetto";
        let mut rows = Vec::new();
        let by_thread = thread_instants(t, ids, proto, &mut rows);
        let (mut keys, instants) = instant_keys(t, proto);
        let mut names = vec![None; keys.len()];
        let asyncs = Asyncs::new(t, proto);
        let async_track = asyncs.track_keys(t, &mut keys, &mut names);
        let (tracks, place) = order_tracks(&keys, &names);
        let count = |c| tracks.iter().filter(|k| class(k.scope) == c).count();
        let (process_tracks, thread_tracks) = (count(0), count(1));
        instant_rows(t, first, &instants, &place, &mut rows);
        let track_of = |a| place[async_track[&asyncs.key(a)]];
        async_rows(t, first, &asyncs, track_of, &mut rows);
        let merged_args = (0..t.async_slices().len() as u32)
            .filter(|&a| {
                let s = &t.async_slices()[a as usize];
                s.args != ArgsId::NONE && s.end_args != ArgsId::NONE
            })
            .collect();
        Placed {
            first,
            rows,
            by_thread,
            first_track: (t.threads().len() + t.counters().len()) as u64,
            tracks,
            process_tracks,
            thread_tracks,
            merged_args,
        }
    }

    /// The arg set of async slice `a`, as trace_processor gives one: its `b`'s args and its
    /// `e`'s together. A merged set's id follows the model's last.
    pub(crate) fn arg_set(&self, t: &Trace, a: u32) -> i64 {
        let s = &t.async_slices()[a as usize];
        match (s.args, s.end_args) {
            (b, ArgsId::NONE) => b.0 as i64,
            (ArgsId::NONE, e) => e.0 as i64,
            _ => {
                let k = self.merged_args.partition_point(|&x| x < a);
                t.args().count() as i64 + 1 + k as i64
            }
        }
    }

    /// The extra row with slice id `id`.
    pub(crate) fn row(&self, id: u64) -> Option<&Row> {
        self.rows
            .get(usize::try_from(id.checked_sub(self.first)?).ok()?)
    }

    /// Every id, spans' and extra rows'.
    pub(crate) fn end(&self) -> u64 {
        self.first + self.rows.len() as u64
    }

    /// The ids of the instants on `thread` in `[start, end)`.
    pub(crate) fn instants_in(&self, t: &Trace, thread: u32, start: i64, end: i64) -> Range<u64> {
        let Some(r) = self.by_thread.get(thread as usize) else {
            return 0..0;
        };
        let rows = &self.rows[r.start as usize..r.end as usize];
        let ts = |row: &Row| match row.src {
            Src::ThreadInstant(i) => t.instants()[i as usize].ts,
            _ => i64::MAX,
        };
        let lo = rows.partition_point(|x| ts(x) < start) as u64;
        let hi = rows.partition_point(|x| ts(x) < end) as u64;
        let at = self.first + r.start as u64;
        at + lo..at + hi.max(lo)
    }

    /// How many of the instants on `thread` at `ts` (the first ones there) a span ending at
    /// `ts` holds when its `E` is the `rank`th of that time's (1: the outermost span's) to
    /// come after them: those written before it ([`Instant::ends_after`](crate::Instant)).
    pub(crate) fn held_at(&self, t: &Trace, thread: u32, ts: i64, rank: u8) -> u64 {
        self.first_at(t, thread, ts, |i| i.ends_after >= rank)
    }

    /// How many of the instants on `thread` at `ts` (the first ones there) a span starting
    /// at `ts` does not hold when its `B` is the `rank`th of that time's (1: the innermost
    /// span's) to come after them: those written before it.
    pub(crate) fn before_at(&self, t: &Trace, thread: u32, ts: i64, rank: u8) -> u64 {
        self.first_at(t, thread, ts, |i| i.begins_after >= rank)
    }

    /// How many of the first instants on `thread` at `ts` satisfy `f`.
    fn first_at(&self, t: &Trace, thread: u32, ts: i64, f: impl Fn(&Instant) -> bool) -> u64 {
        let at = self.instants_in(t, thread, ts, ts.saturating_add(1));
        let row = |id: u64| &self.rows[(id - self.first) as usize];
        let ok = |id: u64| match row(id).src {
            Src::ThreadInstant(i) => f(&t.instants()[i as usize]),
            _ => false,
        };
        at.take_while(|&id| ok(id)).count() as u64
    }
}

/// The thread instant before: its thread, time, `B`s and `E`s after it, depth and id.
type Before = (u32, i64, (u8, u8), u32, i64);

/// Appends the thread instants' rows, thread by thread in time order, each inside the
/// deepest span open at its time, or the instant before at its time; returns each
/// thread's range of them in `rows`.
fn thread_instants(t: &Trace, ids: &SliceIds, proto: bool, rows: &mut Vec<Row>) -> Vec<Range<u32>> {
    let mut by_thread = vec![0..0; t.threads().len()];
    let mut thread_instants: Vec<u32> = (0..t.instants().len() as u32)
        .filter(|&i| {
            let e = &t.instants()[i as usize];
            // trace_processor drops a thread instant whose tid it cannot read.
            e.scope == InstantScope::Thread && !ids.nest.is_merged(e.thread) && !(proto && e.mark)
        })
        .collect();
    thread_instants.sort_by_key(|&i| {
        let e = &t.instants()[i as usize];
        (e.thread, e.ts, i)
    });
    // The instant before, while it is at the same time on the same thread with no `E`
    // between them: its thread, time, `E`s after it, depth and id.
    let mut last: Option<Before> = None;
    for &i in &thread_instants {
        let e = &t.instants()[i as usize];
        let k = rows.len() as u32;
        // trace_processor keeps a zero-length slice on its stack until a later time: an
        // instant at the time of the one before nests in it.
        // A protobuf instant written before the end of a slice ending at its time is
        // inside it (trace_processor takes a sequence's events of one time in file order).
        let held = if proto {
            (e.ends_after, e.begins_after)
        } else {
            (0, 0)
        };
        let (depth, parent) = match (last, open_at(t, ids, e.thread, e.ts, held)) {
            (Some((th, ts, h, d, id)), _) if (th, ts, h) == (e.thread, e.ts, held) => (d + 1, id),
            (_, Some(p)) => (p.depth + 1, ids.id(p) as i64),
            (_, None) => (0, -1),
        };
        last = Some((e.thread, e.ts, held, depth, (ids.len() + k as u64) as i64));
        let r = &mut by_thread[e.thread as usize];
        if r.start == r.end {
            *r = k..k;
        }
        r.end = k + 1;
        rows.push(Row {
            src: Src::ThreadInstant(i),
            depth,
            parent,
            track: e.thread,
            end: 0,
        });
    }
    // An instant's descendants are the instants nested in it: the rest of its time's.
    let first = ids.len();
    let mut end = first + rows.len() as u64;
    for k in (0..rows.len()).rev() {
        let next = rows.get(k + 1).map(|r| r.parent);
        if next != Some((first + k as u64) as i64) {
            end = first + k as u64 + 1;
        }
        rows[k].end = end;
    }
    by_thread
}

/// The tracks of the process and global instants (and a protobuf trace's marks), and
/// each such instant with its track's index into the keys.
fn instant_keys(t: &Trace, proto: bool) -> (Vec<Key>, Vec<(u32, usize)>) {
    let mut instants = Vec::new();
    let mut instant_track = HashMap::new();
    for (i, e) in t.instants().iter().enumerate() {
        let key = match e.scope {
            // A protobuf trace's marks: a track of their own beside the thread's.
            InstantScope::Thread if proto && e.mark => (Scope::Thread(e.thread), None, MARKS),
            InstantScope::Thread => continue,
            InstantScope::Process => (Scope::Process(e.process), None, 0),
            InstantScope::Global => (Scope::Global, None, 0),
        };
        let n = instant_track.len();
        let k = *instant_track.entry(key).or_insert(n);
        instants.push((i as u32, k));
    }
    let mut keys = vec![(Scope::Global, None, 0); instant_track.len()];
    for (key, k) in instant_track {
        keys[k] = key;
    }
    (keys, instants)
}

/// The nestable async slices in placing order, with what decides their tracks.
struct Asyncs {
    proto: bool,
    /// Depth-first, operation by operation ([`async_order`]).
    order: Vec<u32>,
    /// The top-level slices: their merged track's scope, name and slot.
    slots: HashMap<u32, Key>,
}

impl Asyncs {
    fn new(t: &Trace, proto: bool) -> Asyncs {
        let order = async_order(t);
        // A protobuf slice's track is its descriptor's: one per (process, uuid), named as
        // the model names it (the descriptor's name, else its slices').
        let mut proto_name: HashMap<u32, StrId> = HashMap::new();
        if proto {
            for tr in t.async_tracks() {
                for &a in tr.rows.iter().flatten() {
                    proto_name.insert(a, tr.name);
                }
            }
        }
        // A descriptor below a thread's track (not process-local, in a process) is that
        // thread's; one below a process's, the process's; the others are the trace's. A
        // JSON operation's tracks are its process's for an `id2.local` id, else the trace's.
        let scope = |s: &AsyncSlice| match s.flags & async_flags::LOCAL {
            0 if proto && t.processes()[s.process as usize].pid != ExtId::Num(0) => {
                Scope::Thread(s.thread)
            }
            0 => Scope::Global,
            _ => Scope::Process(s.process),
        };
        let slots = match proto {
            true => merged_slots(t, &order, |a| proto_name.get(&a).copied(), scope),
            false => merged_slots(
                t,
                &order,
                |a| Some(t.async_slices()[a as usize].name),
                scope,
            ),
        };
        Asyncs {
            proto,
            order,
            slots,
        }
    }

    /// The track key of top-level async slice `a`.
    fn key(&self, a: u32) -> Key {
        self.slots[&a]
    }

    /// Adds the async tracks to `keys` (with their `names`), in the order their first
    /// slices come; returns each key's index.
    fn track_keys(
        &self,
        t: &Trace,
        keys: &mut Vec<Key>,
        names: &mut Vec<Option<StrId>>,
    ) -> HashMap<Key, usize> {
        let mut async_track = HashMap::new();
        for &a in &self.order {
            let s = &t.async_slices()[a as usize];
            if s.parent != NO_PARENT {
                continue;
            }
            let key = self.key(a);
            let n = keys.len();
            async_track.entry(key).or_insert_with(|| {
                keys.push(key);
                names.push(match self.proto {
                    true => key.1,
                    false => Some(s.name),
                });
                n
            });
        }
        async_track
    }
}

/// Process tracks first, then threads', then global ones.
fn class(s: Scope) -> u8 {
    match s {
        Scope::Process(_) => 0,
        Scope::Thread(_) => 1,
        Scope::Global => 2,
    }
}

/// The tracks in id order (by [`class`], then in the order their keys came), and each
/// key's place among them.
fn order_tracks(keys: &[Key], names: &[Option<StrId>]) -> (Vec<Track>, Vec<u32>) {
    let mut rank: Vec<usize> = (0..keys.len()).collect();
    rank.sort_by_key(|&k| (class(keys[k].0), k));
    let mut place = vec![0u32; keys.len()];
    for (p, &k) in rank.iter().enumerate() {
        place[k] = p as u32;
    }
    let tracks = rank
        .iter()
        .map(|&k| Track {
            name: names[k],
            scope: keys[k].0,
        })
        .collect();
    (tracks, place)
}

/// Appends the process and global instants' rows (and marks'). Instants at one time on
/// one track stack, each inside the one before, as trace_processor's do (`firstPaint`,
/// `firstContentfulPaint`, ... at one time).
fn instant_rows(
    t: &Trace,
    first: u64,
    instants: &[(u32, usize)],
    place: &[u32],
    rows: &mut Vec<Row>,
) {
    let mut last: HashMap<usize, (i64, u32, i64)> = HashMap::new();
    for &(i, k) in instants {
        let ts = t.instants()[i as usize].ts;
        let id = (first + rows.len() as u64) as i64;
        let (depth, parent) = match last.get(&k) {
            Some(&(at, depth, prev)) if at == ts => (depth + 1, prev),
            _ => (0, -1),
        };
        last.insert(k, (ts, depth, id));
        rows.push(Row {
            src: Src::Instant(i),
            depth,
            parent,
            track: place[k],
            end: 0,
        });
    }
}

/// Appends the async slices' rows in depth-first order (a slice's id by its place there,
/// its track its root's: `track_of(root)`), each with the end of its subtree.
fn async_rows(
    t: &Trace,
    first: u64,
    asyncs: &Asyncs,
    track_of: impl Fn(u32) -> u32,
    rows: &mut Vec<Row>,
) {
    let base = rows.len();
    let mut id_of = vec![0u64; t.async_slices().len()];
    for (n, &a) in asyncs.order.iter().enumerate() {
        id_of[a as usize] = first + (base + n) as u64;
    }
    let mut track = 0;
    // The row before: its slice, and where it went.
    let mut prev: Option<(&AsyncSlice, u32, i64)> = None;
    for &a in &asyncs.order {
        let s = &t.async_slices()[a as usize];
        let (mut depth, mut parent) = if s.parent == NO_PARENT {
            track = track_of(a);
            (s.depth as u32, -1)
        } else {
            (s.depth as u32, id_of[s.parent as usize] as i64)
        };
        // An `n` at the time of the `n` before it in one operation nests in it, as
        // trace_processor keeps a zero-length slice open until a later time.
        let instant = |x: &AsyncSlice| x.flags & async_flags::INSTANT != 0;
        if let Some((p, d, id)) = prev {
            let same = p.parent == s.parent && p.start == s.start;
            if same && s.parent != NO_PARENT && instant(p) && instant(s) {
                (depth, parent) = (d + 1, id);
            }
        }
        prev = Some((s, depth, (first + rows.len() as u64) as i64));
        rows.push(Row {
            src: Src::Async(a),
            depth,
            parent,
            track,
            end: 0,
        });
    }
    // Each async slice's subtree ends where the next slice at its depth or above starts.
    let mut stack: Vec<usize> = Vec::new();
    for k in base..rows.len() {
        while let Some(&top) = stack.last() {
            if rows[top].depth < rows[k].depth {
                break;
            }
            rows[top].end = first + k as u64;
            stack.pop();
        }
        stack.push(k);
    }
    for k in stack {
        rows[k].end = first + rows.len() as u64;
    }
}

/// The deepest span on `thread` open at `ts` (started at or before it, ending after it,
/// or ending at it with a span ended with its parent there: trace_processor had that one
/// still open), or, of the spans ending at `ts`, the `holds.0`th outermost; not the
/// `holds.1` innermost of those starting at `ts` (begun after the instant in the file).
fn open_at(t: &Trace, ids: &SliceIds, thread: u32, ts: i64, holds: (u8, u8)) -> Option<SpanRef> {
    let (mut ends, mut begins) = holds;
    if thread as usize >= t.threads().len() {
        return None;
    }
    let th = ids.thread(t, thread);
    let mut out = None;
    for (d, lane) in th.lanes.iter().enumerate() {
        let Some(i) = lane.start.partition_point(|&s| s <= ts).checked_sub(1) else {
            break;
        };
        let end = lane.end(i);
        let unfinished = lane.flags[i] & crate::span::flags::UNFINISHED != 0;
        if end <= ts && !unfinished && !(end == ts && held(th, d, ts)) {
            if end < ts || ends == 0 {
                break;
            }
            ends -= 1;
        }
        out = Some(SpanRef {
            thread,
            depth: d as u32,
            index: i as u32,
        });
    }
    while let Some(p) =
        out.filter(|p| begins > 0 && th.lanes[p.depth as usize].start[p.index as usize] == ts)
    {
        begins -= 1;
        out = p.depth.checked_sub(1).map(|d| {
            let lane = &th.lanes[d as usize];
            let index = lane.start.partition_point(|&s| s <= ts) as u32 - 1;
            SpanRef {
                thread,
                depth: d,
                index,
            }
        });
    }
    out
}

/// Whether the span of lane `d` that ends at `ts` holds the instants at `ts`: it, or a
/// span inside it that ends then too, was ended with its parent
/// ([`ENDED_WITH_PARENT`](crate::span::flags::ENDED_WITH_PARENT)), still open for
/// trace_processor at `ts`.
pub(crate) fn held(th: &Thread, d: usize, ts: i64) -> bool {
    let last = |d: usize| {
        let lane = th.lanes.get(d)?;
        let i = lane.start.partition_point(|&s| s <= ts).checked_sub(1)?;
        Some((lane.end(i), lane.flags[i]))
    };
    (d..th.lanes.len())
        .map_while(last)
        .take_while(|&(end, _)| end == ts)
        .any(|(_, f)| f & crate::span::flags::ENDED_WITH_PARENT != 0)
}

/// The merged track (scope, name, slot) of each top-level async slice, as trace_processor's
/// track compressor packs them: slices of one scope (a thread, a process or the trace) whose
/// ids share a name share tracks; an id keeps the slot it took last, and otherwise takes the
/// first slot with nothing open at its start (taking it over), else a new one. An id's name
/// is `name_of` its first slice: for a protobuf descriptor, the model's name of its track
/// (an unnamed descriptor's: that slice's name); for a JSON id (`id2.local` per process,
/// else trace-wide), the name of its first event, which every later operation of the id
/// keeps (Chrome's `step-0`, `step-1`, ... of one id share `step-0`'s track).
fn merged_slots(
    t: &Trace,
    order: &[u32],
    name_of: impl Fn(u32) -> Option<StrId>,
    scope: impl Fn(&AsyncSlice) -> Scope,
) -> HashMap<u32, Key> {
    // Per (scope, name), each slot's id (a descriptor's uuid) and when it frees.
    type Slots = Vec<(StrId, i64)>;
    let mut busy: HashMap<(Scope, Option<StrId>), Slots> = HashMap::new();
    let mut named: HashMap<(Scope, StrId), Option<StrId>> = HashMap::new();
    let mut out = HashMap::new();
    for &a in order {
        let s = &t.async_slices()[a as usize];
        if s.parent != NO_PARENT {
            continue;
        }
        let end = if s.flags & async_flags::UNFINISHED != 0 {
            i64::MAX
        } else {
            s.end
        };
        let scope = scope(s);
        let name = *named.entry((scope, s.id)).or_insert_with(|| name_of(a));
        let slots = busy.entry((scope, name)).or_default();
        let k = match slots.iter().position(|&(id, _)| id == s.id) {
            Some(k) => k,
            None => match slots.iter().position(|&(_, e)| e <= s.start) {
                Some(k) => k,
                None => {
                    slots.push((s.id, end));
                    slots.len() - 1
                }
            },
        };
        slots[k] = (s.id, slots[k].1.max(end));
        out.insert(a, (scope, name, k as u32));
    }
    out
}

/// The nestable async slices in depth-first order, operation by operation in start order.
fn async_order(t: &Trace) -> Vec<u32> {
    let slices = t.async_slices();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); slices.len()];
    let mut roots = Vec::new();
    for (i, s) in slices.iter().enumerate() {
        if s.flags & async_flags::LEGACY != 0 {
            continue;
        }
        match s.parent {
            NO_PARENT => roots.push(i as u32),
            p => children[p as usize].push(i as u32),
        }
    }
    roots.sort_by_key(|&r| (slices[r as usize].start, r));
    let mut order = Vec::new();
    for r in roots {
        let mut stack = vec![r];
        while let Some(x) = stack.pop() {
            order.push(x);
            stack.extend(children[x as usize].iter().rev());
        }
    }
    order
}
