//! Drawing the flame graph view into a render-gl [`Scene`]: a header strip (scope and
//! breadcrumb), then one pane (or a sandwich's two), frames narrower than a pixel merged so
//! the cost of a frame is bounded by pixels, not by stacks.

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_model::{label_text, FlameSort, FrameLabel};

use crate::flame::changes;
use crate::loaded::Loaded;
use crate::view::flame::{FlameHit, FlameThreads, Pane, Region, Which, HEADER_PX};
use crate::view::removed_stacks::{Ghost, Room};
use crate::view::state::ViewState;
use crate::view::viewport::format_duration;
use trace_model::changes::{Change, Status};

/// Frames at least this wide (pixels) are drawn one by one; narrower ones merge.
const MIN_PX: f32 = 1.0;

/// Draws the flame view; `s.flame` must have its graph built.
pub fn build(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    let th = s.timeline.theme;
    let f = &s.flame;
    let top = HEADER_PX * s.timeline.scale;
    header(scene, fonts, l, s);
    let Some(main) = &f.main else {
        message(scene, fonts, s, top, "building the flame graph …");
        return;
    };
    if main.tree.is_empty() || main.tree.total[0] == 0 {
        message(scene, fonts, s, top, "no spans in this scope");
        return;
    }
    for (which, r) in f.regions(top, s.timeline.width, s.timeline.height, s.timeline.scale) {
        let Some(p) = f.pane(which) else { continue };
        scene.push_clip(r.x, r.y, r.w, r.h);
        pane(scene, fonts, l, s, p, &r, which);
        let caption = match which {
            Which::Callers => Some("callers (merged over every call)"),
            Which::Callees => Some("callees (merged over every call)"),
            Which::Main => None,
        };
        if let Some(c) = caption {
            let px = 11.0 * s.timeline.scale;
            let cw = fonts.measure(c, px);
            let y = if r.down {
                r.y + r.h - 10.0 * s.timeline.scale
            } else {
                r.y + 10.0 * s.timeline.scale
            };
            let x = r.x + r.w - cw - 8.0;
            scene.text(fonts, x, y, px, VAlign::Center, th.text_dim, c);
        }
        if which == Which::Callees {
            scene.rect(r.x, r.y, r.w, 1.0, th.tick);
        }
        scene.pop_clip();
    }
    if let Some((h, x, y)) = f.hover {
        tooltip(scene, fonts, l, s, h, x, y);
    }
    if let Some((k, x, y)) = f.hover_removed {
        let lines = describe_removed(s, k);
        crate::overlay::tooltip_box(scene, fonts, &s.timeline, &lines, x, y);
    }
}

fn message(scene: &mut Scene, fonts: &mut Fonts, s: &ViewState, top: f32, text: &str) {
    let px = 14.0 * s.timeline.scale;
    let c = s.timeline.theme.text_dim;
    scene.text(
        fonts,
        16.0,
        top + 30.0 * s.timeline.scale,
        px,
        VAlign::Center,
        c,
        text,
    );
}

/// The strip above the graph: what is merged, and the zoomed frame's path.
fn header(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    let th = s.timeline.theme;
    let f = &s.flame;
    let h = HEADER_PX * s.timeline.scale;
    scene.rect(0.0, 0.0, s.timeline.width, h, th.ruler);
    let t = &l.trace;
    let scope = match f.threads {
        FlameThreads::All if f.per_thread => "all threads, apart".to_string(),
        FlameThreads::All => "all threads merged".to_string(),
        FlameThreads::Visible => "visible threads".to_string(),
        FlameThreads::One(ti) => t.thread_label(ti),
    };
    let range = match (f.use_range, s.range) {
        (true, Some((a, b))) => format!(" · range {}", format_duration(b - a)),
        _ => String::new(),
    };
    let order = match f.sort {
        FlameSort::Heaviest => "heaviest first",
        FlameSort::Name => "by name",
    };
    let mut text = match &f.sandwich {
        Some(sw) => format!(
            "Sandwich: {} · callers above, callees below · {scope}{range}",
            label_text(t, sw.label)
        ),
        None => format!("Flame graph · {scope}{range} · {order}"),
    };
    if f.base.is_some() {
        text = format!("{text} · compared: red slower, blue faster, + added, − removed");
    }
    if let (None, Some(p)) = (&f.sandwich, &f.main) {
        if p.zoom != 0 {
            let names: Vec<String> = std::iter::once("all".to_string())
                .chain(
                    p.tree
                        .path(p.zoom)
                        .iter()
                        .map(|&n| label_text(t, p.tree.label[n as usize]).into_owned()),
                )
                .collect();
            text = format!("{text}   ·   {}", names.join(" › "));
        }
    }
    let px = 12.0 * s.timeline.scale;
    if let Some(fit) = fonts.truncate(&text, px, s.timeline.width - 16.0) {
        scene.text(fonts, 8.0, h / 2.0, px, VAlign::Center, th.text, &fit);
    }
}

