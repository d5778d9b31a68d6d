//! The interactive app: winit, render-gl for the timeline, egui for the side panel. Frames
//! are drawn on demand: an idle viewer waits for events and uses no CPU.
//!
//! The same app runs on a native window (`native`: glutin, threads, files) and on a web
//! page's canvas (`web`: WebGL2, no threads, traces loaded a step at a time).

#![allow(unsafe_code)] // GL calls are unsafe by signature; the context is current on this thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use render_gl::{Fonts, Scene};
// `std::time::Instant` panics in a browser; web-time's is std's on native targets.
use web_time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::window::{Theme as WinitTheme, WindowId};

use crate::app::parts::message;
use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::panels::side::Panel;
use crate::persist::keys::Bindings;
use crate::persist::settings::Settings;
#[cfg(not(target_arch = "wasm32"))]
use crate::platform::native as platform;
#[cfg(target_arch = "wasm32")]
use crate::platform::web as platform;
use crate::theme::{Theme, ThemeKind};
use crate::timeline::scene::FrameBuilder;
use crate::view::flame::Mode;
use crate::view::state::ViewState;
use crate::ViewerError;
use platform::{create_gl, Gl};

mod files;
mod input;
pub(crate) mod parts;
use trace_model::{FlameOptions, FlameSort, FlameTree};

/// The side panel's width when the window opens, in points: wide enough for every
/// column of the statistics table.
pub const PANEL_POINTS: f32 = 520.0;
/// The window's default size, in points.
pub const WINDOW_POINTS: (f32, f32) = (1400.0, 850.0);

/// Events from other threads.
#[derive(Debug)]
pub enum UserEvent {
    Progress,
    Loaded(Box<Result<Loaded, ViewerError>>),
    Repaint(Duration),
    /// A flame graph built off the UI thread, and what it was built for.
    Flame(Box<((FlameOptions, FlameSort), FlameTree)>),
    /// `--follow`: the file changed on disk.
    FileChanged,
    /// The page gave a trace's bytes (dropped, picked, or fetched for `?trace=`).
    #[cfg(target_arch = "wasm32")]
    Open(String, Vec<u8>),
    /// The page could not get a trace (a failed fetch).
    #[cfg(target_arch = "wasm32")]
    OpenFailed(String),
    /// Time for the next few steps of a load.
    #[cfg(target_arch = "wasm32")]
    Step,
    /// The page's `?sql=`: a query for the SQL section.
    #[cfg(target_arch = "wasm32")]
    Sql(String),
    /// The file dialog closed: the file picked, and whether it gave up at once (no portal
    /// answered and no zenity), in which case the path prompt is shown instead.
    #[cfg(not(target_arch = "wasm32"))]
    Picked(Option<PathBuf>, bool),
}

/// How the window starts.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The trace to open (the built-in demo when `None`).
    pub trace: Option<PathBuf>,
    /// A fixed theme (else the system's).
    pub theme: Option<ThemeKind>,
    /// Limits for every load (gzip size, memory).
    pub decode: trace_model::DecodeOptions,
    /// Reload, keeping the view, whenever the file changes (a trace still being written).
    pub follow: bool,
    /// Open nothing at first, not even the demo (a page about to fetch `?trace=`).
    pub start_empty: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Drag {
    /// Panning (and scrolling) the tracks; `moved` says whether it was more than a click.
    Pan { x: f32, y: f32, moved: bool },
    /// Selecting a time range from `from`.
    Range { from: i64 },
    /// Moving the view with the minimap.
    Minimap,
}

pub(crate) struct Loading {
    pub(crate) source: String,
    pub(crate) done: Arc<AtomicU64>,
    pub(crate) total: Arc<AtomicU64>,
    pub(crate) started: Instant,
    /// A reload of the file shown: the view carries over, and it stays on screen meanwhile.
    pub(crate) reload: bool,
    /// What is being done ("loading", "decompressing", "indexing").
    pub(crate) stage: &'static str,
}

