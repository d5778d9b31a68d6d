//! Vertical layout: global instants; per process its header, instants, counter and async
//! tracks; per thread its header, instants, samples, and one row per depth.
//!
//! Tracks are ordered as Perfetto orders them, so that the first screen shows the work:
//! processes by sort index, else the busiest first; in a process its main thread first,
//! then by sort index, then the busiest; a process's async tracks (often dozens of one
//! slice each) under one group header, which folds them into one row.

use std::cmp::Reverse;
use std::collections::HashSet;

use trace_model::Trace;

use crate::kinds::Kinds;

/// Height of a header row (process, thread, async), logical pixels.
pub const HEADER_H: f32 = 22.0;
/// Height of one depth of spans, logical pixels.
pub const LANE_H: f32 = 20.0;
/// Space after each process's tracks, logical pixels.
pub const GAP_H: f32 = 4.0;
/// Height of a counter track, logical pixels.
pub const COUNTER_H: f32 = 44.0;
/// Height of a row of instants or samples, logical pixels.
pub const MARKS_H: f32 = 16.0;
/// Text size of the rows' labels, logical pixels.
pub const LABEL_PX: f32 = 12.0;

/// What a row of the timeline shows; the numbers are indices into the trace's (or
/// [`Kinds`]') lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// The header of a process (`Trace::processes`).
    Process(u32),
    /// The header of a thread (`Trace::threads`).
    Thread(u32),
    /// One depth of a thread's spans.
    Lane {
        /// Index into `Trace::threads`.
        thread: u32,
        /// Index into the thread's lanes (0 is the outermost).
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
    /// The header of a process's async tracks, folded into one group.
    AsyncGroup(u32),
    /// The header of an async track (`Trace::async_tracks`).
    AsyncHeader(u32),
    /// One row of an async track's packed slices.
    AsyncRow {
        /// Index into `Trace::async_tracks`.
        track: u32,
        /// Index into the track's rows.
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
            RowKind::Process(_)
                | RowKind::Thread(_)
                | RowKind::AsyncGroup(_)
                | RowKind::AsyncHeader(_)
        )
    }
}

/// One row of the timeline: where it is and what it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// Top of the row, in track coordinates (0 = top of the first track).
    pub y: f32,
    /// Height, in physical pixels.
    pub h: f32,
    /// What the row shows.
    pub kind: RowKind,
}

/// Which tracks are collapsed, hidden (the track filter) or pinned to the top.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collapsed {
    /// Per process (`Trace::processes`), whether it is collapsed to its header.
    pub processes: Vec<bool>,
    /// Per thread (`Trace::threads`), whether it is collapsed to its header.
    pub threads: Vec<bool>,
    /// Per async track (`Trace::async_tracks`), whether it is collapsed to its header.
    pub asyncs: Vec<bool>,
    /// Per process, whether its group of async tracks is folded (open by default).
    pub async_groups: Vec<bool>,
    /// Tracks the user hid.
    pub hidden: HashSet<Track>,
    /// Pinned processes and threads come first, in display order, processes before threads.
    pub pinned: HashSet<Track>,
}

impl Collapsed {
    /// Everything expanded and shown, async groups included.
    pub fn for_trace(trace: &Trace) -> Collapsed {
        Collapsed {
            processes: vec![false; trace.processes().len()],
            threads: vec![false; trace.threads().len()],
            asyncs: vec![false; trace.async_tracks().len()],
            async_groups: vec![false; trace.processes().len()],
            ..Collapsed::default()
        }
    }

    /// Whether the user hid `t`.
    pub fn is_hidden(&self, t: Track) -> bool {
        self.hidden.contains(&t)
    }

    /// Hides or shows `t`.
    pub fn set_hidden(&mut self, t: Track, hide: bool) {
        set(&mut self.hidden, t, hide);
    }

    /// Whether a process or thread is pinned (other tracks cannot be).
    pub fn is_pinned(&self, t: Track) -> bool {
        self.pinned.contains(&t)
    }

