//! Async operations: `b`/`n`/`e` (nestable) and `S`/`T`/`p`/`F` (legacy) events paired into
//! slices, grouped into tracks and packed into rows.
//!
//! An operation is the set of events sharing a category, an id and an id scope (the process,
//! for `id2: {"local": ..}`; else global). Within it, `b` opens a slice one level below the
//! innermost open one and `e` closes the innermost open slice of its name (an `e` without a
//! name, the innermost one; an `e` whose name no open slice has is unmatched, counted and
//! ignored, as chrome://tracing and trace_processor do); `n` is a zero-length slice. Legacy `S` opens, `T`/`p` start
//! a step (a child slice lasting to the next step or the `F`), `F` closes. Slices still open
//! at the end last to the trace's end, flagged [`async_flags::UNFINISHED`].
//!
//! Top-level slices are grouped into tracks by (process, name), as Perfetto does, and packed
//! greedily into rows: each operation takes as many rows as it is deep, at the first rows
//! free over its start. Within a row slices are sorted by start and never overlap.

use hashbrown::HashMap;

use spall_format::Diagnostics;

use crate::args::ArgsId;
use crate::diag::ModelWarning;
use crate::event_kinds::AsyncEvent;
use crate::strings::StrId;

/// Bits of [`AsyncSlice::flags`].
pub mod async_flags {
    /// Never closed: drawn to the trace's end.
    pub const UNFINISHED: u8 = 1;
    /// An `n` event: a point in time.
    pub const INSTANT: u8 = 2;
    /// A step (`T`/`p`) of a legacy operation.
    pub const STEP: u8 = 4;
    /// Of a legacy operation (`S`/`T`/`p`/`F`), not a nestable one (`b`/`n`/`e`).
    pub const LEGACY: u8 = 8;
    /// The operation's id is `id2: {"local": ..}`: scoped to its process.
    pub const LOCAL: u8 = 16;
}

/// No parent: a top-level slice.
pub const NO_PARENT: u32 = u32::MAX;

/// One paired async slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncSlice {
    /// Start, in nanoseconds.
    pub start: i64,
    /// End, in nanoseconds.
    pub end: i64,
    /// The opening event's name.
    pub name: StrId,
    /// The category (empty when none).
    pub cat: StrId,
    /// The operation's id (`id`, or `id2`'s value), as text.
    pub id: StrId,
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// The thread of the event that opened it.
    pub thread: u32,
    /// Arguments of the opening event.
    pub args: ArgsId,
    /// Arguments of the closing event.
    pub end_args: ArgsId,
    /// The enclosing slice of the same operation, or [`NO_PARENT`].
    pub parent: u32,
    /// Depth below the operation's top-level slice.
    pub depth: u16,
    /// [`async_flags`] bits.
    pub flags: u8,
}

impl AsyncSlice {
    /// Duration, in nanoseconds.
    pub fn dur(&self) -> i64 {
        self.end - self.start
    }
}

/// Async slices of one process whose top-level slices share a name, packed into rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncTrack {
    /// Index into [`Trace::processes`](crate::Trace::processes).
    pub process: u32,
    /// The track's name: a Perfetto track's own, else the name its top-level slices share.
    pub name: StrId,
    /// Rows, top to bottom: indices into [`Trace::async_slices`](crate::Trace::async_slices),
    /// sorted by start, never overlapping.
    pub rows: Vec<Vec<u32>>,
}

type Key = (bool, StrId, StrId, Option<u32>);

/// Named tracks (Perfetto's): (process, operation id) to the track's name.
pub(crate) type TrackNames = HashMap<(u32, StrId), StrId>;

