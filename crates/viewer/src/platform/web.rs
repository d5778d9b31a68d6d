//! The window's web half: the page's `<canvas id="spall-canvas">` with a WebGL2 context,
//! loads run a step at a time between the page's frames (no threads), and the page's side
//! of things: traces arrive as bytes from JavaScript (drop, file picker, `?trace=` fetch),
//! and the app's state is written to `<body data-*>` attributes for scripts and tests.
//!
//! JavaScript calls [`open_bytes`] and [`open_failed`]; `crates/web` exports them with
//! `start`, and `web/index.html` is the page.

#![allow(unsafe_code)] // GL calls are unsafe by signature; the context is ours.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use render_gl::{Renderer, ShaderVersion};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_time::{Duration, Instant};
use winit::event_loop::{ActiveEventLoop, EventLoopProxy};
use winit::platform::web::WindowAttributesExtWebSys;
use winit::window::Window;

use super::common::{drawing, Loading, UserEvent};
use crate::loaded::Loaded;
use crate::panels::query::{InlineRunner, QueryPanel, QueryRunner};
use crate::persist::settings::Settings;
use crate::view::state::ViewState;
use crate::ViewerError;

/// The id of the canvas the page provides.
pub const CANVAS_ID: &str = "spall-canvas";

thread_local! {
    static PROXY: RefCell<Option<EventLoopProxy<UserEvent>>> = const { RefCell::new(None) };
    /// What was last written to the page's attributes (written again only on change).
    static REPORTED: RefCell<String> = const { RefCell::new(String::new()) };
    /// What the page sent before the event loop was running (`?sql=` right after `start`).
    static EARLY: RefCell<Vec<UserEvent>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn set_proxy(p: EventLoopProxy<UserEvent>) {
    for e in EARLY.with(|q| std::mem::take(&mut *q.borrow_mut())) {
        let _ = p.send_event(e);
    }
    PROXY.with(|x| *x.borrow_mut() = Some(p));
}

fn send(e: UserEvent) {
    let early = PROXY.with(|x| match &*x.borrow() {
        Some(p) => {
            let _ = p.send_event(e);
            None
        }
        None => Some(e),
    });
    if let Some(e) = early {
        EARLY.with(|q| q.borrow_mut().push(e));
    }
}

/// Opens a trace from its bytes (`name` is what the page calls it: a file name or URL).
pub fn open_bytes(name: String, bytes: Vec<u8>) {
    send(UserEvent::Open(name, bytes));
}

/// Shows why the page could not get a trace (a fetch that failed).
pub fn open_failed(message: String) {
    warm::release();
    send(UserEvent::OpenFailed(message));
}

/// Runs `sql` in the side panel's SQL section (the page's `?sql=`), once a trace is loaded.
pub fn run_sql(sql: String) {
    send(UserEvent::Sql(sql));
}

pub use super::common::PageLoad;

pub mod base;
pub mod model;
pub mod warm;

pub(crate) use model::{levels_taken, LevelsTaking, Taking};
pub use model::{pack_index, pack_trace, Model};

/// A load began in the page's worker (the page ended any other first).
pub fn load_begun(name: String) {
    warm::release();
    send(UserEvent::Page(PageLoad::Begun(name)));
}

/// The worker's progress: `done` of `total` bytes in `stage`.
pub fn load_progress(done: f64, total: f64, stage: &str) {
    let stage = match stage {
        "reading" => "reading",
        "decompressing" => "decompressing",
        "building" => "building",
        "indexing" => "indexing",
        _ => "loading",
    };
    let (done, total) = (done as u64, total as u64);
    send(UserEvent::Page(PageLoad::Progress { done, total, stage }));
}

/// The worker's trace, as [`pack_trace`] packed it (its index follows, see
/// [`open_index`]).
pub fn open_model(name: String, model: JsValue) {
    // Its columns go into the warmed pages.
    warm::release();
    send(UserEvent::Page(PageLoad::Built(
        name,
        Model::from_js(&model),
    )));
}

/// The index of the trace [`open_model`] opened, as [`pack_index`] packed it: the page
/// copied the trace's columns in while the worker built it.
pub fn open_index(name: String, index: JsValue) {
    send(UserEvent::Page(PageLoad::Index(
        name,
        model::IndexPart(index),
    )));
}

/// The stored levels of the index [`open_index`] took, which its part left for later
/// ([`spall_web_transfer::pack_levels`]).
pub fn open_levels(name: String, levels: JsValue) {
    send(UserEvent::Page(PageLoad::Levels(
        name,
        model::IndexPart(levels),
    )));
}

/// The worker's whole-trace statistics ([`pack_stats`]) of the trace it built.
pub fn open_stats(name: String, bytes: Vec<u8>) {
    send(UserEvent::Page(PageLoad::Stats(name, bytes)));
}

// Whole-trace statistics as bytes, for `open_stats`, and read back for their trace.
pub use spall_web_transfer::pack_stats;
pub(crate) use spall_web_transfer::read_stats;

/// The canvas and everything drawn on it.
pub(crate) struct Gl {
    pub(crate) window: Window,
    pub(crate) gl: Arc<glow::Context>,
    pub(crate) renderer: Renderer,
    pub(crate) egui: egui_glow::EguiGlow,
    canvas: web_sys::HtmlCanvasElement,
}

impl Gl {
    /// The canvas's new size in device pixels: the drawing buffer follows it (the page
    /// sizes the canvas with CSS; winit reports the size times `devicePixelRatio`).
    pub(crate) fn resize(&self, w: u32, h: u32) {
        // Setting a size clears the canvas, even the same size: only on change.
        if self.canvas.width() != w.max(1) || self.canvas.height() != h.max(1) {
            self.canvas.set_width(w.max(1));
            self.canvas.set_height(h.max(1));
        }
    }

    /// The browser shows what was drawn when control returns to it.
    pub(crate) fn swap(&self) -> Result<(), String> {
        Ok(())
    }
}

fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// The canvas's GL context (`_size` is the page's to decide).
pub(crate) fn create_gl(el: &ActiveEventLoop, _size: (f32, f32)) -> Result<Gl, ViewerError> {
    let fail = |what: &'static str, detail: String| ViewerError::Window { what, detail };
    let canvas = document()
        .and_then(|d| d.get_element_by_id(CANVAS_ID))
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        .ok_or_else(|| fail("the page", format!("no <canvas id=\"{CANVAS_ID}\">")))?;
    let attrs = Window::default_attributes()
        .with_title("spall")
        .with_canvas(Some(canvas.clone()))
        .with_prevent_default(true)
        .with_focusable(true);
    let window = el
        .create_window(attrs)
        .map_err(|e| fail("the canvas", e.to_string()))?;
    let opts = js_sys::Object::new();
    for (k, v) in [
        ("antialias", false),
        ("depth", false),
        ("stencil", false),
        ("premultipliedAlpha", false),
        ("preserveDrawingBuffer", false),
    ] {
        let _ = js_sys::Reflect::set(&opts, &k.into(), &v.into());
    }
    let ctx = canvas
        .get_context_with_context_options("webgl2", &opts)
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::WebGl2RenderingContext>().ok())
        .ok_or_else(|| {
            fail(
                "WebGL2",
                "this browser gave no WebGL2 context (is hardware acceleration off?)".into(),
            )
        })?;
    // render-gl and egui_glow take an `Arc`; a page has one thread.
    #[allow(clippy::arc_with_non_send_sync)]
    let gl = Arc::new(glow::Context::from_webgl2_context(ctx));
    let (renderer, egui) = drawing(el, &gl, &window, ShaderVersion::Gles30)?;
    let size = window.inner_size();
    let g = Gl {
        window,
        gl,
        renderer,
        egui,
        canvas,
    };
    g.resize(size.width, size.height);
    let _ = g.canvas.focus();
    Ok(g)
}

