//! Range statistics besides spans: counters, async slices and (in a system trace) time on
//! a CPU per thread and per process over a time range, shown as tables that copy as CSV
//! or TSV.

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
    /// Time on a CPU (clipped to the range), most first: per thread (process, thread,
    /// slices, ns), and per process (process, threads, slices, ns).
    cpu: [Vec<(String, String, u64, i64)>; 2],
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
        RangeKinds {
            counters,
            asyncs,
            cpu: cpu_time(l, a, b),
        }
    }

    /// The CPU-time tables as CSV or TSV, times in ns: per thread (`by_process` false) or
    /// per process.
    fn cpu_text(&self, by_process: bool, sep: char) -> String {
        let head = match by_process {
            false => ["process", "thread", "slices", "cpu_ns"],
            true => ["process", "threads", "slices", "cpu_ns"],
        };
        let rows = (self.cpu[by_process as usize].iter())
            .map(|(p, th, n, ns)| vec![p.clone(), th.clone(), n.to_string(), ns.to_string()]);
        crate::panels::csv::csv(&head, rows, sep)
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
        for (by_process, title) in [(false, "thread"), (true, "process")] {
            let rows = &self.cpu[by_process as usize];
            if rows.is_empty() {
                continue;
            }
            ui.horizontal(|ui| {
                ui.label(RichText::new(format!("CPU time per {title} in range")).weak());
                copy(ui, &|sep| self.cpu_text(by_process, sep));
            });
            egui::Grid::new(("range_cpu", by_process))
                .striped(true)
                .show(ui, |ui| {
                    let second = if by_process { "threads" } else { "thread" };
                    for h in ["process", second, "slices", "on CPU"] {
                        ui.label(RichText::new(h).weak());
                    }
                    ui.end_row();
                    for (p, th, n, ns) in rows.iter().take(SHOWN_ROWS) {
                        ui.label(p);
                        ui.label(th);
                        ui.label(n.to_string());
                        ui.label(format_duration(*ns));
                        ui.end_row();
                    }
                });
            more_rows(ui, rows.len());
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

/// Time on a CPU in `[a, b]` per thread and per process (`RangeKinds::cpu`); empty for
/// traces without scheduling data.
fn cpu_time(l: &Loaded, a: i64, b: i64) -> [Vec<(String, String, u64, i64)>; 2] {
    let t = &l.trace;
    let per_thread = l.kinds.cpu_lanes.cpu_time_in(t, a, b);
    let process_of = |th: u32| t.threads()[th as usize].process;
    let process_name = |p: u32| {
        let pr = &t.processes()[p as usize];
        pr.name
            .map_or_else(|| t.ext_id(pr.pid).to_string(), |n| t.str(n).to_string())
    };
    let mut per_process: std::collections::HashMap<u32, (u64, u64, i64)> = Default::default();
    for &(th, n, ns) in &per_thread {
        let e = per_process.entry(process_of(th)).or_default();
        *e = (e.0 + 1, e.1 + n, e.2 + ns);
    }
    let mut processes: Vec<_> = per_process.into_iter().collect();
    processes.sort_by_key(|&(p, (_, _, ns))| (std::cmp::Reverse(ns), p));
    let threads = (per_thread.into_iter())
        .map(|(th, n, ns)| (process_name(process_of(th)), t.thread_label(th), n, ns))
        .collect();
    let processes = (processes.into_iter())
        .map(|(p, (k, n, ns))| (process_name(p), k.to_string(), n, ns))
        .collect();
    [threads, processes]
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
    fn a_system_traces_range_lists_cpu_time_per_thread_and_process() {
        let path = "../../tests/fixtures/systrace/events.pftrace.gz";
        let l = Loaded::new(trace_model::load(path).unwrap(), "test".into());
        let (t0, t1) = (l.trace.start_ns(), l.trace.end_ns());
        let k = RangeKinds::new(&l, t0, t1);
        // The model's CPU time per thread over the whole trace, idle left out.
        let whole = l
            .trace
            .sched()
            .unwrap()
            .cpu_time(t1, l.kinds.cpu_lanes.idle);
        assert_eq!(k.cpu[0].len(), whole.len());
        for ((_, th, n, ns), (w, wn, wns)) in k.cpu[0].iter().zip(&whole) {
            assert_eq!((th, n, ns), (&l.trace.thread_label(*w), wn, wns));
        }
        // Per process: the threads' sums.
        let total: i64 = k.cpu[1].iter().map(|x| x.3).sum();
        assert_eq!(total, whole.iter().map(|x| x.2).sum::<i64>());
        assert!(k
            .cpu_text(true, ',')
            .starts_with("process,threads,slices,cpu_ns\r\n"));
        // A range of nothing: no rows.
        assert!(RangeKinds::new(&l, t0 - 10, t0 - 5).cpu[0].is_empty());
    }

    #[test]
    fn range_tables_export_full_precision_rfc4180() {
        let k = RangeKinds {
            counters: vec![(
                "memory \"heap\", MB".into(),
                [Some(0.125), Some(3.0), Some(1.5), None, Some(2.0)],
            )],
            asyncs: vec![("load, then parse".into(), 2, 3_000, 1_000, 2_000)],
            cpu: Default::default(),
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
