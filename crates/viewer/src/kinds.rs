//! Everything the timeline shows besides spans (counters, instants, async slices, CPU samples
//! and flows): what the viewer derives from the trace once to draw them, and what can be
//! picked (selected or hovered).

use trace_model::sched::{SchedData, ThreadState};
use trace_model::{SpanRef, Trace};

/// Something the user can select or hover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A span.
    Span(SpanRef),
    /// Index into `Trace::instants`.
    Instant(u32),
    /// Index into `Trace::async_slices`.
    Async(u32),
    /// A counter group's value at a time.
    Counter {
        /// Index into `EventIndex::counters`.
        group: u32,
        /// The time, in nanoseconds.
        ts: i64,
    },
    /// Sample `index` of `Trace::samples()[track]`.
    Sample {
        /// Index into `Trace::samples`.
        track: u32,
        /// Index of the sample in the track.
        index: u32,
    },
    /// A scheduling slice of a system trace: an index into `SchedData::slices`.
    Sched(u32),
    /// A thread's scheduling state: an index into `SchedData::states`.
    State(u32),
    /// A box of a thread's stacks over time (`Kinds::sample_stacks`): consecutive samples
    /// with the same frame at one depth, named by its first sample.
    Stack {
        /// Index into `Trace::samples`.
        track: u32,
        /// The stack depth (0 is the outermost frame).
        depth: u32,
        /// Index of the box's first sample in the track.
        sample: u32,
    },
}

impl Pick {
    /// The span, if this is one.
    pub fn span(self) -> Option<SpanRef> {
        match self {
            Pick::Span(r) => Some(r),
            _ => None,
        }
    }
}

/// The index of the first of `items` (sorted by `key`) whose key is at least `t`.
///
/// An exponential search: frame walks step to the next pixel column, usually a few items
/// ahead, and a plain binary search over the rest of a million-item slice misses the cache
/// at every step.
pub fn first_at_or_after<T>(items: &[T], t: i64, key: impl Fn(&T) -> i64) -> usize {
    let n = items.len();
    let mut end = 1;
    // Invariant: every item before `end / 2` has a key below `t`.
    while end <= n && key(&items[end - 1]) < t {
        end *= 2;
    }
    let lo = end / 2;
    lo + items[lo..end.min(n)].partition_point(|x| key(x) < t)
}

/// Instants `list` (indices into `Trace::instants`, by time) nearest to `t` within `tol`:
/// the nearest one, and how many share its pixel (`tol` wide).
pub fn instant_near(t: &Trace, list: &[u32], at: i64, tol: i64) -> Option<(u32, usize)> {
    let inst = t.instants();
    let a = first_at_or_after(list, at - tol, |&i| inst[i as usize].ts);
    let b = first_at_or_after(list, at + tol + 1, |&i| inst[i as usize].ts);
    let best = list[a..b]
        .iter()
        .min_by_key(|&&i| (inst[i as usize].ts - at).abs())?;
    Some((*best, b - a))
}

#[cfg(test)]
mod tests {
    use super::first_at_or_after;

    #[test]
    fn exponential_search_agrees_with_binary_search() {
        // Sorted keys with runs of equal values, searched for every value around them.
        let keys: Vec<i64> = (0..300i64).map(|i| i / 3 * 2).collect();
        for n in [0, 1, 2, 3, 7, 8, 9, 100, 300] {
            let items = &keys[..n];
            for t in -1..=201 {
                assert_eq!(
                    first_at_or_after(items, t, |&x| x),
                    items.partition_point(|&x| x < t),
                    "n {n} t {t}"
                );
            }
        }
    }
}

/// What Ctrl+C copies for a selection: its name; with `stack` (Ctrl+Shift+C) a span's call
/// stack, one name per line from the outermost (a CPU sample's stack likewise). `None` for
/// a counter value, which has no name of its own.
pub fn copy_text(t: &trace_model::Trace, pick: Pick, stack: bool) -> Option<String> {
    match pick {
        Pick::Span(r) => {
            let spans = if stack { t.call_stack(r) } else { vec![r] };
            let names: Vec<&str> = spans.into_iter().map(|r| t.str(t.span(r).name)).collect();
            Some(names.join("\n"))
        }
        Pick::Instant(i) => t
            .instants()
            .get(i as usize)
            .map(|e| t.str(e.name).to_string()),
        Pick::Async(i) => (t.async_slices().get(i as usize)).map(|a| t.str(a.name).to_string()),
        Pick::Sample { .. } | Pick::Stack { .. } => {
            let mut f = pick_frame(t, pick)?;
            let mut names = Vec::new();
            while let Some(fr) = t.frames().get(f as usize) {
                names.push(t.str(fr.name));
                if !stack {
                    break;
                }
                f = fr.parent;
            }
            names.reverse();
            Some(names.join("\n"))
        }
        Pick::Counter { .. } => None,
        Pick::Sched(_) | Pick::State(_) => {
            let th = pick_thread(t, pick)?;
            Some(t.thread_label(th))
        }
    }
}

