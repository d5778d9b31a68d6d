//! Vertical layout: global instants; per process its header, instants, counter and async
//! tracks; per thread its header, instants, samples, and one row per depth.

use trace_model::Trace;

use crate::kinds::Kinds;

pub const HEADER_H: f32 = 22.0;
pub const LANE_H: f32 = 20.0;
pub const GAP_H: f32 = 4.0;
pub const COUNTER_H: f32 = 44.0;
pub const MARKS_H: f32 = 16.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Process(u32),
    Thread(u32),
    Lane {
        thread: u32,
        depth: u32,
    },
    /// Global instants: a row above every process.
    GlobalInstants,
    /// A process's process-scoped instants.
    ProcessInstants(u32),
    /// A thread's thread-scoped instants.
    ThreadInstants(u32),
    /// One counter group (`Kinds::counters`).
    Counter(u32),
    /// The header of an async track (`Trace::async_tracks`).
    AsyncHeader(u32),
    AsyncRow {
        track: u32,
        row: u32,
    },
    /// A thread's CPU samples (`Trace::samples`).
    Samples(u32),
}

impl RowKind {
    /// Whether a click toggles collapsing.
    pub fn is_header(self) -> bool {
        matches!(
            self,
            RowKind::Process(_) | RowKind::Thread(_) | RowKind::AsyncHeader(_)
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Top of the row, in track coordinates (0 = top of the first track).
    pub y: f32,
    pub h: f32,
    pub kind: RowKind,
}

/// Which tracks are collapsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collapsed {
    pub processes: Vec<bool>,
    pub threads: Vec<bool>,
    pub asyncs: Vec<bool>,
}

impl Collapsed {
    pub fn for_trace(trace: &Trace) -> Collapsed {
        Collapsed {
            processes: vec![false; trace.processes().len()],
            threads: vec![false; trace.threads().len()],
            asyncs: vec![false; trace.async_tracks().len()],
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub rows: Vec<Row>,
    pub height: f32,
    /// Per thread, the index of its depth-0 row (its lanes follow it in order), if shown.
    first_lane: Vec<Option<usize>>,
    /// Per thread, the index of its header row, if shown.
    thread_row: Vec<Option<usize>>,
    /// Per process, the index of its header row and the track y where it ends.
    process_rows: Vec<(usize, f32)>,
}

impl Layout {
    /// Rows in display order (processes by sort index, threads within them).
    pub fn new(trace: &Trace, kinds: &Kinds, collapsed: &Collapsed, scale: f32) -> Layout {
        let (header_h, lane_h, gap_h) = (HEADER_H * scale, LANE_H * scale, GAP_H * scale);
        let (counter_h, marks_h) = (COUNTER_H * scale, MARKS_H * scale);
        let mut rows = Vec::new();
        let mut first_lane = vec![None; trace.threads().len()];
        let mut thread_row = vec![None; trace.threads().len()];
        let mut process_rows = Vec::with_capacity(trace.processes().len());
        let mut y = 0.0f32;
        let push = |rows: &mut Vec<Row>, y: &mut f32, h: f32, kind: RowKind| {
            rows.push(Row { y: *y, h, kind });
            *y += h;
        };
        if !kinds.global_instants.is_empty() {
            push(&mut rows, &mut y, marks_h, RowKind::GlobalInstants);
        }
        for (pi, p) in trace.processes().iter().enumerate() {
            let header = rows.len();
            push(&mut rows, &mut y, header_h, RowKind::Process(pi as u32));
            if collapsed.processes.get(pi).copied().unwrap_or(false) {
                y += gap_h;
                process_rows.push((header, y));
                continue;
            }
            if !kinds.instants_by_process[pi].is_empty() {
                push(
                    &mut rows,
                    &mut y,
                    marks_h,
                    RowKind::ProcessInstants(pi as u32),
                );
            }
            for &g in &kinds.counters_by_process[pi] {
                push(&mut rows, &mut y, counter_h, RowKind::Counter(g));
            }
            for &a in &kinds.async_by_process[pi] {
                push(&mut rows, &mut y, header_h, RowKind::AsyncHeader(a));
                if collapsed.asyncs.get(a as usize).copied().unwrap_or(false) {
                    continue;
                }
                for r in 0..trace.async_tracks()[a as usize].rows.len() {
                    let kind = RowKind::AsyncRow {
                        track: a,
                        row: r as u32,
                    };
                    push(&mut rows, &mut y, lane_h, kind);
                }
            }
            for &t in &p.threads {
                let lanes = trace.threads()[t as usize].lanes.len();
                let marks = !kinds.instants_by_thread[t as usize].is_empty();
                let samples = kinds.samples_by_thread[t as usize].is_some();
                if lanes == 0 && !marks && !samples {
                    // Named by metadata but with nothing to draw: no track, as in Perfetto.
                    continue;
                }
                thread_row[t as usize] = Some(rows.len());
                push(&mut rows, &mut y, header_h, RowKind::Thread(t));
                if collapsed.threads.get(t as usize).copied().unwrap_or(false) {
                    continue;
                }
                if marks {
                    push(&mut rows, &mut y, marks_h, RowKind::ThreadInstants(t));
                }
                if samples {
                    push(&mut rows, &mut y, marks_h, RowKind::Samples(t));
                }
                first_lane[t as usize] = Some(rows.len());
                for d in 0..lanes {
                    let kind = RowKind::Lane {
                        thread: t,
                        depth: d as u32,
                    };
                    push(&mut rows, &mut y, lane_h, kind);
                }
            }
            y += gap_h;
            process_rows.push((header, y));
        }
        Layout {
            rows,
            height: y,
            first_lane,
            thread_row,
            process_rows,
        }
    }

    /// The row at track coordinate `y`.
    pub fn row_at(&self, y: f32) -> Option<&Row> {
        let i = self.rows.partition_point(|r| r.y + r.h <= y);
        self.rows.get(i).filter(|r| r.y <= y)
    }

    /// Rows overlapping `[y0, y1)`, as an index range.
    pub fn visible(&self, y0: f32, y1: f32) -> std::ops::Range<usize> {
        let a = self.rows.partition_point(|r| r.y + r.h <= y0);
        let b = self.rows.partition_point(|r| r.y < y1);
        a..b.max(a)
    }

    /// The row of a thread's lane: O(1).
    pub fn lane_row(&self, thread: u32, depth: u32) -> Option<&Row> {
        let first = (*self.first_lane.get(thread as usize)?)?;
        self.rows
            .get(first + depth as usize)
            .filter(|r| r.kind == RowKind::Lane { thread, depth })
    }

    /// Where a span is drawn, or stands in when its track is collapsed: its lane, else its
    /// thread's header, else its process's header.
    pub fn span_anchor(&self, trace: &Trace, thread: u32, depth: u32) -> Option<&Row> {
        self.lane_row(thread, depth)
            .or_else(|| self.rows.get((*self.thread_row.get(thread as usize)?)?))
            .or_else(|| {
                let p = trace.threads().get(thread as usize)?.process;
                self.rows.get(self.process_rows.get(p as usize)?.0)
            })
    }

    /// The track y range a process covers (header to gap), for process-wide markers.
    pub fn process_extent(&self, process: u32) -> Option<(f32, f32)> {
        let &(header, end) = self.process_rows.get(process as usize)?;
        Some((self.rows[header].y, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        trace_model::load_bytes(
            br#"[{"ph":"X","name":"a","ts":0,"dur":10,"pid":1,"tid":1},
                 {"ph":"X","name":"b","ts":1,"dur":2,"pid":1,"tid":1},
                 {"ph":"X","name":"c","ts":0,"dur":5,"pid":1,"tid":2},
                 {"ph":"X","name":"d","ts":0,"dur":5,"pid":2,"tid":3}]"#,
        )
        .unwrap()
    }

    #[test]
    fn rows_follow_processes_threads_and_depths() {
        let t = trace();
        let l = Layout::new(&t, &Kinds::new(&t), &Collapsed::for_trace(&t), 1.0);
        let kinds: Vec<RowKind> = l.rows.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![
                RowKind::Process(0),
                RowKind::Thread(0),
                RowKind::Lane {
                    thread: 0,
                    depth: 0
                },
                RowKind::Lane {
                    thread: 0,
                    depth: 1
                },
                RowKind::Thread(1),
                RowKind::Lane {
                    thread: 1,
                    depth: 0
                },
                RowKind::Process(1),
                RowKind::Thread(2),
                RowKind::Lane {
                    thread: 2,
                    depth: 0
                },
            ]
        );
        assert_eq!(
            l.row_at(HEADER_H * 2.0 + 1.0).unwrap().kind,
            RowKind::Lane {
                thread: 0,
                depth: 0
            }
        );
        assert_eq!(l.row_at(-1.0), None);
        assert_eq!(l.row_at(l.height + 1.0), None);
        let v = l.visible(0.0, HEADER_H * 2.0 + 1.0);
        assert_eq!(v, 0..3);
    }

    #[test]
    fn collapsing_hides_rows() {
        let t = trace();
        let mut c = Collapsed::for_trace(&t);
        c.threads[0] = true;
        c.processes[1] = true;
        let l = Layout::new(&t, &Kinds::new(&t), &c, 1.0);
        let kinds: Vec<RowKind> = l.rows.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            vec![
                RowKind::Process(0),
                RowKind::Thread(0),
                RowKind::Thread(1),
                RowKind::Lane {
                    thread: 1,
                    depth: 0
                },
                RowKind::Process(1),
            ]
        );
    }
}
