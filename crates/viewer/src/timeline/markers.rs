//! Markers: flags at a time, with a note, drawn across the tracks and listed in the panel.
//! They are kept per file with the view ([`crate::persist::saved_view`]) and shared through
//! `spall-cli markers --save` ([`trace_model::annotations`]).
//!
//! In compare mode BASE has markers of its own, at BASE's times: placed with the pointer
//! in BASE's pane, drawn there (flagged on the divider) and listed apart; NEW's lines run
//! on through BASE's pane at their time on the shared axis.

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_model::Marker;

use crate::loaded::Loaded;
use crate::view::state::{BaseTimeline, Side, ViewState};
use crate::view::timeline::TimelineView;
use crate::view::timeline::DIVIDER_H;

/// Markers a trace may hold (adding one more replaces nothing and is refused).
pub const MAX_MARKERS: usize = 1000;

const FLAG: Color = Color::rgb(230, 60, 160);
/// BASE's own markers' colour, apart from NEW's lines that cross BASE's pane.
pub const BASE_FLAG: Color = Color::rgb(0, 150, 200);

/// Adds a marker at `at` (absolute ns, clamped to the trace); returns its index, or `None`
/// when the list is full.
pub fn add(s: &mut TimelineView, l: &Loaded, at: i64) -> Option<usize> {
    if s.markers.len() >= MAX_MARKERS {
        return None;
    }
    let (start, end) = (l.trace.start_ns(), l.trace.end_ns());
    let at_ns = at.clamp(start, end.max(start)) - start;
    let i = s.markers.partition_point(|m| m.at_ns <= at_ns);
    s.markers.insert(
        i,
        Marker {
            at_ns,
            note: String::new(),
        },
    );
    Some(i)
}

/// N with the pointer at `(x, y)`: a marker at the time under `x`, in compare mode BASE's
/// (at BASE's time) when `y` is in BASE's pane or on its divider, else NEW's. Returns
/// whose list it went to and where, or `None` when that list is full.
pub fn add_at(s: &mut ViewState, l: &Loaded, x: f32, y: f32) -> Option<(Side, usize)> {
    let at = s.timeline.viewport.time_at(x as f64);
    if s.in_base(y) {
        let c = s.compare.as_deref_mut()?;
        let b = c.loaded.clone();
        return add(&mut c.view, &b, at + c.offset).map(|i| (Side::Base, i));
    }
    add(&mut s.timeline, l, at).map(|i| (Side::New, i))
}

/// A line through the tracks and a flag with the note on the ruler, for each marker in view.
pub fn draw(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    let ruler = (s.timeline.minimap_h(), s.timeline.ruler_h());
    flags(
        scene,
        fonts,
        &s.timeline,
        l.trace.start_ns(),
        ruler,
        FLAG,
        "#",
    );
}

/// Compare mode: BASE's own markers, lines through BASE's pane (whose viewport is the
/// shared axis shifted to BASE's times) and flags on the divider above it.
pub(crate) fn draw_base(scene: &mut Scene, fonts: &mut Fonts, c: &BaseTimeline) {
    let v = &c.view;
    let h = DIVIDER_H * v.scale;
    let divider = (v.tracks_top() - h, h);
    flags(
        scene,
        fonts,
        v,
        c.loaded.trace.start_ns(),
        divider,
        BASE_FLAG,
        "BASE #",
    );
}

/// `s`'s markers in view (times after `start`): a line through its tracks, and a flag
/// with the note (else `prefix` and the number) in the strip `(y, h)`.
fn flags(
    scene: &mut Scene,
    fonts: &mut Fonts,
    s: &TimelineView,
    start: i64,
    (y, ruler_h): (f32, f32),
    colour: Color,
    prefix: &str,
) {
    if s.markers.is_empty() {
        return;
    }
    let (t0, t1) = s.viewport.visible();
    let px = 11.0 * s.scale;
    let first = s.markers.partition_point(|m| start + m.at_ns < t0);
    for (k, m) in s.markers[first..].iter().enumerate() {
        let at = start + m.at_ns;
        if at > t1 {
            break;
        }
        let x = s.viewport.x(at) as f32;
        scene.rect(
            x,
            s.tracks_top(),
            1.0,
            s.tracks_height(),
            colour.with_alpha(170),
        );
        scene.rect(x, y, 2.0, ruler_h, colour);
        let label = if m.note.is_empty() {
            format!("{prefix}{}", first + k + 1)
        } else {
            m.note.chars().take(40).collect()
        };
        let lw = fonts.measure(&label, px);
        scene.rect(x + 2.0, y + 1.0, lw + 8.0, ruler_h - 2.0, colour);
        scene.text(
            fonts,
            x + 6.0,
            y + ruler_h / 2.0,
            px,
            VAlign::Center,
            Color::rgb(255, 255, 255),
            &label,
        );
    }
}

/// Compare mode: the markers' lines on through BASE's pane, from pixel row `top` down,
/// at their times on the shared axis (NEW's).
pub(crate) fn lines_below(scene: &mut Scene, l: &Loaded, s: &ViewState, top: f32) {
    let (t0, t1) = s.timeline.viewport.visible();
    let start = l.trace.start_ns();
    let h = (s.timeline.height - top).max(0.0);
    for m in &s.timeline.markers {
        let at = start + m.at_ns;
        if (t0..=t1).contains(&at) {
            let x = s.timeline.viewport.x(at) as f32;
            scene.rect(x, top, 1.0, h, FLAG.with_alpha(170));
        }
    }
}

/// The panel's list: each marker's time (click to centre on it), its note, and a button
/// that deletes it. Returns whether anything changed that the timeline shows.
pub fn panel(ui: &mut egui::Ui, l: &Loaded, s: &mut ViewState, focus: Option<usize>) -> bool {
    let (changed, go) = rows(ui, &mut s.timeline.markers, focus);
    if let Some(at) = go {
        let at = l.trace.start_ns() + at;
        s.timeline.center_range(at, at);
    }
    changed || go.is_some()
}

/// Compare mode: the panel's list of BASE's markers, as [`panel`]'s; a click on a time
/// centres the shared axis on it, in BASE's pane.
pub fn base_panel(ui: &mut egui::Ui, s: &mut ViewState, focus: Option<usize>) -> bool {
    let Some(c) = s.compare.as_deref_mut() else {
        return false;
    };
    let (changed, go) = rows(ui, &mut c.view.markers, focus);
    if let Some(at) = go {
        let at = c.loaded.trace.start_ns() + at - c.offset;
        s.timeline.center_range(at, at);
        s.sync_compare();
    }
    changed || go.is_some()
}

/// The rows of a list of markers: whether a note changed or one was deleted, and the
/// time clicked, if any (ns after the trace's start).
fn rows(ui: &mut egui::Ui, markers: &mut Vec<Marker>, focus: Option<usize>) -> (bool, Option<i64>) {
    let mut changed = false;
    let mut delete = None;
    let mut go = None;
    for (i, m) in markers.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let t = crate::view::viewport::format_duration(m.at_ns);
            if ui.link(t).on_hover_text("show this time").clicked() {
                go = Some(m.at_ns);
            }
            let edit = ui.add(
                egui::TextEdit::singleline(&mut m.note)
                    .hint_text("note")
                    .desired_width(ui.available_width() - 28.0),
            );
            if focus == Some(i) {
                edit.request_focus();
            }
            changed |= edit.changed();
            if ui.small_button("×").on_hover_text("delete").clicked() {
                delete = Some(i);
            }
        });
    }
    if let Some(i) = delete {
        markers.remove(i);
        changed = true;
    }
    (changed, go)
}
