//! Per-name analysis (Tracy's Find Zone): for one span name, a duration histogram on
//! logarithmic buckets with the percentiles marked, the extremes, and the slowest
//! occurrences to jump to. Computed once per (name, range): it costs O(spans of the name).

use egui::{Color32, RichText, Sense, Stroke, Ui};
use trace_model::{clip_span, percentile, DurationHistogram, SpanRef, StrId};

use crate::loaded::Loaded;
use crate::view::viewport::format_duration;

/// Buckets of the histogram.
const BUCKETS: usize = 32;
/// Occurrences listed, slowest first.
const SLOWEST: usize = 50;

/// The analysis of one name over a range (spans clipped to it) or the whole trace.
#[derive(Clone, Debug)]
pub struct NameAnalysis {
    pub name: StrId,
    pub range: Option<(i64, i64)>,
    /// Every (clipped) duration, sorted.
    pub durations: Vec<i64>,
    /// The slowest occurrences, slowest first, with their (clipped) durations.
    pub slowest: Vec<(i64, SpanRef)>,
    /// Counts per logarithmic bucket between the shortest and the longest duration.
    pub histogram: DurationHistogram,
}

impl NameAnalysis {
    pub fn new(l: &Loaded, name: StrId, range: Option<(i64, i64)>) -> NameAnalysis {
        let t = &l.trace;
        let text = t.str(name);
        let (r0, r1) = range.unwrap_or((i64::MIN, i64::MAX));
        let mut all: Vec<(i64, SpanRef)> = t
            .occurrences(|n| n == text)
            .into_iter()
            .filter_map(|r| {
                let sp = t.span(r);
                clip_span(sp.start, sp.end(), r0, r1).map(|d| (d, r))
            })
            .collect();
        let mut durations: Vec<i64> = all.iter().map(|a| a.0).collect();
        durations.sort_unstable();
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(SLOWEST);
        NameAnalysis {
            name,
            range,
            histogram: DurationHistogram::new(&durations, BUCKETS),
            durations,
            slowest: all,
        }
    }

    /// Where a duration falls on the histogram's axis, 0..=1 (logarithmic).
    pub fn axis(&self, d: i64) -> f32 {
        self.histogram.axis(d)
    }

    /// Shows it; returns an occurrence that was clicked.
    pub fn ui(&self, ui: &mut Ui, l: &Loaded) -> Option<SpanRef> {
        let t = &l.trace;
        let d = &self.durations;
        ui.label(RichText::new(t.str(self.name)).strong());
        if d.is_empty() {
            ui.label("no occurrences in this range");
            return None;
        }
        let total: i64 = d.iter().sum();
        ui.label(format!(
            "{} spans · total {} · mean {}",
            d.len(),
            format_duration(total),
            format_duration(total / d.len() as i64)
        ));
        egui::Grid::new("name_percentiles").show(ui, |ui| {
            for (k, v) in [
                ("min", d[0]),
                ("p50", percentile(d, 50)),
                ("p90", percentile(d, 90)),
                ("p99", percentile(d, 99)),
                ("max", d[d.len() - 1]),
            ] {
                ui.label(RichText::new(k).weak());
                ui.label(format_duration(v));
            }
            ui.end_row();
        });
        self.histogram_ui(ui);
        ui.label(RichText::new("slowest (click to show in the timeline)").weak());
        let mut go = None;
        egui::ScrollArea::vertical()
            .id_salt("slowest")
            .max_height(180.0)
            .show(ui, |ui| {
                for &(dur, r) in &self.slowest {
                    let sp = t.span(r);
                    let text = format!(
                        "{} at {} · {}",
                        format_duration(dur),
                        format_duration(sp.start - t.start_ns()),
                        t.thread_label(r.thread)
                    );
                    if ui.link(text).clicked() {
                        go = Some(r);
                    }
                }
            });
        go
    }

    fn histogram_ui(&self, ui: &mut Ui) {
        let w = ui.available_width().clamp(120.0, 600.0);
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(w, 90.0), Sense::hover());
        let p = ui.painter_at(rect);
        let visuals = ui.visuals();
        p.rect_filled(rect, 2.0, visuals.extreme_bg_color);
        let max = self
            .histogram
            .counts
            .iter()
            .copied()
            .max()
            .unwrap_or(1)
            .max(1) as f32;
        let bw = rect.width() / BUCKETS as f32;
        let bar = Color32::from_rgb(90, 140, 220);
        let bottom = rect.bottom() - 14.0;
        let h = bottom - rect.top() - 4.0;
        for (i, &c) in self.histogram.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            // Counts on a square-root scale, so single outliers still show.
            let bh = (c as f32 / max).sqrt() * h;
            let x = rect.left() + i as f32 * bw;
            let r = egui::Rect::from_min_max(
                egui::pos2(x + 0.5, bottom - bh),
                egui::pos2(x + bw - 0.5, bottom),
            );
            p.rect_filled(r, 0.0, bar);
        }
        let d = &self.durations;
        for (label, q, color) in [
            ("p50", 50, Color32::from_rgb(40, 160, 60)),
            ("p90", 90, Color32::from_rgb(220, 140, 0)),
            ("p99", 99, Color32::from_rgb(210, 50, 50)),
        ] {
            let x = rect.left() + self.axis(percentile(d, q)) * rect.width();
            p.line_segment(
                [egui::pos2(x, rect.top()), egui::pos2(x, bottom)],
                Stroke::new(1.0, color),
            );
            p.text(
                egui::pos2(x + 2.0, rect.top() + 2.0),
                egui::Align2::LEFT_TOP,
                label,
                egui::FontId::proportional(9.0),
                color,
            );
        }
        let text = visuals.weak_text_color();
        let font = egui::FontId::proportional(10.0);
        p.text(
            egui::pos2(rect.left() + 2.0, rect.bottom() - 1.0),
            egui::Align2::LEFT_BOTTOM,
            format_duration(d[0]),
            font.clone(),
            text,
        );
        p.text(
            egui::pos2(rect.right() - 2.0, rect.bottom() - 1.0),
            egui::Align2::RIGHT_BOTTOM,
            format_duration(d[d.len() - 1]),
            font,
            text,
        );
        if let Some(pos) = resp.hover_pos() {
            let i = (((pos.x - rect.left()) / bw) as usize).min(BUCKETS - 1);
            let (a, b) = self.histogram.bounds(i);
            resp.on_hover_text(format!(
                "{} spans from {} to {}",
                self.histogram.counts[i],
                format_duration(a),
                format_duration(b)
            ));
        }
    }
}
