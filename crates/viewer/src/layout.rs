//! Vertical layout: process and thread headers, and one row per depth of each thread.

use trace_model::Trace;

pub const HEADER_H: f32 = 22.0;
pub const LANE_H: f32 = 20.0;
pub const GAP_H: f32 = 4.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Process(u32),
    Thread(u32),
    Lane { thread: u32, depth: u32 },
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
}

impl Collapsed {
    pub fn for_trace(trace: &Trace) -> Collapsed {
        Collapsed {
            processes: vec![false; trace.processes().len()],
            threads: vec![false; trace.threads().len()],
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub rows: Vec<Row>,
    pub height: f32,
    /// Per thread, the index of its depth-0 row (its lanes follow it in order), if shown.
    first_lane: Vec<Option<usize>>,
}

impl Layout {
    /// Rows in display order (processes by sort index, threads within them).
    pub fn new(trace: &Trace, collapsed: &Collapsed, scale: f32) -> Layout {
        let (header_h, lane_h, gap_h) = (HEADER_H * scale, LANE_H * scale, GAP_H * scale);
        let mut rows = Vec::new();
        let mut first_lane = vec![None; trace.threads().len()];
        let mut y = 0.0f32;
        for (pi, p) in trace.processes().iter().enumerate() {
            rows.push(Row {
                y,
                h: header_h,
                kind: RowKind::Process(pi as u32),
            });
            y += header_h;
            if collapsed.processes.get(pi).copied().unwrap_or(false) {
                y += gap_h;
                continue;
            }
            for &t in &p.threads {
                rows.push(Row {
                    y,
                    h: header_h,
                    kind: RowKind::Thread(t),
                });
                y += header_h;
                if collapsed.threads.get(t as usize).copied().unwrap_or(false) {
                    continue;
                }
                first_lane[t as usize] = Some(rows.len());
                for d in 0..trace.threads()[t as usize].lanes.len() {
                    rows.push(Row {
                        y,
                        h: lane_h,
                        kind: RowKind::Lane {
                            thread: t,
                            depth: d as u32,
                        },
                    });
                    y += lane_h;
                }
            }
            y += gap_h;
        }
        Layout {
            rows,
            height: y,
            first_lane,
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
        let l = Layout::new(&t, &Collapsed::for_trace(&t), 1.0);
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
        let l = Layout::new(&t, &c, 1.0);
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
