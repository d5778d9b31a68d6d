//! The egui side panel: trace summary, search, selection details and statistics.
//! (The timeline, ruler and minimap are drawn by render-gl, not egui.)

use egui::{Color32, RichText, ScrollArea, TextEdit, Ui};
use trace_model::{NameStats, SpanRef};

use crate::loaded::Loaded;
use crate::state::ViewState;
use crate::viewport::format_duration;

/// Which statistics column sorts the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortColumn {
    Name,
    Count,
    Total,
    SelfTime,
    Mean,
    Min,
    Max,
}

/// Panel state that is not part of the view.
#[derive(Debug)]
pub struct Panel {
    pub search: String,
    pub focus_search: bool,
    pub open_path: String,
    pub show_open: bool,
    pub sort: SortColumn,
    pub descending: bool,
    /// While a range is being dragged, keep the last statistics (they cost O(spans)).
    pub hold: bool,
    /// Statistics for `stats_for` (the range, or the whole trace when `None`); recomputed
    /// only when the range changes, since they cost O(spans).
    stats: Vec<NameStats>,
    stats_for: Option<Option<(i64, i64)>>,
}

impl Default for Panel {
    fn default() -> Self {
        Panel {
            search: String::new(),
            focus_search: false,
            open_path: String::new(),
            show_open: false,
            sort: SortColumn::SelfTime,
            descending: true,
            hold: false,
            stats: Vec::new(),
            stats_for: None,
        }
    }
}

/// What the panel asked the app to do.
#[derive(Debug, Default)]
pub struct Actions {
    pub open: Option<std::path::PathBuf>,
    pub toggle_theme: bool,
    pub redraw: bool,
}