/// Pairs `events` (sorted by time) into slices and tracks.
pub(crate) fn build(
    events: &[AsyncEvent],
    track_names: &TrackNames,
    end_ns: i64,
    diags: &mut Diagnostics<ModelWarning>,
) -> (Vec<AsyncSlice>, Vec<AsyncTrack>) {
    let mut slices: Vec<AsyncSlice> = Vec::new();
    // Per operation, its open slices, outermost first.
    let mut open: HashMap<Key, Vec<u32>> = HashMap::new();
    // Per open legacy slice, its open step.
    let mut steps: HashMap<u32, u32> = HashMap::new();
    for e in events {
        let legacy = matches!(e.phase, b'S' | b'T' | b'p' | b'F');
        let key = (legacy, e.cat, e.id, e.local.then_some(e.process));
        let stack = open.entry(key).or_default();
        let scope = (if legacy { async_flags::LEGACY } else { 0 })
            | (if e.local { async_flags::LOCAL } else { 0 });
        let push = |slices: &mut Vec<AsyncSlice>, parent: Option<u32>, flags: u8| {
            let (parent, depth) = match parent {
                Some(p) => (p, slices[p as usize].depth.saturating_add(1)),
                None => (NO_PARENT, 0),
            };
            slices.push(AsyncSlice {
                start: e.ts,
                end: e.ts,
                name: e.name,
                cat: e.cat,
                id: e.id,
                process: e.process,
                thread: e.thread,
                args: e.args,
                end_args: ArgsId::NONE,
                parent,
                depth,
                flags: flags | scope,
            });
            slices.len() as u32 - 1
        };
        match e.phase {
            b'b' | b'S' => {
                let s = push(&mut slices, stack.last().copied(), async_flags::UNFINISHED);
                stack.push(s);
            }
            b'n' => {
                push(&mut slices, stack.last().copied(), async_flags::INSTANT);
            }
            b'T' | b'p' => {
                let Some(&op) = stack.last() else {
                    warn_unmatched(diags, e);
                    continue;
                };
                if let Some(prev) = steps.remove(&op) {
                    close(&mut slices[prev as usize], e.ts, ArgsId::NONE);
                }
                let s = push(
                    &mut slices,
                    Some(op),
                    async_flags::STEP | async_flags::UNFINISHED,
                );
                steps.insert(op, s);
            }
            _ => {
                // `e`: the innermost open slice of its name (any, for an `e` without a
                // name); an `e` naming no open slice is unmatched, as in chrome://tracing
                // and trace_processor. `F` closes the innermost slice whatever its name.
                let named = stack
                    .iter()
                    .rposition(|&s| slices[s as usize].name == e.name);
                let at = match e.phase {
                    b'e' if e.name != StrId::EMPTY => named,
                    _ => named.or(stack.len().checked_sub(1)),
                };
                let Some(at) = at else {
                    warn_unmatched(diags, e);
                    continue;
                };
                let s = stack.remove(at);
                if let Some(step) = steps.remove(&s) {
                    close(&mut slices[step as usize], e.ts, ArgsId::NONE);
                }
                close(&mut slices[s as usize], e.ts, e.args);
            }
        }
    }
    let unfinished = slices
        .iter_mut()
        .filter(|s| s.flags & async_flags::UNFINISHED != 0)
        .map(|s| s.end = end_ns.max(s.start))
        .count();
    if unfinished > 0 {
        diags.warn_n(ModelWarning::UnfinishedAsync, unfinished as u64, 0, || {
            format!("{unfinished} async operation(s) never ended; drawn to the trace's end")
        });
    }
    let tracks = pack(&slices, track_names);
    (slices, tracks)
}

fn close(s: &mut AsyncSlice, ts: i64, args: ArgsId) {
    s.end = ts.max(s.start);
    s.end_args = args;
    s.flags &= !async_flags::UNFINISHED;
}

fn warn_unmatched(diags: &mut Diagnostics<ModelWarning>, e: &AsyncEvent) {
    diags.warn(ModelWarning::AsyncEndWithoutBegin, e.offset, || {
        format!(
            "async {:?} event at {} ns has no open operation with its id; ignored",
            e.phase as char, e.ts
        )
    });
}

