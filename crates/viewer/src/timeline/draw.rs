//! Drawing the timeline into a render-gl [`Scene`]: minimap, ruler, tracks (through
//! trace-index's level of detail), labels, selection, search marks, range and tooltip. CPU
//! only.

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_index::{Detail, Item};
use trace_model::ExtId;

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::overlay::tooltip_box;
use crate::timeline::kinds as fk;
use crate::timeline::sched;
use crate::view::layout::{RowKind, LABEL_PX};
use crate::view::state::ViewState;
use crate::view::timeline::TimelineView;
use crate::view::viewport::{format_duration, format_time, tick_step};

pub use crate::timeline::kinds::HEADER_PX;

/// Draws the timeline, reusing its buffers between frames.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    items: Vec<Item>,
    links: Vec<u32>,
}

impl TimelineBuilder {
    /// Draws the timeline for `s` into a begun `scene` of `s.width × s.height`: tracks,
    /// ruler, markers and minimap (the tooltip is [`tooltip`], drawn over the banner).
    pub fn build(&mut self, scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
        self.tracks(scene, fonts, l, &s.timeline, s.range);
        ruler(scene, fonts, l, s);
        crate::timeline::markers::draw(scene, fonts, l, s);
        minimap(scene, l, s);
    }

    pub(crate) fn tracks(
        &mut self,
        scene: &mut Scene,
        fonts: &mut Fonts,
        l: &Loaded,
        s: &TimelineView,
        range: Option<(i64, i64)>,
    ) {
        let th = s.theme;
        let (w, top) = (s.width, s.tracks_top());
        scene.push_clip(0.0, top, w, s.tracks_height());
        let searching = s.matches.is_active();
        let y_of = |row_y: f32| top + row_y - s.scroll_y;
        for ri in s.layout.visible(s.scroll_y, s.scroll_y + s.tracks_height()) {
            let row = s.layout.rows[ri];
            let y = y_of(row.y);
            match row.kind {
                RowKind::GlobalInstants => {
                    scene.rect(0.0, y, w, row.h, th.thread_header);
                    let extent = (top, top + s.tracks_height());
                    fk::instants(
                        scene,
                        l,
                        s,
                        &l.kinds.global_instants,
                        y,
                        row.h,
                        Some(extent),
                    );
                    row_label(scene, fonts, s, y, row.h, "global instants");
                }
                RowKind::ProcessInstants(p) => {
                    let extent = s
                        .layout
                        .process_extent(p)
                        .map(|(a, b)| (y_of(a).max(top), y_of(b)));
                    let list = &l.kinds.instants_by_process[p as usize];
                    fk::instants(scene, l, s, list, y, row.h, extent);
                    row_label(scene, fonts, s, y, row.h, "process instants");
                }
                RowKind::ThreadInstants(ti) => {
                    let list = &l.kinds.instants_by_thread[ti as usize];
                    fk::instants(scene, l, s, list, y, row.h, None);
                }
                RowKind::Counter(g) => fk::counter(scene, fonts, l, s, g, y, row.h),
                RowKind::AsyncGroup(p) if s.collapsed.async_groups[p as usize] => {
                    let text = header_text(l, s, row.kind);
                    fk::async_summary(scene, fonts, l, s, p, (y, row.h), &text);
                }
                RowKind::AsyncGroup(_)
                | RowKind::AsyncHeader(_)
                | RowKind::Thread(_)
                | RowKind::CpuCounters => {
                    let text = header_text(l, s, row.kind);
                    header(scene, fonts, s, y, row.h, th.thread_header, 18.0, &text);
                }
                RowKind::AsyncRow { track, row: r } => {
                    let ids = &l.trace.async_tracks()[track as usize].rows[r as usize];
                    fk::async_row(scene, fonts, l, s, ids, (y, row.h));
                }
                RowKind::AsyncPacked { process, row: r } => {
                    let g = &l.kinds.async_groups[process as usize];
                    fk::async_row(scene, fonts, l, s, &g.packed[r as usize], (y, row.h));
                    if r == 0 {
                        let text = format!("{} tracks of one slice", g.singles.len());
                        row_label(scene, fonts, s, y, row.h, &text);
                    }
                }
                RowKind::Samples(ti) => {
                    if let Some(track) = l.kinds.samples_by_thread[ti as usize] {
                        fk::samples(scene, l, s, track, y, row.h);
                    }
                    row_label(scene, fonts, s, y, row.h, "CPU samples");
                }
                RowKind::Process(p) => process_header(scene, fonts, l, s, p, y, row.h),
                RowKind::Lane { thread, depth } => {
                    self.lane(scene, fonts, l, s, (Source::Spans, thread, depth), y, row.h);
                }
                RowKind::Stack { thread, depth } => {
                    self.lane(
                        scene,
                        fonts,
                        l,
                        s,
                        (Source::Stacks, thread, depth),
                        y,
                        row.h,
                    );
                }
                RowKind::Cpu(c) => {
                    self.lane(scene, fonts, l, s, (Source::Cpu, c, 0), y, row.h);
                    let cpu = l.kinds.cpu_lanes.cpus[c as usize];
                    row_label(scene, fonts, s, y, row.h, &format!("CPU {cpu}"));
                }
                RowKind::CpuCounter(i) => sched::cpu_counter(scene, fonts, l, s, i, (y, row.h)),
                RowKind::ThreadStates(t) => sched::thread_states(scene, l, s, t, y, row.h),
            }
        }
        if searching {
            match_marks(scene, l, s);
        }
        fk::flows(scene, fonts, l, s, &mut self.links);
        selection_and_range(scene, l, s, range);
        sched::selection_marks(scene, l, s);
        scene.pop_clip();
    }
}

