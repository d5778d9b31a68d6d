//! Spans nested as trace_processor nests complete events: `slice`'s lanes.
//!
//! trace_processor drops a complete event that starts inside an open slice of its thread and
//! ends after it (its `slice_drop_overlapping_complete_event`), and every event before time
//! 0 (its sorter's negative timestamps); the slices after a dropped one nest as if it were
//! not there. The model keeps such spans whole, one level deeper and flagged
//! `PARTIAL_OVERLAP`, so that the viewer and the statistics show them. trace_processor also
//! reads a JSON tid that is no 32-bit unsigned number (a negative one: PyTorch's CUDA
//! runtime threads) as absent, so the events go to their process's main thread; here such a
//! thread's spans join the main thread's, when the process has one, and the thread is left
//! out of `thread`.
//!
//! This view renests only the threads that need it, and maps span references between the
//! model's lanes and its own both ways. Every other thread is the model's, untouched.

use std::cmp::Reverse;
use std::collections::HashMap;

use crate::args::ArgsId;
use crate::span::{flags, ExtId, Lane, SpanRef, Thread};
use crate::trace::Trace;

/// The threads as `slice` nests them.
#[derive(Default)]
pub(crate) struct Nesting {
    /// By thread: its lanes as `slice` holds them, where they are not the model's (none
    /// for a thread merged into its main thread).
    renested: HashMap<u32, Renested>,
    /// By model thread renested or merged: each lane's spans' places here, `None` if left
    /// out.
    from_model: HashMap<u32, Vec<Vec<Option<SpanRef>>>>,
    /// The threads merged into their main thread, and that thread.
    merged: HashMap<u32, u32>,
}

/// A span in `renest`'s order: start, duration (longer first), member, depth, index.
type Place = (i64, Reverse<i64>, u32, u32, u32);

/// One thread renested.
struct Renested {
    thread: Thread,
    /// For each lane here, each span's place in the model.
    to_model: Vec<Vec<SpanRef>>,
}

