//! A system trace's rows: the CPUs' counters (frequency, idle states) and each thread's
//! scheduling states, a thin strip in Perfetto's colours. What ran on each CPU is drawn
//! as span lanes are (`draw`), from trace-index's [`CpuLanes`](trace_index::CpuLanes).
//! Each walk skips to the next pixel column with a search, so a row's cost is bounded by
//! its width in pixels, not by its records.

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_model::sched::{CpuCounterKind, SchedData, TaskState, ThreadState};

use crate::kinds::{first_at_or_after, pick_extent, pick_thread, thread_state_ids, Pick};
use crate::loaded::Loaded;
use crate::timeline::marks::{bezier_arrow, series_columns};
use crate::view::layout::{RowKind, STATES_H};
use crate::view::timeline::TimelineView;
use crate::view::viewport::{format_duration, format_value};

/// What a state is, for its colour and its name, as Perfetto UI (v52) groups them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateKind {
    /// On a CPU.
    Running,
    /// Waiting for a CPU (`R`, `R+`).
    Runnable,
    /// Blocked interruptibly (`S`) or idle (`I`).
    Sleeping,
    /// Blocked uninterruptibly (`D`), on I/O or not known to be.
    Uninterruptible,
    /// Blocked uninterruptibly, not on I/O (`sched_blocked_reason` said so).
    UninterruptibleNonIo,
    /// Exited (`X`, `Z`, `x`).
    Dead,
    /// Anything else (`T`, `t`, `P`, ...).
    Other,
}

/// The kind of a thread state.
pub fn state_kind(st: &ThreadState) -> StateKind {
    if st.state() == TaskState::RUNNING {
        return StateKind::Running;
    }
    if st.state() == TaskState::UNKNOWN {
        return StateKind::Other;
    }
    if st.state().is_runnable() {
        return StateKind::Runnable;
    }
    let text = st.state().text().unwrap_or_default();
    if text.contains('D') {
        match st.io_wait() {
            Some(false) => StateKind::UninterruptibleNonIo,
            _ => StateKind::Uninterruptible,
        }
    } else if text.contains(['X', 'Z', 'x']) {
        StateKind::Dead
    } else if text.contains(['S', 'I']) {
        StateKind::Sleeping
    } else {
        StateKind::Other
    }
}

/// Perfetto UI's colour of a state (its `colorForThreadState`, HSL converted).
pub fn state_color(kind: StateKind) -> Color {
    match kind {
        StateKind::Running => Color::rgb(49, 125, 49),
        StateKind::Runnable => Color::rgb(153, 186, 54),
        StateKind::Sleeping => Color::rgb(225, 225, 225).with_alpha(110),
        StateKind::Uninterruptible => Color::rgb(255, 153, 0),
        StateKind::UninterruptibleNonIo => Color::rgb(162, 91, 87),
        StateKind::Dead => Color::rgb(158, 158, 158),
        StateKind::Other => Color::rgb(64, 81, 181),
    }
}

/// A state's name as Perfetto writes it: `Running`, `Runnable (Preempted)`, `Sleeping`,
/// `Uninterruptible Sleep (non-IO)`...; else the kernel's letters.
pub fn state_name(st: &ThreadState) -> String {
    let text = st.state().text().unwrap_or_else(|| "Unknown".into());
    let name = match (state_kind(st), text.as_str()) {
        (StateKind::Running, _) => "Running",
        (StateKind::Runnable, "R+") => "Runnable (Preempted)",
        (StateKind::Runnable, _) => "Runnable",
        (_, "S") => "Sleeping",
        (_, "I") => "Idle",
        (StateKind::UninterruptibleNonIo, "D") => "Uninterruptible Sleep (non-IO)",
        (StateKind::Uninterruptible, "D") if st.io_wait() == Some(true) => {
            "Uninterruptible Sleep (IO)"
        }
        (_, "D") => "Uninterruptible Sleep",
        (_, "x" | "X") => "Task Dead",
        (_, "Z") => "Exit (Zombie)",
        _ => return text,
    };
    name.to_string()
}

