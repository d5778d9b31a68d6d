//! Spans nested as trace_processor nests complete events, for `slice`.
//!
//! trace_processor drops a complete event that starts inside an open slice of its thread and
//! ends after it (its `slice_drop_overlapping_complete_event`), and every event before time
//! 0 (its sorter's negative timestamps); the slices after a dropped one nest as if it were
//! not there. The model keeps such spans whole, one level deeper and flagged
//! `PARTIAL_OVERLAP`, so that the viewer and the statistics show them. This view renests
//! only the threads that hold one, and maps span references between the model's lanes and
//! its own both ways. Every other thread is the model's, untouched.

use std::collections::HashMap;

use trace_model::{flags, Lane, SpanRef, Thread, Trace};

/// The threads as `slice` nests them.
#[derive(Default)]
pub(crate) struct Nesting {
    renested: HashMap<u32, Renested>,
}

/// One thread renested.
struct Renested {
    thread: Thread,
    /// For each of the model's lanes, each span's (depth, index) here; `None` if dropped.
    from_model: Vec<Vec<Option<(u32, u32)>>>,
    /// For each lane here, each span's (depth, index) in the model.
    to_model: Vec<Vec<(u32, u32)>>,
}

impl Nesting {
    /// O(spans) to find the threads to renest; O(n log n) in the spans of those.
    pub(crate) fn new(t: &Trace) -> Nesting {
        let mut renested = HashMap::new();
        for (i, th) in t.threads().iter().enumerate() {
            if needs_renesting(th) {
                renested.insert(i as u32, renest(th));
            }
        }
        Nesting { renested }
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
        let Some(n) = self.renested.get(&r.thread) else {
            return Some(r);
        };
        let (depth, index) = n.from_model[r.depth as usize][r.index as usize]?;
        Some(SpanRef { depth, index, ..r })
    }

    /// The model's span for span `r` here.
    pub(crate) fn to_model(&self, r: SpanRef) -> SpanRef {
        match self.renested.get(&r.thread) {
            Some(n) => {
                let (depth, index) = n.to_model[r.depth as usize][r.index as usize];
                SpanRef { depth, index, ..r }
            }
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
}

fn needs_renesting(th: &Thread) -> bool {
    th.lanes.iter().any(|l| {
        l.start.first().is_some_and(|&s| s < 0)
            || l.flags.iter().any(|&f| f & flags::PARTIAL_OVERLAP != 0)
    })
}

/// trace_processor's stack over the thread's spans in order of start (longer first at equal
/// starts): a span is dropped when it starts before time 0 or outlives the innermost open
/// slice; a slice is closed by a span starting at or after its end (two zero-length slices
/// at one time stack, as trace_processor's instants do).
fn renest(th: &Thread) -> Renested {
    let mut order: Vec<(i64, std::cmp::Reverse<i64>, u32, u32)> = Vec::new();
    for (d, lane) in th.lanes.iter().enumerate() {
        for i in 0..lane.len() {
            order.push((
                lane.start[i],
                std::cmp::Reverse(lane.dur[i]),
                d as u32,
                i as u32,
            ));
        }
    }
    order.sort_unstable();
    let mut from_model: Vec<Vec<Option<(u32, u32)>>> =
        th.lanes.iter().map(|l| vec![None; l.len()]).collect();
    let mut lanes: Vec<Lane> = Vec::new();
    let mut to_model: Vec<Vec<(u32, u32)>> = Vec::new();
    // The end of each open slice, and whether it is zero-length.
    let mut stack: Vec<(i64, bool)> = Vec::new();
    for (start, std::cmp::Reverse(dur), d, i) in order {
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
        let (lane, src) = (&mut lanes[depth], &th.lanes[d as usize]);
        let i = i as usize;
        lane.start.push(src.start[i]);
        lane.dur.push(src.dur[i]);
        lane.name.push(src.name[i]);
        lane.cat.push(src.cat[i]);
        lane.args.push(src.args[i]);
        lane.flags.push(src.flags[i] & !flags::PARTIAL_OVERLAP);
        from_model[d as usize][i] = Some((depth as u32, to_model[depth].len() as u32));
        to_model[depth].push((d, i as u32));
        stack.push((start.saturating_add(dur), dur == 0));
    }
    let thread = Thread {
        pid: th.pid,
        tid: th.tid,
        process: th.process,
        name: th.name,
        sort_index: th.sort_index,
        lanes,
    };
    Renested {
        thread,
        from_model,
        to_model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(json: &str) -> Trace {
        trace_model::load_bytes(json.as_bytes()).unwrap()
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
