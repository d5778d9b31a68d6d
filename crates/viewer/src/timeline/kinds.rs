//! Drawing the rows that are not span lanes (counters, instants, async slices, samples) and
//! the flow arrows. Each walk skips to the next pixel column with a binary search, so a
//! row's cost is bounded by its width in pixels, not by its events.

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_model::{async_flags, SpanRef, Trace};

use crate::kinds::{first_at_or_after, Pick};
use crate::loaded::{name_color, reserved_color, Loaded};
use crate::timeline::marks::{bezier_arrow, series_columns};
use crate::view::layout::LABEL_PX;
use crate::view::timeline::{FlowMode, TimelineView};
use crate::view::viewport::{format_duration, format_value};

/// Text size of process and thread headers, in logical pixels.
pub const HEADER_PX: f32 = 12.5;

/// Flow arrows drawn per frame at most; the rest are counted on screen.
pub const MAX_FLOWS: usize = 2000;

/// A diamond of half-diagonal `r` centred on `(x, y)`: a square line rotated 45°.
pub fn diamond(scene: &mut Scene, x: f32, y: f32, r: f32, color: Color) {
    let h = r / 2.0;
    scene.line(
        x - h,
        y - h,
        x + h,
        y + h,
        r * std::f32::consts::SQRT_2,
        color,
    );
}

/// Instant markers (indices into `Trace::instants`, by time), one per pixel column at most;
/// with `extent`, also a faint line over the tracks they apply to (process or global).
#[allow(clippy::too_many_arguments)]
pub fn instants(
    scene: &mut Scene,
    l: &Loaded,
    s: &TimelineView,
    list: &[u32],
    y: f32,
    h: f32,
    extent: Option<(f32, f32)>,
) {
    let inst = l.trace.instants();
    let (t0, t1) = s.viewport.visible();
    let tol = s.viewport.ns_per_px * 4.0 * s.scale as f64;
    let mut i = first_at_or_after(list, t0 - tol as i64, |&k| inst[k as usize].ts);
    let r = (h * 0.35).max(3.0);
    while i < list.len() {
        let e = &inst[list[i] as usize];
        if e.ts > t1 + tol as i64 {
            break;
        }
        let x = s.viewport.x(e.ts) as f32;
        let mut color = s.theme.span_fill(l.colors[e.name.0 as usize]);
        if s.matches.is_active() && !s.matches.name_matches(e.name) {
            color = color.with_alpha(s.theme.dim_alpha);
        }
        if let Some((a, b)) = extent {
            scene.rect(x, a, 1.0, b - a, color.with_alpha(70));
        }
        diamond(scene, x, y + h / 2.0, r, color);
        // Markers closer than the diamond's width merge into this one.
        let next = s.viewport.time_at(x as f64 + r as f64);
        i += 1 + first_at_or_after(&list[i + 1..], next, |&k| inst[k as usize].ts);
    }
}

/// A counter group: each series as a filled step graph over a scale shared by the group,
/// with min and max per pixel column so that one-sample spikes stay visible.
pub fn counter(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    group: u32,
    y: f32,
    h: f32,
) {
    let t = &l.trace;
    let g = &l.kinds.counters[group as usize];
    let th = s.theme;
    let t1 = s.viewport.visible().1;
    scene.rect(0.0, y + h - 1.0, s.width, 1.0, th.tick.with_alpha(120));
    for (k, &ci) in g.series.iter().enumerate() {
        let c = &t.counters()[ci as usize];
        let color = th.span_fill(series_color(t, g.series.len(), c));
        let alpha = if g.series.len() > 1 { 70 } else { 110 };
        let series = (&c.ts[..], &c.values[..], &g.index[k]);
        series_columns(scene, l, s, series, (g.min, g.max), (y, h), color, alpha);
    }
    // Labels: the name (and a legend when several series overlay), the scale, and the
    // latest value in view.
    let px = 11.0 * s.scale;
    let mut x = 6.0;
    x += scene.text(fonts, x, y + 2.0, px, VAlign::Top, th.text, t.str(g.name));
    if g.series.len() > 1 {
        for &ci in &g.series {
            let c = &t.counters()[ci as usize];
            let color = th.span_fill(series_color(t, g.series.len(), c));
            scene.rect(x + 8.0, y + 2.0 + px * 0.3, px * 0.7, px * 0.7, color);
            x += 8.0 + px;
            x += scene.text(
                fonts,
                x,
                y + 2.0,
                px,
                VAlign::Top,
                th.text_dim,
                t.str(c.key),
            );
        }
    }
    let latest: Vec<String> = g
        .series
        .iter()
        .filter_map(|&ci| {
            let c = &t.counters()[ci as usize];
            c.value_at(t1.min(t.end_ns())).map(format_value)
        })
        .collect();
    let scale = format!(
        "max {}  min {}  now {}",
        format_value(g.max),
        format_value(g.min),
        latest.join(" / ")
    );
    let w = fonts.measure(&scale, px);
    scene.text(
        fonts,
        s.width - w - 8.0,
        y + 2.0,
        px,
        VAlign::Top,
        th.text_dim,
        &scale,
    );
}

