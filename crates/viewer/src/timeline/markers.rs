//! Markers: flags at a time, with a note, drawn across the tracks and listed in the panel.
//! They are kept per file with the view ([`crate::persist::saved_view`]) and shared through
//! `spall-cli markers --save` ([`trace_model::annotations`]).

use render_gl::{Color, Fonts, Scene, VAlign};
use trace_model::Marker;

use crate::loaded::Loaded;
use crate::view::state::ViewState;

/// Markers a trace may hold (adding one more replaces nothing and is refused).
pub const MAX_MARKERS: usize = 1000;

const FLAG: Color = Color::rgb(230, 60, 160);

/// Adds a marker at `at` (absolute ns, clamped to the trace); returns its index, or `None`
/// when the list is full.
pub fn add(s: &mut ViewState, l: &Loaded, at: i64) -> Option<usize> {
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

/// A line through the tracks and a flag with the note on the ruler, for each marker in view.
pub fn draw(scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
    if s.markers.is_empty() {
        return;
    }
    let (y, ruler_h) = (s.minimap_h(), s.ruler_h());
    let (t0, t1) = s.viewport.visible();
    let start = l.trace.start_ns();
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
            FLAG.with_alpha(170),
        );
        scene.rect(x, y, 2.0, ruler_h, FLAG);
        let label = if m.note.is_empty() {
            format!("#{}", first + k + 1)
        } else {
            m.note.chars().take(40).collect()
        };
        let lw = fonts.measure(&label, px);
        scene.rect(x + 2.0, y + 1.0, lw + 8.0, ruler_h - 2.0, FLAG);
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
    let (t0, t1) = s.viewport.visible();
    let start = l.trace.start_ns();
    let h = (s.height - top).max(0.0);
    for m in &s.markers {
        let at = start + m.at_ns;
        if (t0..=t1).contains(&at) {
            let x = s.viewport.x(at) as f32;
            scene.rect(x, top, 1.0, h, FLAG.with_alpha(170));
        }
    }
}

/// The panel's list: each marker's time (click to centre on it), its note, and a button
/// that deletes it. Returns whether anything changed that the timeline shows.
pub fn panel(ui: &mut egui::Ui, l: &Loaded, s: &mut ViewState, focus: Option<usize>) -> bool {
    let mut changed = false;
    let mut delete = None;
    let mut go = None;
    for (i, m) in s.markers.iter_mut().enumerate() {
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
        s.markers.remove(i);
        changed = true;
    }
    if let Some(at) = go {
        let at = l.trace.start_ns() + at;
        s.center_range(at, at);
        changed = true;
    }
    changed
}