/// The fill of a frame.
fn fill(l: &Loaded, s: &ViewState, label: FrameLabel) -> Color {
    match label {
        FrameLabel::Name(n) => {
            let c = s.timeline.theme.span_fill(l.colors[n.0 as usize]);
            if s.timeline.matches.is_active() && !s.timeline.matches.name_matches(n) {
                c.with_alpha(s.timeline.theme.dim_alpha)
            } else {
                c
            }
        }
        _ => s.timeline.theme.process_header,
    }
}

/// One pane: the zoomed frame's ancestors across the width, then its subtree.
fn pane(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &ViewState,
    p: &Pane,
    r: &Region,
    which: Which,
) {
    let cx = PaneCx {
        l,
        s,
        p,
        r,
        // Compare mode colours each pane's frames by their change.
        changes: s.flame.changes_of(which),
        scale: r.w as f64 / p.w(p.zoom).max(1) as f64,
    };
    let (t, th) = (&p.tree, s.timeline.theme);
    // Ancestors (and the root) span the width: click one to zoom back out.
    for n in std::iter::once(0).chain(t.path(p.zoom)) {
        if n == p.zoom {
            break;
        }
        let y = r.row_y(t.depth[n as usize]);
        if cx.visible(y) {
            cx.bar(scene, fonts, n, r.x, y, r.w);
            scene.rect(r.x, y, r.w, r.row_h - 1.0, th.background.with_alpha(110));
        }
    }
    let mut stack = vec![p.zoom];
    while let Some(n) = stack.pop() {
        let depth = t.depth[n as usize];
        let w = (p.w(n) as f64 * cx.scale) as f32;
        cx.bar(scene, fonts, n, cx.x_of(n), r.row_y(depth), w);
        // Children one row further; stop once rows leave the pane.
        if !cx.visible(r.row_y(depth + 1)) {
            continue;
        }
        cx.children(scene, n, w, &mut stack);
        if let Some(room) = &p.room {
            for &g in room.ghosts_of(n) {
                let at = |k: u32| r.x + ((room.x_in(g, k) - p.x(p.zoom)) as f64 * cx.scale) as f32;
                removed(scene, fonts, s, (room, g), r, (&at, cx.scale));
            }
        }
    }
    // The selection, outlined.
    if let Some(h) = s.flame.selected.filter(|h| h.pane == which) {
        if let Some((x, y, w, bh)) = p.node_box(r, h.node) {
            scene.outline(
                x - 1.0,
                y - 1.0,
                w.max(MIN_PX) + 2.0,
                bh + 2.0,
                2.0,
                th.selection,
            );
        }
    }
}

/// What drawing one pane's frames needs.
struct PaneCx<'a> {
    l: &'a Loaded,
    s: &'a ViewState,
    p: &'a Pane,
    r: &'a Region,
    /// Compare mode: each frame's change (empty otherwise).
    changes: &'a [Change],
    /// Pixels per nanosecond of the zoomed frame.
    scale: f64,
}