    /// Pins or unpins a process or thread (other tracks are left as they are).
    pub fn set_pinned(&mut self, t: Track, pin: bool) {
        if matches!(t, Track::Process(_) | Track::Thread(_)) {
            set(&mut self.pinned, t, pin);
        }
    }
}

fn set(s: &mut HashSet<Track>, t: Track, on: bool) {
    if on {
        s.insert(t);
    } else {
        s.remove(&t);
    }
}

/// A track the user can hide or pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Track {
    /// A process (`Trace::processes`).
    Process(u32),
    /// A thread (`Trace::threads`).
    Thread(u32),
    /// A counter group (`Kinds::counters`).
    Counter(u32),
    /// An async track (`Trace::async_tracks`).
    Async(u32),
}

/// Every track the filter lists, in display order, with its label and its nesting (0 for a
/// process, 1 for what is in it, 2 for a thread's counters).
pub fn track_list(trace: &Trace, kinds: &Kinds) -> Vec<(Track, String, u8)> {
    let mut v = Vec::new();
    let order = Order::new(trace, kinds);
    for &pi in &order.processes {
        let (p, pi) = (&trace.processes()[pi as usize], pi as usize);
        let label = match p.name {
            Some(n) => format!("{} ({})", trace.str(n), trace.ext_id(p.pid)),
            None => format!("Process {}", trace.ext_id(p.pid)),
        };
        v.push((Track::Process(pi as u32), label, 0));
        for &g in &kinds.counters_by_process[pi] {
            let name = trace.str(kinds.counters[g as usize].name);
            v.push((Track::Counter(g), format!("counter {name}"), 1));
        }
        for &a in &kinds.async_by_process[pi] {
            let name = trace.str(trace.async_tracks()[a as usize].name);
            v.push((Track::Async(a), format!("async {name}"), 1));
        }
        for &t in &order.threads[pi] {
            v.push((Track::Thread(t), trace.thread_label(t), 1));
            for &g in &kinds.counters_by_thread[t as usize] {
                let name = trace.str(kinds.counters[g as usize].name);
                v.push((Track::Counter(g), format!("counter {name}"), 2));
            }
        }
    }
    v
}

/// Processes and threads in display order (see the module's overview).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Order {
    /// Indices into `Trace::processes`.
    pub processes: Vec<u32>,
    /// Per process, its threads (indices into `Trace::threads`).
    pub threads: Vec<Vec<u32>>,
}

impl Order {
    /// The display order of `trace`'s processes and threads.
    pub fn new(trace: &Trace, kinds: &Kinds) -> Order {
        let spans = |t: u32| trace.threads()[t as usize].span_count();
        let threads: Vec<Vec<u32>> = (trace.processes().iter())
            .map(|p| {
                let mut v = p.threads.clone();
                // Stable: ties keep the trace's order (sort index, then tid).
                v.sort_by_cached_key(|&t| {
                    let th = &trace.threads()[t as usize];
                    let main = is_main_thread(trace, t);
                    (!main, th.sort_index.unwrap_or(i64::MAX), Reverse(spans(t)))
                });
                v
            })
            .collect();
        let busy = |p: usize| -> u64 {
            let slices = (kinds.async_by_process[p].iter())
                .map(|&a| {
                    trace.async_tracks()[a as usize]
                        .rows
                        .iter()
                        .map(Vec::len)
                        .sum::<usize>()
                })
                .sum::<usize>();
            trace.processes()[p]
                .threads
                .iter()
                .map(|&t| spans(t))
                .sum::<u64>()
                + slices as u64
        };
        let mut processes: Vec<u32> = (0..trace.processes().len() as u32).collect();
        processes.sort_by_cached_key(|&p| {
            let sort = trace.processes()[p as usize].sort_index;
            (sort.is_none(), sort, Reverse(busy(p as usize)))
        });
        Order { processes, threads }
    }
}

