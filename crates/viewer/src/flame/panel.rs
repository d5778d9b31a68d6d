//! The side panel's flame graph section: scope, orientation and order, the breadcrumb,
//! the selected frame with its occurrences, and the sandwich.

use egui::{RichText, Ui};
use trace_model::{label_text, FlameSort, FrameLabel};

use crate::flame::draw::describe;
use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::view::flame::{FlameHit, FlameThreads, FlameView, Mode, Pane, Which};
use crate::view::state::ViewState;
use crate::view::viewport::format_duration;

/// Returns whether the view changed.
pub fn ui(ui: &mut Ui, l: &Loaded, s: &mut ViewState) -> bool {
    let mut changed = scope(ui, l, s);
    changed |= shape(ui, &mut s.flame);
    let Some(main) = s.flame.main.clone() else {
        ui.label("building the flame graph …");
        return changed;
    };
    changed |= breadcrumb(ui, l, &mut s.flame, &main);
    changed |= sandwich_bar(ui, l, &mut s.flame);
    let Some(h) = s.flame.selected else {
        ui.label(RichText::new("click a frame to zoom into it and see its details").weak());
        return changed;
    };
    changed |= selected_frame(ui, l, s, h);
    changed | occurrences(ui, l, s)
}

/// Which spans are merged: all threads, the visible ones or one; apart or not; the range.
fn scope(ui: &mut Ui, l: &Loaded, s: &mut ViewState) -> bool {
    let mut changed = false;
    let t = &l.trace;
    let f = &mut s.flame;
    let selected_thread = match s.timeline.selected {
        Some(Pick::Span(r)) => Some(r.thread),
        _ => None,
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("merge").weak());
        changed |= ui
            .radio_value(&mut f.threads, FlameThreads::All, "all threads")
            .changed();
        changed |= ui
            .radio_value(&mut f.threads, FlameThreads::Visible, "visible threads")
            .on_hover_text("the threads the track filter shows")
            .changed();
        let one = selected_thread.map(FlameThreads::One);
        let label = match one {
            Some(FlameThreads::One(ti)) => format!("thread {}", t.thread_label(ti)),
            _ => "one thread (select a span)".into(),
        };
        let is_one = matches!(f.threads, FlameThreads::One(_));
        if ui
            .add_enabled(
                one.is_some() || is_one,
                egui::RadioButton::new(is_one, label),
            )
            .clicked()
        {
            if let Some(o) = one {
                f.threads = o;
                changed = true;
            }
        }
    });
    ui.horizontal_wrapped(|ui| {
        changed |= ui
            .checkbox(&mut f.per_thread, "keep threads apart")
            .changed();
        let range = s.range.map(|(a, b)| format_duration(b - a));
        let text = match &range {
            Some(d) => format!("only the range ({d})"),
            None => "only the range (Shift+drag in the timeline)".into(),
        };
        changed |= ui.checkbox(&mut f.use_range, text).changed();
    });
    changed
}

/// Icicle or flame, and the order of siblings.
fn shape(ui: &mut Ui, f: &mut FlameView) -> bool {
    let mut changed = false;
    ui.horizontal(|ui| {
        if ui
            .selectable_label(f.icicle, "icicle")
            .on_hover_text("root at the top (I)")
            .clicked()
        {
            f.icicle = true;
            changed = true;
        }
        if ui
            .selectable_label(!f.icicle, "flame")
            .on_hover_text("root at the bottom (I)")
            .clicked()
        {
            f.icicle = false;
            changed = true;
        }
        ui.separator();
        for (sort, text) in [
            (FlameSort::Heaviest, "heaviest first"),
            (FlameSort::Name, "by name"),
        ] {
            if ui
                .selectable_label(f.sort == sort, text)
                .on_hover_text("O")
                .clicked()
            {
                f.sort = sort;
                changed = true;
            }
        }
    });
    changed
}