impl Panel {
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        l: Option<&Loaded>,
        s: Option<&mut ViewState>,
        status: &str,
    ) -> Actions {
        let mut act = Actions::default();
        ui.horizontal(|ui| {
            if ui.button("Open…").on_hover_text("Ctrl+O").clicked() {
                self.show_open = !self.show_open;
            }
            if ui.button("Theme").on_hover_text("T").clicked() {
                act.toggle_theme = true;
            }
        });
        if self.show_open {
            ui.horizontal(|ui| {
                let r =
                    ui.add(TextEdit::singleline(&mut self.open_path).hint_text("path to a trace"));
                let go = ui.button("Load").clicked()
                    || (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
                if go && !self.open_path.trim().is_empty() {
                    act.open = Some(self.open_path.trim().into());
                    self.show_open = false;
                }
            });
        }
        ui.label(RichText::new(status).small());
        let (Some(l), Some(s)) = (l, s) else {
            return act;
        };
        let t = &l.trace;
        ui.label(format!(
            "{} spans · {} threads · {}",
            t.span_count(),
            t.threads().len(),
            format_duration(t.duration_ns())
        ));
        if let Some(w) = &l.warnings {
            ui.colored_label(Color32::from_rgb(200, 120, 0), w);
        }
        ui.separator();

        // Search.
        ui.horizontal(|ui| {
            let r = ui.add(
                TextEdit::singleline(&mut self.search)
                    .hint_text("search names (Ctrl+F or /)")
                    .desired_width(200.0),
            );
            if self.focus_search {
                r.request_focus();
                self.focus_search = false;
            }
            if r.changed() {
                s.search(l, &self.search);
                act.redraw = true;
            }
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if enter {
                let back = ui.input(|i| i.modifiers.shift);
                s.step_match(l, !back);
                act.redraw = true;
                r.request_focus();
            }
            if ui
                .small_button("<")
                .on_hover_text("previous (Shift+Enter)")
                .clicked()
            {
                s.step_match(l, false);
                act.redraw = true;
            }
            if ui.small_button(">").on_hover_text("next (Enter)").clicked() {
                s.step_match(l, true);
                act.redraw = true;
            }
        });
        if s.matches.is_active() {
            let n = s.matches.spans.len();
            match s.matches.current {
                Some(i) => ui.label(format!("match {} of {n}", i + 1)),
                None => ui.label(format!("{n} matches")),
            };
        }
        ui.separator();

        ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                if let Some(r) = s.selected {
                    egui::CollapsingHeader::new(RichText::new("Selection").strong())
                        .default_open(true)
                        .show(ui, |ui| {
                            if let Some(next) = details(ui, l, s, r) {
                                s.select(l, Some(next));
                                s.center_on(l, next);
                                act.redraw = true;
                            }
                        });
                }
                let title = match s.range {
                    Some((a, b)) => format!("Range statistics · {}", format_duration(b - a)),
                    None => "Statistics · whole trace".to_string(),
                };
                egui::CollapsingHeader::new(RichText::new(title).strong())
                    .default_open(true)
                    .show(ui, |ui| {
                        if s.range.is_some() && ui.small_button("clear range (Esc)").clicked() {
                            s.range = None;
                            act.redraw = true;
                        }
                        if let Some(name) = self.stats_table(ui, l, s) {
                            s.highlight_name(l, name);
                            self.search = l.trace.str(name).to_string();
                            act.redraw = true;
                        }
                    });
            });
        act
    }

    /// The statistics table; returns a name whose row was clicked.
    fn stats_table(
        &mut self,
        ui: &mut Ui,
        l: &Loaded,
        s: &ViewState,
    ) -> Option<trace_model::StrId> {
        let stale = self.stats_for != Some(s.range) && !(self.hold && self.stats_for.is_some());
        if stale && s.range.is_none() && l.whole_stats_ready().is_none() {
            ui.label("computing statistics for the whole trace …");
            return None;
        }
        if stale {
            self.stats = s.stats(l);
            self.stats_for = Some(s.range);
            self.sort_rows(l);
        }
        let mut clicked = None;
        let cols = [
            (SortColumn::Name, "name"),
            (SortColumn::Count, "count"),
            (SortColumn::Total, "total"),
            (SortColumn::SelfTime, "self"),
            (SortColumn::Mean, "mean"),
            (SortColumn::Min, "min"),
            (SortColumn::Max, "max"),
        ];
        ScrollArea::horizontal()
            .id_salt("stats_scroll")
            .show(ui, |ui| {
                egui::Grid::new("stats")
                    .striped(true)
                    .min_col_width(36.0)
                    .show(ui, |ui| {
                        for (col, label) in cols {
                            let arrow = if self.sort == col {
                                if self.descending {
                                    " v"
                                } else {
                                    " ^"
                                }
                            } else {
                                ""
                            };
                            if ui
                                .selectable_label(self.sort == col, format!("{label}{arrow}"))
                                .clicked()
                            {
                                if self.sort == col {
                                    self.descending = !self.descending;
                                } else {
                                    self.sort = col;
                                    self.descending = col != SortColumn::Name;
                                }
                                self.sort_rows(l);
                            }
                        }
                        ui.end_row();
                        for row in self.stats.iter().take(300) {
                            let name = l.trace.str(row.name);
                            let shown: String = if name.chars().count() > 28 {
                                name.chars().take(27).chain(['…']).collect()
                            } else {
                                name.to_string()
                            };
                            let highlighted =
                                s.matches.name_matches(row.name) && s.matches.query == name;
                            if ui
                                .selectable_label(highlighted, shown)
                                .on_hover_text(name)
                                .clicked()
                            {
                                clicked = Some(row.name);
                            }
                            ui.label(row.count.to_string());
                            ui.label(format_duration(row.total_ns));
                            ui.label(format_duration(row.self_ns));
                            ui.label(format_duration(row.mean_ns));
                            ui.label(format_duration(row.min_ns));
                            ui.label(format_duration(row.max_ns));
                            ui.end_row();
                        }
                    });
            });
        if self.stats.len() > 300 {
            ui.label(format!(
                "… and {} more (spall-cli stats lists all)",
                self.stats.len() - 300
            ));
        }
        clicked
    }

    fn sort_rows(&mut self, l: &Loaded) {
        let t = &l.trace;
        let key = self.sort;
        self.stats.sort_by(|a, b| {
            let o = match key {
                SortColumn::Name => t.str(a.name).cmp(t.str(b.name)),
                SortColumn::Count => a.count.cmp(&b.count),
                SortColumn::Total => a.total_ns.cmp(&b.total_ns),
                SortColumn::SelfTime => a.self_ns.cmp(&b.self_ns),
                SortColumn::Mean => a.mean_ns.cmp(&b.mean_ns),
                SortColumn::Min => a.min_ns.cmp(&b.min_ns),
                SortColumn::Max => a.max_ns.cmp(&b.max_ns),
            };
            if self.descending {
                o.reverse()
            } else {
                o
            }
        });
    }
}

/// Details of the selected span; returns an ancestor that was clicked.
fn details(ui: &mut Ui, l: &Loaded, s: &ViewState, r: SpanRef) -> Option<SpanRef> {
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
    for (depth, a) in s.call_stack(l, r).into_iter().enumerate() {
        let name = t.str(t.span(a).name);
        let label = format!("{}{}", "  ".repeat(depth), name);
        if a == r {
            ui.label(RichText::new(label).strong());
        } else if ui.link(label).clicked() {
            go = Some(a);
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