/// The frame of a sample (its leaf) or of a box of stacks over time (its frame at its
/// depth): an index into `Trace::frames`.
pub fn pick_frame(t: &trace_model::Trace, pick: Pick) -> Option<u32> {
    let (track, sample, depth) = match pick {
        Pick::Sample { track, index } => (track, index, None),
        Pick::Stack {
            track,
            depth,
            sample,
        } => (track, sample, Some(depth)),
        _ => return None,
    };
    let leaf = *t
        .samples()
        .get(track as usize)?
        .frame
        .get(sample as usize)?;
    match depth {
        None => Some(leaf),
        Some(d) => trace_model::frame_at_depth(t.frames(), leaf, d as usize),
    }
}

#[cfg(test)]
mod copy_tests {
    use super::*;

    #[test]
    fn copies_a_name_or_its_stack() {
        let t = trace_model::load_bytes(
            br#"[{"name":"frame","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
                 {"name":"draw \"quoted\"","ph":"X","ts":1,"dur":5,"pid":1,"tid":1},
                 {"name":"leaf","ph":"X","ts":2,"dur":1,"pid":1,"tid":1},
                 {"name":"tick","ph":"i","ts":3,"pid":1,"tid":1,"s":"t"}]"#,
        )
        .unwrap();
        let leaf = trace_model::SpanRef {
            thread: 0,
            depth: 2,
            index: 0,
        };
        assert_eq!(
            copy_text(&t, Pick::Span(leaf), false).as_deref(),
            Some("leaf")
        );
        assert_eq!(
            copy_text(&t, Pick::Span(leaf), true).as_deref(),
            Some("frame\ndraw \"quoted\"\nleaf")
        );
        assert_eq!(
            copy_text(&t, Pick::Instant(0), true).as_deref(),
            Some("tick")
        );
        assert_eq!(
            copy_text(&t, Pick::Counter { group: 0, ts: 0 }, false),
            None
        );
    }
}

/// Thread `t`'s states (indices into `SchedData::states`), by time.
pub fn thread_state_ids(sd: &SchedData, t: u32) -> &[u32] {
    let (ix, t) = (sd.by_thread(), t as usize);
    match (ix.at.get(t), ix.at.get(t + 1)) {
        (Some(&a), Some(&b)) => &ix.order[a as usize..b as usize],
        _ => &[],
    }
}

/// The state after state `i` of its thread.
pub fn next_state(sd: &SchedData, i: u32) -> Option<ThreadState> {
    let x = sd.get_state(i as usize)?;
    let ids = thread_state_ids(sd, x.thread);
    let k = ids.partition_point(|&k| sd.state(k as usize).ts < x.ts);
    let at = k + ids[k..].iter().position(|&k| k == i)?;
    Some(sd.state(*ids.get(at + 1)? as usize))
}

/// The thread of a scheduling slice or state.
pub fn pick_thread(t: &trace_model::Trace, p: Pick) -> Option<u32> {
    let sd = t.sched()?;
    match p {
        Pick::Sched(i) => sd.slices.get(i as usize).map(|x| x.thread),
        Pick::State(i) => sd.get_state(i as usize).map(|x| x.thread),
        _ => None,
    }
}

/// The time a scheduling slice or state covers.
pub fn pick_extent(t: &trace_model::Trace, p: Pick) -> Option<(i64, i64)> {
    let sd = t.sched()?;
    match p {
        Pick::Sched(i) => {
            let x = sd.slices.get(i as usize)?;
            Some((x.ts, sd.slice_end(i as usize, t.end_ns())))
        }
        Pick::State(i) => {
            let x = sd.get_state(i as usize)?;
            let next = next_state(sd, i);
            Some((x.ts, sd.state_end(&x, next.as_ref(), t.end_ns())))
        }
        _ => None,
    }
}