impl Nesting {
    /// O(spans) to find the threads to renest; O(n log n) in the spans of those.
    pub(crate) fn new(t: &Trace) -> Nesting {
        let merged = merged_threads(t);
        let mut groups: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, th) in t.threads().iter().enumerate() {
            let i = i as u32;
            if let Some(&main) = merged.get(&i) {
                groups.entry(main).or_insert_with(|| vec![main]).push(i);
            } else if needs_renesting(th) {
                groups.entry(i).or_insert_with(|| vec![i]);
            }
        }
        let mut n = Nesting {
            merged,
            ..Nesting::default()
        };
        for (main, members) in groups {
            n.renest(t, main, &members);
        }
        n
    }

    /// The thread whose track holds thread `i`'s events: its main thread if merged.
    pub(crate) fn main_of(&self, i: u32) -> u32 {
        self.merged.get(&i).copied().unwrap_or(i)
    }

    /// Whether `slice` holds thread `i`'s events on its main thread instead.
    pub(crate) fn is_merged(&self, i: u32) -> bool {
        self.merged.contains_key(&i)
    }

    /// Thread `i` as `slice` holds it.
    pub(crate) fn thread<'a>(&'a self, t: &'a Trace, i: u32) -> &'a Thread {
        match self.renested.get(&i) {
            Some(r) => &r.thread,
            None => &t.threads()[i as usize],
        }
    }

    /// Where the model's span `r` is here: `None` if `slice` leaves it out.
    pub(crate) fn here(&self, r: SpanRef) -> Option<SpanRef> {
        match self.from_model.get(&r.thread) {
            Some(lanes) => lanes[r.depth as usize][r.index as usize],
            None => Some(r),
        }
    }

    /// The model's span for span `r` here.
    pub(crate) fn to_model(&self, r: SpanRef) -> SpanRef {
        match self.renested.get(&r.thread) {
            Some(n) => n.to_model[r.depth as usize][r.index as usize],
            None => r,
        }
    }

    /// The parent of span `r` here.
    pub(crate) fn parent(&self, t: &Trace, r: SpanRef) -> Option<SpanRef> {
        let index = self.thread(t, r.thread).parent_index(r.depth, r.index)?;
        Some(SpanRef {
            depth: r.depth - 1,
            index,
            ..r
        })
    }

    /// The ancestors of span `r` here, nearest first.
    pub(crate) fn ancestors<'a>(
        &'a self,
        t: &'a Trace,
        r: SpanRef,
    ) -> impl Iterator<Item = SpanRef> + 'a {
        std::iter::successors(self.parent(t, r), move |&p| self.parent(t, p))
    }

    /// trace_processor's stack over the spans of `members` (the thread `main` first) in
    /// order of start (longer first at equal starts): a span is dropped when it starts
    /// before time 0 or outlives the innermost open slice; a slice is closed by a span
    /// starting at or after its end (two zero-length slices at one time stack, as
    /// trace_processor's instants do).
    fn renest(&mut self, t: &Trace, main: u32, members: &[u32]) {
        let mut order: Vec<Place> = Vec::new();
        for (m, &ti) in members.iter().enumerate() {
            let th = &t.threads()[ti as usize];
            for (d, lane) in th.lanes.iter().enumerate() {
                for i in 0..lane.len() {
                    let key = (lane.start[i], Reverse(lane.dur[i]));
                    order.push((key.0, key.1, m as u32, d as u32, i as u32));
                }
            }
            let places = th.lanes.iter().map(|l| vec![None; l.len()]).collect();
            self.from_model.insert(ti, places);
        }
        order.sort_unstable();
        in_file_order(t, members, &mut order);
        let mut lanes: Vec<Lane> = Vec::new();
        let mut to_model: Vec<Vec<SpanRef>> = Vec::new();
        // The end of each open slice, and whether it is zero-length.
        let mut stack: Vec<(i64, bool)> = Vec::new();
        for (start, Reverse(dur), m, d, i) in order {
            if start < 0 {
                continue;
            }
            while let Some(&(end, zero)) = stack.last() {
                if end < start || (end == start && !(zero && dur == 0)) {
                    stack.pop();
                } else {
                    break;
                }
            }
            if let Some(&(end, _)) = stack.last() {
                if start < end && start.saturating_add(dur) > end {
                    continue;
                }
            }
            let depth = stack.len();
            if lanes.len() == depth {
                lanes.push(Lane::default());
                to_model.push(Vec::new());
            }
            let ti = members[m as usize];
            let (lane, src) = (
                &mut lanes[depth],
                &t.threads()[ti as usize].lanes[d as usize],
            );
            let i = i as usize;
            lane.start.push(src.start[i]);
            lane.dur.push(src.dur[i]);
            lane.name.push(src.name[i]);
            lane.cat.push(src.cat[i]);
            lane.args.push(src.args[i]);
            lane.flags.push(src.flags[i] & !flags::PARTIAL_OVERLAP);
            let here = SpanRef {
                thread: main,
                depth: depth as u32,
                index: to_model[depth].len() as u32,
            };
            self.from_model.get_mut(&ti).unwrap()[d as usize][i] = Some(here);
            to_model[depth].push(SpanRef {
                thread: ti,
                depth: d,
                index: i as u32,
            });
            // An unfinished slice is open to the end, past the trace's last event.
            let end = match src.flags[i] & flags::UNFINISHED {
                0 => start.saturating_add(dur),
                _ => i64::MAX,
            };
            stack.push((end, dur == 0));
        }
        for &ti in members {
            let th = &t.threads()[ti as usize];
            let thread = Thread {
                lanes: if ti == main {
                    std::mem::take(&mut lanes)
                } else {
                    Vec::new()
                },
                ..metadata(th)
            };
            let to_model = if ti == main {
                std::mem::take(&mut to_model)
            } else {
                Vec::new()
            };
            self.renested.insert(ti, Renested { thread, to_model });
        }
    }
}