/// What a lane of boxes shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// A thread's spans at one depth.
    Spans,
    /// A thread's samples' stacks over time at one depth.
    Stacks,
    /// What ran on a CPU (`Kinds::cpu_lanes`), each slice named by its thread.
    Cpu,
}

impl TimelineBuilder {
    /// One depth of a thread's spans or of its samples' stacks over time, or a CPU's
    /// scheduling slices: boxes (merged where too small to see one by one) and their labels, dimmed outside a
    /// search's matches.
    #[allow(clippy::too_many_arguments)]
    fn lane(
        &mut self,
        scene: &mut Scene,
        fonts: &mut Fonts,
        l: &Loaded,
        s: &TimelineView,
        (source, thread, depth): (Source, u32, u32),
        y: f32,
        row_h: f32,
    ) {
        let (th, t, w) = (s.theme, &l.trace, s.width);
        let label_px = LABEL_PX * s.scale;
        let (t0, t1) = s.viewport.visible();
        let detail = Detail::new(s.viewport.ns_per_px);
        let searching = s.matches.is_active();
        self.items.clear();
        let (ti, d, out) = (thread as usize, depth as usize, &mut self.items);
        match source {
            Source::Stacks => l.kinds.sample_stacks[ti].query_into(d, t0, t1, detail, out),
            Source::Spans => l.index.query_into(t, ti, d, t0, t1, detail, out),
            Source::Cpu => l.kinds.cpu_lanes.query_into(ti, t0, t1, detail, out),
        }
        let h = row_h - 1.0;
        for it in &self.items {
            let x0 = s.viewport.x(it.start);
            let bw = (s.viewport.x(it.end) - x0).max(1.0) as f32;
            let x = x0 as f32;
            let mut fill = th.span_fill(l.colors[it.name.0 as usize]);
            if it.merged {
                // A box of spans too narrow to see one by one: no label.
                fill = fill.with_alpha(if searching { th.dim_alpha } else { 200 });
                scene.rect(x, y, bw, h, fill);
                continue;
            }
            let dim = searching && !s.matches.name_matches(it.name);
            if dim {
                fill = fill.with_alpha(th.dim_alpha);
            }
            scene.rect(x, y, bw, h, fill);
            if bw > 14.0 {
                // Keep labels on screen when the span starts off to the left.
                let lx = x.max(0.0) + 4.0;
                let room = (x + bw).min(w) - lx - 3.0;
                if room > 6.0 {
                    if let Some(label) = fonts.truncate(t.str(it.name), label_px, room) {
                        let tc = if dim { th.text_dim } else { th.text_on(fill) };
                        scene.text(fonts, lx, y + h / 2.0, label_px, VAlign::Center, tc, &label);
                    }
                }
            }
        }
    }
}

