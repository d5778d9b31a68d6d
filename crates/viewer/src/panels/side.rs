//! The egui side panel: trace summary, search, selection details and statistics.
//! (The timeline, ruler and minimap are drawn by render-gl, not egui.)

use egui::{Color32, RichText, ScrollArea, TextEdit, Ui};
use trace_model::NameStats;

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::panels::details::{details, other_details};
use crate::panels::names::NameAnalysis;
use crate::view::flame::Mode;
use crate::view::layout::{track_list, Track};
use crate::view::state::{Side, ViewState};

mod alignment;
mod range;
mod stats;

use crate::view::viewport::format_duration;
use range::RangeKinds;
pub use stats::SortColumn;

/// Panel state that is not part of the view.
#[derive(Debug)]
pub struct Panel {
    /// The name search's text.
    pub search: String,
    /// Give the search box the keyboard focus at the next frame.
    pub focus_search: bool,
    /// The path typed in the open prompt.
    pub open_path: String,
    /// Whether the open prompt (for where there is no file dialog) is shown.
    pub show_open: bool,
    /// The open prompt picks compare mode's BASE, not the trace to show.
    pub open_for_base: bool,
    /// Compare mode: the name of the trace (BASE) the one shown is compared with, or that
    /// it is loading.
    pub comparing: Option<String>,
    /// The column the statistics are sorted by.
    pub sort: SortColumn,
    /// Whether the sort is largest first.
    pub descending: bool,
    /// While a range is being dragged, keep the last statistics (they cost O(spans)).
    pub hold: bool,
    /// Statistics for `stats_for` (the range, or the whole trace when `None`); recomputed
    /// only when the range changes, since they cost O(spans).
    stats: Vec<NameStats>,
    stats_for: Option<Option<(i64, i64)>>,
    /// The track filter's text.
    pub track_filter: String,
    /// Counters and async slices over the range they were computed for.
    range_kinds: Option<((i64, i64), RangeKinds)>,
    /// The statistics table's name filter.
    pub stats_filter: String,
    /// The statistics table's optional columns that are shown, in no particular order.
    pub stats_extra: Vec<SortColumn>,
    /// Where the table's column headers were last drawn (for layout tests).
    pub header_rects: Vec<egui::Rect>,
    resort: bool,
    /// Compare mode: BASE's figures for the table's base and Δ columns.
    base_self: Option<stats::BaseSelf>,
    /// The analysis of the name last clicked in the table.
    pub analysis: Option<NameAnalysis>,
    /// The SQL section.
    pub query: crate::panels::query::QueryPanel,
    /// A marker just added, whose note gets the keyboard.
    pub focus_marker: Option<usize>,
    /// Compare mode: a marker just added to BASE's list, whose note gets the keyboard.
    pub focus_base_marker: Option<usize>,
    /// Recently opened files, most recent first (the File ▸ Recent menu).
    pub recent: Vec<std::path::PathBuf>,
}

impl Default for Panel {
    fn default() -> Self {
        Panel {
            search: String::new(),
            focus_search: false,
            open_path: String::new(),
            show_open: false,
            open_for_base: false,
            comparing: None,
            sort: SortColumn::SelfTime,
            descending: true,
            hold: false,
            stats: Vec::new(),
            stats_for: None,
            track_filter: String::new(),
            range_kinds: None,
            stats_filter: String::new(),
            stats_extra: Vec::new(),
            header_rects: Vec::new(),
            resort: false,
            base_self: None,
            analysis: None,
            query: Default::default(),
            focus_marker: None,
            focus_base_marker: None,
            recent: Vec::new(),
        }
    }
}

impl Panel {
    /// A panel whose statistics table also shows these optional columns.
    pub fn with_columns(stats_extra: Vec<SortColumn>) -> Panel {
        Panel {
            stats_extra,
            ..Panel::default()
        }
    }
}

/// What the panel asked the app to do.
#[derive(Debug, Default)]
pub struct Actions {
    /// Open this file.
    pub open: Option<std::path::PathBuf>,
    /// Show the page's file picker (the web build has no paths to type).
    pub pick_file: bool,
    /// Compare with this file (BASE).
    pub compare: Option<std::path::PathBuf>,
    /// Show the file dialog for compare mode's BASE.
    pub pick_base: bool,
    /// Leave compare mode.
    pub stop_comparing: bool,
    /// Switch between the light and dark themes.
    pub toggle_theme: bool,
    /// The timeline needs drawing again (the view changed).
    pub redraw: bool,
}

