//! The egui side panel: trace summary, search, selection details and statistics.
//! (The timeline, ruler and minimap are drawn by render-gl, not egui.)

use egui::{Color32, RichText, ScrollArea, TextEdit, Ui};
use trace_model::NameStats;

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::panels::csv::table_text;
use crate::panels::details::{details, other_details};
use crate::panels::names::NameAnalysis;
use crate::view::flame::Mode;
use crate::view::layout::{track_list, Track};
use crate::view::state::ViewState;
use crate::view::viewport::{format_duration, format_value};

/// Which statistics column sorts the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortColumn {
    /// The span name.
    Name,
    /// How many spans.
    Count,
    /// Total duration.
    Total,
    /// Total self time.
    SelfTime,
    /// Mean duration.
    Mean,
    /// Median duration.
    P50,
    /// 90th percentile of the durations.
    P90,
    /// Longest duration.
    Max,
}

impl SortColumn {
    /// Every column in table order, with its header and the header's tooltip.
    pub const ALL: [(SortColumn, &'static str, &'static str); 8] = [
        (
            SortColumn::Name,
            "name",
            "the span name (hover for all of it)",
        ),
        (SortColumn::Count, "count", "spans"),
        (SortColumn::Total, "total", "sum of durations"),
        (
            SortColumn::SelfTime,
            "self",
            "sum of self times (duration minus children)",
        ),
        (SortColumn::Mean, "mean", "mean duration"),
        (SortColumn::P50, "p50", "median duration"),
        (SortColumn::P90, "p90", "90th percentile duration"),
        (SortColumn::Max, "max", "longest duration"),
    ];

    /// Whether the table always shows this column; the others are chosen in its menu, so
    /// that names keep the room.
    pub fn always_shown(self) -> bool {
        matches!(
            self,
            SortColumn::Name | SortColumn::Count | SortColumn::Total | SortColumn::SelfTime
        )
    }