/// A thread's states as a strip: each state a box in its colour; where several fall in
/// one pixel column, the column takes the first one's.
pub fn thread_states(scene: &mut Scene, l: &Loaded, s: &TimelineView, thread: u32, y: f32, h: f32) {
    let Some(sd) = l.trace.sched() else {
        return;
    };
    let ids = thread_state_ids(sd, thread);
    let end = l.trace.end_ns();
    let (t0, t1) = s.viewport.visible();
    let st = |i: usize| sd.state(ids[i] as usize);
    let mut i = first_at_or_after(ids, t0, |&k| sd.state(k as usize).ts).saturating_sub(1);
    let h = (h - 2.0).max(1.0);
    while i < ids.len() && st(i).ts <= t1 {
        let x = st(i);
        let next = (i + 1 < ids.len()).then(|| st(i + 1));
        let x1 = sd.state_end(&x, next.as_ref(), end);
        let (x0, x1) = (s.viewport.x(x.ts), s.viewport.x(x1));
        let color = state_color(state_kind(&x));
        if x1 - x0 >= 1.0 {
            let (a, b) = (x0.max(-1.0) as f32, x1.min(s.width as f64 + 1.0) as f32);
            scene.rect(a, y + 1.0, b - a, h, color);
            i += 1;
            continue;
        }
        // Narrower than a pixel: this column is drawn once, and the walk jumps past it.
        let col = x0.floor();
        scene.rect(col as f32, y + 1.0, 1.0, h, color);
        let next = s.viewport.time_at(col + 1.0);
        i += first_at_or_after(&ids[i..], next, |&k| sd.state(k as usize).ts).max(1);
    }
}

/// CPU counter `i` (`SchedData::counters`): a step graph with its label and range.
pub fn cpu_counter(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    i: u32,
    (y, h): (f32, f32),
) {
    let (Some(sd), Some((vals, index, range))) =
        (l.trace.sched(), l.kinds.cpu_lanes.counters.get(i as usize))
    else {
        return;
    };
    let c = &sd.counters[i as usize];
    let th = s.theme;
    let color = th.span_fill(match c.kind {
        CpuCounterKind::Frequency => Color::rgb(66, 133, 244),
        CpuCounterKind::Idle => Color::rgb(150, 150, 150),
    });
    scene.rect(0.0, y + h - 1.0, s.width, 1.0, th.tick.with_alpha(120));
    series_columns(
        scene,
        l,
        s,
        (&c.ts, vals, index),
        *range,
        (y, h),
        color,
        110,
    );
    let px = 10.0 * s.scale;
    let label = match c.kind {
        CpuCounterKind::Frequency => format!("CPU {} frequency (kHz)", c.cpu),
        CpuCounterKind::Idle => format!("CPU {} idle state", c.cpu),
    };
    let x = 6.0 + scene.text(fonts, 6.0, y + 1.0, px, VAlign::Top, th.text, &label);
    let max = format!("max {}", format_value(range.1));
    scene.text(fonts, x + 8.0, y + 1.0, px, VAlign::Top, th.text_dim, &max);
}

/// What the CPU counters hold, for their group's header: "frequency", "idle states" or
/// both.
pub fn counter_kinds(l: &Loaded) -> &'static str {
    let Some(sd) = l.trace.sched() else {
        return "counters";
    };
    let has = |k| sd.counters.iter().any(|c| c.kind == k);
    match (has(CpuCounterKind::Frequency), has(CpuCounterKind::Idle)) {
        (true, true) => "frequency and idle states",
        (true, false) => "frequency",
        _ => "idle states",
    }
}

/// The state a thread was in just before `ts` (the runnable state a slice starting at
/// `ts` ends, with its waker): an index into `SchedData::states`.
pub fn state_before(sd: &SchedData, thread: u32, ts: i64) -> Option<u32> {
    let ids = thread_state_ids(sd, thread);
    let i = ids.partition_point(|&k| sd.state(k as usize).ts < ts);
    ids.get(i.checked_sub(1)?).copied()
}

/// Who woke a thread into runnable state `st`, and when: "name (tid N) at T".
fn woken_by(l: &Loaded, st: &ThreadState) -> Option<String> {
    let t = &l.trace;
    let w = st.waker()?;
    let irq = if st.irq() == Some(true) {
        " (from an interrupt)"
    } else {
        ""
    };
    Some(format!(
        "woken by  {} at {}{irq}",
        t.thread_label(w),
        format_duration(st.ts - t.start_ns())
    ))
}