/// Runs `f` once the browser has had its turn (there are no threads to run it on).
pub(crate) fn spawn(f: impl FnOnce() + 'static) {
    let Some(w) = web_sys::window() else {
        return f();
    };
    let cb = Closure::once_into_js(f);
    let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), 0);
}

/// Asks for the next steps of a load after the page has drawn and handled input.
pub(crate) fn step_soon(proxy: &EventLoopProxy<UserEvent>) {
    let proxy = proxy.clone();
    spawn(move || {
        let _ = proxy.send_event(UserEvent::Step);
    });
}

/// Opens the page's file picker (`<input type="file" id="spall-file">`); there is always
/// one to try.
pub(crate) fn pick_file(_proxy: &EventLoopProxy<UserEvent>) -> bool {
    pick_input();
    true
}

fn pick_input() {
    if let Some(input) = document()
        .and_then(|d| d.get_element_by_id("spall-file"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        input.click();
    }
}

/// Where a page keeps its settings: the browser's `localStorage`, under this key.
const SETTINGS_KEY: &str = "spall-settings";

/// The settings this browser kept (theme, keys, panel), or the defaults; a corrupt entry
/// is the defaults, with a warning on the console.
pub(crate) fn stored_settings() -> Settings {
    let stored = web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| s.get_item(SETTINGS_KEY).ok().flatten());
    match stored.map(|text| Settings::from_json(text.as_bytes())) {
        Some(Ok(s)) => s,
        Some(Err(why)) => {
            web_sys::console::warn_1(&format!("spall: settings ignored ({why})").into());
            Settings::default()
        }
        None => Settings::default(),
    }
}

