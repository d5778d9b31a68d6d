//! The statistics table: its columns (some optional, chosen in a menu), sorting, and the
//! compact number formats that keep its columns narrow.

use std::sync::Arc;

use egui::{RichText, TextEdit, Ui};
use trace_model::{NameStats, SampleUnit, Trace};

use super::Panel;
use crate::loaded::Loaded;
use crate::panels::csv::table_text;
use crate::view::state::ViewState;

mod base_columns;
pub(super) use base_columns::BaseSelf;
use base_columns::{base_only_row, delta_cell};

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
    /// Compare mode: the change of the self time from BASE (not in the columns menu).
    Delta,
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

    /// A row's figure in this column, compact (empty for the name). `sampled`: the
    /// profile's unit, where the rows are a sampling profile's functions (their total and
    /// self weights in it, and no durations).
    fn cell(self, r: &NameStats, sampled: Option<SampleUnit>) -> String {
        if let Some(unit) = sampled {
            return match self {
                SortColumn::Count => compact_count(r.count),
                SortColumn::Total => compact_weight(r.total_ns, unit),
                SortColumn::SelfTime => compact_weight(r.self_ns, unit),
                _ => String::new(),
            };
        }
        match self {
            SortColumn::Name => String::new(),
            SortColumn::Count => compact_count(r.count),
            SortColumn::Total => compact_duration(r.total_ns),
            SortColumn::SelfTime => compact_duration(r.self_ns),
            SortColumn::Mean => compact_duration(r.mean_ns),
            SortColumn::P50 => compact_duration(r.p50_ns),
            SortColumn::P90 => compact_duration(r.p90_ns),
            SortColumn::Max => compact_duration(r.max_ns),
            SortColumn::Delta => String::new(),
        }
    }
}

impl Panel {
    /// The statistics table; returns a name whose row was clicked.
    pub(super) fn stats_table(
        &mut self,
        ui: &mut Ui,
        l: &Loaded,
        s: &ViewState,
    ) -> Option<trace_model::StrId> {
        use egui_extras::{Column, TableBuilder};
        if !self.refresh_stats(ui, l, s) {
            return None;
        }
        let t = &l.trace;
        let q = self.stats_filter.to_lowercase();
        let rows: Vec<usize> = (0..self.stats.len())
            .filter(|&i| q.is_empty() || t.str(self.stats[i].name).to_lowercase().contains(&q))
            .collect();
        // Compare mode: names only BASE has (indices into its list), after NEW's rows.
        let base_only: Vec<usize> = (self.base_only_rows().iter().enumerate())
            .filter(|(_, (name, _))| q.is_empty() || name.to_lowercase().contains(&q))
            .map(|(k, _)| k)
            .collect();
        self.stats_toolbar(ui, l, &rows);
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
            .columns(num, cols.len() - 1 + 2 * self.base_self.is_some() as usize)
            .header(row_h, |mut header| self.stats_header(&mut header, &cols))
            .body(|body| {
                body.rows(row_h, rows.len() + base_only.len(), |mut row| {
                    let Some(&i) = rows.get(row.index()) else {
                        if let Some(b) = &self.base_self {
                            let (name, was) = &b.base_only[base_only[row.index() - rows.len()]];
                            base_only_row(&mut row, b, name, *was, &cols);
                        }
                        return;
                    };
                    let r = &self.stats[i];
                    if self.stats_row(&mut row, l, s, r, &cols) {
                        clicked = Some(r.name);
                    }
                });
            });
        if std::mem::take(&mut self.resort) {
            self.sort_rows(l);
        }
        clicked
    }

    /// Brings the rows up to the view's range (and compare mode's BASE) and their order up
    /// to the sort; false while the whole trace's statistics are still computing.
    fn refresh_stats(&mut self, ui: &mut Ui, l: &Loaded, s: &ViewState) -> bool {
        let stale = self.stats_for != Some(s.range) && !(self.hold && self.stats_for.is_some());
        if stale && s.range.is_none() && l.whole_stats_ready().is_none() {
            ui.label("computing statistics for the whole trace …");
            return false;
        }
        if stale {
            self.stats = s.stats(l);
            self.stats_for = Some(s.range);
            self.resort = true;
        }
        // Compare mode's columns are for the whole traces.
        let base = s
            .flame
            .base
            .as_ref()
            .filter(|_| self.stats_for == Some(None));
        let compared = self.compare_with(base);
        if let Some(b) = self.base_self.as_mut().filter(|_| stale || compared) {
            b.compare_rows(&self.stats, &l.trace);
        }
        if std::mem::take(&mut self.resort) {
            self.sort_rows(l);
        }
        true
    }

    /// The line above the table: the name filter, the count listed, the columns menu and
    /// the copy buttons (for the `rows` listed).
    fn stats_toolbar(&mut self, ui: &mut Ui, l: &Loaded, rows: &[usize]) {
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
    }