impl Loading {
    fn new(source: String, reload: bool) -> Loading {
        Loading {
            source,
            done: Arc::default(),
            total: Arc::default(),
            started: Instant::now(),
            reload,
            stage: "loading",
        }
    }
}

struct App {
    proxy: EventLoopProxy<UserEvent>,
    gl: Option<Gl>,
    initial: Option<Option<PathBuf>>,
    /// The file shown (or being opened); `None` for the demo.
    path: Option<PathBuf>,
    /// A page's trace (it has no path): its name (file name or URL) and size, which key
    /// its saved view and markers.
    page_file: Option<(String, u64)>,
    /// The page's trace being loaded: it becomes `page_file` if the load succeeds (a
    /// failed one keeps the trace shown, and its key).
    page_pending: Option<(String, u64)>,
    decode: trace_model::DecodeOptions,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // No files to watch in a page.
    follow: bool,
    /// The file changed while it was loading: load it again when that finishes.
    reload_pending: bool,
    /// Ctrl+S: save the next frame drawn.
    save_pending: bool,
    /// A one-line message for the status (a saved screenshot).
    notice: Option<String>,
    /// Remembered between runs (theme, recent files), and where.
    settings: Settings,
    settings_path: Option<PathBuf>,
    loaded: Option<Arc<Loaded>>,
    state: Option<ViewState>,
    loading: Option<Loading>,
    error: Option<String>,
    theme: Option<Theme>,
    fonts: Fonts,
    scene: Scene,
    frame: FrameBuilder,
    panel: Panel,
    panel_px: f32,
    cursor: (f32, f32),
    drag: Option<Drag>,
    last_click: Option<(Instant, f32, f32)>,
    shift: bool,
    ctrl: bool,
    repaint_at: Option<Instant>,
    /// `SPALL_FRAME_DUMP=DIR`: every drawn frame is written to DIR/frame.png (for tests of
    /// the real window), with DIR/frame.txt saying its number, whether a trace is shown, its
    /// spans and the visible range.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    dump: Option<PathBuf>,
    frames: u64,
    /// Fit the whole trace once the side panel's width is known.
    fit_pending: bool,
    /// `SPALL_TIMING=1`: print when the first frame and the loaded trace appear.
    timing: Option<Instant>,
    /// The first frame showing the loaded trace was timed.
    timed_trace_frame: bool,
    /// The flame graph being built on another thread.
    flame_pending: Option<(FlameOptions, FlameSort)>,
    /// Keys to actions (the settings' `keys` over the defaults).
    bindings: Bindings,
    /// `?`: the list of keys is shown.
    show_help: bool,
    /// `Q`: the side panel is hidden.
    panel_hidden: bool,
    /// The panel's and the window's sizes at start (points), and the panel's now: what
    /// changed is remembered on exit.
    panel_start: f32,
    panel_points: f32,
    window_start: (f32, f32),
    /// A remembered view (absolute ns) and the viewport it was last shown with: shown
    /// again when the timeline's width changes (the side panel settles its width as its
    /// contents arrive), until the user moves the view.
    restore: Option<((i64, i64), Option<crate::view::viewport::Viewport>)>,
    /// A right-click's menu: what was clicked, and where (pixels).
    context_menu: Option<(Pick, f32, f32)>,
    /// What the status bar shows besides the cursor and view: the last frame's CPU time,
    /// and how long the trace took to load.
    frame_time: Duration,
    load_time: Option<Duration>,
    /// A load in steps (the web has no threads).
    #[cfg(target_arch = "wasm32")]
    steps: Option<crate::platform::web::Stepping>,
}

