//! [`EventIndex`]: the events besides spans (counters, instants, async slices, CPU samples
//! and flows) grouped by where a timeline draws them, built once per trace.

use std::collections::HashMap;

use trace_model::{DisplayOrder, InstantScope, StrId, Trace};

use crate::async_groups::AsyncGroup;
use crate::cpu_lanes::CpuLanes;
use crate::sample_stacks::SampleStacks;
use crate::series::SeriesIndex;

/// The series of one counter event (one per `args` key), drawn overlaid on one track.
#[derive(Clone, Debug)]
pub struct CounterGroup {
    /// Index into `Trace::processes`.
    pub process: u32,
    /// Index into `Trace::threads` for a thread's own counter, drawn with its thread.
    pub thread: Option<u32>,
    /// The counter event's name.
    pub name: StrId,
    /// Indices into `Trace::counters`.
    pub series: Vec<u32>,
    /// Per series, its min/max summary.
    pub index: Vec<SeriesIndex>,
    /// The smallest value of every series (for a scale that holds still while panning).
    pub min: f64,
    /// The largest value of every series.
    pub max: f64,
}

/// Per-kind lookups, built once per trace: O(events + links × log links).
#[derive(Clone, Debug, Default)]
pub struct EventIndex {
    /// Counter series grouped by (process, thread, event name), in order of first
    /// appearance.
    pub counters: Vec<CounterGroup>,
    /// Per process, its process counter groups (indices into `counters`).
    pub counters_by_process: Vec<Vec<u32>>,
    /// Per thread, its own counter groups (indices into `counters`).
    pub counters_by_thread: Vec<Vec<u32>>,
    /// Per process, its async tracks (indices into `Trace::async_tracks`).
    pub async_by_process: Vec<Vec<u32>>,
    /// Per async slice, its (track, row).
    pub async_place: Vec<(u32, u32)>,
    /// Per process, its async tracks grouped for drawing.
    pub async_groups: Vec<AsyncGroup>,
    /// The processes and threads in the model's display order
    /// ([`Trace::display_order`]).
    pub order: DisplayOrder,
    /// Per thread, its thread-scoped instants, by time.
    pub instants_by_thread: Vec<Vec<u32>>,
    /// Per process, its process-scoped instants, by time.
    pub instants_by_process: Vec<Vec<u32>>,
    /// The global instants, by time.
    pub global_instants: Vec<u32>,
    /// Per thread, its sample track, if any.
    pub samples_by_thread: Vec<Option<u32>>,
    /// Per thread, its sample track's stacks over time (empty where it has none).
    pub sample_stacks: Vec<SampleStacks>,
    /// A system trace's scheduling slices, one lane per CPU (empty for other traces).
    pub cpu_lanes: CpuLanes,
    /// Flow links (indices into `Trace::flow_links`) as (earlier end's time, later end's
    /// time, link), by the earlier time.
    pub links_by_time: Vec<(i64, i64, u32)>,
    /// The running maximum of `links_by_time`'s later ends: the links crossing a time
    /// window are found without a scan.
    pub links_reach: Vec<i64>,
}

impl EventIndex {
    /// The lookups of `t`.
    pub fn new(t: &Trace) -> EventIndex {
        EventIndex::with_sample_stacks(t, Vec::new())
    }

    /// The lookups of `t`, with its threads' sample stacks as [`SampleStacks::by_thread`]
    /// gives them (built in a browser's worker, beside the index: [`TraceIndex::take_sample_stacks`]),
    /// or built here where `stacks` is not one a thread.
    ///
    /// [`TraceIndex::take_sample_stacks`]: crate::TraceIndex::take_sample_stacks
    pub fn with_sample_stacks(t: &Trace, stacks: Vec<SampleStacks>) -> EventIndex {
        let np = t.processes().len();
        let nt = t.threads().len();
        let mut k = EventIndex {
            counters_by_process: vec![Vec::new(); np],
            counters_by_thread: vec![Vec::new(); nt],
            async_by_process: vec![Vec::new(); np],
            instants_by_thread: vec![Vec::new(); nt],
            instants_by_process: vec![Vec::new(); np],
            samples_by_thread: vec![None; nt],
            ..EventIndex::default()
        };
        k.group_counters(t);
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
        k.sample_stacks = match stacks.len() == t.threads().len() {
            true => stacks,
            false => SampleStacks::by_thread(t),
        };
        k.async_groups = AsyncGroup::build(t, &k.async_place);
        k.cpu_lanes = CpuLanes::build(t);
        k.order = t.display_order();
        k.order_links(t);
        k
    }