    /// The column's header, which also names it in the settings.
    pub fn label(self) -> &'static str {
        SortColumn::ALL
            .iter()
            .find(|c| c.0 == self)
            .map_or("", |c| c.1)
    }

    /// The optional columns named (by header) in the settings; unknown names are skipped.
    pub fn from_labels(names: &[String]) -> Vec<SortColumn> {
        (SortColumn::ALL.iter())
            .filter(|c| !c.0.always_shown() && names.iter().any(|n| n == c.1))
            .map(|c| c.0)
            .collect()
    }

    /// The headers of `shown` optional columns, in table order, for the settings.
    pub fn labels(shown: &[SortColumn]) -> Vec<String> {
        (SortColumn::ALL.iter())
            .filter(|c| !c.0.always_shown() && shown.contains(&c.0))
            .map(|c| c.1.to_string())
            .collect()
    }

    /// A row's figure in this column, compact (empty for the name).
    fn cell(self, r: &NameStats) -> String {
        match self {
            SortColumn::Name => String::new(),
            SortColumn::Count => compact_count(r.count),
            SortColumn::Total => compact_duration(r.total_ns),
            SortColumn::SelfTime => compact_duration(r.self_ns),
            SortColumn::Mean => compact_duration(r.mean_ns),
            SortColumn::P50 => compact_duration(r.p50_ns),
            SortColumn::P90 => compact_duration(r.p90_ns),
            SortColumn::Max => compact_duration(r.max_ns),
        }
    }
}

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
    /// The analysis of the name last clicked in the table.
    pub analysis: Option<NameAnalysis>,
    /// The SQL section.
    pub query: crate::panels::query::QueryPanel,
    /// A marker just added, whose note gets the keyboard.
    pub focus_marker: Option<usize>,
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
            analysis: None,
            query: Default::default(),
            focus_marker: None,
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
        if s.matches.is_active() {
            let n = s.matches.len();
            match s.matches.current {
                Some(i) => ui.label(format!("match {} of {n}", i + 1)),
                None => ui.label(format!("{n} matches")),
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
        if let (Some(p), Mode::Timeline) = (s.selected, s.mode) {
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
                        s.select(l, Some(next));
                        s.center_on(l, next);
                        act.redraw = true;
                    }
                });
        }
        if !s.markers.is_empty() && s.mode == Mode::Timeline {
            let title = format!("Markers · {}", s.markers.len());
            egui::CollapsingHeader::new(RichText::new(title).strong())
                .default_open(true)
                .show(ui, |ui| {
                    let focus = self.focus_marker.take();
                    if crate::timeline::markers::panel(ui, l, s, focus) {
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
                        s.select(l, Some(r));
                        s.zoom_to(l, r);
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
                        s.select(l, Some(r));
                        s.zoom_to(l, r);
                        act.redraw = true;
                    }
                    Some(Show::Range(a, b)) => {
                        s.mode = Mode::Timeline;
                        s.viewport.show(a, b);
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
                s.collapsed.set_hidden(t, !show);
            }
            changed = true;
        }
        for (track, label, indent) in listed.iter().take(MAX_LISTED) {
            ui.horizontal(|ui| {
                ui.add_space(*indent as f32 * 14.0);
                let mut shown = !s.collapsed.is_hidden(*track);
                if ui.checkbox(&mut shown, label.as_str()).changed() {
                    s.collapsed.set_hidden(*track, !shown);
                    changed = true;
                }
                if matches!(track, Track::Process(_) | Track::Thread(_)) {
                    let pinned = s.collapsed.is_pinned(*track);
                    let text = if pinned { "unpin" } else { "pin" };
                    if ui
                        .small_button(text)
                        .on_hover_text("keep this track at the top")
                        .clicked()
                    {
                        s.collapsed.set_pinned(*track, !pinned);
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
            s.relayout(l);
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

    /// The statistics table; returns a name whose row was clicked.
    fn stats_table(
        &mut self,
        ui: &mut Ui,
        l: &Loaded,
        s: &ViewState,
    ) -> Option<trace_model::StrId> {
        use egui_extras::{Column, TableBuilder};
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
        let t = &l.trace;
        let q = self.stats_filter.to_lowercase();
        let rows: Vec<usize> = (0..self.stats.len())
            .filter(|&i| q.is_empty() || t.str(self.stats[i].name).to_lowercase().contains(&q))
            .collect();
        ui.horizontal(|ui| {
            ui.add(
                TextEdit::singleline(&mut self.stats_filter)
                    .hint_text("filter names")
                    .desired_width(140.0),
            );
            ui.label(RichText::new(format!("{} of {}", rows.len(), self.stats.len())).weak());
            ui.menu_button("columns", |ui| column_menu(ui, &mut self.stats_extra))
                .response
                .on_hover_text("show or hide the optional columns");
            for (text, sep) in [("copy CSV", ','), ("copy TSV", '\t')] {
                if ui
                    .small_button(text)
                    .on_hover_text("the listed rows, times in ns, to the clipboard")
                    .clicked()
                {
                    let listed = rows.iter().map(|&i| &self.stats[i]);
                    ui.ctx().copy_text(table_text(l, listed, sep));
                }
            }
        });
        let mut clicked = None;
        let cols: Vec<_> = (SortColumn::ALL.into_iter())
            .filter(|c| c.0.always_shown() || self.stats_extra.contains(&c.0))
            .collect();
        let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        self.header_rects.clear();
        // The name column takes what the numbers leave; they are sized to their figures.
        let num = Column::auto().at_least(34.0).resizable(true);
        TableBuilder::new(ui)
            .id_salt("stats")
            .striped(true)
            .max_scroll_height(320.0)
            .column(Column::remainder().at_least(80.0).clip(true))
            .columns(num, cols.len() - 1)
            .header(row_h, |mut header| {
                for &(col, label, tip) in &cols {
                    let (_, r) = header.col(|ui| {
                        let arrow = match (self.sort == col, self.descending) {
                            (true, true) => " v",
                            (true, false) => " ^",
                            _ => "",
                        };
                        let text = RichText::new(format!("{label}{arrow}")).strong();
                        let resp =
                            ui.selectable_label(self.sort == col, text)
                                .on_hover_text(format!(
                                    "{tip}; click to sort, right-click for columns"
                                ));
                        if resp.clicked() {
                            if self.sort == col {
                                self.descending = !self.descending;
                            } else {
                                self.sort = col;
                                self.descending = col != SortColumn::Name;
                            }
                            self.resort = true;
                        }
                        resp.context_menu(|ui| column_menu(ui, &mut self.stats_extra));
                    });
                    self.header_rects.push(r.rect);
                }
            })
            .body(|body| {
                body.rows(row_h, rows.len(), |mut row| {
                    let r = &self.stats[rows[row.index()]];
                    let name = t.str(r.name);
                    row.col(|ui| {
                        let highlighted = s.matches.name_matches(r.name) && s.matches.query == name;
                        // Names that share a prefix differ at their ends: keep both.
                        let room = ui.available_width();
                        let per_char = ui.text_style_height(&egui::TextStyle::Body) * 0.5;
                        let shown = elide_middle(name, (room / per_char) as usize);
                        let resp = ui.selectable_label(highlighted, shown).on_hover_text(name);
                        if resp.clicked() {
                            clicked = Some(r.name);
                        }
                        resp.context_menu(|ui| {
                            if ui.button("copy name").clicked() {
                                ui.ctx().copy_text(name.to_string());
                                ui.close();
                            }
                            if ui.button("copy row (CSV)").clicked() {
                                ui.ctx().copy_text(table_text(l, [r], ','));
                                ui.close();
                            }
                        });
                    });
                    for &(col, ..) in &cols[1..] {
                        row.col(|ui| {
                            let resp = ui.label(col.cell(r));
                            if col == SortColumn::Count && r.count >= 1000 {
                                resp.on_hover_text(r.count.to_string());
                            }
                        });
                    }
                });
            });
        if std::mem::take(&mut self.resort) {
            self.sort_rows(l);
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
                SortColumn::P50 => a.p50_ns.cmp(&b.p50_ns),
                SortColumn::P90 => a.p90_ns.cmp(&b.p90_ns),
                SortColumn::Max => a.max_ns.cmp(&b.max_ns),
            };
            let o = o.then_with(|| t.str(a.name).cmp(t.str(b.name)));
            if self.descending {
                o.reverse()
            } else {
                o
            }
        });
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

/// `s` in at most `max` characters: its start and its end around an ellipsis, so names
/// that share a long prefix still read apart.
pub fn elide_middle(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = s.chars().count();
    if n <= max.max(4) {
        return s.into();
    }
    let keep = max.max(4) - 1;
    let head = keep / 3;
    let tail = keep - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}").into()
}

/// The menu of the statistics table's optional columns: one checkbox each.
fn column_menu(ui: &mut Ui, extra: &mut Vec<SortColumn>) {
    for (col, label, tip) in SortColumn::ALL {
        if col.always_shown() {
            continue;
        }
        let mut on = extra.contains(&col);
        if ui.checkbox(&mut on, label).on_hover_text(tip).changed() {
            extra.retain(|&c| c != col);
            if on {
                extra.push(col);
            }
        }
    }
}

/// A count in at most four characters (`999`, `1.2k`, `34k`, `5.6M`), to keep number
/// columns narrow; the exact count is in the tooltip and the copied CSV.
pub fn compact_count(n: u64) -> String {
    let mut v = n as f64;
    if n < 1000 {
        return n.to_string();
    }
    for unit in ["k", "M", "G", "T", "P", "E"] {
        v /= 1e3;
        // 999.5k would round to a fifth character: it is 1.0M.
        if v < 9.95 {
            return format!("{v:.1}{unit}");
        }
        if v < 999.5 {
            return format!("{v:.0}{unit}");
        }
    }
    n.to_string()
}

/// A duration in three significant figures, to keep number columns narrow.
pub fn compact_duration(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let (v, unit) = match a {
        a if a < 1e3 => return format!("{ns} ns"),
        a if a < 1e6 => (a / 1e3, "µs"),
        a if a < 1e9 => (a / 1e6, "ms"),
        a => (a / 1e9, "s"),
    };
    let sign = if ns < 0 { "-" } else { "" };
    let digits = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{sign}{v:.digits$} {unit}")
}

/// Counters and async slices over a time range, computed once per range (they cost
/// O(samples + async slices)).
#[derive(Debug, Default)]
struct RangeKinds {
    /// Per counter series: label, min, max, mean, value at each end.
    counters: Vec<(String, [Option<f64>; 5])>,
    /// Per async name: count, total, min, max (clipped to the range).
    asyncs: Vec<(String, u64, i64, i64, i64)>,
}

impl RangeKinds {
    fn new(l: &Loaded, a: i64, b: i64) -> RangeKinds {
        let t = &l.trace;
        let counters = (t.counter_range_stats(a, b).into_iter())
            .map(|c| {
                let series = &t.counters()[c.series as usize];
                let label = format!("{} {}", t.str(series.name), t.str(series.key));
                let cols = [Some(c.min), Some(c.max), Some(c.mean), c.at_start, c.at_end];
                (label, cols)
            })
            .collect();
        let asyncs = (t.async_range_stats(a, b).into_iter())
            .map(|x| {
                let name = t.str(x.name).to_string();
                (name, x.count, x.total_ns, x.min_ns, x.max_ns)
            })
            .collect();
        RangeKinds { counters, asyncs }
    }

    /// The counters' table as CSV or TSV (full precision; empty where no value).
    fn counters_text(&self, sep: char) -> String {
        let head = ["counter", "min", "max", "mean", "at_start", "at_end"];
        let rows = self.counters.iter().map(|(label, cols)| {
            std::iter::once(label.clone())
                .chain(
                    cols.iter()
                        .map(|v| v.map_or(String::new(), |v| v.to_string())),
                )
                .collect::<Vec<_>>()
        });
        crate::panels::csv::csv(&head, rows, sep)
    }

    /// The async slices' table as CSV or TSV, times in ns.
    fn asyncs_text(&self, sep: char) -> String {
        let head = ["name", "count", "total_ns", "min_ns", "max_ns"];
        let rows = (self.asyncs.iter()).map(|(name, n, total, min, max)| {
            vec![
                name.clone(),
                n.to_string(),
                total.to_string(),
                min.to_string(),
                max.to_string(),
            ]
        });
        crate::panels::csv::csv(&head, rows, sep)
    }

    fn show(&self, ui: &mut Ui) {
        let copy = |ui: &mut Ui, text: &dyn Fn(char) -> String| {
            for (label, sep) in [("copy CSV", ','), ("copy TSV", '\t')] {
                if ui
                    .small_button(label)
                    .on_hover_text("to the clipboard")
                    .clicked()
                {
                    ui.ctx().copy_text(text(sep));
                }
            }
        };
        if !self.counters.is_empty() {
            ui.horizontal(|ui| {
                ui.label(RichText::new("counters in range").weak());
                copy(ui, &|sep| self.counters_text(sep));
            });
            egui::Grid::new("range_counters")
                .striped(true)
                .show(ui, |ui| {
                    for h in ["counter", "min", "max", "mean", "at start", "at end"] {
                        ui.label(RichText::new(h).weak());
                    }
                    ui.end_row();
                    for (label, cols) in self.counters.iter().take(SHOWN_ROWS) {
                        ui.label(label);
                        for c in cols {
                            ui.label(c.map_or("-".into(), format_value));
                        }
                        ui.end_row();
                    }
                });
            more_rows(ui, self.counters.len());
        }
        if !self.asyncs.is_empty() {
            ui.horizontal(|ui| {
                ui.label(RichText::new("async slices in range (clipped)").weak());
                copy(ui, &|sep| self.asyncs_text(sep));
            });
            egui::Grid::new("range_async").striped(true).show(ui, |ui| {
                for h in ["name", "count", "total", "min", "max"] {
                    ui.label(RichText::new(h).weak());
                }
                ui.end_row();
                for (name, n, total, min, max) in self.asyncs.iter().take(SHOWN_ROWS) {
                    ui.label(name);
                    ui.label(n.to_string());
                    ui.label(format_duration(*total));
                    ui.label(format_duration(*min));
                    ui.label(format_duration(*max));
                    ui.end_row();
                }
            });
            more_rows(ui, self.asyncs.len());
        }
    }
}

/// Rows a range table shows; the copied CSV holds every row.
const SHOWN_ROWS: usize = 100;

/// Says how many of a range table's `rows` it leaves out.
fn more_rows(ui: &mut Ui, rows: usize) {
    if rows > SHOWN_ROWS {
        let more = rows - SHOWN_ROWS;
        ui.label(RichText::new(format!("{more} more rows in the copied CSV")).weak());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_keep_their_ends() {
        let a = elide_middle("LayerTreeHostImpl::DrawLayers", 16);
        let b = elide_middle("LayerTreeHostImpl::UpdateLayers", 16);
        assert_eq!(a.chars().count(), 16);
        assert_ne!(a, b);
        assert!(a.ends_with("DrawLayers") && a.starts_with("Layer"), "{a}");
        assert_eq!(elide_middle("short", 16), "short");
    }

    #[test]
    fn compact_durations_have_three_figures() {
        assert_eq!(compact_duration(999), "999 ns");
        assert_eq!(compact_duration(1_234), "1.23 µs");
        assert_eq!(compact_duration(45_678_000), "45.7 ms");
        assert_eq!(compact_duration(123_456_789_000), "123 s");
    }

    #[test]
    fn compact_counts_fit_four_characters() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1_000, "1.0k"),
            (1_234, "1.2k"),
            (9_949, "9.9k"),
            (9_950, "10k"),
            (45_678, "46k"),
            (999_499, "999k"),
            (999_500, "1.0M"),
            (5_600_000, "5.6M"),
            (u64::MAX, "18E"),
        ];
        for (n, text) in cases {
            assert_eq!(compact_count(n), text, "{n}");
        }
    }

    #[test]
    fn optional_columns_are_the_rarer_ones_and_labels_are_unique() {
        let always: Vec<&str> = (SortColumn::ALL.iter())
            .filter(|c| c.0.always_shown())
            .map(|c| c.0.label())
            .collect();
        assert_eq!(always, ["name", "count", "total", "self"]);
        let labels: std::collections::HashSet<&str> =
            SortColumn::ALL.iter().map(|c| c.0.label()).collect();
        assert_eq!(labels.len(), SortColumn::ALL.len());
    }

    #[test]
    fn range_tables_export_full_precision_rfc4180() {
        let k = RangeKinds {
            counters: vec![(
                "memory \"heap\", MB".into(),
                [Some(0.125), Some(3.0), Some(1.5), None, Some(2.0)],
            )],
            asyncs: vec![("load, then parse".into(), 2, 3_000, 1_000, 2_000)],
        };
        assert_eq!(
            k.counters_text(','),
            "counter,min,max,mean,at_start,at_end\r\n\"memory \"\"heap\"\", MB\",0.125,3,1.5,,2\r\n"
        );
        assert_eq!(
            k.asyncs_text('\t'),
            "name\tcount\ttotal_ns\tmin_ns\tmax_ns\r\nload, then parse\t2\t3000\t1000\t2000\r\n"
        );
    }
}
