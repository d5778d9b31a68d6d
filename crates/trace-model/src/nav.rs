//! Navigation that needs no index: the span under a time, a span's parent, ancestors and
//! children (and their names), every span with a given name, the threads a user's text
//! names, and how busy the threads are over time.

use std::ops::Range;

use crate::span::{Lane, SpanRef, Thread};
use crate::strings::StrId;
use crate::trace::Trace;

/// A span found under the cursor by [`Lane::hit_test`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The span's index in its lane.
    pub index: usize,
    /// 0 when the time is inside the span; else how far outside it, in ns (at least 1).
    pub distance: i64,
}

impl Lane {
    /// The first span that ends at or after `t` (the lane's length if none). Spans do not
    /// overlap, so ends are sorted: a binary search, O(log n).
    pub fn first_ending_at_or_after(&self, t: i64) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.end(mid) < t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The span under time `t`, or the nearest one within `tolerance_ns` (so that spans
    /// narrower than a pixel can still be picked). O(log n).
    ///
    /// Spans are half-open `[start, end)`: a time on a boundary belongs to the span that
    /// starts there. A zero-length span is hit exactly at its time.
    pub fn hit_test(&self, t: i64, tolerance_ns: i64) -> Option<Hit> {
        let i = self.first_ending_at_or_after(t.saturating_sub(tolerance_ns));
        let mut best: Option<Hit> = None;
        // Spans ending at or after t - tol, in start order: only the first few can be near t.
        for j in i..self.len().min(i + 3) {
            let (s, e) = (self.start[j], self.end(j));
            if s > t.saturating_add(tolerance_ns) {
                break;
            }
            let distance = if t < s {
                s - t
            } else if t < e || (s == e && t == s) {
                0
            } else {
                t - e + 1
            };
            if distance <= tolerance_ns && best.is_none_or(|b| distance < b.distance) {
                best = Some(Hit { index: j, distance });
            }
        }
        best
    }
}

impl Thread {
    /// The index, in the lane one level up, of the span that contains the start of span
    /// `index` at `depth`. O(log n).
    pub fn parent_index(&self, depth: u32, index: u32) -> Option<u32> {
        let up = &self.lanes[depth.checked_sub(1)? as usize];
        let start = self.lanes[depth as usize].start[index as usize];
        let i = up.start.partition_point(|&s| s <= start).checked_sub(1)?;
        (up.end(i) >= start).then_some(i as u32)
    }
}

impl Trace {
    /// The span one level up that contains the start of `r`. O(log n).
    pub fn parent(&self, r: SpanRef) -> Option<SpanRef> {
        let index = self.threads[r.thread as usize].parent_index(r.depth, r.index)?;
        Some(SpanRef {
            thread: r.thread,
            depth: r.depth - 1,
            index,
        })
    }

    /// The spans enclosing `r`, nearest first: its parent, the parent's parent, up to a
    /// span at depth 0. O(depth × log n).
    pub fn ancestors(&self, r: SpanRef) -> impl Iterator<Item = SpanRef> + '_ {
        std::iter::successors(self.parent(r), move |&p| self.parent(p))
    }

    /// The call stack of `r`: its ancestors outermost first, then `r` itself.
    pub fn call_stack(&self, r: SpanRef) -> Vec<SpanRef> {
        let mut v: Vec<SpanRef> = std::iter::once(r).chain(self.ancestors(r)).collect();
        v.reverse();
        v
    }

    /// The direct children of `r`: indices in the lane one level down. O(log n).
    pub fn children(&self, r: SpanRef) -> Range<usize> {
        let thread = &self.threads[r.thread as usize];
        let lane = &thread.lanes[r.depth as usize];
        let (s, e) = (lane.start[r.index as usize], lane.end(r.index as usize));
        match thread.lanes.get(r.depth as usize + 1) {
            Some(down) if e > s => down.starting_in(s, e),
            _ => 0..0,
        }
    }

    /// The direct children of `r` grouped by name: `(name, count, total ns)`, the largest
    /// total first (then by name id).
    pub fn children_by_name(&self, r: SpanRef) -> Vec<(StrId, u64, i64)> {
        let mut acc: hashbrown::HashMap<StrId, (u64, i64)> = hashbrown::HashMap::new();
        let lanes = &self.threads[r.thread as usize].lanes;
        if let Some(down) = lanes.get(r.depth as usize + 1) {
            for i in self.children(r) {
                let e = acc.entry(down.name[i]).or_insert((0, 0));
                e.0 += 1;
                e.1 += down.dur[i];
            }
        }
        let mut v: Vec<(StrId, u64, i64)> = acc.into_iter().map(|(k, (c, t))| (k, c, t)).collect();
        v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        v
    }

