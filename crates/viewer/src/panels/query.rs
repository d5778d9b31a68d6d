//! The side panel's SQL section: an editor with the last queries kept, a Run / Cancel
//! button, and the result as a sortable table whose rows select their slice in the timeline.
//!
//! Queries run through a [`QueryRunner`]: the desktop window's runs them on a worker thread
//! (so a long query never blocks a frame, and Cancel interrupts it); [`InlineRunner`] runs
//! them at once, for the web page (which has no threads), tests and screenshots. The panel
//! itself starts no thread.

use egui::{RichText, TextEdit, Ui};
use egui_extras::{Column, TableBuilder};
use serde_json::Value;
use std::sync::Arc;
use trace_model::{SpanRef, Trace};
use trace_sql::{QueryResult, TraceDb};

use crate::loaded::Loaded;

/// Rows a result keeps; the query stops computing past them.
pub const MAX_ROWS: usize = 10_000;
/// Queries kept in the history list.
const HISTORY: usize = 20;

/// Runs queries for the panel.
pub trait QueryRunner: Send {
    /// Starts `sql` (a query already running is cancelled).
    fn start(&mut self, sql: &str);
    /// The finished query's result, once.
    fn poll(&mut self) -> Option<Result<QueryResult, String>>;
    /// Stops the running query, if any; its result never arrives.
    fn cancel(&mut self);
}

/// Runs each query at once, on the caller's thread.
pub struct InlineRunner {
    trace: Arc<Trace>,
    db: Option<TraceDb>,
    done: Option<Result<QueryResult, String>>,
}

impl InlineRunner {
    /// A runner over `l`'s trace, its database built now.
    pub fn new(l: &Loaded) -> Result<InlineRunner, String> {
        let db = TraceDb::new(l.trace.clone()).map_err(|e| e.to_string())?;
        Ok(InlineRunner {
            trace: l.trace.clone(),
            db: Some(db),
            done: None,
        })
    }

    /// A runner that builds its database at the first query, so a trace that is never
    /// queried costs nothing.
    pub fn deferred(trace: Arc<Trace>) -> InlineRunner {
        InlineRunner {
            trace,
            db: None,
            done: None,
        }
    }
}

impl std::fmt::Debug for InlineRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InlineRunner")
    }
}

/// A SQLite error as the panel shows it (with the position, when known).
pub fn error_text(sql: &str, e: &trace_sql::Error) -> String {
    match e.offset {
        Some(o) if o <= sql.len() => {
            let line = sql[..o].matches('\n').count() + 1;
            let col = sql[..o]
                .rsplit('\n')
                .next()
                .map_or(0, |l| l.chars().count())
                + 1;
            format!("line {line}, column {col}: {}", e.message)
        }
        _ => e.message.clone(),
    }
}

impl QueryRunner for InlineRunner {
    fn start(&mut self, sql: &str) {
        if self.db.is_none() {
            match TraceDb::new(self.trace.clone()) {
                Ok(db) => self.db = Some(db),
                Err(e) => {
                    self.done = Some(Err(e.to_string()));
                    return;
                }
            }
        }
        self.done = self.db.as_ref().map(|db| {
            db.query_limited(sql, MAX_ROWS)
                .map_err(|e| error_text(sql, &e))
        });
    }

    fn poll(&mut self) -> Option<Result<QueryResult, String>> {
        self.done.take()
    }

    fn cancel(&mut self) {}
}

/// The panel's SQL state.
#[derive(Default)]
pub struct QueryPanel {
    /// The SQL in the editor.
    pub text: String,
    /// Queries run, most recent first.
    pub history: Vec<String>,
    /// What runs the queries; `None` until a trace is loaded.
    pub runner: Option<Box<dyn QueryRunner>>,
    /// Whether a query is running.
    pub running: bool,
    /// The last query's rows, or its error message.
    pub result: Option<Result<QueryResult, String>>,
    /// Sort of the result table: column, descending.
    pub sort: Option<(usize, bool)>,
    started: Option<web_time::Instant>,
    /// How long the last query took.
    pub took: Option<std::time::Duration>,
    /// A query asked for before there was a runner (the page's `?sql=` while the trace
    /// loads): it runs once one is set.
    pending: bool,
    /// Open the section at the next frame (a query arrived from outside the panel).
    pub reveal: bool,
    /// Frames left to scroll the panel to the result (a query from outside the panel): more
    /// than one, as tables settle their sizes over their first frames.
    scroll: u8,
}