/// Puts spans of different `members` that start at one time with one duration in file
/// order, as trace_processor's sorter keeps them (the earlier one encloses the later);
/// `order` comes sorted by (start, longer first, member, depth, index), which keeps each
/// member's own spans in the model's order. The model keeps no file position per span, but
/// its argument ids are given in file order: a span without args, or with a `B`/`E` pair's
/// merged set, keeps its place after the member before it.
fn in_file_order(t: &Trace, members: &[u32], order: &mut [Place]) {
    let args = |&(_, _, m, d, i): &Place| {
        let th = &t.threads()[members[m as usize] as usize];
        match th.lanes[d as usize].args[i as usize] {
            ArgsId::NONE => u32::MAX,
            a => a.0,
        }
    };
    let mut merged = Vec::new();
    for tie in order.chunk_by_mut(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if tie[0].2 == tie[tie.len() - 1].2 {
            continue;
        }
        // A merge of the members' runs by their heads' argument ids.
        let mut runs: Vec<&[_]> = tie.chunk_by(|a, b| a.2 == b.2).collect();
        merged.clear();
        while let Some(r) = (0..runs.len())
            .filter(|&r| !runs[r].is_empty())
            .min_by_key(|&r| (args(&runs[r][0]), r))
        {
            merged.push(runs[r][0]);
            runs[r] = &runs[r][1..];
        }
        tie.copy_from_slice(&merged);
    }
}

/// A thread's ids and names, without its spans.
fn metadata(th: &Thread) -> Thread {
    Thread {
        pid: th.pid,
        tid: th.tid,
        process: th.process,
        name: th.name,
        sort_index: th.sort_index,
        lanes: Vec::new(),
    }
}

/// Whether trace_processor nests the thread's spans differently from the model: a partial
/// overlap, a span before time 0, or two zero-length spans at one time (siblings in the
/// model, one inside the other in trace_processor).
fn needs_renesting(th: &Thread) -> bool {
    th.lanes.iter().any(|l| {
        l.start.first().is_some_and(|&s| s < 0)
            || l.flags.iter().any(|&f| f & flags::PARTIAL_OVERLAP != 0)
            || (1..l.len())
                .any(|i| l.dur[i] == 0 && l.dur[i - 1] == 0 && l.start[i] == l.start[i - 1])
    })
}

