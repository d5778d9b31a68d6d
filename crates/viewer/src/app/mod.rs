//! The interactive app: winit, render-gl for the main area, egui for the side panel. Frames
//! are drawn on demand: an idle viewer waits for events and uses no CPU. The same app runs
//! on either platform ([`crate::platform`]), which it calls and which never calls it.
//!
//! - here: how the app starts ([`Options`], [`run`], `start`) and `App`, in parts.
//! - `events`: the event loop's calls (window created, events, exit).
//! - `draw`: a frame: side panel, main area, status.
//! - `files`: opening and loading files; what is remembered on the way.
//! - `input`: pointer, wheel and keys on the main area; the context menu's choices.
//! - `overlays`: the screen before a trace, the keys overlay, the context menu.

#![allow(unsafe_code)] // GL calls are unsafe by signature; the context is current on this thread.

use std::path::PathBuf;
use std::sync::Arc;

use render_gl::{Fonts, Scene};
// `std::time::Instant` panics in a browser; web-time's is std's on native targets.
use web_time::{Duration, Instant};
use winit::event_loop::{EventLoop, EventLoopProxy};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::panels::side::{Panel, SortColumn};
use crate::persist::keys::Bindings;
use crate::persist::settings::Settings;
use crate::platform::{self, Gl, Loading, UserEvent};
use crate::scene::SceneBuilder;
use crate::theme::{Theme, ThemeKind};
use crate::view::state::ViewState;
use crate::ViewerError;

mod draw;
mod events;
mod files;
mod input;
mod overlays;
use trace_model::{FlameOptions, FlameSort};

/// The side panel's width when the window opens, in points: wide enough for every
/// column of the statistics table.
pub const PANEL_POINTS: f32 = 520.0;
/// The window's default size, in points.
pub const WINDOW_POINTS: (f32, f32) = (1400.0, 850.0);

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
    /// Compare mode: the trace (BASE) the one opened is compared with; the window opens
    /// on the flame graph, coloured by the changes.
    pub compare: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Drag {
    /// Panning (and scrolling) the tracks; `moved` says whether it was more than a click.
    Pan { x: f32, y: f32, moved: bool },
    /// Selecting a time range from `from`.
    Range { from: i64 },
    /// Moving the view with the minimap.
    Minimap,
    /// Compare mode: moving the divider between NEW's and BASE's panes.
    Divider,
}

/// The app: the trace shown, the file it comes from, input, the side panel, drawing, and
/// what is remembered between runs.
struct App {
    proxy: EventLoopProxy<UserEvent>,
    gl: Option<Gl>,
    shown: Shown,
    file: Opening,
    input: Input,
    side: Chrome,
    drawing: Drawing,
    /// Remembered between runs (theme, recent files), and where.
    settings: Settings,
    settings_path: Option<PathBuf>,
}

/// The trace shown and its view.
struct Shown {
    loaded: Option<Arc<Loaded>>,
    state: Option<ViewState>,
    /// Fit the whole trace once the side panel's width is known.
    fit_pending: bool,
    /// The flame graph being built on another thread.
    flame_pending: Option<(FlameOptions, FlameSort)>,
    /// A remembered view (absolute ns) and the viewport it was last shown with: shown
    /// again when the timeline's width changes (the side panel settles its width as its
    /// contents arrive), until the user moves the view.
    restore: Option<((i64, i64), Option<crate::view::viewport::Viewport>)>,
    /// Compare mode: BASE, kept for every trace opened until stopped.
    base: Option<Arc<Loaded>>,
    /// Compare mode: BASE being loaded (a later choice replaces it).
    base_loading: Option<PathBuf>,
}

/// Which file is shown or being opened, and the load under way.
struct Opening {
    /// What to open once the window exists (`None` inside: the demo).
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
    /// The file dialog open now picks compare mode's BASE.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))] // The page has no BASE to load.
    picking_base: bool,
    /// Compare mode from the command line: BASE to load, and the flame graph to show
    /// first.
    initial_base: Option<PathBuf>,
    loading: Option<Loading>,
    error: Option<String>,
    /// How long the trace shown took to load (the status bar).
    load_time: Option<Duration>,
    /// A load in steps (the web has no threads).
    #[cfg(target_arch = "wasm32")]
    steps: Option<crate::platform::web::Stepping>,
    /// The page's load worker sends the whole-trace statistics of the trace being shown:
    /// the page does not compute them.
    #[cfg(target_arch = "wasm32")]
    stats_coming: bool,
    /// The worker's trace being taken, in steps.
    #[cfg(target_arch = "wasm32")]
    taking: Option<crate::platform::web::Taking>,
    /// The worker's statistics, come while its trace was still being taken.
    #[cfg(target_arch = "wasm32")]
    early_stats: Option<(String, Vec<u8>)>,
    /// The index's stored levels, being taken once the trace is shown.
    #[cfg(target_arch = "wasm32")]
    levels: Option<crate::platform::web::LevelsTaking>,
}