/// A process's main thread: its tid is the pid, or Chrome names it `Cr…Main`
/// (`CrBrowserMain`, `CrRendererMain`, `CrGpuMain`), whatever its tid (not the pid on macOS).
pub fn is_main_thread(trace: &Trace, t: u32) -> bool {
    let th = &trace.threads()[t as usize];
    let chrome = th.name.is_some_and(|n| {
        let n = trace.str(n);
        n.starts_with("Cr") && n.ends_with("Main")
    });
    chrome || th.tid == th.pid
}

fn flag(v: &[bool], i: u32) -> bool {
    v.get(i as usize).copied().unwrap_or(false)
}

/// The timeline's rows, top to bottom, for the current collapsing and filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Every row shown, top to bottom.
    pub rows: Vec<Row>,
    /// Height of all the rows, in physical pixels.
    pub height: f32,
    /// Per thread, the index of its depth-0 row (its lanes follow it in order), if shown.
    first_lane: Vec<Option<usize>>,
    /// Per thread, the index of its header row, if shown.
    thread_row: Vec<Option<usize>>,
    /// Per process, the index of its header row and the track y where it ends, if shown.
    process_rows: Vec<Option<(usize, f32)>>,
}

/// Lays rows out one after the other.
struct Builder<'a> {
    trace: &'a Trace,
    kinds: &'a Kinds,
    c: &'a Collapsed,
    order: &'a Order,
    scale: f32,
    y: f32,
    out: Layout,
}

impl Builder<'_> {
    fn push(&mut self, h: f32, kind: RowKind) {
        self.out.rows.push(Row { y: self.y, h, kind });
        self.y += h;
    }

    /// A process's header and its own tracks, then its threads (but pinned ones).
    fn process(&mut self, pi: u32) {
        let (header_h, lane_h) = (HEADER_H * self.scale, LANE_H * self.scale);
        let header = self.out.rows.len();
        self.push(header_h, RowKind::Process(pi));
        let (k, c) = (self.kinds, self.c);
        if !flag(&c.processes, pi) {
            if !k.instants_by_process[pi as usize].is_empty() {
                self.push(MARKS_H * self.scale, RowKind::ProcessInstants(pi));
            }
            for &g in &k.counters_by_process[pi as usize] {
                if !c.is_hidden(Track::Counter(g)) {
                    self.push(COUNTER_H * self.scale, RowKind::Counter(g));
                }
            }
            let asyncs: Vec<u32> = (k.async_by_process[pi as usize].iter().copied())
                .filter(|&a| !c.is_hidden(Track::Async(a)))
                .collect();
            // One track is its own header; more fold into a group.
            let grouped = asyncs.len() > 1;
            if grouped {
                self.push(header_h, RowKind::AsyncGroup(pi));
            }
            let folded = grouped && flag(&c.async_groups, pi);
            for &a in asyncs.iter().filter(|_| !folded) {
                self.push(header_h, RowKind::AsyncHeader(a));
                if flag(&c.asyncs, a) {
                    continue;
                }
                for r in 0..self.trace.async_tracks()[a as usize].rows.len() {
                    let kind = RowKind::AsyncRow {
                        track: a,
                        row: r as u32,
                    };
                    self.push(lane_h, kind);
                }
            }
            for &t in &self.order.threads[pi as usize] {
                if !c.is_pinned(Track::Thread(t)) {
                    self.thread(t);
                }
            }
        }
        self.y += GAP_H * self.scale;
        self.out.process_rows[pi as usize] = Some((header, self.y));
    }

    /// A thread's header, instants, samples and lanes, unless hidden or empty.
    fn thread(&mut self, t: u32) {
        let (k, c) = (self.kinds, self.c);
        let lanes = self.trace.threads()[t as usize].lanes.len();
        let marks = !k.instants_by_thread[t as usize].is_empty();
        let samples = k.samples_by_thread[t as usize].is_some();
        let counters = &k.counters_by_thread[t as usize];
        let empty = lanes == 0 && !marks && !samples && counters.is_empty();
        if empty || c.is_hidden(Track::Thread(t)) {
            // Named by metadata but with nothing to draw: no track, as in Perfetto.
            return;
        }
        let marks_h = MARKS_H * self.scale;
        self.out.thread_row[t as usize] = Some(self.out.rows.len());
        self.push(HEADER_H * self.scale, RowKind::Thread(t));
        if flag(&c.threads, t) {
            return;
        }
        if marks {
            self.push(marks_h, RowKind::ThreadInstants(t));
        }
        if samples {
            self.push(marks_h, RowKind::Samples(t));
        }
        self.out.first_lane[t as usize] = Some(self.out.rows.len());
        for d in 0..lanes {
            let kind = RowKind::Lane {
                thread: t,
                depth: d as u32,
            };
            self.push(LANE_H * self.scale, kind);
        }
        // The thread's own counters (Chrome's thread_time) under its slices, as in Perfetto.
        for &g in counters
            .iter()
            .filter(|&&g| !c.is_hidden(Track::Counter(g)))
        {
            self.push(COUNTER_H * self.scale, RowKind::Counter(g));
        }
    }
}