/// The threads trace_processor reads as their process's main thread, by the model's
/// thread index: a numeric tid that is no `u32` in a process that has a main thread (tid =
/// pid). O(threads).
fn merged_threads(t: &Trace) -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for p in t.processes() {
        let (ExtId::Num(_), Some(main)) = (p.pid, super::threads::main_thread(t, p)) else {
            continue;
        };
        for &i in &p.threads {
            if let ExtId::Num(tid) = t.threads()[i as usize].tid {
                if u32::try_from(tid).is_err() {
                    out.insert(i, main);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(json: &str) -> Trace {
        crate::load_bytes(json.as_bytes()).unwrap()
    }

    /// A span that outlives the one it starts in is left out, and the spans after it nest
    /// as if it were not there; a span before time 0 is left out too.
    #[test]
    fn drops_partial_overlaps_and_negative_starts() {
        let t = trace(
            r#"[
            {"ph":"X","name":"neg","ts":-5,"dur":5,"pid":1,"tid":1},
            {"ph":"X","name":"a","ts":0,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"over","ts":5,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"in_over","ts":11,"dur":2,"pid":1,"tid":1},
            {"ph":"X","name":"in_a","ts":6,"dur":1,"pid":1,"tid":1}
        ]"#,
        );
        let n = Nesting::new(&t);
        let th = n.thread(&t, 0);
        let names =
            |d: usize| -> Vec<&str> { th.lanes[d].name.iter().map(|&s| t.str(s)).collect() };
        assert_eq!(names(0), ["a", "in_over"]);
        assert_eq!(names(1), ["in_a"]);
        assert_eq!(th.lanes.len(), 2);
        // Every kept span maps both ways; the dropped ones map to nothing.
        let model = &t.threads()[0];
        let mut kept = 0;
        for (d, lane) in model.lanes.iter().enumerate() {
            for i in 0..lane.len() {
                let r = SpanRef {
                    thread: 0,
                    depth: d as u32,
                    index: i as u32,
                };
                let name = t.str(lane.name[i]);
                match n.here(r) {
                    Some(here) => {
                        kept += 1;
                        assert_eq!(n.to_model(here), r);
                        let l = &th.lanes[here.depth as usize];
                        assert_eq!(t.str(l.name[here.index as usize]), name);
                    }
                    None => assert!(name == "over" || name == "neg", "{name}"),
                }
            }
        }
        assert_eq!(kept, 3);
        let in_a = SpanRef {
            thread: 0,
            depth: 1,
            index: 0,
        };
        assert_eq!(n.parent(&t, in_a).map(|p| p.index), Some(0));
    }

    /// A negative tid's spans join their process's main thread, nested with its spans.
    #[test]
    fn negative_tids_join_the_main_thread() {
        let t = trace(
            r#"[{"ph":"X","name":"main","ts":0,"dur":10,"pid":7,"tid":7},
                {"ph":"X","name":"neg","ts":2,"dur":3,"pid":7,"tid":-5},
                {"ph":"X","name":"other","ts":2,"dur":3,"pid":7,"tid":8}]"#,
        );
        let n = Nesting::new(&t);
        let idx = |tid: i64| {
            let i = t.threads().iter().position(|th| th.tid == ExtId::Num(tid));
            i.unwrap() as u32
        };
        let (main, neg, other) = (idx(7), idx(-5), idx(8));
        assert!(n.is_merged(neg) && !n.is_merged(other) && !n.is_merged(main));
        assert!(n.thread(&t, neg).lanes.is_empty());
        let m = n.thread(&t, main);
        assert_eq!(m.lanes.len(), 2);
        assert_eq!(t.str(m.lanes[1].name[0]), "neg");
        let r = SpanRef {
            thread: neg,
            depth: 0,
            index: 0,
        };
        let here = n.here(r).unwrap();
        assert_eq!((here.thread, here.depth), (main, 1));
        assert_eq!(n.to_model(here), r);
        assert!(std::ptr::eq(
            n.thread(&t, other),
            &t.threads()[other as usize]
        ));
    }

    /// Spans of a negative tid and of its main thread with one start and duration nest in
    /// file order, whichever thread comes first.
    #[test]
    fn equal_spans_of_merged_threads_nest_in_file_order() {
        for (first, second) in [(-5, 7), (7, -5)] {
            let t = trace(&format!(
                r#"[{{"ph":"X","name":"outer","ts":0,"dur":10,"pid":7,"tid":7}},
                    {{"ph":"X","name":"t{first}","ts":2,"dur":3,"pid":7,"tid":{first},"args":{{"a":1}}}},
                    {{"ph":"X","name":"t{second}","ts":2,"dur":3,"pid":7,"tid":{second},"args":{{"a":2}}}}]"#
            ));
            let n = Nesting::new(&t);
            let main = t.threads().iter().position(|th| th.tid == ExtId::Num(7));
            let m = n.thread(&t, main.unwrap() as u32);
            let names: Vec<&str> = (1..3).map(|d| t.str(m.lanes[d].name[0])).collect();
            assert_eq!(names, [format!("t{first}"), format!("t{second}")]);
        }
    }

    /// A thread whose spans nest is the model's own.
    #[test]
    fn nested_threads_are_the_models() {
        let t = trace(
            r#"[{"ph":"X","name":"a","ts":0,"dur":10,"pid":1,"tid":1},
                {"ph":"X","name":"b","ts":1,"dur":2,"pid":1,"tid":1}]"#,
        );
        let n = Nesting::new(&t);
        assert!(std::ptr::eq(n.thread(&t, 0), &t.threads()[0]));
    }
}