/// The pointer and the keyboard over the main area.
struct Input {
    cursor: (f32, f32),
    drag: Option<Drag>,
    last_click: Option<(Instant, f32, f32)>,
    shift: bool,
    ctrl: bool,
    /// Keys to actions (the settings' `keys` over the defaults).
    bindings: Bindings,
    /// A right-click's menu: what was clicked, and where (pixels).
    context_menu: Option<(Pick, f32, f32)>,
    /// `?`: the list of keys is shown.
    show_help: bool,
    /// The last pointer move was over egui's panel or windows (`events::egui_sees_move`).
    egui_pointer: bool,
}

/// The side panel and the window's chrome: sizes, theme, the status notice.
struct Chrome {
    panel: Panel,
    /// The panel's width in pixels in the last frame.
    panel_px: f32,
    /// `Q`: the side panel is hidden.
    panel_hidden: bool,
    /// The panel's and the window's sizes at start (points), and the panel's now: what
    /// changed is remembered on exit.
    panel_start: f32,
    panel_points: f32,
    window_start: (f32, f32),
    /// A fixed theme (else the system's).
    theme: Option<Theme>,
    /// A one-line message for the status (a saved screenshot).
    notice: Option<String>,
}

/// Drawing frames: the scene and its builder, and what is counted and timed.
struct Drawing {
    fonts: Fonts,
    scene: Scene,
    builder: SceneBuilder,
    repaint_at: Option<Instant>,
    frames: u64,
    /// Ctrl+S: save the next frame drawn.
    save_pending: bool,
    /// The last frame's CPU time (the status bar).
    frame_time: Duration,
    /// `SPALL_TIMING=1`: print when the first frame and the loaded trace appear.
    timing: Option<Instant>,
    /// The first frame showing the loaded trace was timed.
    timed_trace_frame: bool,
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
            None => platform::stored_settings(),
        };
        let theme = o.theme.or(settings.theme);
        let (bindings, warnings) = Bindings::from_settings(settings.keys.as_ref());
        for w in warnings {
            eprintln!("spall: settings: {w}");
        }
        App {
            proxy,
            gl: None,
            shown: Shown {
                loaded: None,
                state: None,
                fit_pending: false,
                flame_pending: None,
                restore: None,
                base: None,
                base_loading: None,
            },
            file: Opening {
                initial: (!o.start_empty).then_some(o.trace),
                path: None,
                page_file: None,
                page_pending: None,
                decode: o.decode,
                follow: o.follow,
                reload_pending: false,
                picking_base: false,
                initial_base: o.compare,
                loading: None,
                error: None,
                load_time: None,
                #[cfg(target_arch = "wasm32")]
                steps: None,
                #[cfg(target_arch = "wasm32")]
                stats_coming: false,
                #[cfg(target_arch = "wasm32")]
                taking: None,
                #[cfg(target_arch = "wasm32")]
                early_stats: None,
                #[cfg(target_arch = "wasm32")]
                levels: None,
            },
            input: Input {
                cursor: (0.0, 0.0),
                drag: None,
                last_click: None,
                shift: false,
                ctrl: false,
                bindings,
                context_menu: None,
                show_help: false,
                egui_pointer: false,
            },
            side: Chrome {
                panel: Panel::with_columns(SortColumn::from_labels(&settings.stats_columns)),
                panel_px: 0.0,
                panel_hidden: settings.panel_hidden,
                panel_start: settings.panel_points.unwrap_or(PANEL_POINTS),
                panel_points: 0.0,
                window_start: settings.window_points.unwrap_or(WINDOW_POINTS),
                theme: theme.map(Theme::new),
                notice: None,
            },
            drawing: Drawing {
                fonts: Fonts::new(),
                scene: Scene::new(),
                builder: SceneBuilder::default(),
                repaint_at: None,
                frames: 0,
                save_pending: false,
                frame_time: Duration::ZERO,
                timing: std::env::var_os("SPALL_TIMING").map(|_| Instant::now()),
                timed_trace_frame: false,
            },
            settings,
            settings_path,
        }
    }

    pub(super) fn redraw(&self) {
        if let Some(g) = &self.gl {
            g.window.request_redraw();
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
