//! Vertical layout: global instants; per process its header, instants, threads, counters
//! and async tracks; per thread its header, instants, samples, one row per depth and its
//! own counters.
//!
//! Processes and threads come in the model's display order
//! ([`Trace::display_order`](trace_model::Trace::display_order)), so that the first screen
//! shows the work; a process's counters and async tracks follow its threads. Its async
//! tracks (often dozens of one slice each) start folded into one summary row; unfolded,
//! the tracks of one slice each share packed rows.

use std::collections::HashSet;

use trace_model::{DisplayOrder, Trace};

use trace_index::EventIndex;

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
/// Height of a thread's state strip, logical pixels.
pub const STATES_H: f32 = 10.0;
/// Text size of the rows' labels, logical pixels.
pub const LABEL_PX: f32 = 12.0;

/// What a row of the timeline shows; the numbers are indices into the trace's (or
/// [`EventIndex`]') lists.
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
    /// One counter group (`EventIndex::counters`).
    Counter(u32),
    /// The header of a process's async tracks, folded into one group; folded, it draws
    /// where any of their slices is.
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
    /// One row of a process's one-slice async tracks, packed (`AsyncGroup::packed`).
    AsyncPacked {
        /// Index into `Trace::processes`.
        process: u32,
        /// Index into the group's packed rows.
        row: u32,
    },
    /// A thread's CPU samples (`Trace::samples`).
    Samples(u32),
    /// What ran on one CPU (an index into `Kinds::cpu_lanes.cpus`).
    Cpu(u32),
    /// The header of a system trace's CPU counters (frequency, idle states), one group
    /// folded by default, as Perfetto folds its "CPU frequency" tracks.
    CpuCounters,
    /// One CPU counter, frequency or idle state (an index into `SchedData::counters`).
    CpuCounter(u32),
    /// A thread's scheduling states (`SchedData::thread_states`), a strip over its slices.
    ThreadStates(u32),
    /// One depth of a thread's samples as stacks over time (`Kinds::sample_stacks`).
    Stack {
        /// Index into `Trace::threads`.
        thread: u32,
        /// The stack depth (0 is the outermost frame).
        depth: u32,
    },
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
                | RowKind::CpuCounters
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
    /// Per process, whether its group of async tracks is folded (folded by default).
    pub async_groups: Vec<bool>,
    /// Whether the CPU counters are folded into their header (folded by default): they
    /// would take a quarter of the first screen of a phone's trace.
    pub cpu_counters: bool,
    /// Tracks the user hid.
    pub hidden: HashSet<Track>,
    /// Pinned processes and threads come first, in display order, processes before threads.
    pub pinned: HashSet<Track>,
}