/// The text of a thread's, an async group's or an async track's header.
fn header_text(l: &Loaded, s: &TimelineView, kind: RowKind) -> String {
    let t = &l.trace;
    match kind {
        RowKind::AsyncGroup(p) => {
            let g = &l.kinds.async_groups[p as usize];
            let folded = s.collapsed.async_groups.get(p as usize) == Some(&true);
            let (k, n) = (g.tracks.len(), g.slices);
            format!("{} {k} async tracks, {n} slices", arrow(folded))
        }
        RowKind::CpuCounters => {
            let n = t.sched().map_or(0, |s| s.counters.len());
            let what = sched::counter_kinds(l);
            format!(
                "{} CPU {what}   {n} counters",
                arrow(s.collapsed.cpu_counters)
            )
        }
        RowKind::AsyncHeader(a) => {
            let tr = &t.async_tracks()[a as usize];
            let n: usize = tr.rows.iter().map(Vec::len).sum();
            let folded = arrow(s.collapsed.asyncs[a as usize]);
            format!("{folded} {}   async, {n} slices", t.str(tr.name))
        }
        RowKind::Thread(ti) => {
            let thread = &t.threads()[ti as usize];
            let label = match thread.name {
                Some(n) => format!("{}  (tid {})", t.str(n), t.ext_id(thread.tid)),
                None => format!("Thread {}", t.ext_id(thread.tid)),
            };
            let folded = arrow(s.collapsed.threads[ti as usize]);
            let spans = thread.span_count();
            // A profile's thread counts its samples; a trace's its spans (and samples).
            let samples = (l.kinds.samples_by_thread[ti as usize])
                .map_or(0, |k| t.samples()[k as usize].ts.len());
            // A system trace's thread: its time on a CPU, as Perfetto's thread track says.
            let cpu = sched::cpu_time(l, ti).map_or(String::new(), |ns| {
                format!(", {} on CPU", crate::view::viewport::format_duration(ns))
            });
            match (spans, samples) {
                (0, 0) if !cpu.is_empty() => format!("{folded} {label}   {}", &cpu[2..]),
                (_, 0) if !cpu.is_empty() => format!("{folded} {label}   {spans} spans{cpu}"),
                (0, n) if n > 0 => format!("{folded} {label}   {n} samples"),
                (_, 0) => format!("{folded} {label}   {spans} spans"),
                (_, n) => format!("{folded} {label}   {spans} spans, {n} samples"),
            }
        }
        _ => String::new(),
    }
}

/// A process's header: its name, pid, labels and thread count.
fn process_header(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    p: u32,
    y: f32,
    h: f32,
) {
    let (th, t, w) = (s.theme, &l.trace, s.width);
    let header_px = HEADER_PX * s.scale;
    let pr = &t.processes()[p as usize];
    scene.rect(0.0, y, w, h - 1.0, th.process_header);
    let name = pr.name.map(|n| t.str(n).to_string());
    let label = match (name, pr.pid) {
        (Some(n), ExtId::Num(pid)) => format!("{n}  (pid {pid})"),
        (Some(n), _) => n,
        (None, id) => format!("Process {}", t.ext_id(id)),
    };
    let arrow = if s.collapsed.processes[p as usize] {
        "+"
    } else {
        "-"
    };
    let labels: Vec<&str> = pr.labels.iter().map(|&l| t.str(l)).collect();
    let labels = if labels.is_empty() {
        String::new()
    } else {
        format!(": {}", labels.join(", "))
    };
    let text = format!("{arrow} {label}{labels}   {} threads", pr.threads.len());
    scene.text(
        fonts,
        6.0,
        y + h / 2.0,
        header_px,
        VAlign::Center,
        th.text,
        &text,
    );
}