impl std::fmt::Debug for QueryPanel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryPanel")
            .field("text", &self.text)
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

/// What a click on a result row asks the timeline to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    /// Select this span.
    Slice(SpanRef),
    /// Show this time range: start and end, in nanoseconds.
    Range(i64, i64),
}

impl QueryPanel {
    /// Runs `text` (also what Ctrl+Enter in the editor does).
    pub fn run(&mut self) {
        let sql = self.text.trim().to_string();
        if sql.is_empty() {
            return;
        }
        self.history.retain(|h| *h != sql);
        self.history.insert(0, sql.clone());
        self.history.truncate(HISTORY);
        match &mut self.runner {
            Some(r) => {
                r.start(&sql);
                self.running = true;
                self.started = Some(web_time::Instant::now());
                self.sort = None;
            }
            None => self.pending = true,
        }
    }

    /// Sets the runner for a newly loaded trace; a query asked for before it runs now.
    pub fn set_runner(&mut self, runner: Box<dyn QueryRunner>) {
        self.runner = Some(runner);
        self.running = false;
        self.result = None;
        if std::mem::take(&mut self.pending) {
            self.run();
        }
    }

    /// Puts `sql` in the editor, runs it and opens the section.
    pub fn run_text(&mut self, sql: &str) {
        self.text = sql.to_string();
        self.reveal = true;
        self.scroll = 3;
        self.run();
    }

    /// Takes a finished result from the runner; true if one arrived.
    pub fn poll(&mut self) -> bool {
        let Some(r) = self.runner.as_mut().and_then(|r| r.poll()) else {
            return false;
        };
        self.running = false;
        self.took = self.started.take().map(|t| t.elapsed());
        self.result = Some(r);
        true
    }

    /// The section's contents; returns what a clicked row asks to show.
    pub fn ui(&mut self, ui: &mut Ui, l: &Loaded) -> Option<Show> {
        self.poll();
        // Ctrl+Enter runs: taken before the editor sees it (it would insert a line break).
        let id = ui.make_persistent_id("sql-editor");
        let focused = ui.memory(|m| m.has_focus(id));
        let mut run =
            focused && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter));
        ui.add(
            TextEdit::multiline(&mut self.text)
                .id(id)
                .code_editor()
                .desired_rows(3)
                .desired_width(f32::INFINITY)
                .hint_text(
                    "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name ORDER BY 3 DESC",
                ),
        );
        ui.horizontal(|ui| {
            if self.running {
                if ui.button("Cancel").clicked() {
                    if let Some(r) = &mut self.runner {
                        r.cancel();
                    }
                }
                ui.spinner();
            } else if ui.button("Run").on_hover_text("Ctrl+Enter").clicked() {
                run = true;
            }
            let mut pick = None;
            egui::ComboBox::from_id_salt("query-history")
                .selected_text("recent")
                .width(80.0)
                .show_ui(ui, |ui| {
                    for h in &self.history {
                        let one_line: String = h.split_whitespace().collect::<Vec<_>>().join(" ");
                        if ui.selectable_label(false, one_line).clicked() {
                            pick = Some(h.clone());
                        }
                    }
                });
            if let Some(h) = pick {
                self.text = h;
            }
            ui.hyperlink_to(
                "tables",
                "https://github.com/spall-rs/spall/blob/main/docs/SQL.md",
            );
        });
        if run && !self.running {
            self.run();
            self.poll();
        }
        match &self.result {
            None => None,
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
                scroll_to_result(&mut self.scroll, ui);
                None
            }
            Some(Ok(r)) => {
                let took = self.took.map_or(String::new(), |t| {
                    format!(" in {:.0} ms", t.as_secs_f64() * 1e3)
                });
                let more = if r.truncated {
                    " (the first; the query stopped there)"
                } else {
                    ""
                };
                ui.horizontal(|ui| {
                    ui.label(RichText::new(format!("{} rows{more}{took}", r.rows.len())).weak());
                    for (text, sep) in [("copy CSV", ','), ("copy TSV", '\t')] {
                        if ui.small_button(text).clicked() {
                            ui.ctx().copy_text(result_text(r, sep));
                        }
                    }
                });
                let show = result_table(ui, l, r, &mut self.sort);
                scroll_to_result(&mut self.scroll, ui);
                show
            }
        }
    }
}

