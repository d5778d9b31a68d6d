//! The tracks a view draws, where, and whether they are on screen: what
//! `spall TRACE --screenshot OUT.png --layout-json FILE` writes, so that tests and scripts
//! check a layout without reading pixels.
//!
//! One entry per track, top to bottom: a thread's header and its spans (every depth) are
//! two, an async track's header and rows one, a process's packed one-slice async rows one.

use serde_json::{json, Value};
use trace_model::Trace;

use crate::loaded::Loaded;
use crate::view::flame::Mode;
use crate::view::layout::{Row, RowKind};
use crate::view::state::ViewState;

/// One drawn track.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawnTrack {
    /// What it is: `process`, `thread` (a thread's header), `spans` (its lanes),
    /// `thread_states` (its scheduling states), `thread_instants`, `samples`, `sample_stacks` (a thread's stacks over time, every
    /// depth), `counter`, `process_instants`, `global_instants`,
    /// `async_group` (folded: its summary row), `async` (a track, header and rows),
    /// `async_packed` (a process's one-slice async tracks, packed), `cpu` (what ran on a
    /// CPU, named `CPU n`), `cpu_counter` (`cpufreq CPU n`, `cpuidle CPU n`).
    pub kind: &'static str,
    /// The process's pid as the file writes it, if the track belongs to one.
    pub process: Option<String>,
    /// The thread's tid as the file writes it, if the track belongs to one.
    pub thread: Option<String>,
    /// What its label says: the process's, thread's, counter's or async track's name.
    pub name: String,
    /// Top, in window pixels (the screenshot's rows).
    pub y: f32,
    /// Height, in window pixels.
    pub height: f32,
    /// Whether any of it is inside the tracks' area.
    pub visible: bool,
}

/// The tracks the view's layout draws (the main pane's; compare mode's BASE pane is left
/// out), top to bottom; none when the view shows the flame graph.
pub fn drawn_tracks(l: &Loaded, s: &ViewState) -> Vec<DrawnTrack> {
    if s.mode != Mode::Timeline {
        return Vec::new();
    }
    let (top, bottom) = (
        s.timeline.tracks_top(),
        s.timeline.tracks_top() + s.timeline.tracks_height(),
    );
    let mut out: Vec<DrawnTrack> = Vec::new();
    let mut last: Option<RowKind> = None;
    for row in &s.timeline.layout.rows {
        let y = top + row.y - s.timeline.scroll_y;
        let continues = matches!(
            (last, row.kind),
            (Some(RowKind::Lane { thread: a, .. }), RowKind::Lane { thread: b, .. }) if a == b
        ) || matches!(
            (last, row.kind),
            (Some(RowKind::Stack { thread: a, .. }), RowKind::Stack { thread: b, .. }) if a == b
        ) || matches!(
            (last, row.kind),
            (
                Some(RowKind::AsyncHeader(a) | RowKind::AsyncRow { track: a, .. }),
                RowKind::AsyncRow { track: b, .. }
            ) if a == b
        ) || matches!(
            (last, row.kind),
            (Some(RowKind::AsyncPacked { process: a, .. }), RowKind::AsyncPacked { process: b, .. })
            if a == b
        );
        last = Some(row.kind);
        match out.last_mut() {
            Some(d) if continues => d.height = y + row.h - d.y,
            _ => out.push(track(l, row, y)),
        }
        if let Some(d) = out.last_mut() {
            d.visible = d.y < bottom && d.y + d.height > top;
        }
    }
    out
}

/// The window y of the first row of a thread's spans on screen, if any: what the page
/// reports as `data-first-spans`. O(rows on screen).
pub fn first_spans_y(s: &ViewState) -> Option<f32> {
    let shown = s.timeline.layout.visible(
        s.timeline.scroll_y,
        s.timeline.scroll_y + s.timeline.tracks_height(),
    );
    (s.timeline.layout.rows[shown].iter())
        .find(|r| matches!(r.kind, RowKind::Lane { .. }))
        .map(|r| s.timeline.tracks_top() + r.y - s.timeline.scroll_y)
}