/// The selection's outline and the selected range's shading (NEW's pane only), over
/// every track.
fn selection_and_range(scene: &mut Scene, l: &Loaded, s: &TimelineView, range: Option<(i64, i64)>) {
    let (th, top) = (s.theme, s.tracks_top());
    let boxed = match s.selected {
        Some(Pick::Span(r)) => s.span_box(l, r),
        Some(p) => s.pick_box(l, p),
        None => None,
    };
    if let Some((x, y, bw, h)) = boxed {
        scene.outline(x - 1.0, y - 1.0, bw + 2.0, h + 2.0, 2.0, th.selection);
    }
    if let Some((a, b)) = range {
        let (xa, xb) = (s.viewport.x(a) as f32, s.viewport.x(b) as f32);
        scene.rect(xa, top, (xb - xa).max(1.0), s.tracks_height(), th.range);
        scene.rect(xa, top, 1.0, s.tracks_height(), th.range_edge);
        scene.rect(xb, top, 1.0, s.tracks_height(), th.range_edge);
    }
}

/// Marks under every visible match, so matches too small to see as boxes still show.
fn match_marks(scene: &mut Scene, l: &Loaded, s: &TimelineView) {
    let (t0, t1) = s.viewport.visible();
    let spans = &s.matches.spans;
    // Matches are sorted by start; spans that start before the view and reach into it are
    // wide enough to show as boxes themselves, so marks start at the view's left edge.
    let first = spans.partition_point(|&r| l.trace.span(r).start < t0);
    let mut drawn = 0;
    let mut last: Option<(u32, u32, i32)> = None;
    for &r in &spans[first..] {
        let sp = l.trace.span(r);
        if sp.start > t1 || drawn > 20_000 {
            break;
        }
        if sp.end() < t0 {
            continue;
        }
        let Some((x, y, w, h)) = s.span_box(l, r) else {
            continue;
        };
        // One mark per pixel column per lane is enough.
        let key = (r.thread, r.depth, x as i32);
        if last == Some(key) || y + h < s.tracks_top() || y > s.height {
            continue;
        }
        last = Some(key);
        scene.rect(x, y + h - 3.0, w.max(2.0), 3.0, s.theme.match_marker);
        drawn += 1;
    }
}

/// The collapse marker of a header.
fn arrow(collapsed: bool) -> &'static str {
    if collapsed {
        "+"
    } else {
        "-"
    }
}

/// A thread or async track header: a band and its label.
#[allow(clippy::too_many_arguments)]
fn header(
    scene: &mut Scene,
    fonts: &mut Fonts,
    s: &TimelineView,
    y: f32,
    h: f32,
    band: Color,
    indent: f32,
    text: &str,
) {
    let px = HEADER_PX * s.scale;
    scene.rect(0.0, y, s.width, h - 1.0, band);
    let c = s.theme.text_dim;
    scene.text(fonts, indent, y + h / 2.0, px, VAlign::Center, c, text);
}

/// A small label at the right end of a marker row, so it says what it holds.
fn row_label(scene: &mut Scene, fonts: &mut Fonts, s: &TimelineView, y: f32, h: f32, text: &str) {
    let px = 10.0 * s.scale;
    let w = fonts.measure(text, px);
    let c = s.theme.text_dim.with_alpha(180);
    scene.text(
        fonts,
        s.width - w - 8.0,
        y + h / 2.0,
        px,
        VAlign::Center,
        c,
        text,
    );
}