/// The colour of a counter series: the file's `cname` when it names a known colour, else
/// one from the series' key (when several overlay) or the counter's name.
fn series_color(t: &Trace, n: usize, c: &trace_model::CounterSeries) -> Color {
    if let Some(color) = c.cname.and_then(|k| reserved_color(t.str(k))) {
        return color;
    }
    if n > 1 {
        name_color(t.str(c.key))
    } else {
        name_color(t.str(c.name))
    }
}

/// A process's folded async group: a header band where its slices are drawn merged (the
/// union of their times, boxes closer than a pixel joined), under `text` (their count).
pub fn async_summary(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    process: u32,
    (y, h): (f32, f32),
    text: &str,
) {
    let th = s.theme;
    scene.rect(0.0, y, s.width, h - 1.0, th.thread_header);
    let union = &l.kinds.async_groups[process as usize].union;
    let (t0, t1) = s.viewport.visible();
    let fill = th.minimap_bars.with_alpha(150);
    let (top, bh) = (y + 0.2 * h, 0.6 * h);
    let mut run: Option<(f32, f32)> = None;
    for &(a, b) in &union[union.partition_point(|u| u.1 < t0)..] {
        if a > t1 {
            break;
        }
        let (x0, x1) = (s.viewport.x(a) as f32, s.viewport.x(b) as f32);
        run = match run {
            Some((r0, r1)) if x0 <= r1 + 1.0 => Some((r0, r1.max(x1))),
            Some((r0, r1)) => {
                scene.rect(r0, top, (r1 - r0).max(1.0), bh, fill);
                Some((x0, x1))
            }
            None => Some((x0, x1)),
        };
    }
    if let Some((r0, r1)) = run {
        scene.rect(r0, top, (r1 - r0).max(1.0), bh, fill);
    }
    // The label on a band of its own, readable over the boxes.
    let px = HEADER_PX * s.scale;
    let w = fonts.measure(text, px);
    scene.rect(0.0, y, 18.0 + w + 8.0, h - 1.0, th.thread_header);
    let c = th.text_dim;
    scene.text(fonts, 18.0, y + h / 2.0, px, VAlign::Center, c, text);
}

/// One row of async slices (`ids`, by start, none overlapping): slices as boxes (runs
/// narrower than a pixel merged), `n` events as diamonds, unfinished slices with a hatched
/// end.
pub fn async_row(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    ids: &[u32],
    (y, h): (f32, f32),
) {
    let t = &l.trace;
    let slices = t.async_slices();
    let (t0, t1) = s.viewport.visible();
    let th = s.theme;
    let label_px = LABEL_PX * s.scale;
    let searching = s.matches.is_active();
    let mut i = ids.partition_point(|&k| slices[k as usize].end < t0);
    while i < ids.len() {
        let a = &slices[ids[i] as usize];
        if a.start > t1 {
            break;
        }
        let x0 = s.viewport.x(a.start) as f32;
        let mut fill = th.span_fill(l.colors[a.name.0 as usize]);
        if searching && !s.matches.name_matches(a.name) {
            fill = fill.with_alpha(th.dim_alpha);
        }
        if a.flags & async_flags::INSTANT != 0 {
            diamond(scene, x0, y + h / 2.0, h * 0.35, fill);
            let next = s.viewport.time_at(x0 as f64 + 2.0);
            i += 1 + first_at_or_after(&ids[i + 1..], next, |&k| slices[k as usize].start);
            continue;
        }
        let x1 = s.viewport.x(a.end) as f32;
        let w = (x1 - x0).max(1.0);
        if a.flags & async_flags::STEP != 0 {
            fill = fill.with_alpha(170);
        }
        scene.rect(x0, y, w, h - 1.0, fill);
        if a.flags & async_flags::UNFINISHED != 0 {
            // A zig-zag edge where the slice was cut off.
            let xe = x0 + w;
            for k in 0..3 {
                let yy = y + k as f32 * (h - 1.0) / 3.0;
                scene.line(xe - 4.0, yy, xe, yy + (h - 1.0) / 6.0, 1.5, th.text_dim);
                scene.line(
                    xe,
                    yy + (h - 1.0) / 6.0,
                    xe - 4.0,
                    yy + (h - 1.0) / 3.0,
                    1.5,
                    th.text_dim,
                );
            }
        }
        if w > 14.0 {
            let lx = x0.max(0.0) + 4.0;
            let room = (x0 + w).min(s.width) - lx - 3.0;
            if room > 6.0 {
                if let Some(label) = fonts.truncate(t.str(a.name), label_px, room) {
                    let tc = th.text_on(fill);
                    scene.text(fonts, lx, y + h / 2.0, label_px, VAlign::Center, tc, &label);
                }
            }
        }
        // Slices that would start inside this pixel are drawn by it.
        let next = s.viewport.time_at(x0 as f64 + w as f64 + 1.0);
        i += 1 + first_at_or_after(&ids[i + 1..], next, |&k| slices[k as usize].start);
    }
}