    /// How busy the threads are over the trace's time span, in `bins` equal columns: per
    /// column, the time top-level spans cover in it, summed over threads and divided by
    /// the column's width and by the number of threads with spans (0..=1). A minimap's
    /// profile.
    pub fn activity(&self, bins: usize) -> Vec<f32> {
        let mut acc = vec![0f64; bins];
        let (s, e) = (self.start_ns, self.end_ns.max(self.start_ns + 1));
        let bin_ns = (e - s) as f64 / bins.max(1) as f64;
        let mut threads = 0;
        for t in &self.threads {
            let Some(lane) = t.lanes.first() else {
                continue;
            };
            threads += 1;
            // Comparisons, not `f64::max`/`min`: their NaN rule makes them calls to
            // `fmax`/`fmin` in WebAssembly (the times here are never NaN).
            for i in 0..lane.len() {
                let a = (lane.start[i] - s) as f64 / bin_ns;
                let b = (lane.end(i) - s) as f64 / bin_ns;
                let (ai, bi) = (a.floor() as usize, (b.ceil() as usize).min(bins));
                for (k, bin) in acc.iter_mut().enumerate().take(bi).skip(ai) {
                    let (k0, k1) = (k as f64, k as f64 + 1.0);
                    let lo = if a > k0 { a } else { k0 };
                    let hi = if b < k1 { b } else { k1 };
                    if hi > lo {
                        *bin += hi - lo;
                    }
                }
            }
        }
        let n = threads.max(1) as f64;
        acc.into_iter()
            .map(|b| (b / n).clamp(0.0, 1.0) as f32)
            .collect()
    }

    /// Every span whose name satisfies `matches`, sorted by start time (then thread,
    /// depth). A scan of the name column of every lane: O(spans), threads in parallel.
    /// `matches` is called once per distinct name.
    pub fn occurrences(&self, matches: impl Fn(&str) -> bool + Sync) -> Vec<SpanRef> {
        use rayon::prelude::*;
        let wanted: Vec<bool> = self.strings.iter().map(|(_, s)| matches(s)).collect();
        if !wanted.iter().any(|&w| w) {
            return Vec::new();
        }
        let per_thread: Vec<Vec<(i64, SpanRef)>> = (self.threads.par_iter().enumerate())
            .map(|(t, th)| {
                let mut v = Vec::new();
                for (d, lane) in th.lanes.iter().enumerate() {
                    for (i, &n) in lane.name.iter().enumerate() {
                        if wanted[n.0 as usize] {
                            let r = SpanRef {
                                thread: t as u32,
                                depth: d as u32,
                                index: i as u32,
                            };
                            v.push((lane.start[i], r));
                        }
                    }
                }
                v
            })
            .collect();
        let mut all: Vec<(i64, SpanRef)> = per_thread.into_iter().flatten().collect();
        all.par_sort_unstable();
        all.into_iter().map(|(_, r)| r).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{load_bytes, SpanRef};

    #[test]
    fn ancestors_walk_up_to_depth_zero() {
        // frame > draw > leaf; `tail` starts as `draw` ends (a sibling, at depth 1);
        // `blip` is zero-length at `leaf`'s start.
        let t = load_bytes(
            br#"[{"name":"frame","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
                 {"name":"draw","ph":"X","ts":1,"dur":5,"pid":1,"tid":1},
                 {"name":"leaf","ph":"X","ts":2,"dur":1,"pid":1,"tid":1},
                 {"name":"blip","ph":"X","ts":2,"dur":0,"pid":1,"tid":1},
                 {"name":"tail","ph":"X","ts":6,"dur":2,"pid":1,"tid":1}]"#,
        )
        .unwrap();
        let at = |depth, index| SpanRef {
            thread: 0,
            depth,
            index,
        };
        let names = |v: Vec<SpanRef>| -> Vec<&str> {
            v.into_iter().map(|r| t.str(t.span(r).name)).collect()
        };
        let leaf = at(2, 0);
        assert_eq!(names(t.ancestors(leaf).collect()), ["draw", "frame"]);
        assert_eq!(names(t.call_stack(leaf)), ["frame", "draw", "leaf"]);
        assert_eq!(names(t.call_stack(at(0, 0))), ["frame"]);
        assert_eq!(t.ancestors(at(0, 0)).count(), 0);
        let tail = (0..t.threads()[0].lanes[1].len() as u32)
            .map(|i| at(1, i))
            .find(|&r| t.str(t.span(r).name) == "tail")
            .unwrap();
        assert_eq!(names(t.call_stack(tail)), ["frame", "tail"]);
        let deepest = t.threads()[0].lanes.len() as u32 - 1;
        assert_eq!(
            names(t.call_stack(at(deepest, 0))).len(),
            deepest as usize + 1
        );
    }
}