impl Collapsed {
    /// Everything expanded and shown but the async groups and the CPU counters, which
    /// start folded.
    pub fn for_trace(trace: &Trace) -> Collapsed {
        Collapsed {
            processes: vec![false; trace.processes().len()],
            threads: vec![false; trace.threads().len()],
            asyncs: vec![false; trace.async_tracks().len()],
            async_groups: vec![true; trace.processes().len()],
            cpu_counters: true,
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
    /// A counter group (`EventIndex::counters`).
    Counter(u32),
    /// An async track (`Trace::async_tracks`).
    Async(u32),
}

/// Every track the filter lists, in display order, with its label and its nesting (0 for a
/// process, 1 for what is in it, 2 for a thread's counters).
pub fn track_list(trace: &Trace, kinds: &EventIndex) -> Vec<(Track, String, u8)> {
    let mut v = Vec::new();
    let order = &kinds.order;
    let counter = |g: u32| format!("counter {}", trace.str(kinds.counters[g as usize].name));
    for &pi in &order.processes {
        let (p, pi) = (&trace.processes()[pi as usize], pi as usize);
        let label = match p.name {
            Some(n) => format!("{} ({})", trace.str(n), trace.ext_id(p.pid)),
            None => format!("Process {}", trace.ext_id(p.pid)),
        };
        v.push((Track::Process(pi as u32), label, 0));
        for &t in &order.threads[pi] {
            v.push((Track::Thread(t), trace.thread_label(t), 1));
            for &g in &kinds.counters_by_thread[t as usize] {
                v.push((Track::Counter(g), counter(g), 2));
            }
        }
        for &g in &kinds.counters_by_process[pi] {
            v.push((Track::Counter(g), counter(g), 1));
        }
        for &a in &kinds.async_by_process[pi] {
            let name = trace.str(trace.async_tracks()[a as usize].name);
            v.push((Track::Async(a), format!("async {name}"), 1));
        }
    }
    v
}

/// Whether a thread has nothing to draw (named by metadata only).
fn thread_is_empty(trace: &Trace, k: &EventIndex, t: u32) -> bool {
    let t = t as usize;
    trace.threads()[t].lanes.is_empty()
        && !has_states(trace, t as u32)
        && k.instants_by_thread[t].is_empty()
        && k.samples_by_thread[t].is_none()
        && k.counters_by_thread[t].is_empty()
}

/// Whether a process has nothing to draw: no track, as in Perfetto, where a process named
/// by metadata only (a PyTorch trace's idle GPUs) would take a row of the first screen.
fn process_is_empty(trace: &Trace, k: &EventIndex, p: u32) -> bool {
    let pi = p as usize;
    k.instants_by_process[pi].is_empty()
        && k.counters_by_process[pi].is_empty()
        && k.async_by_process[pi].is_empty()
        && (trace.processes()[pi].threads.iter()).all(|&t| thread_is_empty(trace, k, t))
}

/// Whether a system trace holds scheduling states of thread `t`.
fn has_states(trace: &Trace, t: u32) -> bool {
    trace
        .sched()
        .is_some_and(|s| s.thread_states(t).next().is_some())
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
    kinds: &'a EventIndex,
    c: &'a Collapsed,
    order: &'a DisplayOrder,
    scale: f32,
    y: f32,
    out: Layout,
}

impl Builder<'_> {
    fn push(&mut self, h: f32, kind: RowKind) {
        self.out.rows.push(Row { y: self.y, h, kind });
        self.y += h;
    }

    /// A process's header, its instants, its threads (but pinned ones), its counters and
    /// its async tracks.
    fn process(&mut self, pi: u32) {
        let header = self.out.rows.len();
        self.push(HEADER_H * self.scale, RowKind::Process(pi));
        let (k, c) = (self.kinds, self.c);
        if !flag(&c.processes, pi) {
            if !k.instants_by_process[pi as usize].is_empty() {
                self.push(MARKS_H * self.scale, RowKind::ProcessInstants(pi));
            }
            for &t in &self.order.threads[pi as usize] {
                if !c.is_pinned(Track::Thread(t)) {
                    self.thread(t);
                }
            }
            for &g in &k.counters_by_process[pi as usize] {
                if !c.is_hidden(Track::Counter(g)) {
                    self.push(COUNTER_H * self.scale, RowKind::Counter(g));
                }
            }
            self.asyncs(pi);
        }
        self.y += GAP_H * self.scale;
        self.out.process_rows[pi as usize] = Some((header, self.y));
    }

    /// A process's async tracks: one is its own header; more come under a group header,
    /// folded into that one row, or unfolded with the one-slice tracks in packed rows
    /// first (each its own track when the user hid some of them), then the others.
    fn asyncs(&mut self, pi: u32) {
        let (k, c) = (self.kinds, self.c);
        let (header_h, lane_h) = (HEADER_H * self.scale, LANE_H * self.scale);
        let shown = |a: &u32| !c.is_hidden(Track::Async(*a));
        let asyncs: Vec<u32> = (k.async_by_process[pi as usize].iter().copied())
            .filter(shown)
            .collect();
        if asyncs.len() > 1 {
            self.push(header_h, RowKind::AsyncGroup(pi));
            if flag(&c.async_groups, pi) {
                return;
            }
        }
        let group = &k.async_groups[pi as usize];
        let packed = asyncs.len() > 1 && group.singles.len() > 1 && group.singles.iter().all(shown);
        // The packed rows first, right under the group's header they belong to.
        if packed {
            for row in 0..group.packed.len() as u32 {
                self.push(lane_h, RowKind::AsyncPacked { process: pi, row });
            }
        }
        for &a in &asyncs {
            if packed && group.singles.binary_search(&a).is_ok() {
                continue;
            }
            self.push(header_h, RowKind::AsyncHeader(a));
            if flag(&c.asyncs, a) {
                continue;
            }
            for r in 0..self.trace.async_tracks()[a as usize].rows.len() as u32 {
                self.push(lane_h, RowKind::AsyncRow { track: a, row: r });
            }
        }
    }

    /// A system trace's CPUs, as Perfetto shows them above the processes: what ran on
    /// each, then the header of their counters (frequency, idle states) and, unfolded, the
    /// counters CPU by CPU.
    fn cpus(&mut self) {
        for c in 0..self.kinds.cpu_lanes.cpus.len() as u32 {
            self.push(LANE_H * self.scale, RowKind::Cpu(c));
        }
        let Some(s) = self.trace.sched() else {
            return;
        };
        if !s.counters.is_empty() {
            self.push(HEADER_H * self.scale, RowKind::CpuCounters);
        }
        let mut counters: Vec<u32> = (0..s.counters.len() as u32).collect();
        counters.sort_by_key(|&i| (s.counters[i as usize].cpu, s.counters[i as usize].kind));
        for i in counters.into_iter().filter(|_| !self.c.cpu_counters) {
            self.push(COUNTER_H / 2.0 * self.scale, RowKind::CpuCounter(i));
        }
        if !s.cpus.is_empty() {
            self.y += GAP_H * self.scale;
        }
    }

    /// A thread's header, instants, samples and lanes, unless hidden or empty.
    fn thread(&mut self, t: u32) {
        let (k, c) = (self.kinds, self.c);
        let lanes = self.trace.threads()[t as usize].lanes.len();
        let marks = !k.instants_by_thread[t as usize].is_empty();
        let samples = k.samples_by_thread[t as usize].is_some();
        let counters = &k.counters_by_thread[t as usize];
        if thread_is_empty(self.trace, k, t) || c.is_hidden(Track::Thread(t)) {
            // Named by metadata but with nothing to draw: no track, as in Perfetto.
            return;
        }
        let marks_h = MARKS_H * self.scale;
        self.out.thread_row[t as usize] = Some(self.out.rows.len());
        self.push(HEADER_H * self.scale, RowKind::Thread(t));
        if flag(&c.threads, t) {
            return;
        }
        if has_states(self.trace, t) {
            self.push(STATES_H * self.scale, RowKind::ThreadStates(t));
        }
        if marks {
            self.push(marks_h, RowKind::ThreadInstants(t));
        }
        if samples {
            self.push(marks_h, RowKind::Samples(t));
            // Its stacks over time right under it, as speedscope's time-order view.
            for d in 0..k.sample_stacks[t as usize].depth() as u32 {
                self.push(
                    LANE_H * self.scale,
                    RowKind::Stack {
                        thread: t,
                        depth: d,
                    },
                );
            }
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
    /// with their threads in the model's display order (`EventIndex::order`); hidden tracks
    /// left out.
    pub fn new(trace: &Trace, kinds: &EventIndex, collapsed: &Collapsed, scale: f32) -> Layout {
        let order = &kinds.order;
        let mut b = Builder {
            trace,
            kinds,
            c: collapsed,
            order,
            scale,
            y: 0.0,
            out: Layout {
                first_lane: vec![None; trace.threads().len()],
                thread_row: vec![None; trace.threads().len()],
                process_rows: vec![None; trace.processes().len()],
                ..Layout::default()
            },
        };
        let shown =
            |p: u32| !collapsed.is_hidden(Track::Process(p)) && !process_is_empty(trace, kinds, p);
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
        b.cpus();
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
        let l = Layout::new(&t, &EventIndex::new(&t), &Collapsed::for_trace(&t), 1.0);
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
        let l = Layout::new(&t, &EventIndex::new(&t), &c, 1.0);
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
        let k = EventIndex::new(&t);
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

    use spall_test_support::{json_array, json_meta as meta, json_spans as spans};

    fn load(events: String) -> Trace {
        trace_model::load_bytes(json_array(&events).as_bytes()).unwrap()
    }

    #[test]
    fn threads_come_in_the_models_order_before_counters_and_async_tracks() {
        let t = load(
            [
                spans(10, 4, 1),
                spans(10, 5, 3),
                spans(20, 1, 9),
                meta("thread_sort_index", 10, 4, r#""sort_index":-1"#),
                // A process named but empty (a PyTorch trace's idle GPU): no track.
                meta("process_name", 30, 0, r#""name":"GPU 0""#),
                r#"{"ph":"C","name":"mem","ts":0,"pid":20,"args":{"v":1}},"#.into(),
                r#"{"ph":"b","cat":"c","name":"a","id":1,"ts":0,"pid":20,"tid":1},"#.into(),
                r#"{"ph":"e","cat":"c","name":"a","id":1,"ts":1,"pid":20,"tid":1},"#.into(),
            ]
            .concat(),
        );
        let k = EventIndex::new(&t);
        assert_eq!(
            k.order,
            t.display_order(),
            "the viewer keeps the model's order"
        );
        let l = Layout::new(&t, &k, &Collapsed::for_trace(&t), 1.0);
        let headers: Vec<RowKind> = (l.rows.iter())
            .map(|r| r.kind)
            .filter(|k| !matches!(k, RowKind::Lane { .. } | RowKind::AsyncRow { .. }))
            .collect();
        let (p20, p10) = (k.order.processes[0], k.order.processes[1]);
        let th = |p: u32, i: usize| RowKind::Thread(k.order.threads[p as usize][i]);
        assert_eq!(
            headers,
            [
                // The busier pid 20 first: its thread, then its counter, then its async track.
                RowKind::Process(p20),
                th(p20, 0),
                RowKind::Counter(k.counters_by_process[p20 as usize][0]),
                RowKind::AsyncHeader(k.async_by_process[p20 as usize][0]),
                RowKind::Process(p10),
                th(p10, 0),
                th(p10, 1),
            ]
        );
        let tid = |r: RowKind| match r {
            RowKind::Thread(i) => t.ext_id(t.threads()[i as usize].tid).to_string(),
            _ => String::new(),
        };
        assert_eq!((tid(th(p10, 0)), tid(th(p10, 1))), ("4".into(), "5".into()));
        // The filter lists threads with nothing to draw too (here pid 20's tid 0).
        let listed: Vec<Track> = (track_list(&t, &k).into_iter())
            .map(|x| x.0)
            .filter(|x| !matches!(x, Track::Thread(i) if t.threads()[*i as usize].lanes.is_empty()))
            .collect();
        assert_eq!(
            listed[..4],
            [
                Track::Process(p20),
                Track::Thread(k.order.threads[p20 as usize][0]),
                Track::Counter(k.counters_by_process[p20 as usize][0]),
                Track::Async(k.async_by_process[p20 as usize][0]),
            ],
            "the filter's list agrees"
        );
    }

    #[test]
    fn a_process_async_tracks_start_folded_and_unfold_with_one_slice_tracks_packed() {
        let slice = |pid: u32, name: &str, id: u32, ts: u32| {
            format!(
                r#"{{"ph":"b","cat":"c","name":"{name}","id":{id},"ts":{ts},"pid":{pid},"tid":1}},
                   {{"ph":"e","cat":"c","name":"{name}","id":{id},"ts":{},"pid":{pid},"tid":1}},"#,
                ts + 5
            )
        };
        let t = load(
            [
                slice(1, "a", 1, 0),
                slice(1, "b", 2, 0),
                slice(1, "c", 3, 0),
                slice(1, "m", 4, 0),
                slice(1, "m", 5, 10),
                slice(2, "d", 6, 0),
                spans(1, 1, 1),
                spans(2, 2, 1),
            ]
            .concat(),
        );
        let k = EventIndex::new(&t);
        assert_eq!(k.async_by_process[0].len(), 4, "four tracks in pid 1");
        let kinds = |c: &Collapsed| -> Vec<RowKind> {
            (Layout::new(&t, &k, c, 1.0).rows.iter())
                .map(|r| r.kind)
                .collect()
        };
        let lane = |thread| RowKind::Lane { thread, depth: 0 };
        let spanned = |pid: i64| {
            let th = t
                .threads()
                .iter()
                .position(|th| th.pid == trace_model::ExtId::Num(pid) && !th.lanes.is_empty());
            th.unwrap() as u32
        };
        let (th1, th2) = (spanned(1), spanned(2));
        let mut c = Collapsed::for_trace(&t);
        assert!(c.async_groups.iter().all(|&f| f), "groups start folded");
        let folded = kinds(&c);
        // pid 1: its thread, then its async tracks folded into one row; pid 2's only
        // track is not grouped.
        let d = k.async_by_process[1][0];
        assert_eq!(
            folded,
            [
                RowKind::Process(0),
                RowKind::Thread(th1),
                lane(th1),
                RowKind::AsyncGroup(0),
                RowKind::Process(1),
                RowKind::Thread(th2),
                lane(th2),
                RowKind::AsyncHeader(d),
                RowKind::AsyncRow { track: d, row: 0 }
            ]
        );
        let m = (k.async_by_process[0].iter().copied())
            .find(|&a| t.str(t.async_tracks()[a as usize].name) == "m")
            .unwrap();
        c.async_groups[0] = false;
        let open = kinds(&c);
        // Unfolded: the three tracks of one slice in packed rows (three, as they
        // overlap), then the track of two slices.
        let packed = |row| RowKind::AsyncPacked { process: 0, row };
        assert_eq!(
            open[3..10],
            [
                RowKind::AsyncGroup(0),
                packed(0),
                packed(1),
                packed(2),
                RowKind::AsyncHeader(m),
                RowKind::AsyncRow { track: m, row: 0 },
                RowKind::Process(1),
            ]
        );
        // Hiding one of the one-slice tracks shows the others as tracks of their own;
        // hiding all but one leaves no group.
        let singles = &k.async_groups[0].singles;
        c.set_hidden(Track::Async(singles[0]), true);
        let headers = |c: &Collapsed| -> Vec<RowKind> {
            (kinds(c).into_iter())
                .filter(|r| matches!(r, RowKind::AsyncHeader(_) | RowKind::AsyncGroup(_)))
                .collect()
        };
        assert_eq!(
            headers(&c)[..4],
            [
                RowKind::AsyncGroup(0),
                RowKind::AsyncHeader(singles[1]),
                RowKind::AsyncHeader(singles[2]),
                RowKind::AsyncHeader(m),
            ]
        );
        c.set_hidden(Track::Async(singles[1]), true);
        c.set_hidden(Track::Async(singles[2]), true);
        assert_eq!(headers(&c)[0], RowKind::AsyncHeader(m));
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
        let k = EventIndex::new(&t);
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
                RowKind::Thread(0),
                RowKind::Lane {
                    thread: 0,
                    depth: 0
                },
                RowKind::Counter(th1),
                RowKind::Thread(1),
                RowKind::Counter(th2),
                RowKind::Counter(process),
            ]
        );
        let listed: Vec<(Track, u8)> = (track_list(&t, &k).into_iter())
            .map(|x| (x.0, x.2))
            .collect();
        assert_eq!(listed[2], (Track::Counter(th1), 2), "{listed:?}");
    }
}