impl PaneCx<'_> {
    /// Whether a row at `y` shows in the pane.
    fn visible(&self, y: f32) -> bool {
        y + self.r.row_h > self.r.y && y < self.r.y + self.r.h
    }

    /// The left edge of frame `n`.
    fn x_of(&self, n: u32) -> f32 {
        let p = self.p;
        self.r.x + ((p.x(n) - p.x(p.zoom)) as f64 * self.scale) as f32
    }

    /// Frame `n` as a bar at `(x, y)`, `w` wide, its label inside when it fits.
    fn bar(&self, scene: &mut Scene, fonts: &mut Fonts, n: u32, x: f32, y: f32, w: f32) {
        let (s, r) = (self.s, self.r);
        let label = self.p.tree.label[n as usize];
        let ch = self.changes.get(n as usize);
        let c = match ch {
            Some(ch) => changes::fill(&s.timeline.theme, ch),
            None => fill(self.l, s, label),
        };
        scene.rect(x, y, w.max(MIN_PX), r.row_h - 1.0, c);
        // Work only BASE ran under this frame, where the pane has no room to draw it: a
        // blue notch at its right end.
        let notch = self.p.room.is_none() && ch.is_some_and(|c| !c.removed.is_empty());
        if notch && w > 8.0 * s.timeline.scale {
            let nw = 3.0 * s.timeline.scale;
            scene.rect(x + w - nw, y, nw, r.row_h - 1.0, changes::REMOVED);
        }
        if w > 14.0 {
            let lx = x.max(r.x) + 4.0;
            let room = (x + w).min(r.x + r.w) - lx - 3.0;
            let mut text = label_text(&self.l.trace, label);
            if ch.is_some_and(|c| c.status == Status::Added) {
                text = format!("+ {text}").into();
            }
            let px = 12.0 * s.timeline.scale;
            if let Some(fit) = fonts.truncate(&text, px, room) {
                let y = y + (r.row_h - 1.0) / 2.0;
                let color = s.timeline.theme.text_on(c);
                scene.text(fonts, lx, y, px, VAlign::Center, color, &fit);
            }
        }
    }

    /// The children of frame `n` (`w` wide): those a pixel wide or more onto `stack`, to
    /// be drawn; runs of narrower ones merged into grey boxes.
    fn children(&self, scene: &mut Scene, n: u32, w: f32, stack: &mut Vec<u32>) {
        let (p, r, t) = (self.p, self.r, &self.p.tree);
        let cy = r.row_y(t.depth[n as usize] + 1);
        let merged = self.s.timeline.theme.text_dim.with_alpha(120);
        let mut run: Option<(f32, f32)> = None;
        let flush = |scene: &mut Scene, run: &mut Option<(f32, f32)>| {
            if let Some((a, b)) = run.take() {
                if b - a >= 0.5 {
                    scene.rect(a, cy, (b - a).max(MIN_PX), r.row_h - 1.0, merged);
                }
            }
        };
        // Removed stacks widen frames, so their widths may leave the heaviest-first order.
        let ordered = p.room.as_ref().is_none_or(|m| !m.reordered[n as usize]);
        for c in t.children(n) {
            let cw = (p.w(c) as f64 * self.scale) as f32;
            let cx = self.x_of(c);
            if cw >= MIN_PX {
                flush(scene, &mut run);
                stack.push(c);
                continue;
            }
            if self.s.flame.sort == FlameSort::Heaviest && ordered {
                // Every later sibling is lighter still: one box for the rest, which ends
                // where the children's time ends (the rest of the parent is removed
                // stacks, then self time).
                let direct = p.room.as_ref().map_or(0, |m| m.direct[n as usize]);
                let kids = (p.w(n) - t.self_ns[n as usize] - direct).max(0);
                let end = self.x_of(n) + ((kids as f64 * self.scale) as f32).min(w);
                run = Some((run.map_or(cx, |r| r.0), end.max(cx)));
                break;
            }
            run = Some(match run {
                Some((a, b)) if cx - b < 1.0 => (a, cx + cw),
                _ => {
                    flush(scene, &mut run);
                    (cx, cx + cw)
                }
            });
        }
        flush(scene, &mut run);
    }
}