impl App {
    fn new(proxy: EventLoopProxy<UserEvent>, o: Options) -> App {
        let settings_path = Settings::default_path();
        let settings = match &settings_path {
            Some(p) => {
                let (s, warning) = Settings::load(p);
                if let Some(w) = warning {
                    eprintln!("spall: {w}");
                }
                s
            }
            #[cfg(target_arch = "wasm32")]
            None => crate::platform::web::load_settings(),
            #[cfg(not(target_arch = "wasm32"))]
            None => Settings::default(),
        };
        let theme = o.theme.or(settings.theme);
        let (bindings, warnings) = Bindings::from_settings(settings.keys.as_ref());
        for w in warnings {
            eprintln!("spall: settings: {w}");
        }
        App {
            bindings,
            show_help: false,
            panel_hidden: settings.panel_hidden,
            panel_start: settings.panel_points.unwrap_or(PANEL_POINTS),
            panel_points: 0.0,
            window_start: settings.window_points.unwrap_or(WINDOW_POINTS),
            context_menu: None,
            restore: None,
            frame_time: Duration::ZERO,
            load_time: None,
            save_pending: false,
            notice: None,
            settings,
            settings_path,
            proxy,
            gl: None,
            initial: (!o.start_empty).then_some(o.trace),
            path: None,
            page_file: None,
            page_pending: None,
            decode: o.decode,
            follow: o.follow,
            reload_pending: false,
            loaded: None,
            state: None,
            loading: None,
            error: None,
            theme: theme.map(Theme::new),
            fonts: Fonts::new(),
            scene: Scene::new(),
            frame: FrameBuilder::default(),
            panel: Panel::default(),
            panel_px: 0.0,
            cursor: (0.0, 0.0),
            drag: None,
            last_click: None,
            shift: false,
            ctrl: false,
            repaint_at: None,
            dump: std::env::var_os("SPALL_FRAME_DUMP").map(PathBuf::from),
            frames: 0,
            fit_pending: false,
            timing: std::env::var_os("SPALL_TIMING").map(|_| Instant::now()),
            timed_trace_frame: false,
            flame_pending: None,
            #[cfg(target_arch = "wasm32")]
            steps: None,
        }
    }

    fn redraw(&self) {
        if let Some(g) = &self.gl {
            g.window.request_redraw();
        }
    }

    /// Starts loading on a background thread (in steps, on the web); the window stays
    /// responsive. A `reload` of the file shown keeps the view.
    fn open(&mut self, path: Option<PathBuf>, reload: bool) {
        if self.loading.is_some() {
            // One load at a time; a file that changes meanwhile is loaded again after.
            self.reload_pending |= reload;
            if reload {
                return;
            }
        }
        let source = path
            .as_ref()
            .map_or(crate::DEMO_NAME.to_string(), |p| p.display().to_string());
        let loading = Loading::new(source, reload);
        #[cfg(not(target_arch = "wasm32"))]
        {
            if !reload && self.follow {
                if let Some(p) = &path {
                    crate::platform::native::watch(p.clone(), self.proxy.clone());
                }
            }
            crate::platform::native::load(path.clone(), &self.decode, &loading, self.proxy.clone());
        }
        // A page opens files by their bytes (`open_bytes`): only the demo comes here.
        #[cfg(target_arch = "wasm32")]
        {
            self.steps = Some(crate::platform::web::Stepping::new(
                crate::DEMO.to_vec(),
                &self.decode,
            ));
            crate::platform::web::step_soon(&self.proxy);
        }
        if !reload {
            self.remember_view();
        }
        self.path = path;
        self.page_file = None;
        self.page_pending = None;
        self.loading = Some(loading);
        self.error = None;
        self.redraw();
    }

    /// The page gave a trace's bytes: load them in steps, replacing any load under way.
    #[cfg(target_arch = "wasm32")]
    fn open_bytes(&mut self, name: String, bytes: Vec<u8>) {
        self.remember_view();
        self.page_pending = Some((name.clone(), bytes.len() as u64));
        self.steps = Some(crate::platform::web::Stepping::new(bytes, &self.decode));
        crate::platform::web::step_soon(&self.proxy);
        self.path = None;
        self.loading = Some(Loading::new(name, false));
        self.error = None;
        self.redraw();
    }

