//! The last step of a load: a builder's collected events made into a [`Trace`].
//!
//! In stages: samples into stacks; the numbering of processes and threads; then, at
//! the same time, each thread's spans matched and nested into lanes (threads in
//! parallel) and the other events renumbered and sorted; last, the
//! threads put in their places under their processes and the flows bound to spans.

use rayon::prelude::*;
use spall_format::{Diagnostics, Summary};

use super::merge::Remap;
use super::{ProcessBuild, ThreadBuild, TraceBuilder};
use crate::asyncs::{self, AsyncSlice, AsyncTrack};
use crate::diag::ModelWarning;
use crate::event_kinds::{AsyncEvent, CounterSeries, Flow, Instant, Metadata};
use crate::flows::{self, FlowLink};
use crate::nest::{build_lanes, merge_end_args, streamed_lanes, EndArgs};
use crate::samples::{self, SampleTrack};
use crate::span::{ExtId, Process, SpanRef, Thread};
use crate::strings::{StrId, Strings};
use crate::trace::Trace;

/// The trace's numbering: processes by (sort index, pid), threads by (process, sort index,
/// tid). Stable for a file: SQL ids, the transfer and saved views refer to it. What a
/// viewer shows first is [`Trace::display_order`](crate::Trace::display_order).
struct Numbering {
    /// New index to old, and old to new, for processes and threads.
    processes: Vec<u32>,
    new_process: Vec<u32>,
    threads: Vec<u32>,
    new_thread: Vec<u32>,
}

/// Events besides spans, renumbered and sorted while threads nest.
struct OtherEvents {
    instants: Vec<Instant>,
    counters: Vec<CounterSeries>,
    flows: Vec<Flow>,
    async_events: Vec<AsyncEvent>,
    samples: Vec<SampleTrack>,
    /// Named async tracks: (process, id, name).
    track_names: Vec<(u32, StrId, StrId)>,
}

/// Async slices and tracks, and the warnings of pairing them.
type Asyncs = (Vec<AsyncSlice>, Vec<AsyncTrack>, Diagnostics<ModelWarning>);

impl TraceBuilder {
    /// `None` (only if `may_redo`) when a thread matched as events streamed in would pair
    /// otherwise in trace_processor: decode again, buffered, to pair it as it does.
    pub(super) fn finish_inner(mut self, decode: Summary, may_redo: bool) -> Option<Trace> {
        self.spall_flush();
        let sched = self.take_sched();
        let TraceBuilder {
            mut strings,
            mut args,
            processes,
            threads,
            instants,
            counters,
            flows,
            async_events,
            samples,
            profile,
            metadata,
            track_names,
            mut diags,
            start,
            end,
            sorted_from,
            keep,
            chunk_maps,
            met,
            ..
        } = self;
        args.shrink();
        let thread_process: Vec<u32> = threads.iter().map(|t| t.process).collect();
        let profiled = profile.finish(&strings, &mut diags);
        let (samples, frames) = samples::build(
            &samples,
            profiled,
            &mut strings,
            &args,
            |t| thread_process[t as usize],
            &mut diags,
        );
        let (start, end) = samples::extent(&samples, (start, end));
        let (start, end) = if start > end { (0, 0) } else { (start, end) };
        let from_spall = decode.format.is_spall();
        // trace_processor's sorter orders a JSON trace's events of one time by phase, but
        // a protobuf trace's by time alone (file order kept): none is sorted by phase.
        let sorted_from = match decode.format {
            spall_format::Format::Proto => i64::MAX,
            _ => sorted_from,
        };
        let order = Numbering::new(&processes, &threads, &strings);
        let mut other = OtherEvents {
            instants,
            counters,
            flows,
            async_events,
            samples,
            track_names,
        };
        // Threads are independent of each other and of the other events, which need only
        // the new thread order.
        let (per_thread, (async_slices, async_tracks, async_diags)) = rayon::join(
            || {
                let kept = (keep, &chunk_maps[..]);
                nest_threads(threads, kept, end, from_spall, sorted_from, &strings)
            },
            || other.renumber_and_sort(&order, end),
        );
        spall_util::timing::stage("threads nested, other events sorted");
        if may_redo && !from_spall && per_thread.iter().any(|t| t.3) {
            return None;
        }
        let per_thread = (per_thread.into_iter())
            .map(|(mut t, d, merges, _)| {
                merge_end_args(&mut t.lanes, &merges, &mut args);
                (t, d)
            })
            .collect();
        let threads = order.place_threads(per_thread, &mut diags);
        diags.merge(async_diags);
        let processes = order.processes_with_threads(&processes, &threads);
        let flow_links = flows::bind(&threads, &other.flows, &mut diags);
        spall_util::timing::stage("flows bound");
        let flow_links_by_to = by_target(&flow_links);
        let metadata = metadata
            .into_iter()
            .map(|m| Metadata {
                process: order.new_process[m.process as usize],
                ..m
            })
            .collect();
        let sched = sched.map(|s| Box::new(crate::sched::renumber(s, &order.new_thread)));
        Some(Trace {
            sched,
            strings,
            processes,
            threads,
            args,
            instants: other.instants,
            counters: other.counters,
            flows: other.flows,
            async_events: other.async_events,
            metadata,
            async_slices,
            async_tracks,
            flow_links,
            flow_links_by_to,
            samples: other.samples,
            frames,
            start_ns: start,
            end_ns: end,
            diagnostics: diags,
            decode,
            derived: Default::default(),
            importer_threads: met.order(),
        })
    }
}

