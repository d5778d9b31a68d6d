//! Compare mode's columns of the statistics table: BASE's self time per name and the
//! change, judged as the flame graph judges a frame (the thresholds, then the
//! Mann-Whitney test on the per-call self times), and the rows of names only BASE has.

use std::collections::HashMap;
use std::sync::Arc;

use egui::{RichText, Ui};
use trace_model::{NameStats, StatsFilter, Trace};

use super::{compact_duration, SortColumn};
use trace_model::changes::{self, NameVerdict, Status};

/// Compare mode's figures from BASE for the statistics table.
#[derive(Debug)]
pub(in crate::panels::side) struct BaseSelf {
    /// The trace compared with (which these figures are of).
    pub(super) trace: Arc<Trace>,
    /// Self time and calls per span name over the whole trace.
    pub(super) self_ns: HashMap<String, (i64, u64)>,
    /// The smallest change that counts ([`changes::min_delta`]).
    min_delta: i64,
    /// Names NEW's rows lack, with BASE's self time, largest first.
    pub(super) base_only: Vec<(String, i64)>,
    /// Per name of NEW's rows, its verdict.
    verdicts: HashMap<String, NameVerdict>,
}

impl BaseSelf {
    pub(super) fn of(trace: Arc<Trace>) -> BaseSelf {
        let self_ns = (trace.stats(&StatsFilter::default()).iter())
            .map(|r| (trace.str(r.name).to_string(), (r.self_ns, r.count)))
            .collect();
        let min_delta = changes::min_delta(&trace);
        BaseSelf {
            trace,
            self_ns,
            min_delta,
            base_only: Vec::new(),
            verdicts: HashMap::new(),
        }
    }

    /// Judges `rows` (NEW's, of the whole trace `t`) against BASE, and finds the names
    /// BASE has and they lack.
    pub(super) fn compare_rows(&mut self, rows: &[NameStats], t: &Trace) {
        self.verdicts = changes::judge_names((t, rows), (&self.trace, &self.self_ns));
        let in_new: std::collections::HashSet<&str> = rows.iter().map(|r| t.str(r.name)).collect();
        self.base_only = (self.self_ns.iter())
            .filter(|(name, _)| !in_new.contains(name.as_str()))
            .map(|(name, &v)| (name.clone(), v.0))
            .collect();
        self.base_only
            .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    }

    /// The verdict on NEW's row `name`, if the rows were judged.
    pub(in crate::panels::side) fn verdict(&self, name: &str) -> Option<NameVerdict> {
        self.verdicts.get(name).copied()
    }
}

/// The Δ self cell: the change, red slower, blue faster, plain when it is noise; the
/// tooltip gives the Mann-Whitney p-value where the test ran.
pub(super) fn delta_cell(ui: &mut Ui, b: &BaseSelf, name: &str, was: Option<i64>, now: i64) {
    let v = b.verdict(name);
    let status = v.map_or_else(|| changes::judge(was, now, b.min_delta), |v| v.status);
    let r = ui.label(delta_text(was, now, status));
    if let Some(p) = v.and_then(|v| v.p_value) {
        let what = if status == Status::Unchanged {
            "noise: counted unchanged"
        } else {
            "a shift"
        };
        r.on_hover_text(format!(
            "Mann-Whitney p = {p:.3} on the per-call self times ({what})"
        ));
    }
}

fn delta_text(was: Option<i64>, now: i64, status: Status) -> RichText {
    let d = now - was.unwrap_or(0);
    let text = format!("{}{}", if d > 0 { "+" } else { "" }, compact_duration(d));
    match status {
        Status::Slower | Status::Added => {
            RichText::new(text).color(egui::Color32::from_rgb(214, 48, 44))
        }
        Status::Faster | Status::Removed => {
            RichText::new(text).color(egui::Color32::from_rgb(44, 108, 224))
        }
        Status::Unchanged => RichText::new(text),
    }
}

/// A row for a name only BASE has: NEW's figures empty (its self time 0), then BASE's
/// self time and the change.
pub(super) fn base_only_row(
    row: &mut egui_extras::TableRow<'_, '_>,
    b: &BaseSelf,
    name: &str,
    was: i64,
    cols: &[(SortColumn, &str, &str)],
) {
    row.col(|ui| {
        let text = RichText::new(format!("− {name}")).italics();
        ui.label(text)
            .on_hover_text(format!("{name}: only in BASE (removed)"));
    });
    for &(col, ..) in &cols[1..] {
        row.col(|ui| {
            ui.label(if col == SortColumn::SelfTime {
                "0"
            } else {
                "—"
            });
        });
    }
    row.col(|ui| {
        ui.label(compact_duration(was));
    });
    row.col(|ui| {
        let status = changes::judge(Some(was), 0, b.min_delta);
        ui.label(delta_text(Some(was), 0, status));
    });
}
