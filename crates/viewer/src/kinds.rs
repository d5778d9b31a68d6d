//! Everything the timeline shows besides spans (counters, instants, async slices, CPU samples
//! and flows): what the viewer derives from the trace once to draw them, and what can be
//! picked (selected or hovered).

use trace_index::SeriesIndex;
use trace_model::{InstantScope, SpanRef, StrId, Trace};

/// Something the user can select or hover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Span(SpanRef),
    /// Index into `Trace::instants`.
    Instant(u32),
    /// Index into `Trace::async_slices`.
    Async(u32),
    /// A counter group's value at a time.
    Counter {
        group: u32,
        ts: i64,
    },
    /// Sample `index` of `Trace::samples()[track]`.
    Sample {
        track: u32,
        index: u32,
    },
}

impl Pick {
    pub fn span(self) -> Option<SpanRef> {
        match self {
            Pick::Span(r) => Some(r),
            _ => None,
        }
    }
}

/// The series of one counter event (one per `args` key), drawn overlaid on one track.
#[derive(Clone, Debug)]
pub struct CounterGroup {
    pub process: u32,
    pub name: StrId,
    /// Indices into `Trace::counters`.
    pub series: Vec<u32>,
    /// Per series, its min/max summary.
    pub index: Vec<SeriesIndex>,
    /// The range of every value of every series (for a scale that holds still while panning).
    pub min: f64,
    pub max: f64,
}

/// Per-kind lookups, built once per trace.
#[derive(Clone, Debug, Default)]
pub struct Kinds {
    pub counters: Vec<CounterGroup>,
    pub counters_by_process: Vec<Vec<u32>>,
    /// Per process, its async tracks (indices into `Trace::async_tracks`).
    pub async_by_process: Vec<Vec<u32>>,
    /// Per async slice, its (track, row).
    pub async_place: Vec<(u32, u32)>,
    /// Per thread, its thread-scoped instants, by time.
    pub instants_by_thread: Vec<Vec<u32>>,
    /// Per process, its process-scoped instants, by time.
    pub instants_by_process: Vec<Vec<u32>>,
    pub global_instants: Vec<u32>,
    /// Per thread, its sample track, if any.
    pub samples_by_thread: Vec<Option<u32>>,
    /// Flow links by the earlier of their two ends' times, with the running maximum of the
    /// later end (to find the links crossing a time window without a scan).
    pub links_by_time: Vec<(i64, i64, u32)>,
    pub links_reach: Vec<i64>,
}

impl Kinds {
    pub fn new(t: &Trace) -> Kinds {
        let np = t.processes().len();
        let nt = t.threads().len();
        let mut k = Kinds {
            counters_by_process: vec![Vec::new(); np],
            async_by_process: vec![Vec::new(); np],
            instants_by_thread: vec![Vec::new(); nt],
            instants_by_process: vec![Vec::new(); np],
            samples_by_thread: vec![None; nt],
            ..Kinds::default()
        };
        let mut groups = std::collections::HashMap::new();
        for (i, c) in t.counters().iter().enumerate() {
            let g = match groups.get(&(c.process, c.name)) {
                Some(&g) => g,
                None => {
                    groups.insert((c.process, c.name), k.counters.len());
                    k.counters_by_process[c.process as usize].push(k.counters.len() as u32);
                    k.counters.push(CounterGroup {
                        process: c.process,
                        name: c.name,
                        series: Vec::new(),
                        index: Vec::new(),
                        min: f64::INFINITY,
                        max: f64::NEG_INFINITY,
                    });
                    k.counters.len() - 1
                }
            };
            let g = &mut k.counters[g];
            g.series.push(i as u32);
            let index = SeriesIndex::build(&c.values);
            if let Some((lo, hi)) = index.min_max(&c.values, 0, c.values.len()) {
                (g.min, g.max) = (g.min.min(lo), g.max.max(hi));
            }
            g.index.push(index);
        }
        k.async_place = vec![(0, 0); t.async_slices().len()];
        for (i, a) in t.async_tracks().iter().enumerate() {
            k.async_by_process[a.process as usize].push(i as u32);
            for (r, row) in a.rows.iter().enumerate() {
                for &sl in row {
                    k.async_place[sl as usize] = (i as u32, r as u32);
                }
            }
        }
        for (i, inst) in t.instants().iter().enumerate() {
            match inst.scope {
                InstantScope::Thread => k.instants_by_thread[inst.thread as usize].push(i as u32),
                InstantScope::Process => {
                    k.instants_by_process[inst.process as usize].push(i as u32)
                }
                InstantScope::Global => k.global_instants.push(i as u32),
            }
        }
        for (i, s) in t.samples().iter().enumerate() {
            k.samples_by_thread[s.thread as usize] = Some(i as u32);
        }
        k.links_by_time = t
            .flow_links()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (a, b) = (t.span(l.from).end(), t.span(l.to).start);
                (a.min(b), a.max(b), i as u32)
            })
            .collect();
        k.links_by_time.sort_unstable();
        let mut reach = i64::MIN;
        k.links_reach = k
            .links_by_time
            .iter()
            .map(|l| {
                reach = reach.max(l.1);
                reach
            })
            .collect();
        k
    }

    /// Flow links with a part in `[t0, t1]`, latest first, at most `cap` of them; and how
    /// many more there were (or at least, when the search stopped early).
    pub fn links_in(&self, t0: i64, t1: i64, cap: usize, out: &mut Vec<u32>) -> usize {
        let end = self.links_by_time.partition_point(|l| l.0 <= t1);
        let mut more = 0;
        for i in (0..end).rev() {
            if self.links_reach[i] < t0 {
                break;
            }
            let (_, b, link) = self.links_by_time[i];
            if b >= t0 {
                if out.len() < cap {
                    out.push(link);
                } else {
                    more += 1;
                    if more > 100_000 {
                        break;
                    }
                }
            }
        }
        more
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

/// The value of a counter series at time `t` (the last sample at or before it).
pub fn value_at(ts: &[i64], values: &[f64], t: i64) -> Option<f64> {
    let i = ts.partition_point(|&x| x <= t);
    i.checked_sub(1).map(|i| values[i])
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
            let mut names = vec![t.str(t.span(r).name)];
            let mut cur = r;
            while let Some(p) = t.parent(cur).filter(|_| stack) {
                names.push(t.str(t.span(p).name));
                cur = p;
            }
            names.reverse();
            Some(names.join("\n"))
        }
        Pick::Instant(i) => t
            .instants()
            .get(i as usize)
            .map(|e| t.str(e.name).to_string()),
        Pick::Async(i) => (t.async_slices().get(i as usize)).map(|a| t.str(a.name).to_string()),
        Pick::Sample { track, index } => {
            let track = t.samples().get(track as usize)?;
            let mut f = *track.frame.get(index as usize)?;
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