/// Groups operations into tracks by (process, the named track of their id, else their
/// top-level name) and packs them into rows.
fn pack(slices: &[AsyncSlice], track_names: &TrackNames) -> Vec<AsyncTrack> {
    // Each slice's top-level slice: parents come before children.
    let mut root = vec![0u32; slices.len()];
    let mut height = vec![0u16; slices.len()];
    for (i, s) in slices.iter().enumerate() {
        root[i] = if s.parent == NO_PARENT {
            i as u32
        } else {
            root[s.parent as usize]
        };
        let r = root[i] as usize;
        height[r] = height[r].max(s.depth.saturating_add(1));
    }
    let mut members: HashMap<u32, Vec<u32>> = HashMap::new();
    for (i, &r) in root.iter().enumerate() {
        if r != i as u32 {
            members.entry(r).or_default().push(i as u32);
        }
    }
    let mut track_of: HashMap<(u32, StrId), usize> = HashMap::new();
    let mut tracks: Vec<AsyncTrack> = Vec::new();
    let mut row_end: Vec<Vec<i64>> = Vec::new();
    // Slices were created in time order, so top-level slices come by start.
    for (i, s) in slices.iter().enumerate() {
        if s.parent != NO_PARENT {
            continue;
        }
        let name = track_names.get(&(s.process, s.id)).copied();
        let name = name.unwrap_or(s.name);
        let t = *track_of.entry((s.process, name)).or_insert_with(|| {
            tracks.push(AsyncTrack {
                process: s.process,
                name,
                rows: Vec::new(),
            });
            row_end.push(Vec::new());
            tracks.len() - 1
        });
        let (track, ends) = (&mut tracks[t], &mut row_end[t]);
        let h = height[i] as usize;
        let mut r = 0;
        while !ends.iter().skip(r).take(h).all(|&e| e <= s.start) {
            r += 1;
        }
        while ends.len() < r + h {
            ends.push(i64::MIN);
            track.rows.push(Vec::new());
        }
        let subtree: Vec<u32> = std::iter::once(i as u32)
            .chain(members.remove(&(i as u32)).into_iter().flatten())
            .collect();
        // The operation holds all its rows until its last slice ends.
        let op_end = subtree.iter().map(|&m| slices[m as usize].end).max();
        for e in &mut ends[r..r + h] {
            *e = op_end.unwrap_or(s.end);
        }
        for m in subtree {
            track.rows[r + slices[m as usize].depth as usize].push(m);
        }
    }
    tracks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_bytes;

    #[test]
    fn nestable_events_pair_nest_and_pack() {
        let t = load_bytes(
            br#"[
            {"ph":"b","name":"load","cat":"c","id":"1","ts":0,"pid":1,"tid":1},
            {"ph":"b","name":"fetch","cat":"c","id":"1","ts":1,"pid":1,"tid":1},
            {"ph":"n","name":"mark","cat":"c","id":"1","ts":2,"pid":1,"tid":1},
            {"ph":"e","name":"fetch","cat":"c","id":"1","ts":3,"pid":1,"tid":1},
            {"ph":"b","name":"load","cat":"c","id":"2","ts":2,"pid":1,"tid":2},
            {"ph":"e","name":"load","cat":"c","id":"2","ts":4,"pid":1,"tid":2},
            {"ph":"e","name":"load","cat":"c","id":"1","ts":5,"pid":1,"tid":1},
            {"ph":"b","name":"load","cat":"c","id":"3","ts":6,"pid":1,"tid":1}
        ]"#,
        )
        .unwrap();
        let s = t.async_slices();
        assert_eq!(s.len(), 5);
        let by_name = |n: &str, start: i64| {
            s.iter()
                .position(|x| t.str(x.name) == n && x.start == start * 1000)
                .unwrap() as u32
        };
        let (l1, fetch, mark, l2, l3) = (
            by_name("load", 0),
            by_name("fetch", 1),
            by_name("mark", 2),
            by_name("load", 2),
            by_name("load", 6),
        );
        assert_eq!((s[l1 as usize].end, s[fetch as usize].end), (5000, 3000));
        assert_eq!(s[fetch as usize].parent, l1);
        assert_eq!(s[mark as usize].parent, fetch);
        assert_eq!(s[mark as usize].flags, async_flags::INSTANT);
        assert_eq!(s[l3 as usize].flags, async_flags::UNFINISHED);
        assert_eq!(s[l3 as usize].end, t.end_ns());
        let tracks = t.async_tracks();
        assert_eq!(tracks.len(), 1);
        // Operation 1 takes rows 0-2; operation 2 overlaps it and goes below; operation 3
        // starts after operation 1 ends and reuses row 0.
        assert_eq!(
            tracks[0].rows,
            vec![vec![l1, l3], vec![fetch], vec![mark], vec![l2]]
        );
        assert_eq!(t.diagnostics().count(ModelWarning::UnfinishedAsync), 1);
    }

    /// An `e` naming no open slice closes nothing (catapult's own test trace: the
    /// operation goes on to its real end); an `e` without a name closes the innermost.
    #[test]
    fn an_end_of_another_name_is_unmatched() {
        let t = load_bytes(
            br#"[
            {"ph":"b","name":"req","cat":"c","id":"1","ts":0,"pid":1,"tid":1},
            {"ph":"e","name":"other","cat":"c","id":"1","ts":1,"pid":1,"tid":1},
            {"ph":"b","name":"job","cat":"c","id":"1","ts":2,"pid":1,"tid":1},
            {"ph":"e","cat":"c","id":"1","ts":3,"pid":1,"tid":1},
            {"ph":"e","name":"req","cat":"c","id":"1","ts":4,"pid":1,"tid":1}
        ]"#,
        )
        .unwrap();
        let s = t.async_slices();
        let ends: Vec<(&str, i64, u32)> =
            s.iter().map(|x| (t.str(x.name), x.end, x.parent)).collect();
        assert_eq!(ends, [("req", 4000, NO_PARENT), ("job", 3000, 0)]);
        assert_eq!(t.diagnostics().count(ModelWarning::AsyncEndWithoutBegin), 1);
    }

    #[test]
    fn legacy_steps_and_local_ids() {
        let t = load_bytes(
            br#"[
            {"ph":"S","name":"op","cat":"c","id":"7","ts":0,"pid":1,"tid":1},
            {"ph":"T","name":"op","cat":"c","id":"7","ts":2,"pid":1,"tid":1,"args":{"step":"a"}},
            {"ph":"p","name":"op","cat":"c","id":"7","ts":4,"pid":1,"tid":1,"args":{"step":"b"}},
            {"ph":"F","name":"op","cat":"c","id":"7","ts":6,"pid":1,"tid":1},
            {"ph":"b","name":"x","cat":"c","id2":{"local":"5"},"ts":0,"pid":1,"tid":1},
            {"ph":"e","name":"x","cat":"c","id2":{"local":"5"},"ts":1,"pid":2,"tid":1},
            {"ph":"e","name":"y","cat":"c","id":"9","ts":1,"pid":2,"tid":1}
        ]"#,
        )
        .unwrap();
        let s = t.async_slices();
        let steps: Vec<(i64, i64)> = s
            .iter()
            .filter(|x| x.flags & async_flags::STEP != 0)
            .map(|x| (x.start, x.end))
            .collect();
        assert_eq!(steps, vec![(2000, 4000), (4000, 6000)]);
        // The local id in another process is another operation: both ends are unmatched or
        // unfinished, and the `e` of id 9 has no begin at all.
        assert_eq!(t.diagnostics().count(ModelWarning::AsyncEndWithoutBegin), 2);
        assert_eq!(t.diagnostics().count(ModelWarning::UnfinishedAsync), 1);
    }
}