impl Panel {
    /// Draws the panel for this frame and returns what it asks of the app; `status` is the
    /// line shown under the file row.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        l: Option<&Loaded>,
        s: Option<&mut ViewState>,
        status: &str,
    ) -> Actions {
        let mut act = Actions::default();
        self.file_row(ui, &mut act);
        ui.label(RichText::new(status).small());
        let (Some(l), Some(s)) = (l, s) else {
            if l.is_none() {
                self.recent_list(ui, &mut act);
            }
            return act;
        };
        summary(ui, l);
        self.search_row(ui, l, s, &mut act);
        mode_switch(ui, s, &mut act);
        alignment::align_row(ui, l, s, &mut act);
        ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                self.view_sections(ui, l, s, &mut act);
                self.stats_sections(ui, l, s, &mut act);
                self.query_and_tracks(ui, l, s, &mut act);
            });
        act
    }

    /// Open, Theme and Recent, and the path prompt where there is no file dialog.
    fn file_row(&mut self, ui: &mut Ui, act: &mut Actions) {
        ui.horizontal(|ui| {
            if ui.button("Open…").on_hover_text("Ctrl+O").clicked() {
                // The file dialog (the page's picker on the web); a second click hides the
                // path prompt shown where there is no dialog.
                if self.show_open {
                    self.show_open = false;
                } else {
                    act.pick_file = true;
                }
            }
            if ui.button("Theme").on_hover_text("T").clicked() {
                act.toggle_theme = true;
            }
            if !self.recent.is_empty() {
                ui.menu_button("Recent", |ui| {
                    for p in &self.recent {
                        let name = p
                            .file_name()
                            .map_or(p.to_string_lossy(), |n| n.to_string_lossy());
                        let r = ui.button(name).on_hover_text(p.display().to_string());
                        if r.clicked() {
                            act.open = Some(p.clone());
                            ui.close();
                        }
                    }
                });
            }
            // A page opens its second file picker.
            if ui
                .button("Compare with…")
                .on_hover_text(
                    "compare with another trace (BASE): the flame graph coloured by each \
                     frame's change, BASE's timeline under this one's",
                )
                .clicked()
            {
                act.pick_base = true;
            }
        });
        if self.show_open {
            ui.horizontal(|ui| {
                let hint = if self.open_for_base {
                    "path to the trace to compare with"
                } else {
                    "path to a trace"
                };
                let r = ui.add(TextEdit::singleline(&mut self.open_path).hint_text(hint));
                let go = ui.button("Load").clicked()
                    || (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
                if go && !self.open_path.trim().is_empty() {
                    let path = Some(self.open_path.trim().into());
                    if std::mem::take(&mut self.open_for_base) {
                        act.compare = path;
                    } else {
                        act.open = path;
                    }
                    self.show_open = false;
                }
            });
        }
        if let Some(base) = &self.comparing {
            ui.horizontal(|ui| {
                ui.label(RichText::new(format!("compared with {base}")).small())
                    .on_hover_text(
                        "flame graph: red slower, blue faster than BASE, grey unchanged",
                    );
                if ui.small_button("Stop").clicked() {
                    act.stop_comparing = true;
                }
            });
        }
    }

    /// The search box, its steps, and how many matches.
    fn search_row(&mut self, ui: &mut Ui, l: &Loaded, s: &mut ViewState, act: &mut Actions) {
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
        if s.timeline.matches.is_active() {
            // In compare mode, both panes' matches (Enter steps through both).
            let (n, at) = s.match_position(l);
            let base = s.compare.as_deref().map(|c| c.view.matches.len());
            match (at, base) {
                (Some((i, Side::Base)), _) => ui.label(format!("match {} of {n}, in BASE", i + 1)),
                (Some((i, _)), _) => ui.label(format!("match {} of {n}", i + 1)),
                (None, Some(b)) => ui.label(format!("{n} matches ({b} in BASE)")),
                (None, None) => ui.label(format!("{n} matches")),
            };
        }
        ui.separator();
    }

    /// The sections about what is shown: the flame graph's, the selection, the markers.
    fn view_sections(&mut self, ui: &mut Ui, l: &Loaded, s: &mut ViewState, act: &mut Actions) {
        if s.mode == Mode::Flame {
            egui::CollapsingHeader::new(RichText::new("Flame graph").strong())
                .default_open(true)
                .show(ui, |ui| {
                    if crate::flame::panel::ui(ui, l, s) {
                        act.redraw = true;
                    }
                });
        }
        if let (Some(p), Mode::Timeline) = (s.timeline.selected, s.mode) {
            egui::CollapsingHeader::new(RichText::new("Selection").strong())
                .default_open(true)
                .show(ui, |ui| {
                    let next = match p {
                        Pick::Span(r) => details(ui, l, s, r),
                        p => {
                            other_details(ui, l, p);
                            None
                        }
                    };
                    if let Some(next) = next {
                        s.timeline.select(l, Some(next));
                        s.timeline.center_on(l, next);
                        act.redraw = true;
                    }
                });
        }
        if !s.timeline.markers.is_empty() && s.mode == Mode::Timeline {
            let title = format!("Markers · {}", s.timeline.markers.len());
            egui::CollapsingHeader::new(RichText::new(title).strong())
                .default_open(true)
                .show(ui, |ui| {
                    let focus = self.focus_marker.take();
                    if crate::timeline::markers::panel(ui, l, s, focus) {
                        act.redraw = true;
                    }
                });
        }
        let base_markers = s.compare.as_deref().map_or(0, |c| c.view.markers.len());
        if base_markers > 0 && s.mode == Mode::Timeline {
            let title = format!("BASE's markers · {base_markers}");
            egui::CollapsingHeader::new(RichText::new(title).strong())
                .default_open(true)
                .show(ui, |ui| {
                    let focus = self.focus_base_marker.take();
                    if crate::timeline::markers::base_panel(ui, s, focus) {
                        act.redraw = true;
                    }
                });
        }
    }

    /// The statistics (of the range, else the whole trace) and one name's durations.
    fn stats_sections(&mut self, ui: &mut Ui, l: &Loaded, s: &mut ViewState, act: &mut Actions) {
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
                    // Compare mode: the first call in each timeline, lined up.
                    if s.compare.is_some() {
                        s.jump_to_name(l, l.trace.str(name));
                    }
                    self.search = l.trace.str(name).to_string();
                    self.analysis = Some(NameAnalysis::new(l, name, s.range));
                    act.redraw = true;
                }
                if let Some((a, b)) = s.range {
                    let stale = self.range_kinds.as_ref().map(|r| r.0) != Some((a, b));
                    // While a range is dragged, keep the last figures, as the
                    // statistics do.
                    if stale && !(self.hold && self.range_kinds.is_some()) {
                        self.range_kinds = Some(((a, b), RangeKinds::new(l, a, b)));
                    }
                    if let Some((_, k)) = &self.range_kinds {
                        k.show(ui);
                    }
                }
            });
        // The analysis follows the range, as the table does.
        let stale = self
            .analysis
            .as_ref()
            .filter(|a| a.range != s.range && !self.hold)
            .map(|a| a.name);
        if let Some(name) = stale {
            self.analysis = Some(NameAnalysis::new(l, name, s.range));
        }
        if let Some(a) = &self.analysis {
            egui::CollapsingHeader::new(RichText::new("Durations of one name").strong())
                .default_open(true)
                .show(ui, |ui| {
                    if let Some(r) = a.ui(ui, l) {
                        s.mode = Mode::Timeline;
                        s.timeline.select(l, Some(r));
                        s.timeline.zoom_to(l, r);
                        act.redraw = true;
                    }
                });
        }
    }

    /// The SQL section and the track filter.
    fn query_and_tracks(&mut self, ui: &mut Ui, l: &Loaded, s: &mut ViewState, act: &mut Actions) {
        let reveal = std::mem::take(&mut self.query.reveal);
        egui::CollapsingHeader::new(RichText::new("SQL").strong())
            .default_open(false)
            .open(reveal.then_some(true))
            .show(ui, |ui| {
                use crate::panels::query::Show;
                match self.query.ui(ui, l) {
                    Some(Show::Slice(r)) => {
                        s.mode = Mode::Timeline;
                        s.timeline.select(l, Some(r));
                        s.timeline.zoom_to(l, r);
                        act.redraw = true;
                    }
                    Some(Show::Range(a, b)) => {
                        s.mode = Mode::Timeline;
                        s.timeline.viewport.show(a, b);
                        act.redraw = true;
                    }
                    None => {}
                }
            });
        egui::CollapsingHeader::new(RichText::new("Tracks").strong())
            .default_open(false)
            .show(ui, |ui| {
                if self.track_list(ui, l, s) {
                    act.redraw = true;
                }
            });
    }

    /// The track filter: a searchable list of processes, threads, counters and async
    /// tracks, each with a visibility box and (processes and threads) a pin. Returns whether
    /// the layout changed.
    fn track_list(&mut self, ui: &mut Ui, l: &Loaded, s: &mut ViewState) -> bool {
        const MAX_LISTED: usize = 300;
        let mut changed = false;
        let mut show_all = None;
        ui.horizontal(|ui| {
            ui.add(
                TextEdit::singleline(&mut self.track_filter)
                    .hint_text("filter tracks by name")
                    .desired_width(160.0),
            );
            if ui
                .small_button("show")
                .on_hover_text("show the listed tracks")
                .clicked()
            {
                show_all = Some(true);
            }
            if ui
                .small_button("hide")
                .on_hover_text("hide the listed tracks")
                .clicked()
            {
                show_all = Some(false);
            }
        });
        let q = self.track_filter.to_lowercase();
        let all = track_list(&l.trace, &l.kinds);
        let listed: Vec<_> = all
            .iter()
            .filter(|x| x.1.to_lowercase().contains(&q))
            .collect();
        if let Some(show) = show_all {
            for &&(t, ..) in &listed {
                s.timeline.collapsed.set_hidden(t, !show);
            }
            changed = true;
        }
        for (track, label, indent) in listed.iter().take(MAX_LISTED) {
            ui.horizontal(|ui| {
                ui.add_space(*indent as f32 * 14.0);
                let mut shown = !s.timeline.collapsed.is_hidden(*track);
                if ui.checkbox(&mut shown, label.as_str()).changed() {
                    s.timeline.collapsed.set_hidden(*track, !shown);
                    changed = true;
                }
                if matches!(track, Track::Process(_) | Track::Thread(_)) {
                    let pinned = s.timeline.collapsed.is_pinned(*track);
                    let text = if pinned { "unpin" } else { "pin" };
                    if ui
                        .small_button(text)
                        .on_hover_text("keep this track at the top")
                        .clicked()
                    {
                        s.timeline.collapsed.set_pinned(*track, !pinned);
                        changed = true;
                    }
                }
            });
        }
        if listed.len() > MAX_LISTED {
            ui.label(format!(
                "{} more; narrow the filter",
                listed.len() - MAX_LISTED
            ));
        }
        if changed {
            s.timeline.relayout(l);
        }
        changed
    }

    /// The empty window's list of recent traces, one click to open (files that are gone
    /// are shown greyed out).
    fn recent_list(&self, ui: &mut Ui, act: &mut Actions) {
        if self.recent.is_empty() {
            return;
        }
        ui.separator();
        ui.label(RichText::new("Recent traces").strong());
        for p in &self.recent {
            let name = p
                .file_name()
                .map_or(p.to_string_lossy(), |n| n.to_string_lossy());
            let exists = cfg!(target_arch = "wasm32") || p.exists();
            let r = ui
                .add_enabled(exists, egui::Button::new(name).frame(false))
                .on_hover_text(p.display().to_string())
                .on_disabled_hover_text(format!("{} (no longer there)", p.display()));
            if r.clicked() {
                act.open = Some(p.clone());
            }
            if let Some(dir) = p.parent() {
                ui.label(RichText::new(dir.display().to_string()).small().weak());
            }
        }
    }
}

/// The trace's size and length, and its load warnings.
fn summary(ui: &mut Ui, l: &Loaded) {
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
}

/// Timeline or flame graph.
fn mode_switch(ui: &mut Ui, s: &mut ViewState, act: &mut Actions) {
    ui.horizontal(|ui| {
        for (mode, text) in [(Mode::Timeline, "Timeline"), (Mode::Flame, "Flame graph")] {
            if ui
                .selectable_label(s.mode == mode, text)
                .on_hover_text("G switches")
                .clicked()
            {
                s.mode = mode;
                act.redraw = true;
            }
        }
    });
}