fn scroll_to_result(frames: &mut u8, ui: &mut Ui) {
    if *frames > 0 {
        *frames -= 1;
        ui.scroll_to_cursor(Some(egui::Align::BOTTOM));
        ui.ctx().request_repaint();
    }
}

/// Which row click means what: a slice id (`slice_id`, or `id` beside `ts` and `dur`), else
/// a time range (`ts`, with `dur` if present).
pub fn row_target(l: &Loaded, columns: &[String], row: &[Value]) -> Option<Show> {
    let col = |name: &str| columns.iter().position(|c| c == name);
    let int = |i: Option<usize>| i.and_then(|i| row.get(i)).and_then(Value::as_i64);
    let (ts, dur) = (int(col("ts")), int(col("dur")));
    let id = int(col("slice_id")).or(if ts.is_some() && dur.is_some() {
        int(col("id"))
    } else {
        None
    });
    // A lookup in the ids every table numbers slices by, computed once per trace.
    let span = |id: i64| l.trace.perfetto().model_span(u64::try_from(id).ok()?);
    if let Some(r) = id.and_then(span) {
        return Some(Show::Slice(r));
    }
    let ts = ts?;
    Some(Show::Range(ts, ts + dur.unwrap_or(0).max(1)))
}

/// A value as the result table shows it.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn result_table(
    ui: &mut Ui,
    l: &Loaded,
    r: &QueryResult,
    sort: &mut Option<(usize, bool)>,
) -> Option<Show> {
    let mut order: Vec<usize> = (0..r.rows.len()).collect();
    if let Some((c, desc)) = *sort {
        order.sort_by(|&a, &b| {
            let o = compare(&r.rows[a][c], &r.rows[b][c]);
            if desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    let mut clicked = None;
    let mut header_click = None;
    egui::ScrollArea::horizontal()
        .id_salt("query-result")
        .show(ui, |ui| {
            TableBuilder::new(ui)
                .id_salt("query-table")
                .striped(true)
                .resizable(true)
                .max_scroll_height(320.0)
                .column(Column::initial(200.0).at_least(40.0).clip(true))
                .columns(
                    Column::auto().at_least(40.0).clip(true),
                    r.columns.len().saturating_sub(1),
                )
                .sense(egui::Sense::click())
                .header(20.0, |mut h| {
                    for (i, c) in r.columns.iter().enumerate() {
                        h.col(|ui| {
                            let mark = match *sort {
                                Some((s, true)) if s == i => " ⏷",
                                Some((s, false)) if s == i => " ⏶",
                                _ => "",
                            };
                            if ui
                                .button(RichText::new(format!("{c}{mark}")).strong())
                                .clicked()
                            {
                                header_click = Some(i);
                            }
                        });
                    }
                })
                .body(|body| {
                    body.rows(18.0, order.len(), |mut row| {
                        let k = order[row.index()];
                        for v in &r.rows[k] {
                            row.col(|ui| {
                                ui.label(cell(v));
                            });
                        }
                        if row.response().clicked() {
                            clicked = Some(k);
                        }
                    });
                });
        });
    if let Some(i) = header_click {
        *sort = match *sort {
            Some((s, true)) if s == i => Some((i, false)),
            Some((s, false)) if s == i => None,
            _ => Some((i, true)),
        };
    }
    clicked.and_then(|k| row_target(l, &r.columns, &r.rows[k]))
}

/// SQLite's order across types: NULL, numbers, text.
fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |v: &Value| match v {
        Value::Null => 0,
        Value::Number(_) | Value::Bool(_) => 1,
        _ => 2,
    };
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// A result as CSV or TSV (RFC 4180 quoting): text as is, numbers as SQLite gave them,
/// NULL as an empty field.
pub fn result_text(r: &QueryResult, sep: char) -> String {
    let header: Vec<&str> = r.columns.iter().map(String::as_str).collect();
    let rows = r.rows.iter().map(|row| {
        row.iter()
            .map(|v| match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                v => v.to_string(),
            })
            .collect::<Vec<_>>()
    });
    crate::panels::csv::csv(&header, rows, sep)
}