impl Numbering {
    fn new(processes: &[ProcessBuild], threads: &[ThreadBuild], strings: &Strings) -> Numbering {
        let key = |id: ExtId| match id {
            ExtId::Num(n) => (0, n, String::new()),
            ExtId::Str(s) => (1, 0, strings.get(s).to_string()),
        };
        let mut porder: Vec<u32> = (0..processes.len() as u32).collect();
        porder.sort_by_cached_key(|&p| {
            let p = &processes[p as usize];
            (p.sort_index.unwrap_or(i64::MAX), key(p.pid))
        });
        let new_process = inverse(&porder);
        let mut torder: Vec<u32> = (0..threads.len() as u32).collect();
        torder.sort_by_cached_key(|&t| {
            let t = &threads[t as usize];
            (
                new_process[t.process as usize],
                t.sort_index.unwrap_or(i64::MAX),
                key(t.tid),
            )
        });
        Numbering {
            new_thread: inverse(&torder),
            threads: torder,
            processes: porder,
            new_process,
        }
    }

    /// The nested threads (in their old order) put in their new places, their warnings merged
    /// in the old order so that the result does not depend on scheduling.
    fn place_threads(
        &self,
        per_thread: Vec<(Thread, Diagnostics<ModelWarning>)>,
        diags: &mut Diagnostics<ModelWarning>,
    ) -> Vec<Thread> {
        let mut slots: Vec<Option<Thread>> = Vec::with_capacity(per_thread.len());
        for (t, d) in per_thread {
            diags.merge(d);
            slots.push(Some(t));
        }
        let mut threads: Vec<Thread> = (self.threads.iter())
            .map(|&old| slots[old as usize].take().expect("each thread once"))
            .collect();
        for t in &mut threads {
            t.process = self.new_process[t.process as usize];
        }
        threads
    }

    /// The processes renumbered, each with its threads (already renumbered).
    fn processes_with_threads(
        &self,
        processes: &[ProcessBuild],
        threads: &[Thread],
    ) -> Vec<Process> {
        let mut out: Vec<Process> = (self.processes.iter())
            .map(|&old| {
                let p = &processes[old as usize];
                Process {
                    pid: p.pid,
                    name: p.name,
                    sort_index: p.sort_index,
                    labels: p.labels.clone(),
                    threads: Vec::new(),
                }
            })
            .collect();
        for (i, t) in threads.iter().enumerate() {
            out[t.process as usize].threads.push(i as u32);
        }
        out
    }
}