    /// ` v` or ` ^` after the header of the column that sorts, by direction.
    fn arrow(&self, col: SortColumn) -> &'static str {
        match (self.sort == col, self.descending) {
            (true, true) => " v",
            (true, false) => " ^",
            _ => "",
        }
    }

    /// The header row: click a column to sort by it (again to reverse), right-click for
    /// the columns menu; compare mode's two columns after.
    fn stats_header(
        &mut self,
        header: &mut egui_extras::TableRow<'_, '_>,
        cols: &[(SortColumn, &str, &str)],
    ) {
        for &(col, label, tip) in cols {
            let (_, r) = header.col(|ui| {
                let text = RichText::new(format!("{label}{}", self.arrow(col))).strong();
                let resp = ui
                    .selectable_label(self.sort == col, text)
                    .on_hover_text(format!("{tip}; click to sort, right-click for columns"));
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
        if self.base_self.is_none() {
            return;
        }
        let (_, r) = header.col(|ui| {
            ui.label(RichText::new("base").strong())
                .on_hover_text("self time in the trace compared with (BASE)");
        });
        self.header_rects.push(r.rect);
        let (_, r) = header.col(|ui| {
            let col = SortColumn::Delta;
            let text = RichText::new(format!("Δ self{}", self.arrow(col))).strong();
            let tip = "the change of the self time from BASE: red slower, blue \
                       faster (the thresholds, then the Mann-Whitney test on the \
                       per-call self times, as the flame graph judges a frame; \
                       hover a cell for its p-value); click to sort";
            if ui
                .selectable_label(self.sort == col, text)
                .on_hover_text(tip)
                .clicked()
            {
                self.descending = self.sort != col || !self.descending;
                self.sort = col;
                self.resort = true;
            }
        });
        self.header_rects.push(r.rect);
    }

    /// One name's row: the name (elided in the middle, its menu to copy it or the row),
    /// the figures, and compare mode's two cells. Whether the name was clicked.
    fn stats_row(
        &self,
        row: &mut egui_extras::TableRow<'_, '_>,
        l: &Loaded,
        s: &ViewState,
        r: &NameStats,
        cols: &[(SortColumn, &str, &str)],
    ) -> bool {
        let name = l.trace.str(r.name);
        let mut clicked = false;
        row.col(|ui| {
            let highlighted =
                s.timeline.matches.name_matches(r.name) && s.timeline.matches.query == name;
            // Names that share a prefix differ at their ends: keep both.
            let room = ui.available_width();
            let per_char = ui.text_style_height(&egui::TextStyle::Body) * 0.5;
            let shown = elide_middle(name, (room / per_char) as usize);
            let resp = ui.selectable_label(highlighted, shown).on_hover_text(name);
            clicked = resp.clicked();
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
        let t = &l.trace;
        let sampled = t.sample_kind().filter(|_| t.is_sampled()).map(|k| k.1);
        for &(col, ..) in &cols[1..] {
            row.col(|ui| {
                let resp = ui.label(col.cell(r, sampled));
                if col == SortColumn::Count && r.count >= 1000 {
                    resp.on_hover_text(r.count.to_string());
                }
            });
        }
        if let Some(b) = &self.base_self {
            let was = b.self_ns.get(name).map(|x| x.0);
            row.col(|ui| {
                ui.label(was.map_or("—".into(), compact_duration));
            });
            row.col(|ui| delta_cell(ui, b, name, was, r.self_ns));
        }
        clicked
    }

    /// Compare mode: the names only BASE has, with BASE's self time, largest first; the
    /// table lists them after NEW's rows.
    pub fn base_only_rows(&self) -> &[(String, i64)] {
        self.base_self.as_ref().map_or(&[], |b| &b.base_only)
    }

    /// The statistics table's rows, in their order (unfiltered).
    pub fn stats_rows(&self) -> &[NameStats] {
        &self.stats
    }

    /// Compare mode's columns against `base` (none without it): BASE's self time per name,
    /// worked out once per BASE; a new BASE sorts the table by regression. Whether BASE
    /// changed.
    fn compare_with(&mut self, base: Option<&Arc<Trace>>) -> bool {
        let same = match (base, &self.base_self) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, &b.trace),
            (None, None) => true,
            _ => false,
        };
        if same {
            return false;
        }
        self.base_self = base.map(|bt| BaseSelf::of(bt.clone()));
        if self.base_self.is_some() {
            (self.sort, self.descending) = (SortColumn::Delta, true);
        } else if self.sort == SortColumn::Delta {
            self.sort = SortColumn::SelfTime;
        }
        self.resort = true;
        true
    }

    fn sort_rows(&mut self, l: &Loaded) {
        let t = &l.trace;
        let key = self.sort;
        let base = self.base_self.as_ref();
        let delta = |r: &NameStats| {
            let was = base.and_then(|b| b.self_ns.get(t.str(r.name)).map(|x| x.0));
            r.self_ns - was.unwrap_or(0)
        };
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
                SortColumn::Delta => delta(a).cmp(&delta(b)),
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

/// A sampling profile's weight in its unit, compact: a duration, a count, a size.
pub fn compact_weight(w: i64, unit: SampleUnit) -> String {
    match unit {
        SampleUnit::Nanoseconds => compact_duration(w),
        SampleUnit::Count => compact_count(w.max(0) as u64),
        SampleUnit::Bytes => spall_util::human_bytes(w.max(0) as u64),
    }
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
}