impl Layout {
    /// Rows in display order: pinned processes and threads, global instants, then processes
    /// with their threads in [`Order`]; hidden tracks left out.
    pub fn new(trace: &Trace, kinds: &Kinds, collapsed: &Collapsed, scale: f32) -> Layout {
        let order = Order::new(trace, kinds);
        let mut b = Builder {
            trace,
            kinds,
            c: collapsed,
            order: &order,
            scale,
            y: 0.0,
            out: Layout {
                first_lane: vec![None; trace.threads().len()],
                thread_row: vec![None; trace.threads().len()],
                process_rows: vec![None; trace.processes().len()],
                ..Layout::default()
            },
        };
        let shown = |p: u32| !collapsed.is_hidden(Track::Process(p));
        let procs = order.processes.iter().copied();
        for p in procs
            .clone()
            .filter(|&p| shown(p) && collapsed.is_pinned(Track::Process(p)))
        {
            b.process(p);
        }
        for p in procs.clone().filter(|&p| shown(p)) {
            for &t in &order.threads[p as usize] {
                if collapsed.is_pinned(Track::Thread(t)) {
                    b.thread(t);
                }
            }
        }
        if !kinds.global_instants.is_empty() {
            b.push(MARKS_H * scale, RowKind::GlobalInstants);
        }
        for p in procs.filter(|&p| shown(p) && !collapsed.is_pinned(Track::Process(p))) {
            b.process(p);
        }
        b.out.height = b.y;
        b.out
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
                self.rows.get((*self.process_rows.get(p as usize)?)?.0)
            })
    }

    /// The track y range a process covers (header to gap), for process-wide markers.
    pub fn process_extent(&self, process: u32) -> Option<(f32, f32)> {
        let (header, end) = (*self.process_rows.get(process as usize)?)?;
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

    #[test]
    fn hidden_tracks_are_left_out_and_pinned_ones_come_first() {
        let t = trace();
        let k = Kinds::new(&t);
        let mut c = Collapsed::for_trace(&t);
        let headers = |c: &Collapsed| -> Vec<RowKind> {
            Layout::new(&t, &k, c, 1.0)
                .rows
                .iter()
                .map(|r| r.kind)
                .filter(|k| k.is_header())
                .collect()
        };
        c.set_hidden(Track::Thread(0), true);
        assert_eq!(
            headers(&c),
            [
                RowKind::Process(0),
                RowKind::Thread(1),
                RowKind::Process(1),
                RowKind::Thread(2)
            ]
        );
        c.set_hidden(Track::Thread(0), false);
        c.set_hidden(Track::Process(0), true);
        assert_eq!(headers(&c), [RowKind::Process(1), RowKind::Thread(2)]);
        c.set_hidden(Track::Process(0), false);
        // A pinned thread leaves its process for the top; a pinned process comes first.
        c.set_pinned(Track::Thread(1), true);
        c.set_pinned(Track::Process(1), true);
        assert_eq!(
            headers(&c),
            [
                RowKind::Process(1),
                RowKind::Thread(2),
                RowKind::Thread(1),
                RowKind::Process(0),
                RowKind::Thread(0)
            ]
        );
        let l = Layout::new(&t, &k, &c, 1.0);
        assert!(
            l.lane_row(1, 0).is_some(),
            "a pinned thread's lanes are found"
        );
        let names: Vec<String> = track_list(&t, &k).into_iter().map(|x| x.1).collect();
        assert_eq!(names.len(), 5);
        assert!(names[0].starts_with("Process"), "{names:?}");
    }

    /// `n` one-microsecond spans on a thread, one after the other.
    fn spans(pid: u32, tid: u32, n: u32) -> String {
        (0..n)
            .map(|i| {
                format!(r#"{{"ph":"X","name":"s","ts":{i},"dur":1,"pid":{pid},"tid":{tid}}},"#)
            })
            .collect()
    }

    fn meta(name: &str, pid: u32, tid: u32, args: &str) -> String {
        format!(r#"{{"ph":"M","name":"{name}","pid":{pid},"tid":{tid},"args":{{{args}}}}},"#)
    }

    fn load(events: String) -> Trace {
        trace_model::load_bytes(format!("[{}]", events.trim_end_matches(',')).as_bytes()).unwrap()
    }

    fn tids(t: &Trace, threads: &[u32]) -> Vec<String> {
        (threads.iter())
            .map(|&i| t.ext_id(t.threads()[i as usize].tid).to_string())
            .collect()
    }

    #[test]
    fn main_threads_come_first_then_sort_index_then_the_busiest() {
        let t = load(
            [
                spans(10, 4, 1),
                spans(10, 5, 3),
                spans(10, 7, 1),
                spans(10, 9, 1),
                spans(10, 10, 1),
                meta("thread_name", 10, 7, r#""name":"CrRendererMain""#),
                meta("thread_sort_index", 10, 9, r#""sort_index":-1"#),
            ]
            .concat(),
        );
        let order = Order::new(&t, &Kinds::new(&t));
        // 7 by its Chrome name, 10 as tid == pid; then 9 by its sort index; then the
        // busier 5 before 4.
        assert_eq!(tids(&t, &order.threads[0]), ["7", "10", "9", "5", "4"]);
        let l = Layout::new(&t, &Kinds::new(&t), &Collapsed::for_trace(&t), 1.0);
        let first = (l.rows.iter()).find_map(|r| match r.kind {
            RowKind::Thread(th) => Some(th),
            _ => None,
        });
        assert_eq!(
            first,
            Some(order.threads[0][0]),
            "the layout follows the order"
        );
    }

    #[test]
    fn processes_keep_their_sort_index_else_the_busiest_come_first() {
        let t = load(
            [
                spans(10, 1, 6),
                spans(20, 1, 1),
                spans(30, 1, 1),
                spans(40, 1, 1),
                spans(50, 1, 10),
                meta("process_sort_index", 30, 0, r#""sort_index":5"#),
                meta("process_sort_index", 40, 0, r#""sort_index":-2"#),
            ]
            .concat(),
        );
        let k = Kinds::new(&t);
        let pids: Vec<String> = (Order::new(&t, &k).processes.iter())
            .map(|&p| t.ext_id(t.processes()[p as usize].pid).to_string())
            .collect();
        assert_eq!(pids, ["40", "30", "50", "10", "20"]);
        let listed: Vec<String> = (track_list(&t, &k).into_iter())
            .filter(|x| x.2 == 0)
            .map(|x| x.1)
            .collect();
        assert_eq!(
            listed[..2],
            ["Process 40", "Process 30"],
            "the filter's list agrees"
        );
    }

    #[test]
    fn a_process_async_tracks_fold_into_one_group_collapsed_by_default() {
        let slice = |pid: u32, name: &str, id: u32| {
            format!(
                r#"{{"ph":"b","cat":"c","name":"{name}","id":{id},"ts":0,"pid":{pid},"tid":1}},
                   {{"ph":"e","cat":"c","name":"{name}","id":{id},"ts":5,"pid":{pid},"tid":1}},"#
            )
        };
        let t = load(
            [
                slice(1, "a", 1),
                slice(1, "b", 2),
                slice(1, "c", 3),
                slice(2, "d", 4),
                spans(1, 1, 1),
                spans(2, 2, 1),
            ]
            .concat(),
        );
        let k = Kinds::new(&t);
        assert_eq!(k.async_by_process[0].len(), 3, "three tracks in pid 1");
        let kinds = |c: &Collapsed| -> Vec<RowKind> {
            (Layout::new(&t, &k, c, 1.0).rows.iter())
                .map(|r| r.kind)
                .collect()
        };
        let mut c = Collapsed::for_trace(&t);
        assert!(!c.async_groups[0], "groups start open");
        c.async_groups[0] = true;
        let folded = kinds(&c);
        // pid 1: one group header and no track of its own, then its thread.
        assert_eq!(
            folded[..3],
            [
                RowKind::Process(0),
                RowKind::AsyncGroup(0),
                RowKind::Thread(0)
            ]
        );
        assert!(folded[..3].iter().all(|r| r.is_header()));
        // pid 2's only track is not grouped.
        let d = k.async_by_process[1][0];
        assert_eq!(
            folded[4..7],
            [
                RowKind::Process(1),
                RowKind::AsyncHeader(d),
                RowKind::AsyncRow { track: d, row: 0 }
            ]
        );
        c.async_groups[0] = false;
        let open = kinds(&c);
        let headers: Vec<u32> = (open.iter())
            .filter_map(|r| match r {
                RowKind::AsyncHeader(a) => Some(*a),
                _ => None,
            })
            .collect();
        assert_eq!(
            headers.len(),
            4,
            "opened, the group shows its three tracks: {open:?}"
        );
        assert_eq!(open[1], RowKind::AsyncGroup(0));
        // Hiding all but one leaves no group.
        c.set_hidden(Track::Async(k.async_by_process[0][0]), true);
        c.set_hidden(Track::Async(k.async_by_process[0][1]), true);
        assert_eq!(kinds(&c)[1], RowKind::AsyncHeader(k.async_by_process[0][2]));
    }

    #[test]
    fn a_threads_own_counters_come_under_its_lanes() {
        let c = |tid: u32, s: &str| {
            format!(
                r#"{{"ph":"C","name":"thread_time","ts":0,"pid":1,"tid":{tid},{s}"args":{{"value":1}}}},"#
            )
        };
        // Thread 2 has only its counter: it still gets a track.
        let t = load(
            [
                spans(1, 1, 1),
                c(1, r#""s":"t","#),
                c(2, r#""s":"t","#),
                c(1, ""),
            ]
            .concat(),
        );
        let k = Kinds::new(&t);
        let (th1, th2) = (k.counters_by_thread[0][0], k.counters_by_thread[1][0]);
        let process = k.counters_by_process[0][0];
        let rows: Vec<RowKind> = (Layout::new(&t, &k, &Collapsed::for_trace(&t), 1.0).rows)
            .iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(
            rows,
            [
                RowKind::Process(0),
                RowKind::Counter(process),
                RowKind::Thread(0),
                RowKind::Lane {
                    thread: 0,
                    depth: 0
                },
                RowKind::Counter(th1),
                RowKind::Thread(1),
                RowKind::Counter(th2),
            ]
        );
        let listed: Vec<(Track, u8)> = (track_list(&t, &k).into_iter())
            .map(|x| (x.0, x.2))
            .collect();
        assert_eq!(listed[3], (Track::Counter(th1), 2), "{listed:?}");
    }
}
