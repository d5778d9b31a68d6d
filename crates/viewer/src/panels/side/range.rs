//! Range statistics besides spans: counters and async slices over a time range, shown as
//! tables that copy as CSV or TSV.

use egui::{RichText, Ui};

use crate::loaded::Loaded;
use crate::view::viewport::{format_duration, format_value};

/// Counters and async slices over a time range, computed once per range (they cost
/// O(samples + async slices)).
#[derive(Debug, Default)]
pub(super) struct RangeKinds {
    /// Per counter series: label, min, max, mean, value at each end.
    counters: Vec<(String, [Option<f64>; 5])>,
    /// Per async name: count, total, min, max (clipped to the range).
    asyncs: Vec<(String, u64, i64, i64, i64)>,
}

impl RangeKinds {
    pub(super) fn new(l: &Loaded, a: i64, b: i64) -> RangeKinds {
        let t = &l.trace;
        let counters = (t.counter_range_stats(a, b).into_iter())
            .map(|c| {
                let series = &t.counters()[c.series as usize];
                let mut label = format!("{} {}", t.str(series.name), t.str(series.key));
                if let Some(th) = series.thread {
                    label = format!("{} · {label}", t.thread_label(th));
                }
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

    pub(super) fn show(&self, ui: &mut Ui) {
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