/// `new[old[i]] = i`.
fn inverse(order: &[u32]) -> Vec<u32> {
    let mut new = vec![0u32; order.len()];
    for (i, &old) in order.iter().enumerate() {
        new[old as usize] = i as u32;
    }
    new
}

/// Each thread's spans matched and nested into lanes, threads in parallel, each with its
/// own warnings, the argument sets its spans' `E` events add, and whether it was matched
/// as events streamed in but must be paired again, and kept no events to pair it from;
/// in the threads' old order.
fn nest_threads(
    threads: Vec<ThreadBuild>,
    (keep, chunk_maps): (bool, &[Remap]),
    end: i64,
    from_spall: bool,
    sorted_from: i64,
    strings: &Strings,
) -> Vec<(Thread, Diagnostics<ModelWarning>, EndArgs, bool)> {
    let names = |id: StrId| strings.get(id).to_string();
    threads
        .into_par_iter()
        .map(|t| {
            let mut d = Diagnostics::default();
            let mut redo = false;
            let (lanes, merges) = match (t.joined, t.stream) {
                (Some(j), _) => {
                    d = t.diags;
                    (j.finish(end, &names, &mut d), EndArgs::new())
                }
                (None, Some(m)) => {
                    d = t.diags;
                    let kept = t.kept;
                    let ends = keep.then_some(|| super::merge::kept_ends(kept, chunk_maps));
                    let (lanes, again) = streamed_lanes(
                        m,
                        ends,
                        t.disordered,
                        end,
                        from_spall,
                        sorted_from,
                        &names,
                        &mut d,
                    );
                    redo = again;
                    lanes
                }
                (None, None) => build_lanes(t.events, end, from_spall, sorted_from, &names, &mut d),
            };
            let thread = Thread {
                pid: t.pid,
                tid: t.tid,
                process: t.process,
                name: t.name,
                sort_index: t.sort_index,
                lanes,
            };
            (thread, d, merges, redo)
        })
        .collect()
}

impl OtherEvents {
    /// Every event's thread and process renumbered; instants, flow
    /// points, async events and counter samples sorted by time, sample tracks by thread;
    /// async events paired into slices and tracks.
    fn renumber_and_sort(&mut self, order: &Numbering, end: i64) -> Asyncs {
        let (new_thread, new_process) = (&order.new_thread, &order.new_process);
        let mut d = Diagnostics::default();
        for i in &mut self.instants {
            i.thread = new_thread[i.thread as usize];
            i.process = new_process[i.process as usize];
        }
        sort_by_time(&mut self.instants, |i| i.ts);
        for c in &mut self.counters {
            c.process = new_process[c.process as usize];
            if let Some(t) = &mut c.thread {
                *t = new_thread[*t as usize];
            }
            if !c.ts.windows(2).all(|w| w[0] <= w[1]) {
                let mut pairs: Vec<(i64, f64)> =
                    c.ts.iter().copied().zip(c.values.iter().copied()).collect();
                crate::radix::sort_by_key(&mut pairs, |p| crate::radix::time_key(p.0));
                (c.ts, c.values) = pairs.into_iter().unzip();
            }
        }
        for f in &mut self.flows {
            for p in &mut f.points {
                p.thread = new_thread[p.thread as usize];
            }
            f.points.sort_by_key(|p| p.ts);
        }
        for a in &mut self.async_events {
            a.thread = new_thread[a.thread as usize];
            a.process = new_process[a.process as usize];
        }
        sort_by_time(&mut self.async_events, |a| a.ts);
        let names = (self.track_names.iter())
            .map(|&(p, id, n)| ((new_process[p as usize], id), n))
            .collect();
        let (async_slices, mut async_tracks) =
            asyncs::build(&self.async_events, &names, end, &mut d);
        async_tracks.sort_by_key(|t| t.process);
        for s in &mut self.samples {
            s.thread = new_thread[s.thread as usize];
        }
        self.samples.sort_by_key(|s| s.thread);
        (async_slices, async_tracks, d)
    }
}