    /// The next steps of a load in a page, for about a frame's time; then the page gets
    /// to draw the progress and handle input before the next.
    #[cfg(target_arch = "wasm32")]
    fn step(&mut self) {
        let (Some(steps), Some(loading)) = (&mut self.steps, &mut self.loading) else {
            return;
        };
        match steps.run(Duration::from_millis(30), loading) {
            None => crate::platform::web::step_soon(&self.proxy),
            Some(result) => {
                self.steps = None;
                self.on_loaded(result);
            }
        }
        self.redraw();
    }

    fn timeline_size(&self) -> (f32, f32) {
        let Some(g) = &self.gl else { return (1.0, 1.0) };
        let size = g.window.inner_size();
        (
            (size.width as f32 - self.panel_px).max(1.0),
            size.height as f32,
        )
    }

    fn theme(&self) -> Theme {
        self.theme.unwrap_or_else(|| {
            let dark = self.gl.as_ref().and_then(|g| g.window.theme()) == Some(WinitTheme::Dark);
            Theme::new(if dark {
                ThemeKind::Dark
            } else {
                ThemeKind::Light
            })
        })
    }

    /// The status bar: the time under the cursor, the visible range's duration, the last
    /// frame's CPU time, the process's memory, and the load time.
    fn status_bar(&self) -> String {
        use spall_format::time::format_duration;
        let mut parts = Vec::new();
        if let (Some(l), Some(s)) = (&self.loaded, &self.state) {
            let (x, _) = self.cursor;
            if s.mode == Mode::Timeline && x >= 0.0 && x < s.width {
                let t = s.viewport.time_at(x as f64) - l.trace.start_ns();
                parts.push(format!("cursor {}", format_duration(t)));
            }
            let (a, b) = s.viewport.visible();
            parts.push(format!("view {}", format_duration(b - a)));
        }
        parts.push(format!(
            "frame {:.1} ms",
            self.frame_time.as_secs_f64() * 1e3
        ));
        if let Some(m) = crate::app::parts::memory_in_use() {
            parts.push(format!("mem {}", spall_format::human_bytes(m)));
        }
        if let Some(t) = self.load_time {
            parts.push(format!(
                "loaded in {}",
                format_duration(t.as_nanos() as i64)
            ));
        }
        parts.join(" · ")
    }

    fn status(&self) -> String {
        if let Some(l) = &self.loading {
            let (d, t) = (
                l.done.load(Ordering::Relaxed),
                l.total.load(Ordering::Relaxed),
            );
            let pct = (d * 100).checked_div(t).unwrap_or(0);
            return format!("{} {} … {pct}%", l.stage, l.source);
        }
        if let Some(e) = &self.error {
            return format!("error: {e}");
        }
        let source = self
            .loaded
            .as_ref()
            .map_or(String::new(), |l| l.source.clone());
        match &self.notice {
            Some(n) => format!("{source} · {n}"),
            None => source,
        }
    }

