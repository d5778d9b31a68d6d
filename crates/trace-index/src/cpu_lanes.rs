//! [`CpuLanes`]: a system trace's scheduling slices as one lane per CPU, each slice a span
//! named by its thread, with a span lane's index, so that a timeline draws what ran on
//! each CPU as it draws spans: about one item per pixel, whatever the number of slices.

use trace_model::{ExtId, Lane, StrId, Trace};

use crate::detail::Detail;
use crate::item::Item;
use crate::lane::LaneIndex;
use crate::pyramid::Pyramid;
use crate::series::SeriesIndex;

/// `cpu_idle`'s value when a CPU leaves idle.
const IDLE_EXIT: f64 = 4294967295.0;

/// Per CPU, its scheduling slices (the idle task's left out: idle is no box), indexed.
#[derive(Clone, Debug, Default)]
pub struct CpuLanes {
    /// The CPUs, ascending (`SchedData::cpus`).
    pub cpus: Vec<u32>,
    /// `lanes[c]`: CPU `cpus[c]`'s slices, each named by its thread (its process's name
    /// where the thread has none).
    pub lanes: Vec<Lane>,
    /// `slices[c][i]`: span `i` of `lanes[c]` as an index into `SchedData::slices`.
    pub slices: Vec<Vec<u32>>,
    /// The idle task (tid 0 of pid 0), if the trace has it.
    pub idle: Option<u32>,
    /// Per thread (`Trace::threads`), its time on a CPU: its slices' durations (one still
    /// running at the end of the trace counts to the end).
    pub cpu_ns: Vec<i64>,
    /// Per CPU counter (`SchedData::counters`), the values drawn: frequencies as they are,
    /// idle states as depth (0 when not idle, state + 1 when idle, as Perfetto draws
    /// them); with each its min/max index and its range.
    pub counters: Vec<(Vec<f64>, SeriesIndex, (f64, f64))>,
    index: Vec<LaneIndex>,
}