fn ruler(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    let th = s.timeline.theme;
    let (w, y, ruler_h) = (
        s.timeline.width,
        s.timeline.minimap_h(),
        s.timeline.ruler_h(),
    );
    let px = 11.0 * s.timeline.scale;
    scene.rect(0.0, y, w, ruler_h, th.ruler);
    let step = tick_step(
        s.timeline.viewport.ns_per_px,
        110.0 * s.timeline.scale as f64,
    );
    let (t0, t1) = s.timeline.viewport.visible();
    let origin = l.trace.start_ns();
    // Ticks at multiples of `step` from the trace start.
    let first = (t0 - origin).div_euclid(step) * step + origin;
    let mut t = first;
    let mut n = 0;
    while t <= t1 && n < 200 {
        let x = s.timeline.viewport.x(t) as f32;
        scene.rect(x, y, 1.0, ruler_h, th.tick);
        // In compare mode the grid runs on through BASE's pane: one time axis.
        let grid_h = match s.compare {
            Some(_) => s.timeline.height - s.timeline.tracks_top(),
            None => s.timeline.tracks_height(),
        };
        scene.rect(
            x,
            s.timeline.tracks_top(),
            1.0,
            grid_h,
            th.tick.with_alpha(70),
        );
        let label = format_time(t - origin, step);
        scene.text(
            fonts,
            x + 4.0,
            y + ruler_h / 2.0,
            px,
            VAlign::Center,
            th.text_dim,
            &label,
        );
        t = t.saturating_add(step);
        n += 1;
    }
    if let Some((a, b)) = s.range {
        let (xa, xb) = (
            s.timeline.viewport.x(a) as f32,
            s.timeline.viewport.x(b) as f32,
        );
        scene.rect(
            xa,
            y,
            (xb - xa).max(1.0),
            ruler_h,
            th.range_edge.with_alpha(90),
        );
        let label = format_duration(b - a);
        let lw = fonts.measure(&label, px);
        let cx = ((xa + xb) / 2.0 - lw / 2.0).clamp(2.0, (w - lw - 2.0).max(2.0));
        scene.text(
            fonts,
            cx,
            y + ruler_h / 2.0,
            px,
            VAlign::Center,
            th.text,
            &label,
        );
    }
}

fn minimap(scene: &mut Scene, l: &Loaded, s: &ViewState) {
    let th = s.timeline.theme;
    let (w, mh) = (s.timeline.width, s.timeline.minimap_h());
    scene.rect(0.0, 0.0, w, mh, th.minimap);
    let bins = &l.minimap;
    let n = bins.len().max(1);
    let cols = w.max(1.0) as usize;
    for c in 0..cols {
        let a = c * n / cols;
        let b = ((c + 1) * n / cols).max(a + 1).min(n);
        let v = bins[a..b].iter().copied().fold(0.0f32, f32::max);
        if v > 0.0 {
            let h = (v * (mh - 6.0)).max(1.0);
            scene.rect(c as f32, mh - 3.0 - h, 1.0, h, th.minimap_bars);
        }
    }
    // The visible window.
    let t = &l.trace;
    let total = (t.duration_ns().max(1)) as f64;
    let (a, b) = s.timeline.viewport.visible();
    let xa = ((a - t.start_ns()) as f64 / total * w as f64) as f32;
    let xb = ((b - t.start_ns()) as f64 / total * w as f64) as f32;
    let (xa, xb) = (xa.clamp(0.0, w), xb.clamp(0.0, w));
    scene.rect(xa, 0.0, (xb - xa).max(2.0), mh, th.minimap_window);
    scene.outline(xa, 0.0, (xb - xa).max(2.0), mh, 1.0, th.range_edge);
}

/// The time under a minimap x.
pub fn minimap_time(l: &Loaded, s: &ViewState, x: f32) -> i64 {
    let t = &l.trace;
    t.start_ns() + ((x / s.timeline.width.max(1.0)) as f64 * t.duration_ns() as f64) as i64
}

/// The hovered pick's tooltip, if any.
pub fn tooltip(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    if let Some((p, x, y)) = s.timeline.hover {
        tooltip_box(scene, fonts, &s.timeline, &fk::describe(l, p), x, y);
    }
}

/// Colour used for spans of `name` (for legends and tests).
pub fn fill_for(l: &Loaded, s: &TimelineView, name: trace_model::StrId) -> Color {
    s.theme.span_fill(l.colors[name.0 as usize])
}