    /// Counter series grouped by (process, thread, event name), in order of first
    /// appearance.
    fn group_counters(&mut self, t: &Trace) {
        let mut groups = HashMap::new();
        for (i, c) in t.counters().iter().enumerate() {
            let g = *groups
                .entry((c.process, c.thread, c.name))
                .or_insert_with(|| {
                    let owner = match c.thread {
                        Some(th) => &mut self.counters_by_thread[th as usize],
                        None => &mut self.counters_by_process[c.process as usize],
                    };
                    owner.push(self.counters.len() as u32);
                    self.counters.push(CounterGroup {
                        process: c.process,
                        thread: c.thread,
                        name: c.name,
                        series: Vec::new(),
                        index: Vec::new(),
                        min: f64::INFINITY,
                        max: f64::NEG_INFINITY,
                    });
                    self.counters.len() - 1
                });
            let g = &mut self.counters[g];
            g.series.push(i as u32);
            let index = SeriesIndex::build(&c.values);
            if let Some((lo, hi)) = index.min_max(&c.values, 0, c.values.len()) {
                (g.min, g.max) = (g.min.min(lo), g.max.max(hi));
            }
            g.index.push(index);
        }
    }

    /// Flow links by their earlier end, with the running reach of their later ends.
    fn order_links(&mut self, t: &Trace) {
        self.links_by_time = (t.flow_links().iter().enumerate())
            .map(|(i, l)| {
                let (a, b) = (t.span(l.from).end(), t.span(l.to).start);
                (a.min(b), a.max(b), i as u32)
            })
            .collect();
        self.links_by_time.sort_unstable();
        let mut reach = i64::MIN;
        self.links_reach = (self.links_by_time.iter())
            .map(|l| {
                reach = reach.max(l.1);
                reach
            })
            .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_grouped_where_they_are_drawn() {
        let t = trace_model::load_bytes(
            br#"[{"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
                 {"name":"b","ph":"X","ts":20,"dur":10,"pid":1,"tid":2},
                 {"name":"c","ph":"X","ts":50,"dur":10,"pid":1,"tid":1},
                 {"name":"d","ph":"X","ts":70,"dur":10,"pid":1,"tid":2},
                 {"name":"f","cat":"x","ph":"s","id":1,"ts":5,"pid":1,"tid":1},
                 {"name":"f","cat":"x","ph":"f","bp":"e","id":1,"ts":25,"pid":1,"tid":2},
                 {"name":"f","cat":"x","ph":"s","id":2,"ts":55,"pid":1,"tid":1},
                 {"name":"f","cat":"x","ph":"f","bp":"e","id":2,"ts":75,"pid":1,"tid":2},
                 {"name":"mem","ph":"C","ts":0,"pid":1,"args":{"heap":4,"stack":9}},
                 {"name":"mem","ph":"C","ts":5,"pid":1,"args":{"heap":-2,"stack":1}},
                 {"name":"cpu","ph":"C","ts":0,"pid":2,"args":{"value":1}},
                 {"name":"t","ph":"i","ts":3,"pid":1,"tid":2,"s":"t"},
                 {"name":"p","ph":"i","ts":4,"pid":1,"tid":2,"s":"p"},
                 {"name":"g","ph":"i","ts":5,"pid":1,"tid":2,"s":"g"}]"#,
        )
        .unwrap();
        let k = EventIndex::new(&t);
        // `mem`'s two keys share a track, scaled over both; `cpu` is process 2's.
        assert_eq!(k.counters.len(), 2);
        let mem = &k.counters[k.counters_by_process[0][0] as usize];
        assert_eq!((t.str(mem.name), mem.series.len()), ("mem", 2));
        assert_eq!((mem.min, mem.max), (-2.0, 9.0));
        assert_eq!(k.counters_by_process[1].len(), 1);
        let tid2 = (t.threads().iter()).position(|th| t.ext_id(th.tid) == "2");
        assert_eq!(k.instants_by_thread[tid2.unwrap()].len(), 1);
        assert_eq!(k.instants_by_process[0].len(), 1);
        assert_eq!(k.global_instants.len(), 1);
        // Two links, [10, 20] and [60, 70] µs: a window finds those it crosses, latest
        // first, and counts those over the cap.
        assert_eq!(k.links_by_time.len(), 2, "{:?}", t.flow_links());
        let mut out = Vec::new();
        assert_eq!(k.links_in(15_000, 65_000, 8, &mut out), 0);
        assert_eq!(out.len(), 2);
        let latest = t.flow_links()[out[0] as usize];
        assert_eq!(t.span(latest.from).end(), 60_000, "latest first");
        out.clear();
        assert_eq!(
            k.links_in(15_000, 65_000, 1, &mut out),
            1,
            "one over the cap"
        );
        out.clear();
        assert_eq!(k.links_in(30_000, 50_000, 8, &mut out), 0);
        assert!(out.is_empty(), "between the links");
        assert_eq!(k.links_in(20_000, 20_000, 8, &mut out), 0);
        assert_eq!(out.len(), 1, "a window of one instant at a link's end");
    }
}
