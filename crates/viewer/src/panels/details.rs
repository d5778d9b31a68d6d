//! The side panel's details of the selection: a span with its ancestors and arguments, or
//! another kind of event.

use egui::{RichText, ScrollArea, Ui};
use trace_model::SpanRef;

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::timeline::kinds::describe;
use crate::view::state::ViewState;
use crate::view::viewport::format_duration;

/// Details of the selected span; returns an ancestor that was clicked.
pub(crate) fn details(ui: &mut Ui, l: &Loaded, s: &ViewState, r: SpanRef) -> Option<SpanRef> {
    let t = &l.trace;
    let sp = t.span(r);
    let mut go = None;
    egui::Grid::new("details").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(RichText::new(k).weak());
            ui.label(v);
            ui.end_row();
        };
        row("name", t.str(sp.name).to_string());
        if sp.cat != trace_model::StrId::EMPTY {
            row("category", t.str(sp.cat).to_string());
        }
        row("thread", t.thread_label(r.thread));
        row("start", format_duration(sp.start - t.start_ns()));
        row("duration", format_duration(sp.dur));
        row("self", format_duration(t.self_ns(r)));
        if sp.flags & trace_model::flags::UNFINISHED != 0 {
            row("note", "never ended: closed at the trace's end".into());
        }
        if sp.flags & trace_model::flags::PARTIAL_OVERLAP != 0 {
            row("note", "ends after its parent (kept whole)".into());
        }
    });
    if let Some(args) = t.args().json(sp.args) {
        ui.label(RichText::new("args").weak());
        let pretty = serde_json::to_string_pretty(&args).unwrap_or_default();
        ScrollArea::vertical()
            .id_salt("args")
            .max_height(160.0)
            .show(ui, |ui| {
                ui.monospace(pretty);
            });
    }
    ui.label(RichText::new("call stack").weak());
    for (depth, a) in s.timeline.call_stack(l, r).into_iter().enumerate() {
        let name = t.str(t.span(a).name);
        let label = format!("{}{}", "  ".repeat(depth), name);
        if a == r {
            ui.label(RichText::new(label).strong());
        } else if ui.link(label).clicked() {
            go = Some(a);
        }
    }
    let mut flows: Vec<(&str, SpanRef)> = Vec::new();
    flows.extend(t.flows_into(r).map(|f| ("from", f.from)));
    flows.extend(t.flows_from(r).map(|f| ("to", f.to)));
    if !flows.is_empty() {
        ui.label(RichText::new("flows (click to go to the other end)").weak());
        for (dir, other) in flows.into_iter().take(50) {
            let o = t.span(other);
            let label = format!(
                "{dir} {} · {} at {}",
                t.str(o.name),
                t.thread_label(other.thread),
                format_duration(o.start - t.start_ns())
            );
            if ui.link(label).clicked() {
                go = Some(other);
            }
        }
    }
    let kids = l.trace.children_by_name(r);
    if !kids.is_empty() {
        ui.label(RichText::new("children by name").weak());
        egui::Grid::new("children").striped(true).show(ui, |ui| {
            for (name, count, total) in kids.iter().take(50) {
                ui.label(t.str(*name));
                ui.label(format!("×{count}"));
                ui.label(format_duration(*total));
                ui.end_row();
            }
        });
    }
    go
}

/// Details of a selected instant, async slice, counter value or sample: the tooltip's lines
/// and the event's arguments.
pub(crate) fn other_details(ui: &mut Ui, l: &Loaded, p: Pick) {
    let t = &l.trace;
    let lines = describe(l, p);
    if let Some((title, rest)) = lines.split_first() {
        ui.label(RichText::new(title).strong());
        for line in rest {
            ui.monospace(line);
        }
    }
    let (thread, args) = match p {
        Pick::Instant(i) => {
            let e = &t.instants()[i as usize];
            (Some(e.thread), vec![("args", e.args)])
        }
        Pick::Async(i) => {
            let a = &t.async_slices()[i as usize];
            (
                Some(a.thread),
                vec![("args", a.args), ("end args", a.end_args)],
            )
        }
        Pick::Sample { track, .. } | Pick::Stack { track, .. } => {
            (Some(t.samples()[track as usize].thread), Vec::new())
        }
        _ => (None, Vec::new()),
    };
    if let Some(th) = thread {
        ui.label(format!("thread {}", t.thread_label(th)));
    }
    for (label, id) in args {
        if let Some(json) = t.args().json(id) {
            ui.label(RichText::new(label).weak());
            ui.monospace(serde_json::to_string_pretty(&json).unwrap_or_default());
        }
    }
}