/// Keeps the settings in `localStorage` (nothing when the page may not store anything).
pub(crate) fn save_settings(s: &Settings) {
    if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = storage.set_item(SETTINGS_KEY, &s.to_json().to_string());
    }
}

/// Ctrl+S: downloads the canvas as `NAME.png`. Called after the frame is drawn and before
/// it is handed to the page, while the WebGL canvas still holds it.
pub(crate) fn save_screenshot(
    _g: &Gl,
    _size: (u32, u32),
    _path: Option<&std::path::Path>,
    trace: &str,
) -> String {
    let stem = trace.rsplit('/').next().unwrap_or(trace);
    let stem = stem
        .split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("spall");
    let name = format!("{stem}.png");
    let canvas = document()
        .and_then(|d| d.get_element_by_id("spall-canvas"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok());
    let link = document()
        .and_then(|d| d.create_element("a").ok())
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok());
    match (canvas.and_then(|c| c.to_data_url().ok()), link) {
        (Some(url), Some(a)) => {
            a.set_href(&url);
            a.set_download(&name);
            a.click();
            format!("saved {name} (the browser's downloads)")
        }
        _ => "screenshot not saved: the canvas could not be read".into(),
    }
}

/// A load in steps: decoding, then (one step) merging, nesting and indexing.
pub(crate) struct Stepping {
    load: Option<trace_model::LoadSteps>,
    /// Decoding is done; the next step finishes.
    decoded: bool,
}

impl Stepping {
    pub(crate) fn new(bytes: Vec<u8>, decode: &trace_model::DecodeOptions) -> Stepping {
        Stepping {
            load: Some(trace_model::LoadSteps::new(bytes, decode)),
            decoded: false,
        }
    }

    /// Works for about `budget`; the result once there is one.
    pub(crate) fn run(
        &mut self,
        budget: Duration,
        loading: &mut Loading,
    ) -> Option<Result<Loaded, ViewerError>> {
        let load = self.load.as_mut()?;
        if self.decoded {
            // Merging and indexing take one go: the page said "indexing" in the frame before.
            let load = self.load.take()?;
            let source = loading.source.clone();
            return Some(match load.finish() {
                Ok(t) => Ok(Loaded::new(t, source)),
                Err(e) => Err(e.with_path(source).into()),
            });
        }
        let until = Instant::now() + budget;
        loop {
            match load.step() {
                Err(e) => return Some(Err(e.with_path(loading.source.clone()).into())),
                Ok(true) => {
                    self.decoded = true;
                    loading.stage = "indexing";
                    break;
                }
                Ok(false) if Instant::now() >= until => break,
                Ok(false) => {}
            }
        }
        if !self.decoded {
            loading.stage = if load.decompressing() {
                "decompressing"
            } else {
                "loading"
            };
        }
        let (done, total) = load.progress();
        loading.done.store(done, Ordering::Relaxed);
        loading.total.store(total, Ordering::Relaxed);
        None
    }
}

/// SQL at once (the page has no threads).
pub(crate) fn query_runner(
    trace: Arc<trace_model::Trace>,
    _proxy: EventLoopProxy<UserEvent>,
) -> Box<dyn QueryRunner> {
    Box::new(InlineRunner::deferred(trace))
}

/// After each frame, before it is shown: the page's `data-*` report ([`report`]).
pub(crate) fn frame_drawn(
    _g: &Gl,
    _size: (u32, u32),
    _n: u64,
    l: Option<&Loaded>,
    s: Option<&ViewState>,
    error: Option<&str>,
    q: &QueryPanel,
) {
    report(l, s, error, q);
    base::report(s);
}