/// The links' numbers in the order of their targets (stably): each target's (thread,
/// depth, index) packed into one key where their widths fit in 64 bits.
fn by_target(links: &[FlowLink]) -> Vec<u32> {
    let width = |f: fn(&SpanRef) -> u32| {
        let max = links.iter().map(|l| f(&l.to)).max().unwrap_or(0);
        32 - max.leading_zeros()
    };
    let (d, i) = (width(|r| r.depth), width(|r| r.index));
    let mut order: Vec<u32> = (0..links.len() as u32).collect();
    if width(|r| r.thread) + d + i > 64 {
        order.sort_by_key(|&l| links[l as usize].to);
        return order;
    }
    // d + i is 64 only where every thread is 0: its shift may wrap.
    let pack =
        |r: SpanRef| (r.thread as u64).wrapping_shl(d + i) | (r.depth as u64) << i | r.index as u64;
    let mut keyed: Vec<(u64, u32)> = order
        .iter()
        .map(|&l| (pack(links[l as usize].to), l))
        .collect();
    crate::radix::sort_by_key(&mut keyed, |k| k.0);
    keyed.into_iter().map(|k| k.1).collect()
}

/// Sorts `v` by `ts`, stably: the times with their places sorted, then the items gathered
/// in that order (sorting the items themselves moved each one at every merge).
fn sort_by_time<T: Clone>(v: &mut Vec<T>, ts: impl Fn(&T) -> i64) {
    if v.is_sorted_by_key(&ts) {
        return;
    }
    let Ok(_) = u32::try_from(v.len()) else {
        return v.sort_by_key(ts);
    };
    let mut keys: Vec<(i64, u32)> = (v.iter().enumerate())
        .map(|(i, x)| (ts(x), i as u32))
        .collect();
    crate::radix::sort_by_key(&mut keys, |k| crate::radix::time_key(k.0));
    let old = std::mem::take(v);
    v.extend(keys.iter().map(|&(_, i)| old[i as usize].clone()));
}

#[cfg(test)]
mod tests {
    /// The links in their targets' order as a stable comparison sort gives it: targets
    /// on many threads, depths and indices, repeated targets, and targets too wide to pack.
    #[test]
    fn links_by_target_as_a_stable_sort() {
        use crate::flows::FlowLink;
        use crate::span::SpanRef;
        let r = |thread, depth, index| SpanRef {
            thread,
            depth,
            index,
        };
        let mut links: Vec<FlowLink> = (0..4000u32)
            .map(|k| FlowLink {
                from: r(0, 0, k),
                to: r(k * 7 % 13, k * 5 % 9, k * 7919 % 600),
                flow: k,
            })
            .collect();
        let check = |links: &[FlowLink], what: &str| {
            let mut want: Vec<u32> = (0..links.len() as u32).collect();
            want.sort_by_key(|&l| links[l as usize].to);
            assert_eq!(super::by_target(links), want, "{what}");
        };
        check(&links, "packed");
        // Depths and indices of 32 bits each on thread 0 only: 64 bits, packed.
        let mut one_thread = links.clone();
        for l in &mut one_thread {
            l.to.thread = 0;
        }
        one_thread[9].to = r(0, u32::MAX, u32::MAX);
        check(&one_thread, "64 bits on one thread");
        links[17].to = r(u32::MAX, u32::MAX, u32::MAX);
        check(&links, "too wide to pack");
    }

    /// Sorted as the standard library's stable sort sorts: runs from several parts, equal
    /// times in their first order, an already sorted list untouched.
    #[test]
    fn sort_by_time_is_a_stable_sort() {
        let mut runs: Vec<(i64, u32)> = Vec::new();
        for part in 0..16u32 {
            runs.extend((0..500).map(|i| ((i * 7 + part as i64 * 3) / 5, part * 1000 + i as u32)));
        }
        for v in [
            runs.clone(),
            runs.iter().rev().copied().collect(),
            vec![(1, 2), (1, 1)],
        ] {
            let (mut a, mut b) = (v.clone(), v);
            super::sort_by_time(&mut a, |x| x.0);
            b.sort_by_key(|x| x.0);
            assert_eq!(a, b);
        }
    }
}