impl CpuLanes {
    /// The lanes of `t`'s scheduling slices (none for other traces): O(slices). A slice
    /// still running ends as [`SchedData::slice_end`](trace_model::sched::SchedData::slice_end)
    /// says.
    pub fn build(t: &Trace) -> CpuLanes {
        let Some(s) = t.sched() else {
            return CpuLanes::default();
        };
        // The thread-state strips walk each thread's states: their index by thread is made
        // here, with the rest of the index, not at the first frame.
        s.by_thread();
        let idle = (0..t.threads().len() as u32).find(|&i| {
            let th = &t.threads()[i as usize];
            th.tid == ExtId::Num(0) && th.pid == ExtId::Num(0)
        });
        let name = |thread: u32| {
            let th = &t.threads()[thread as usize];
            (th.name)
                .or_else(|| t.processes().get(th.process as usize)?.name)
                .unwrap_or(StrId::EMPTY)
        };
        let mut out = CpuLanes {
            cpus: s.cpus.clone(),
            idle,
            ..CpuLanes::default()
        };
        out.cpu_ns = vec![0; t.threads().len()];
        for &cpu in &s.cpus {
            // A CPU with counters only has no slices.
            let range = match s.slice_cpus.binary_search(&cpu) {
                Ok(k) => s.cpu_range(k),
                Err(_) => 0..0,
            };
            let from = range.start;
            let of_cpu = &s.slices[range];
            // Sized once: the lanes are most of what a system trace's index holds.
            let m = of_cpu.iter().filter(|x| Some(x.thread) != idle).count();
            let mut lane = Lane {
                start: Vec::with_capacity(m),
                dur: Vec::with_capacity(m),
                name: Vec::with_capacity(m),
                cat: Vec::with_capacity(m),
                args: Vec::with_capacity(m),
                flags: Vec::with_capacity(m),
            };
            let mut ids = Vec::with_capacity(m);
            for (i, x) in of_cpu.iter().enumerate() {
                if Some(x.thread) == idle {
                    continue;
                }
                let dur = s.slice_end(from + i, t.end_ns()) - x.ts;
                if let Some(ns) = out.cpu_ns.get_mut(x.thread as usize) {
                    *ns += dur.max(0);
                }
                lane.start.push(x.ts);
                lane.dur.push(dur.max(0));
                lane.name.push(name(x.thread));
                lane.cat.push(StrId::EMPTY);
                lane.args.push(Default::default());
                lane.flags.push(0);
                ids.push((from + i) as u32);
            }
            out.index
                .push(LaneIndex::new(&lane, Pyramid::build(&lane), &[]));
            out.lanes.push(lane);
            out.slices.push(ids);
        }
        out.counters = (s.counters.iter())
            .map(|c| {
                let v: Vec<f64> = match c.kind {
                    trace_model::sched::CpuCounterKind::Frequency => c.values.clone(),
                    trace_model::sched::CpuCounterKind::Idle => (c.values.iter())
                        .map(|&v| if v == IDLE_EXIT { 0.0 } else { v + 1.0 })
                        .collect(),
                };
                let range = (v.iter().filter(|x| x.is_finite()))
                    .fold((0.0f64, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
                (SeriesIndex::build(&v), range, v)
            })
            .map(|(ix, r, v)| (v, ix, r))
            .collect();
        out
    }

    /// Appends the items of CPU lane `c` (an index into `cpus`) overlapping `[t0, t1]` at
    /// `detail` to `out`, with the guarantees of
    /// [`TraceIndex::query`](crate::TraceIndex::query).
    pub fn query_into(&self, c: usize, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
        if let (Some(lane), Some(ix)) = (self.lanes.get(c), self.index.get(c)) {
            ix.query(lane, t0, t1, detail, out);
        }
    }

    /// The slice (index into `SchedData::slices`) of CPU lane `c` at `t`, within `tol`.
    pub fn hit(&self, c: usize, t: i64, tol: i64) -> Option<u32> {
        let lane = self.lanes.get(c)?;
        let h = lane.hit_test(t, tol)?;
        self.slices[c].get(h.index).copied()
    }

    /// Time on a CPU per thread within `[a, b]` (slices clipped to it; the idle task left
    /// out), most first: (thread, slices, nanoseconds). O(slices in the range): each CPU's
    /// slices are found by a search.
    pub fn cpu_time_in(&self, t: &Trace, a: i64, b: i64) -> Vec<(u32, u64, i64)> {
        let Some(sd) = t.sched() else {
            return Vec::new();
        };
        let mut per: std::collections::HashMap<u32, (u64, i64)> = Default::default();
        for (lane, ids) in self.lanes.iter().zip(&self.slices) {
            // Slices of one CPU do not overlap: the one before `a` is the only earlier one
            // that may reach into the range.
            let first = lane.start.partition_point(|&s| s < a).saturating_sub(1);
            for (i, &id) in ids.iter().enumerate().skip(first) {
                if lane.start[i] > b {
                    break;
                }
                let ns = lane.end(i).min(b) - lane.start[i].max(a);
                if ns > 0 || (ns == 0 && lane.dur[i] == 0 && lane.start[i] >= a) {
                    let e = per.entry(sd.slices[id as usize].thread).or_default();
                    e.0 += 1;
                    e.1 += ns.max(0);
                }
            }
        }
        let mut v: Vec<_> = per.into_iter().map(|(th, (n, ns))| (th, n, ns)).collect();
        v.sort_by_key(|&(th, _, ns)| (std::cmp::Reverse(ns), th));
        v
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let lanes: usize = self.lanes.iter().map(Lane::heap_bytes).sum();
        let ids: usize = self.slices.iter().map(|v| v.capacity() * 4).sum();
        let counters: usize = (self.counters.iter())
            .map(|c| c.0.capacity() * 8 + c.1.heap_bytes())
            .sum();
        let per_thread = self.cpu_ns.capacity() * 8;
        lanes
            + ids
            + counters
            + per_thread
            + self.index.iter().map(LaneIndex::heap_bytes).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        trace_model::load("../../tests/fixtures/systrace/events.pftrace.gz").unwrap()
    }

    #[test]
    fn the_whole_range_gives_the_models_cpu_time() {
        let t = trace();
        let lanes = CpuLanes::build(&t);
        let sd = t.sched().unwrap();
        let whole = lanes.cpu_time_in(&t, t.start_ns(), t.end_ns());
        assert_eq!(whole, sd.cpu_time(t.end_ns(), lanes.idle));
        assert!(!whole.is_empty());
        for &(th, _, ns) in &whole {
            assert_eq!(lanes.cpu_ns[th as usize], ns);
        }
    }

    #[test]
    fn a_range_clips_slices_as_a_scan_does() {
        let t = trace();
        let lanes = CpuLanes::build(&t);
        let sd = t.sched().unwrap();
        let (t0, t1) = (t.start_ns(), t.end_ns());
        for k in 0..20 {
            let a = t0 + (t1 - t0) * k / 23;
            let b = a + (t1 - t0) / 3;
            // Brute force: every non-idle slice, clipped.
            let mut want: std::collections::BTreeMap<u32, i64> = Default::default();
            for (i, x) in sd.slices.iter().enumerate() {
                let end = sd.slice_end(i, t1);
                let ns = end.min(b) - x.ts.max(a);
                if Some(x.thread) != lanes.idle && ns > 0 {
                    *want.entry(x.thread).or_default() += ns;
                }
            }
            let got: std::collections::BTreeMap<u32, i64> = (lanes.cpu_time_in(&t, a, b))
                .into_iter()
                .filter(|x| x.2 > 0)
                .map(|(th, _, ns)| (th, ns))
                .collect();
            assert_eq!(got, want, "[{a}, {b}]");
        }
    }
}