/// A track starting at `row`, drawn at `y`.
fn track(l: &Loaded, row: &Row, y: f32) -> DrawnTrack {
    let (t, k) = (&l.trace, &l.kinds);
    let of_thread = |th: u32| {
        let x = &t.threads()[th as usize];
        (Some(x.process), Some(th), t.thread_label(th))
    };
    let (kind, (process, thread, name)) = match row.kind {
        RowKind::Process(p) => ("process", (Some(p), None, process_name(t, p))),
        RowKind::Thread(th) => ("thread", of_thread(th)),
        RowKind::Lane { thread, .. } => ("spans", of_thread(thread)),
        RowKind::ThreadInstants(th) => ("thread_instants", of_thread(th)),
        RowKind::Samples(th) => ("samples", of_thread(th)),
        RowKind::Stack { thread, .. } => ("sample_stacks", of_thread(thread)),
        RowKind::Cpu(c) => {
            let cpu = k.cpu_lanes.cpus[c as usize];
            ("cpu", (None, None, format!("CPU {cpu}")))
        }
        RowKind::CpuCounters => {
            let n = t.sched().map_or(0, |s| s.counters.len());
            (
                "cpu_counter_group",
                (None, None, format!("{n} CPU counters")),
            )
        }
        RowKind::CpuCounter(i) => {
            let c = t.sched().map(|s| &s.counters[i as usize]);
            let name = c.map_or(String::new(), |c| {
                format!("{} CPU {}", c.kind.name(), c.cpu)
            });
            ("cpu_counter", (None, None, name))
        }
        RowKind::ThreadStates(th) => ("thread_states", of_thread(th)),
        RowKind::GlobalInstants => ("global_instants", (None, None, String::new())),
        RowKind::ProcessInstants(p) => ("process_instants", (Some(p), None, String::new())),
        RowKind::Counter(g) => {
            let g = &k.counters[g as usize];
            let name = t.str(g.name).to_string();
            ("counter", (Some(g.process), g.thread, name))
        }
        RowKind::AsyncGroup(p) => {
            let n = k.async_groups[p as usize].tracks.len();
            let name = format!("{n} async tracks");
            ("async_group", (Some(p), None, name))
        }
        RowKind::AsyncHeader(a) | RowKind::AsyncRow { track: a, .. } => {
            let tr = &t.async_tracks()[a as usize];
            (
                "async",
                (Some(tr.process), None, t.str(tr.name).to_string()),
            )
        }
        RowKind::AsyncPacked { process, .. } => {
            let n = k.async_groups[process as usize].singles.len();
            let name = format!("{n} one-slice async tracks");
            ("async_packed", (Some(process), None, name))
        }
    };
    DrawnTrack {
        kind,
        process: process.map(|p| t.ext_id(t.processes()[p as usize].pid).to_string()),
        thread: thread.map(|th| t.ext_id(t.threads()[th as usize].tid).to_string()),
        name,
        y,
        height: row.h,
        visible: false,
    }
}

fn process_name(t: &Trace, p: u32) -> String {
    let pr = &t.processes()[p as usize];
    match pr.name {
        Some(n) => t.str(n).to_string(),
        None => format!("Process {}", t.ext_id(pr.pid)),
    }
}

/// The view's drawn tracks as JSON: `{"width", "height", "tracks_top", "tracks": [{kind,
/// process, thread, name, y, height, visible}]}`, in window pixels.
pub fn layout_json(l: &Loaded, s: &ViewState) -> Value {
    let tracks: Vec<Value> = (drawn_tracks(l, s).into_iter())
        .map(|d| {
            json!({
                "kind": d.kind,
                "process": d.process,
                "thread": d.thread,
                "name": d.name,
                "y": d.y,
                "height": d.height,
                "visible": d.visible,
            })
        })
        .collect();
    json!({
        "width": s.timeline.width,
        "height": s.timeline.height,
        "tracks_top": s.timeline.tracks_top(),
        "tracks": tracks,
    })
}
