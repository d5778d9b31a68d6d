//! Where things are on the timeline: what is under a point, and the on-screen box of a
//! span or of another pick, in the rows laid out for a view. Arithmetic over the layout
//! and viewport.

use trace_model::{InstantScope, SpanRef};

use crate::kinds::{self, Pick};
use crate::loaded::Loaded;
use crate::view::layout::RowKind;
use crate::view::timeline::{pick_extent, TimelineView};

impl TimelineView {
    /// What is under a point of the timeline area, with a tolerance of a few pixels so
    /// that sub-pixel spans and markers can be picked.
    pub fn hit(&self, l: &Loaded, x: f32, y: f32) -> Option<Pick> {
        let bottom = self.tracks_top() + self.tracks_height();
        if y < self.tracks_top() || y >= bottom || x < 0.0 || x > self.width {
            return None;
        }
        let row = self.layout.row_at(y - self.tracks_top() + self.scroll_y)?;
        let t = self.viewport.time_at(x as f64);
        let tol = (self.viewport.ns_per_px * 3.0 * self.scale as f64).ceil() as i64;
        let k = &l.kinds;
        let tr = &l.trace;
        let instant =
            |list: &[u32]| kinds::instant_near(tr, list, t, tol).map(|h| Pick::Instant(h.0));
        match row.kind {
            RowKind::Lane { thread, depth } => {
                let lane = &tr.threads()[thread as usize].lanes[depth as usize];
                let h = lane.hit_test(t, tol)?;
                Some(Pick::Span(SpanRef {
                    thread,
                    depth,
                    index: h.index as u32,
                }))
            }
            RowKind::Cpu(c) => k.cpu_lanes.hit(c as usize, t, tol).map(Pick::Sched),
            RowKind::ThreadStates(th) => {
                let sd = tr.sched()?;
                let ids = crate::kinds::thread_state_ids(sd, th);
                let i = ids.partition_point(|&i| sd.state(i as usize).ts <= t + tol);
                let last = *ids.get(i.checked_sub(1)?)?;
                let next = ids.get(i).map(|&k| sd.state(k as usize));
                let end = sd.state_end(&sd.state(last as usize), next.as_ref(), tr.end_ns());
                (end >= t - tol).then_some(Pick::State(last))
            }
            RowKind::ThreadInstants(th) => instant(&k.instants_by_thread[th as usize]),
            RowKind::ProcessInstants(p) => instant(&k.instants_by_process[p as usize]),
            RowKind::GlobalInstants => instant(&k.global_instants),
            RowKind::Counter(group) => {
                let g = &k.counters[group as usize];
                let any = g.series.iter().any(|&c| {
                    let c = &tr.counters()[c as usize];
                    c.ts.first().is_some_and(|&f| f <= t) && t <= tr.end_ns()
                });
                any.then_some(Pick::Counter { group, ts: t })
            }
            RowKind::AsyncRow { .. } | RowKind::AsyncPacked { .. } => {
                let slices = tr.async_slices();
                let ids = match row.kind {
                    RowKind::AsyncRow { track, row } => {
                        &tr.async_tracks()[track as usize].rows[row as usize]
                    }
                    RowKind::AsyncPacked { process, row } => {
                        &k.async_groups[process as usize].packed[row as usize]
                    }
                    _ => return None,
                };
                let i = ids.partition_point(|&s| slices[s as usize].end < t - tol);
                ids[i..]
                    .iter()
                    .take(3)
                    .map(|&s| (s, &slices[s as usize]))
                    .filter(|(_, s)| s.start <= t + tol)
                    .min_by_key(|(_, s)| {
                        if t < s.start {
                            s.start - t
                        } else {
                            (t - s.end).max(0)
                        }
                    })
                    .map(|(s, _)| Pick::Async(s))
            }
            RowKind::Samples(th) => {
                let track = k.samples_by_thread[th as usize]?;
                let st = &tr.samples()[track as usize];
                let a = st.ts.partition_point(|&x| x < t - tol);
                let b = st.ts.partition_point(|&x| x <= t + tol);
                (a..b)
                    .min_by_key(|&i| (st.ts[i] - t).abs())
                    .map(|i| Pick::Sample {
                        track,
                        index: i as u32,
                    })
            }
            RowKind::Stack { thread, depth } => {
                let st = &k.sample_stacks[thread as usize];
                let lane = st.lanes.get(depth as usize)?;
                let h = lane.hit_test(t, tol)?;
                let track = &tr.samples()[st.track as usize];
                let first = track
                    .samples_in(lane.start[h.index], lane.end(h.index))
                    .start;
                (first < track.ts.len()).then_some(Pick::Stack {
                    track: st.track,
                    depth,
                    sample: first as u32,
                })
            }
            _ => None,
        }
    }