/// A tooltip's (and the details panel's) lines for a scheduling slice or state.
pub fn describe(l: &Loaded, p: Pick) -> Vec<String> {
    let t = &l.trace;
    let (Some(sd), Some(thread), Some((a, b))) = (t.sched(), pick_thread(t, p), pick_extent(t, p))
    else {
        return Vec::new();
    };
    let rel = |ts: i64| format_duration(ts - t.start_ns());
    let mut v = Vec::new();
    match p {
        Pick::Sched(i) => {
            let x = &sd.slices[i as usize];
            v.push(t.thread_label(thread));
            v.push(format!(
                "CPU {}   priority {}",
                sd.slice_cpu(i as usize),
                x.priority
            ));
            v.push(format!("duration  {}", format_duration(b - a)));
            v.push(format!("start     {}", rel(a)));
            if let Some(text) = x.end_state.text() {
                v.push(format!("end state {text}"));
            }
            let before = state_before(sd, thread, x.ts).map(|k| sd.state(k as usize));
            v.extend(before.and_then(|st| woken_by(l, &st)));
        }
        Pick::State(i) => {
            let st = &sd.state(i as usize);
            v.push(state_name(st));
            v.push(t.thread_label(thread));
            let cpu = st.cpu().map_or(String::new(), |c| format!("   CPU {c}"));
            v.push(format!("duration  {}{cpu}", format_duration(b - a)));
            v.push(format!("start     {}", rel(a)));
            v.extend(woken_by(l, st));
            if let Some(f) = st.blocked_function() {
                v.push(format!("blocked in {}", t.str(f)));
            }
        }
        _ => {}
    }
    v
}

/// The window y of the middle of thread `thread`'s state strip (else of its header), if
/// laid out.
fn thread_y(s: &TimelineView, thread: u32) -> Option<f32> {
    let row = (s.layout.rows.iter())
        .find(|r| r.kind == RowKind::ThreadStates(thread))
        .or_else(|| (s.layout.rows.iter()).find(|r| r.kind == RowKind::Thread(thread)))?;
    Some(s.tracks_top() + row.y - s.scroll_y + row.h / 2.0)
}

/// With a scheduling slice selected: its time outlined on its thread's state strip, and
/// an arrow from the thread that woke it (at the waking) to it.
pub fn selection_marks(scene: &mut Scene, l: &Loaded, s: &TimelineView) {
    let (Some(p @ Pick::Sched(i)), Some(sd)) = (s.selected, l.trace.sched()) else {
        return;
    };
    let x = &sd.slices[i as usize];
    let Some((a, b)) = pick_extent(&l.trace, p) else {
        return;
    };
    let th = s.theme;
    if let Some(y) = thread_y(s, x.thread) {
        let (xa, xb) = (s.viewport.x(a) as f32, s.viewport.x(b) as f32);
        let h = STATES_H * s.scale;
        let w = (xb - xa).max(1.0);
        scene.outline(
            xa - 1.0,
            y - h / 2.0 - 1.0,
            w + 2.0,
            h + 2.0,
            2.0,
            th.selection,
        );
    }
    let Some(st) = state_before(sd, x.thread, x.ts).map(|k| sd.state(k as usize)) else {
        return;
    };
    let (Some(w), Some(to)) = (st.waker(), thread_y(s, x.thread)) else {
        return;
    };
    let Some(from) = thread_y(s, w) else {
        return;
    };
    let xw = (s.viewport.x(st.ts) as f32).clamp(-1e5, 1e5);
    bezier_arrow(scene, (xw, from), (xw, to), s.scale, th.selection);
}

/// Thread `thread`'s time on a CPU, if it has scheduling states (for its header).
pub fn cpu_time(l: &Loaded, thread: u32) -> Option<i64> {
    let sd = l.trace.sched()?;
    if thread_state_ids(sd, thread).is_empty() {
        return None;
    }
    l.kinds.cpu_lanes.cpu_ns.get(thread as usize).copied()
}