/// The zoomed frame's path from the root: click to zoom back out.
fn breadcrumb(ui: &mut Ui, l: &Loaded, f: &mut FlameView, main: &Pane) -> bool {
    let mut changed = false;
    let t = &l.trace;
    if main.zoom != 0 {
        ui.horizontal_wrapped(|ui| {
            let mut go = None;
            if ui.link("all").clicked() {
                go = Some(0);
            }
            for n in main.tree.path(main.zoom) {
                ui.label("›");
                let text = label_text(t, main.tree.label[n as usize]);
                if n == main.zoom {
                    ui.label(RichText::new(text).strong());
                } else if ui.link(text).clicked() {
                    go = Some(n);
                }
            }
            if let (Some(n), Some(p)) = (go, f.main.as_mut()) {
                p.zoom = n;
                changed = true;
            }
        });
    }
    changed
}

/// Which function's sandwich is shown, with a button to close it.
fn sandwich_bar(ui: &mut Ui, l: &Loaded, f: &mut FlameView) -> bool {
    let mut changed = false;
    let t = &l.trace;
    if let Some(sw) = &f.sandwich {
        let mut close = false;
        ui.horizontal(|ui| {
            ui.label(format!("sandwich of {}", label_text(t, sw.label)));
            close = ui.small_button("close (V)").clicked();
        });
        if close {
            f.sandwich = None;
            changed = true;
        }
    }
    changed
}

/// The selected frame's details, and a button for its sandwich.
fn selected_frame(ui: &mut Ui, l: &Loaded, s: &mut ViewState, h: FlameHit) -> bool {
    let mut changed = false;
    ui.separator();
    for (i, line) in describe(l, s, h).iter().enumerate() {
        if i == 0 {
            ui.label(RichText::new(line).strong());
        } else {
            ui.label(RichText::new(line).small());
        }
    }
    let opts = s.flame_options(l);
    let f = &mut s.flame;
    let label = f.selected_label();
    ui.horizontal(|ui| {
        if let Some(lab @ FrameLabel::Name(_)) = label {
            if ui
                .button("sandwich")
                .on_hover_text("callers and callees of this function, merged (V)")
                .clicked()
            {
                f.open_sandwich(l, lab);
                f.select(
                    l,
                    &opts,
                    Some(FlameHit {
                        pane: Which::Callees,
                        node: 0,
                    }),
                );
                changed = true;
            }
        }
    });
    changed
}

/// The spans merged into the selected frame: step through them or pick one to show it
/// in the timeline.
fn occurrences(ui: &mut Ui, l: &Loaded, s: &mut ViewState) -> bool {
    let mut changed = false;
    let t = &l.trace;
    let f = &mut s.flame;
    let n = f.occurrences.len();
    if n == 0 {
        return false;
    }
    let mut step = None;
    ui.horizontal(|ui| {
        let at = f
            .occurrence
            .map_or(String::new(), |i| format!("{} of ", i + 1));
        ui.label(format!("occurrences: {at}{n}"));
        if ui.small_button("<").on_hover_text("previous").clicked() {
            step = Some(false);
        }
        if ui.small_button(">").on_hover_text("next").clicked() {
            step = Some(true);
        }
    });
    let mut go = step.and_then(|fwd| f.step_occurrence(fwd));
    egui::ScrollArea::vertical()
        .id_salt("occurrences")
        .max_height(160.0)
        .show(ui, |ui| {
            for (i, &r) in f.occurrences.iter().enumerate().take(200) {
                let sp = t.span(r);
                let text = format!(
                    "{} at {} · {}",
                    format_duration(sp.dur),
                    format_duration(sp.start - t.start_ns()),
                    t.thread_label(r.thread)
                );
                if ui.selectable_label(f.occurrence == Some(i), text).clicked() {
                    go = Some(r);
                }
            }
        });
    if let Some(r) = go {
        f.occurrence = f.occurrences.iter().position(|&x| x == r);
        show_in_timeline(l, s, r);
        changed = true;
    }
    changed
}

/// Switches to the timeline with the span selected and in view.
fn show_in_timeline(l: &Loaded, s: &mut ViewState, r: trace_model::SpanRef) {
    s.mode = Mode::Timeline;
    s.timeline.select(l, Some(r));
    s.timeline.zoom_to(l, r);
}