/// A thread's CPU samples: a tick per sample (one per pixel column at most), coloured by
/// its leaf frame, reaching to the next sample when there is room.
pub fn samples(scene: &mut Scene, l: &Loaded, s: &TimelineView, track: u32, y: f32, h: f32) {
    let t = &l.trace;
    let st = &t.samples()[track as usize];
    let (t0, t1) = s.viewport.visible();
    let mut i = st.ts.partition_point(|&x| x < t0);
    while i < st.ts.len() && st.ts[i] <= t1 {
        let x = s.viewport.x(st.ts[i]) as f32;
        let next_x = st
            .ts
            .get(i + 1)
            .map_or(x + 1.0, |&n| s.viewport.x(n) as f32);
        let w = (next_x - x - 1.0).clamp(1.0, 12.0 * s.scale);
        // A sample with an empty stack has no frame (`NO_FRAME`).
        let name =
            (t.frames().get(st.frame[i] as usize)).map_or(trace_model::StrId::EMPTY, |f| f.name);
        scene.rect(
            x,
            y + 2.0,
            w,
            h - 4.0,
            s.theme.span_fill(l.colors[name.0 as usize]),
        );
        let next = s.viewport.time_at(x as f64 + 1.0);
        i += 1 + first_at_or_after(&st.ts[i + 1..], next, |&n| n);
    }
}

/// The flow arrows `s.flows` asks for, and a note of how many were left out over the cap.
pub fn flows(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &TimelineView,
    scratch: &mut Vec<u32>,
) {
    let t = &l.trace;
    scratch.clear();
    let mut left_out = 0;
    match s.flows {
        FlowMode::None => return,
        FlowMode::Selected => {
            let Some(r) = s.selected_span() else { return };
            chain(t, r, MAX_FLOWS, scratch);
        }
        FlowMode::All => {
            let (t0, t1) = s.viewport.visible();
            left_out = l.kinds.links_in(t0, t1, MAX_FLOWS, scratch);
        }
    }
    let th = s.theme;
    for &li in scratch.iter() {
        let link = &t.flow_links()[li as usize];
        let (Some(a), Some(b)) = (anchor(l, s, link.from, true), anchor(l, s, link.to, false))
        else {
            continue;
        };
        bezier_arrow(scene, a, b, s.scale, th.flow);
    }
    if left_out > 0 {
        let text = format!("{left_out} more flows in view not drawn (zoom in)");
        let px = 11.0 * s.scale;
        let w = fonts.measure(&text, px);
        let y = s.tracks_top() + 4.0;
        scene.rect(s.width - w - 16.0, y, w + 12.0, px + 8.0, th.tooltip);
        scene.text(
            fonts,
            s.width - w - 10.0,
            y + 4.0,
            px,
            VAlign::Top,
            th.text,
            &text,
        );
    }
}

/// The links reachable from `r` by following flows both ways (chains of steps), up to `cap`.
pub fn chain(t: &Trace, r: SpanRef, cap: usize, out: &mut Vec<u32>) {
    let links = t.flow_links();
    let mut seen_links = std::collections::HashSet::new();
    let mut seen_spans = std::collections::HashSet::from([r]);
    let mut todo = vec![r];
    while let Some(at) = todo.pop() {
        for l in t.flows_from(at).chain(t.flows_into(at)) {
            // Links are sorted: a link's index is where it sorts.
            let i = links.partition_point(|x| x < l) as u32;
            if !seen_links.insert(i) {
                continue;
            }
            if out.len() >= cap {
                return;
            }
            out.push(i);
            for next in [l.from, l.to] {
                if seen_spans.insert(next) {
                    todo.push(next);
                }
            }
        }
    }
}