/// Writes the app's state to `<body>`'s `data-*` attributes: `data-state` (`loading`,
/// `loaded`, `error`), `data-spans`, `data-view` (the visible range, ns), `data-selected`
/// (the selection's name), `data-markers` (how many), `data-stats` (the whole-trace
/// statistics: `computing`, `ready`), `data-stats-rows` (its rows: names, or a profile's
/// functions), `data-first-spans` (the canvas y of the first row of
/// a thread's spans on screen: `view::drawn::first_spans_y`), `data-error`, and for the
/// SQL section `data-sql` (`running`,
/// `done`, `error`), `data-sql-rows`, `data-sql-first` (the first row, tab-separated) and
/// `data-sql-error`. Scripts and the browser test read them.
fn report(l: Option<&Loaded>, s: Option<&ViewState>, error: Option<&str>, q: &QueryPanel) {
    let markers = s.map_or(String::new(), |s| s.timeline.markers.len().to_string());
    let first_spans =
        (s.and_then(crate::view::drawn::first_spans_y)).map_or(String::new(), |y| y.to_string());
    let stats = match l.map(|l| l.whole_stats_ready().is_some()) {
        Some(true) => "ready",
        Some(false) => "computing",
        None => "",
    };
    let stats_rows =
        (l.and_then(Loaded::whole_stats_ready)).map_or(String::new(), |r| r.len().to_string());
    let (state, spans, view, selected) = match (l, s) {
        (Some(l), Some(s)) => {
            let (a, b) = s.timeline.viewport.visible();
            let selected = s
                .timeline
                .selected
                .and_then(|p| crate::kinds::copy_text(&l.trace, p, false))
                .unwrap_or_default();
            (
                "loaded",
                l.trace.span_count().to_string(),
                format!("{a} {b}"),
                selected,
            )
        }
        _ => ("loading", String::new(), String::new(), String::new()),
    };
    // A failed load keeps the trace shown, but the page says what went wrong.
    let state = if error.is_some() { "error" } else { state };
    let error = error.unwrap_or_default();
    let (sql, sql_rows, sql_first, sql_error) = match &q.result {
        _ if q.running => ("running", String::new(), String::new(), String::new()),
        None => ("", String::new(), String::new(), String::new()),
        Some(Ok(r)) => {
            let first = r.rows.first().map_or(String::new(), |row| {
                let cells: Vec<String> = row.iter().map(crate::panels::query::cell).collect();
                cells.join("\t")
            });
            ("done", r.rows.len().to_string(), first, String::new())
        }
        Some(Err(e)) => ("error", String::new(), String::new(), e.clone()),
    };
    let key = format!(
        "{state}\n{spans}\n{view}\n{selected}\n{markers}\n{stats}\n{stats_rows}\n{first_spans}\n{error}\n{sql}\n{sql_rows}\n{sql_first}\n{sql_error}"
    );
    let changed = REPORTED.with(|r| {
        let mut r = r.borrow_mut();
        (*r != key).then(|| *r = key).is_some()
    });
    if !changed {
        return;
    }
    let Some(body) = document().and_then(|d| d.body()) else {
        return;
    };
    let data = body.dataset();
    for (k, v) in [
        ("state", state),
        ("spans", &spans),
        ("view", &view),
        ("selected", &selected),
        ("markers", &markers),
        ("stats", stats),
        ("statsRows", &stats_rows),
        ("firstSpans", &first_spans),
        ("error", error),
        ("sql", sql),
        ("sqlRows", &sql_rows),
        ("sqlFirst", &sql_first),
        ("sqlError", &sql_error),
    ] {
        let _ = data.set(k, v);
    }
}

/// Shows a load's progress in the page's overlay (`globalThis.spall_progress(done, total,
/// stage, name)` in index.html; `None` hides it): the browser composites it without a
/// canvas frame.
pub(crate) fn show_progress(p: Option<(&str, u64, u64, &str)>) {
    let Some(f) = page_function("spall_progress") else {
        return;
    };
    let _ = match p {
        Some((name, done, total, stage)) => {
            let args = js_sys::Array::of4(
                &JsValue::from_f64(done as f64),
                &JsValue::from_f64(total as f64),
                &stage.into(),
                &name.into(),
            );
            f.apply(&JsValue::NULL, &args)
        }
        None => f.call0(&JsValue::NULL),
    };
}

/// Tells the page the side panel's width in device pixels and whether the theme is dark
/// (`globalThis.spall_panel`), so the overlay stays in the main area and matches the
/// canvas; only when they changed.
pub(crate) fn panel_width(px: f32, dark: bool) {
    thread_local!(static TOLD: std::cell::Cell<(f32, bool)> = const { std::cell::Cell::new((-1.0, false)) });
    if TOLD.with(|t| t.replace((px, dark))) == (px, dark) {
        return;
    }
    if let Some(f) = page_function("spall_panel") {
        let _ = f.call2(&JsValue::NULL, &JsValue::from_f64(px as f64), &dark.into());
    }
}

/// A function the page set on `globalThis`, if it set one.
fn page_function(name: &str) -> Option<js_sys::Function> {
    let f = js_sys::Reflect::get(&js_sys::global(), &name.into()).ok()?;
    f.dyn_into::<js_sys::Function>().ok()
}