    fn draw(&mut self) {
        let drawing = Instant::now();
        let status = self.status();
        let status_bar = self.status_bar();
        let (show_help, panel_hidden) = (self.show_help, self.panel_hidden);
        let panel_start = self.panel_start;
        let (menu, mut choice) = (self.context_menu, None);
        let bindings = &self.bindings;
        let theme = self.theme();
        let Some(g) = self.gl.as_mut() else { return };
        // The side panel first: its width decides the timeline's.
        let mut actions = Default::default();
        self.panel.hold = matches!(self.drag, Some(Drag::Range { .. }));
        self.panel.recent.clone_from(&self.settings.recent);
        let (loaded, mut state, panel) =
            (self.loaded.as_deref(), self.state.as_mut(), &mut self.panel);
        let mut panel_points = 0.0;
        g.egui.egui_ctx.set_visuals(match theme.kind {
            ThemeKind::Light => egui::Visuals::light(),
            ThemeKind::Dark => egui::Visuals::dark(),
        });
        g.egui.run(&g.window, |ui| {
            if !panel_hidden {
                let r = egui::Panel::right("side")
                    .default_size(panel_start)
                    .min_size(260.0)
                    .max_size(1200.0)
                    .show(ui, |ui| {
                        egui::Panel::bottom("status_bar").show(ui, |ui| {
                            ui.label(egui::RichText::new(&status_bar).small().monospace());
                        });
                        actions = panel.ui(ui, loaded, state.as_deref_mut(), &status);
                    });
                panel_points = r.response.rect.width();
            }
            if show_help {
                crate::app::parts::help(ui.ctx(), bindings);
            }
            if let Some((pick, x, y)) = menu {
                choice = crate::app::parts::context_menu(ui.ctx(), pick, x, y);
            }
        });
        if let Some(c) = choice {
            self.context_menu = None;
            self.menu_choice(c);
            self.redraw();
        }
        let Some(g) = self.gl.as_mut() else { return };
        let ppp = g.egui.egui_ctx.pixels_per_point();
        self.panel_px = panel_points * ppp;
        if panel_points > 0.0 {
            self.panel_points = panel_points;
        }
        let size = g.window.inner_size();
        // A page's canvas can change pixel density (a move to another screen, zoom) with
        // no resize event: the drawing buffer follows the size winit reports.
        #[cfg(target_arch = "wasm32")]
        g.resize(size.width, size.height);
        let (w, h) = (
            (size.width as f32 - self.panel_px).max(1.0),
            size.height as f32,
        );

        if let (Some(l), Some(s)) = (&self.loaded, &mut self.state) {
            s.theme = theme;
            s.set_scale(l, g.window.scale_factor() as f32);
            if (s.width, s.height) != (w, h) {
                s.resize(w, h);
            }
            if let Some(((a, b), shown)) = self.restore {
                self.fit_pending = false;
                let v = s.viewport;
                match shown {
                    Some(o) if (o.t0, o.ns_per_px) != (v.t0, v.ns_per_px) => self.restore = None,
                    Some(o) if o.width == v.width => {}
                    _ => {
                        s.viewport.show_exact(a, b);
                        self.restore = Some(((a, b), Some(s.viewport)));
                    }
                }
            } else if self.fit_pending {
                self.fit_pending = false;
                s.fit_all(l);
            }
            if s.mode == Mode::Flame {
                if let Some(want) = s.flame.wanted(l, s) {
                    if self.flame_pending.as_ref() != Some(&want) {
                        // Merging costs O(spans): off the UI thread, as loading is.
                        self.flame_pending = Some(want.clone());
                        let (bg, proxy) = (l.clone(), self.proxy.clone());
                        platform::spawn(move || {
                            let tree = bg.trace.flame(&want.0, want.1);
                            let _ = proxy.send_event(UserEvent::Flame(Box::new((want, tree))));
                        });
                    }
                }
            }
            self.frame.build(&mut self.scene, &mut self.fonts, l, s);
        } else {
            message(
                &mut self.scene,
                &mut self.fonts,
                theme,
                w,
                h,
                &status,
                self.loading.as_ref(),
            );
        }
        // SAFETY: our context is current on this thread.
        unsafe {
            use glow::HasContext;
            g.gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            g.renderer.render(&mut self.scene, &self.fonts);
            g.gl.viewport(0, 0, size.width as i32, size.height as i32);
        }
        g.egui.paint(&g.window);
        self.frames += 1;
        if let Some(t) = self.timing {
            if self.frames == 1 {
                eprintln!(
                    "spall: first frame after {:.0} ms",
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
            if self.loaded.is_some() && !std::mem::replace(&mut self.timed_trace_frame, true) {
                eprintln!(
                    "spall: first frame of the trace after {:.0} ms",
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(dir) = &self.dump {
            // After the frame number: whether a trace is shown, its spans, the visible range.
            let info = match (&self.loaded, &self.state) {
                (Some(l), Some(s)) => {
                    let (a, b) = s.viewport.visible();
                    format!("true {} {a} {b}", l.trace.span_count())
                }
                _ => "false".to_string(),
            };
            crate::platform::native::dump_frame(
                &g.gl,
                dir,
                size.width,
                size.height,
                self.frames,
                &info,
            );
        }
        #[cfg(target_arch = "wasm32")]
        crate::platform::web::report(
            self.loaded.as_deref(),
            self.state.as_ref(),
            self.error.as_deref(),
            &self.panel.query,
        );
        #[cfg(target_arch = "wasm32")]
        if std::mem::take(&mut self.save_pending) {
            // Before the frame is handed to the page: a WebGL canvas keeps its pixels only
            // until then.
            let name = self.loaded.as_ref().map_or("spall", |l| l.source.as_str());
            self.notice = Some(crate::platform::web::save_screenshot(name));
        }
        #[cfg(not(target_arch = "wasm32"))]
        if std::mem::take(&mut self.save_pending) {
            let (w, h) = (size.width, size.height);
            self.notice = Some(crate::platform::native::save_screenshot(
                &g.gl,
                w,
                h,
                self.path.as_deref(),
            ));
            eprintln!("spall: {}", self.notice.as_deref().unwrap_or_default());
            g.window.request_redraw();
        }
        self.frame_time = drawing.elapsed();
        if let Err(e) = g.swap() {
            eprintln!("spall: swap failed: {e}");
        }
        if let Some(p) = actions.open {
            self.open(Some(p), false);
        }
        if actions.pick_file {
            self.pick_file();
        }
        if actions.toggle_theme {
            self.theme = Some(theme.toggled());
            self.save_settings();
            self.redraw();
        }
        if actions.redraw {
            self.redraw();
        }
    }
}

impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.gl.is_some() {
            return;
        }
        match create_gl(el, self.window_start) {
            Ok(g) => {
                let proxy = self.proxy.clone();
                g.egui.egui_ctx.set_request_repaint_callback(move |info| {
                    let _ = proxy.send_event(UserEvent::Repaint(info.delay));
                });
                self.gl = Some(g);
            }
            Err(e) => {
                eprintln!("spall: cannot open a window: {e}");
                el.exit();
                return;
            }
        }
        if let Some(path) = self.initial.take() {
            self.open(path, false);
        }
    }

    fn user_event(&mut self, _el: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Progress => self.redraw(),
            UserEvent::Loaded(r) => self.on_loaded(*r),
            UserEvent::FileChanged => self.reload(),
            #[cfg(not(target_arch = "wasm32"))]
            UserEvent::Picked(path, gave_up) => match path {
                Some(p) => self.open(Some(p), false),
                None if gave_up => {
                    self.panel.show_open = true;
                    self.redraw();
                }
                None => {}
            },
            #[cfg(target_arch = "wasm32")]
            UserEvent::Open(name, bytes) => self.open_bytes(name, bytes),
            #[cfg(target_arch = "wasm32")]
            UserEvent::OpenFailed(e) => {
                self.steps = None;
                self.loading = None;
                self.error = Some(e);
                self.redraw();
            }
            #[cfg(target_arch = "wasm32")]
            UserEvent::Step => self.step(),
            #[cfg(target_arch = "wasm32")]
            UserEvent::Sql(sql) => {
                self.panel.query.run_text(&sql);
                self.redraw();
            }
            UserEvent::Flame(b) => {
                let (want, tree) = *b;
                if self.flame_pending.as_ref() == Some(&want) {
                    self.flame_pending = None;
                }
                if let (Some(l), Some(s)) = (&self.loaded, &mut self.state) {
                    if s.flame.wanted(l, s).as_ref() == Some(&want) {
                        s.flame.install(l, want, tree);
                    }
                }
                self.redraw();
            }
            UserEvent::Repaint(d) => {
                if d.is_zero() {
                    self.redraw();
                } else if d < Duration::from_secs(3600) {
                    self.repaint_at = Some(Instant::now() + d);
                }
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(g) = self.gl.as_mut() else { return };
        if let WindowEvent::Resized(size) = &event {
            g.resize(size.width, size.height);
            g.window.request_redraw();
        }
        let consumed = match &event {
            WindowEvent::RedrawRequested | WindowEvent::CloseRequested => false,
            _ => {
                let r = g.egui.on_window_event(&g.window, &event);
                if r.repaint {
                    g.window.request_redraw();
                }
                r.consumed
            }
        };
        // Pointer events over the panel belong to egui.
        let over_panel = self.state.as_ref().is_some_and(|s| self.cursor.0 > s.width);
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::RedrawRequested => self.draw(),
            WindowEvent::ModifiersChanged(m) => {
                self.shift = m.state().shift_key();
                self.ctrl = m.state().control_key() || m.state().super_key();
            }
            WindowEvent::DroppedFile(path) => self.open(Some(path), false),
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                if over_panel && self.drag.is_none() {
                    self.cursor = (x, y);
                    if let Some(s) = &mut self.state {
                        if s.hover.take().is_some() {
                            self.redraw();
                        }
                    }
                } else {
                    self.mouse_moved(x, y);
                }
            }
            WindowEvent::MouseInput { state, button, .. } if !consumed || self.drag.is_some() => {
                self.mouse_button(button, state == ElementState::Pressed)
            }
            WindowEvent::MouseWheel { delta, .. } if !consumed && !over_panel => self.wheel(delta),
            WindowEvent::KeyboardInput { event, .. }
                if !consumed && event.state == ElementState::Pressed =>
            {
                let theme = self.theme;
                let quit = self.ctrl
                    && matches!(&event.logical_key, winit::keyboard::Key::Character(c) if c.eq_ignore_ascii_case("q"));
                if quit && cfg!(not(target_arch = "wasm32")) {
                    // Ctrl+Q: as closing the window (a page cannot close itself).
                    el.exit();
                    return;
                }
                self.key(&event.logical_key);
                if self.theme != theme {
                    self.save_settings();
                }
            }
            WindowEvent::ThemeChanged(_) | WindowEvent::ScaleFactorChanged { .. } => self.redraw(),
            // A page going out of sight may never come back (closed tabs send nothing else).
            WindowEvent::Occluded(true) if cfg!(target_arch = "wasm32") => {
                self.remember_view();
                self.save_settings();
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        match self.repaint_at {
            Some(t) if t <= Instant::now() => {
                self.repaint_at = None;
                self.redraw();
                el.set_control_flow(ControlFlow::Wait);
            }
            Some(t) => el.set_control_flow(ControlFlow::WaitUntil(t)),
            None => el.set_control_flow(ControlFlow::Wait),
        }
        if self.loading.is_some() && cfg!(not(target_arch = "wasm32")) {
            // Keep the elapsed-time display moving while loading, a few times a second
            // (a page redraws after each step of its load).
            el.set_control_flow(ControlFlow::WaitUntil(
                Instant::now() + Duration::from_millis(200),
            ));
            self.redraw();
        }
    }

    fn exiting(&mut self, _el: &ActiveEventLoop) {
        self.remember_view();
        self.remember_layout();
        self.save_settings();
        if let Some(g) = &mut self.gl {
            g.egui.destroy();
            // SAFETY: the context is still current.
            unsafe { g.renderer.destroy() };
        }
    }
}

fn event_loop(what: &'static str) -> Result<EventLoop<UserEvent>, ViewerError> {
    EventLoop::<UserEvent>::with_user_event()
        .build()
        .map_err(|e| ViewerError::Window {
            what,
            detail: e.to_string(),
        })
}

/// Runs the window until it is closed.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(options: Options) -> Result<(), ViewerError> {
    let el = event_loop(
        "cannot start the window system (no display? use --screenshot for headless rendering)",
    )?;
    let mut app = App::new(el.create_proxy(), options);
    el.run_app(&mut app).map_err(|e| ViewerError::Window {
        what: "the event loop",
        detail: e.to_string(),
    })
}

/// Starts the app on the page's canvas; it runs as long as the page does.
#[cfg(target_arch = "wasm32")]
pub fn start(options: Options) -> Result<(), ViewerError> {
    use winit::platform::web::EventLoopExtWebSys;
    let el = event_loop("cannot start the event loop")?;
    crate::platform::web::set_proxy(el.create_proxy());
    let app = App::new(el.create_proxy(), options);
    el.spawn_app(app);
    Ok(())
}