/// Where an arrow leaves (`out`: the span's end) or arrives (its start), mid-row.
fn anchor(l: &Loaded, s: &TimelineView, r: SpanRef, out: bool) -> Option<(f32, f32)> {
    let row = s.layout.span_anchor(&l.trace, r.thread, r.depth)?;
    let sp = l.trace.span(r);
    let x = s.viewport.x(if out { sp.end() } else { sp.start }) as f32;
    let y = s.tracks_top() + row.y - s.scroll_y + row.h / 2.0;
    Some((x.clamp(-1e5, 1e5), y))
}

/// A title and lines of detail for a pick (tooltips; the panel adds arguments).
pub fn describe(l: &Loaded, p: Pick) -> Vec<String> {
    let t = &l.trace;
    let rel = |ts: i64| format_duration(ts - t.start_ns());
    match p {
        Pick::Span(r) => {
            let sp = t.span(r);
            vec![
                t.str(sp.name).to_string(),
                format!("duration  {}", format_duration(sp.dur)),
                format!("self      {}", format_duration(t.self_ns(r))),
                format!("start     {}", rel(sp.start)),
            ]
        }
        Pick::Instant(i) => {
            let e = &t.instants()[i as usize];
            let scope = match e.scope {
                trace_model::InstantScope::Global => "global",
                trace_model::InstantScope::Process => "process",
                trace_model::InstantScope::Thread => "thread",
            };
            let list = match e.scope {
                trace_model::InstantScope::Global => &l.kinds.global_instants,
                trace_model::InstantScope::Process => {
                    &l.kinds.instants_by_process[e.process as usize]
                }
                trace_model::InstantScope::Thread => &l.kinds.instants_by_thread[e.thread as usize],
            };
            let same = list
                .iter()
                .filter(|&&k| t.instants()[k as usize].ts == e.ts)
                .count();
            let mut v = vec![
                t.str(e.name).to_string(),
                format!("instant   {scope} scope"),
                format!("at        {}", rel(e.ts)),
            ];
            if same > 1 {
                v.push(format!("{same} instants at this time"));
            }
            v
        }
        Pick::Async(i) => {
            let a = &t.async_slices()[i as usize];
            let mut v = vec![t.str(a.name).to_string()];
            if a.flags & async_flags::INSTANT != 0 {
                v.push(format!("async instant at {}", rel(a.start)));
            } else {
                let more = if a.flags & async_flags::UNFINISHED != 0 {
                    " (unfinished)"
                } else {
                    ""
                };
                v.push(format!("duration  {}{more}", format_duration(a.dur())));
                v.push(format!("start     {}", rel(a.start)));
            }
            v.push(format!("id        {}  cat {}", t.str(a.id), t.str(a.cat)));
            v
        }
        Pick::Counter { group, ts } => {
            let g = &l.kinds.counters[group as usize];
            let mut v = vec![t.str(g.name).to_string(), format!("at        {}", rel(ts))];
            for &ci in &g.series {
                let c = &t.counters()[ci as usize];
                if let Some(val) = c.value_at(ts) {
                    v.push(format!("{:<9} {}", t.str(c.key), format_value(val)));
                }
            }
            v
        }
        Pick::Stack { .. } => crate::timeline::stacks::describe_stack(l, p),
        Pick::Sched(_) | Pick::State(_) => crate::timeline::sched::describe(l, p),
        Pick::Sample { track, index } => {
            let st = &t.samples()[track as usize];
            let mut f = st.frame[index as usize];
            let leaf = t
                .frames()
                .get(f as usize)
                .map_or("(no frames)", |fr| t.str(fr.name));
            let (i, weight) = (index as usize, t.str(st.kind));
            let at = if st.timed {
                "sample at"
            } else {
                "sample (untimed, laid out by weight) at"
            };
            let mut v = vec![
                leaf.to_string(),
                format!("{at} {}", rel(st.ts[i])),
                format!(
                    "{weight} {}",
                    trace_model::weight_text(st.unit, st.weight[i])
                ),
            ];
            let mut depth = 0;
            while f != trace_model::NO_FRAME && depth < 12 {
                let fr = &t.frames()[f as usize];
                v.push(format!("  {}", t.str(fr.name)));
                f = fr.parent;
                depth += 1;
            }
            v
        }
    }
}