    /// The on-screen box of a span, if its row is laid out.
    pub fn span_box(&self, l: &Loaded, r: SpanRef) -> Option<(f32, f32, f32, f32)> {
        let row = self.layout.lane_row(r.thread, r.depth)?;
        let sp = l.trace.span(r);
        let x0 = self.viewport.x(sp.start) as f32;
        let x1 = self.viewport.x(sp.end()) as f32;
        let y = self.tracks_top() + row.y - self.scroll_y;
        Some((x0, y, (x1 - x0).max(1.0), row.h - 1.0))
    }

    /// The on-screen box of a pick that is not a span, for the selection outline.
    pub fn pick_box(&self, l: &Loaded, p: Pick) -> Option<(f32, f32, f32, f32)> {
        let t = &l.trace;
        let want = |k: RowKind| -> bool {
            match (p, k) {
                (Pick::Instant(i), RowKind::ThreadInstants(th)) => {
                    let e = &t.instants()[i as usize];
                    e.scope == InstantScope::Thread && e.thread == th
                }
                (Pick::Instant(i), RowKind::ProcessInstants(pr)) => {
                    let e = &t.instants()[i as usize];
                    e.scope == InstantScope::Process && e.process == pr
                }
                (Pick::Instant(i), RowKind::GlobalInstants) => {
                    t.instants()[i as usize].scope == InstantScope::Global
                }
                (Pick::Async(i), RowKind::AsyncRow { track, row }) => {
                    l.kinds.async_place[i as usize] == (track, row)
                }
                (Pick::Async(i), RowKind::AsyncPacked { process, row }) => {
                    let g = &l.kinds.async_groups[process as usize];
                    t.async_slices()[i as usize].process == process
                        && g.packed_row(t, i) == Some(row)
                }
                (Pick::Counter { group, .. }, RowKind::Counter(g)) => g == group,
                (Pick::Sched(i), RowKind::Cpu(c)) => {
                    let cpu = t.sched().map(|sd| sd.slice_cpu(i as usize));
                    cpu == l.kinds.cpu_lanes.cpus.get(c as usize).copied()
                }
                (Pick::State(i), RowKind::ThreadStates(th)) => {
                    t.sched()
                        .and_then(|sd| sd.get_state(i as usize))
                        .map(|x| x.thread)
                        == Some(th)
                }
                (Pick::Sample { track, .. }, RowKind::Samples(th)) => {
                    t.samples()[track as usize].thread == th
                }
                (Pick::Stack { track, depth, .. }, RowKind::Stack { thread, depth: d }) => {
                    t.samples()[track as usize].thread == thread && depth == d
                }
                _ => false,
            }
        };
        let row = self.layout.rows.iter().find(|r| want(r.kind))?;
        let (a, b) = pick_extent(l, p)?;
        let x0 = self.viewport.x(a) as f32;
        let x1 = self.viewport.x(b) as f32;
        let y = self.tracks_top() + row.y - self.scroll_y;
        let w = (x1 - x0).max(1.0);
        if w <= 2.0 {
            let r = row.h * 0.4;
            return Some((x0 - r, y, 2.0 * r, row.h - 1.0));
        }
        Some((x0, y, w, row.h - 1.0))
    }
}