/// A removed stack, from BASE's graph: each frame of its subtree at least a pixel wide,
/// pale, hatched and outlined in blue, its name after a `−`.
fn removed(
    scene: &mut Scene,
    fonts: &mut Fonts,
    s: &ViewState,
    (room, g): (&Room, Ghost),
    r: &Region,
    (x_of, scale): (&dyn Fn(u32) -> f32, f64),
) {
    let Some(bt) = s.flame.base.as_deref() else {
        return;
    };
    let b = &room.base;
    let fill = changes::removed_fill(&s.timeline.theme);
    let (h, px) = (r.row_h - 1.0, 12.0 * s.timeline.scale);
    let step = 6.0 * s.timeline.scale;
    let mut stack = vec![g.node];
    while let Some(k) = stack.pop() {
        let (x, w) = (x_of(k), (b.total[k as usize] as f64 * scale) as f32);
        let y = r.row_y(b.depth[k as usize]);
        if w < MIN_PX || y + r.row_h <= r.y || y >= r.y + r.h || x >= r.x + r.w {
            continue;
        }
        scene.rect(x, y, w, h, fill);
        if w > step {
            scene.push_clip(x, y, w, h);
            let mut hx = x - h;
            while hx < x + w {
                scene.line(hx, y + h, hx + h, y, 1.0, changes::REMOVED.with_alpha(70));
                hx += step;
            }
            scene.pop_clip();
        }
        scene.outline(x, y, w, h, 1.0, changes::REMOVED);
        if w > 14.0 {
            let lx = x.max(r.x) + 4.0;
            let room = (x + w).min(r.x + r.w) - lx - 3.0;
            let text = format!("− {}", label_text(bt, b.label[k as usize]));
            if let Some(fit) = fonts.truncate(&text, px, room) {
                let c = s.timeline.theme.text_on(fill);
                scene.text(fonts, lx, y + h / 2.0, px, VAlign::Center, c, &fit);
            }
        }
        stack.extend(b.children(k));
    }
}

/// Lines describing a frame only BASE has (node `k` of BASE's graph): that it was
/// removed, BASE's times, and its stack in BASE.
pub fn describe_removed(s: &ViewState, k: u32) -> Vec<String> {
    let (Some(bt), Some(b)) = (s.flame.base.as_deref(), s.flame.base_tree.as_deref()) else {
        return Vec::new();
    };
    let n = k as usize;
    let name = |k: u32| label_text(bt, b.label[k as usize]).into_owned();
    let mut lines = vec![
        format!("− {}", name(k)),
        "removed: only in BASE (drawn at BASE's width)".to_string(),
        format!(
            "base: total {} · self {} · {} spans",
            format_duration(b.total[n]),
            format_duration(b.self_ns[n]),
            b.count[n]
        ),
        "stack in BASE:".to_string(),
    ];
    let path = b.path(k);
    let skip = path.len().saturating_sub(12);
    if skip > 0 {
        lines.push(format!("  … {skip} more"));
    }
    lines.extend(path[skip..].iter().map(|&k| format!("  {}", name(k))));
    lines
}

/// Lines describing a frame: its stack (innermost last), total, self, count and shares.
pub fn describe(l: &Loaded, s: &ViewState, h: FlameHit) -> Vec<String> {
    let Some(p) = s.flame.pane(h.pane) else {
        return Vec::new();
    };
    let t = &p.tree;
    let n = h.node as usize;
    let name = |k: u32| label_text(&l.trace, t.label[k as usize]).into_owned();
    let mut lines = vec![name(h.node)];
    let total = t.total[n];
    let share = |of: i64| {
        if of > 0 {
            format!("{:.1}%", total as f64 * 100.0 / of as f64)
        } else {
            "-".into()
        }
    };
    let what = if l.trace.is_sampled() {
        "samples"
    } else {
        "spans"
    };
    lines.push(format!(
        "total {} · self {} · {} {what}",
        l.trace.flame_weight_text(total),
        l.trace.flame_weight_text(t.self_ns[n]),
        t.count[n]
    ));
    lines.push(format!(
        "{} of all · {} of the zoomed frame",
        share(t.total[0]),
        share(t.total[p.zoom as usize])
    ));
    if let Some(c) = s.flame.changes_of(h.pane).get(n) {
        lines.extend(changes::describe(c));
    }
    let path = t.path(h.node);
    if path.len() > 1 {
        let what = match h.pane {
            Which::Callers => "called from",
            _ => "stack",
        };
        lines.push(format!("{what}:"));
        let skip = path.len().saturating_sub(12);
        if skip > 0 {
            lines.push(format!("  … {skip} more"));
        }
        for &k in &path[skip..] {
            lines.push(format!("  {}", name(k)));
        }
    }
    lines
}

fn tooltip(
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &ViewState,
    h: FlameHit,
    x: f32,
    y: f32,
) {
    crate::overlay::tooltip_box(scene, fonts, &s.timeline, &describe(l, s, h), x, y);
}
