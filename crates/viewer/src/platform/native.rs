//! The window's native half: a glutin GL context and surface on a winit window, background
//! threads (loading, statistics, flame graphs, SQL), `--follow`'s file watcher, and
//! screenshots and frame dumps written to files.

#![allow(unsafe_code)] // GL calls are unsafe by signature; the context is ours.

use std::num::NonZeroU32;
use std::sync::Arc;

use glutin::config::{ConfigTemplateBuilder, GlConfig};
use glutin::context::{
    ContextApi, ContextAttributesBuilder, NotCurrentGlContext, PossiblyCurrentContext, Version,
};
use glutin::display::{GetGlDisplay, GlDisplay};
use glutin::surface::{GlSurface, Surface, SurfaceAttributesBuilder, SwapInterval, WindowSurface};
use raw_window_handle::HasWindowHandle;
use render_gl::{Renderer, ShaderVersion};
use winit::event_loop::{ActiveEventLoop, EventLoopProxy};
use winit::window::Window;

use super::common::{drawing, Loading, UserEvent};
use crate::loaded::Loaded;
use crate::panels::query::{QueryPanel, QueryRunner};
use crate::persist::reload::FileStamp;
use crate::persist::settings::Settings;
use crate::view::state::ViewState;
use crate::ViewerError;

/// The window and everything drawn on it.
pub(crate) struct Gl {
    pub(crate) window: Window,
    pub(crate) surface: Surface<WindowSurface>,
    pub(crate) context: PossiblyCurrentContext,
    pub(crate) gl: Arc<glow::Context>,
    pub(crate) renderer: Renderer,
    pub(crate) egui: egui_glow::EguiGlow,
    /// `SPALL_FRAME_DUMP=DIR`: every drawn frame is written to DIR/frame.png (for tests of
    /// the real window), with DIR/frame.txt saying its number, whether a trace is shown, its
    /// spans and the visible range.
    dump: Option<std::path::PathBuf>,
}

impl Gl {
    /// The window's new size in pixels.
    pub(crate) fn resize(&self, w: u32, h: u32) {
        if let (Some(w), Some(h)) = (NonZeroU32::new(w), NonZeroU32::new(h)) {
            self.surface.resize(&self.context, w, h);
        }
    }

    /// Shows the frame drawn.
    pub(crate) fn swap(&self) -> Result<(), String> {
        self.surface
            .swap_buffers(&self.context)
            .map_err(|e| e.to_string())
    }
}

/// Runs `f` off the UI thread.
pub(crate) fn spawn(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f);
}

/// Opens the desktop's file dialog on its own thread (the XDG portal, else zenity), which
/// answers with [`UserEvent::Picked`]. False when there is none to try (no session bus and
/// no zenity, as under Xvfb; or `SPALL_NO_FILE_DIALOG` is set): the caller then prompts
/// for a path.
#[cfg(target_os = "linux")]
pub(crate) fn pick_file(proxy: &EventLoopProxy<UserEvent>) -> bool {
    use std::sync::atomic::{AtomicBool, Ordering};
    static OPEN: AtomicBool = AtomicBool::new(false);
    let zenity = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("zenity").is_file()));
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some();
    if std::env::var_os("SPALL_NO_FILE_DIALOG").is_some() || !(bus || zenity) {
        return false;
    }
    if OPEN.swap(true, Ordering::AcqRel) {
        return true; // One dialog at a time.
    }
    let proxy = proxy.clone();
    std::thread::spawn(move || {
        let asked = std::time::Instant::now();
        let path = rfd::FileDialog::new()
            .set_title("Open a trace")
            .add_filter(
                "Traces",
                &["json", "gz", "spall", "pftrace", "perfetto-trace", "pb"],
            )
            .add_filter("All files", &["*"])
            .pick_file();
        // A dialog a person answered stays open longer than this; one that never showed
        // (no portal answered) returns at once.
        let gave_up = path.is_none() && asked.elapsed() < std::time::Duration::from_millis(300);
        OPEN.store(false, Ordering::Release);
        let _ = proxy.send_event(UserEvent::Picked(path, gave_up));
    });
    true
}

/// No file dialog here: the caller prompts for a path.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pick_file(_proxy: &EventLoopProxy<UserEvent>) -> bool {
    false
}

/// After each frame, before it is shown: with `SPALL_FRAME_DUMP`, the frame dump.
pub(crate) fn frame_drawn(
    g: &Gl,
    (w, h): (u32, u32),
    n: u64,
    l: Option<&Loaded>,
    s: Option<&ViewState>,
    _error: Option<&str>,
    _query: &QueryPanel,
) {
    let Some(dir) = &g.dump else { return };
    // After the frame number: whether a trace is shown, its spans, the visible range.
    let info = match (l, s) {
        (Some(l), Some(s)) => {
            let (a, b) = s.timeline.viewport.visible();
            format!("true {} {a} {b}", l.trace.span_count())
        }
        _ => "false".to_string(),
    };
    dump_frame(&g.gl, dir, w, h, n, &info);
}

/// Writes the back buffer to `dir/frame.png`, then `dir/frame.txt` (both replaced atomically).
fn dump_frame(gl: &glow::Context, dir: &std::path::Path, w: u32, h: u32, n: u64, info: &str) {
    let px = read_frame(gl, w, h);
    let _ = std::fs::create_dir_all(dir);
    if crate::screenshot::write_png(&dir.join("frame.png"), w, h, &px).is_ok() {
        let _ = spall_util::write_atomically(&dir.join("frame.txt"), |f| {
            std::io::Write::write_all(f, format!("{n} {info}\n").as_bytes())
        });
    }
}

/// Ctrl+S: saves the window as `NAME-UNIXTIME.png` in the current directory (NAME the
/// trace file's stem), says so on stderr, and returns what the status line says.
pub(crate) fn save_screenshot(
    g: &Gl,
    (w, h): (u32, u32),
    trace: Option<&std::path::Path>,
    _name: &str,
) -> String {
    let said = write_screenshot(&g.gl, w, h, trace);
    eprintln!("spall: {said}");
    g.window.request_redraw();
    said
}

fn write_screenshot(gl: &glow::Context, w: u32, h: u32, trace: Option<&std::path::Path>) -> String {
    let stem = trace
        .and_then(|p| p.file_stem())
        .and_then(|s| s.to_str())
        .map_or("spall".to_string(), |s| {
            s.trim_end_matches(".json").to_string()
        });
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = std::path::PathBuf::from(format!("{stem}-{secs}.png"));
    let px = read_frame(gl, w, h);
    match crate::screenshot::write_png(&path, w, h, &px) {
        Ok(()) => format!("saved {}", path.display()),
        Err(e) => format!("screenshot not saved: {e}"),
    }
}

/// A native window keeps its settings in the file the app reads and writes.
pub(crate) fn stored_settings() -> Settings {
    Settings::default()
}

/// Nothing to keep besides the settings file (written by the app).
pub(crate) fn save_settings(_s: &Settings) {}

/// SQL on a worker thread holding the trace.
pub(crate) fn query_runner(
    trace: Arc<trace_model::Trace>,
    proxy: EventLoopProxy<UserEvent>,
) -> Box<dyn QueryRunner> {
    Box::new(ThreadRunner::new(trace, proxy))
}

/// The window, `size` points large, with its GL context.
pub(crate) fn create_gl(el: &ActiveEventLoop, size: (f32, f32)) -> Result<Gl, ViewerError> {
    let fail = |what| {
        move |e: &dyn std::fmt::Display| ViewerError::Window {
            what,
            detail: e.to_string(),
        }
    };
    let attrs = Window::default_attributes()
        .with_title("spall")
        .with_inner_size(winit::dpi::LogicalSize::new(size.0, size.1));
    let template = ConfigTemplateBuilder::new().with_alpha_size(8);
    let (window, config) = glutin_winit::DisplayBuilder::new()
        .with_preference(glutin_winit::ApiPreference::FallbackEgl)
        .with_window_attributes(Some(attrs.clone()))
        .build(el, template, |configs| {
            configs
                .reduce(|a, b| {
                    if b.num_samples() < a.num_samples() {
                        b
                    } else {
                        a
                    }
                })
                .expect("at least one GL config")
        })
        .map_err(|e| fail("no OpenGL configuration")(&e))?;
    let window = match window {
        Some(w) => w,
        None => {
            glutin_winit::finalize_window(el, attrs, &config).map_err(|e| fail("window")(&e))?
        }
    };
    let raw = (window.window_handle())
        .map_err(|e| fail("window handle")(&e))?
        .as_raw();
    let display = config.display();
    let ctx_attrs = ContextAttributesBuilder::new()
        .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
        .build(Some(raw));
    let es_attrs = ContextAttributesBuilder::new()
        .with_context_api(ContextApi::Gles(Some(Version::new(3, 0))))
        .build(Some(raw));
    // SAFETY: the window outlives the context and surface (both are stored together).
    let (context, version) = unsafe {
        match display.create_context(&config, &ctx_attrs) {
            Ok(c) => (c, ShaderVersion::Gl33),
            Err(_) => (
                display
                    .create_context(&config, &es_attrs)
                    .map_err(|e| fail("GL context")(&e))?,
                ShaderVersion::Gles30,
            ),
        }
    };
    let size = window.inner_size();
    let surface_attrs = SurfaceAttributesBuilder::<WindowSurface>::new().build(
        raw,
        NonZeroU32::new(size.width).unwrap_or(NonZeroU32::MIN),
        NonZeroU32::new(size.height).unwrap_or(NonZeroU32::MIN),
    );
    // SAFETY: as above.
    let surface = unsafe { display.create_window_surface(&config, &surface_attrs) }
        .map_err(|e| fail("GL surface")(&e))?;
    let context = context
        .make_current(&surface)
        .map_err(|e| fail("making the GL context current")(&e))?;
    let _ = surface.set_swap_interval(&context, SwapInterval::Wait(NonZeroU32::MIN));
    // SAFETY: the context is current; symbols come from its display.
    let gl = Arc::new(unsafe {
        glow::Context::from_loader_function_cstr(|s| display.get_proc_address(s))
    });
    let (renderer, egui) = drawing(el, &gl, &window, version)?;
    Ok(Gl {
        window,
        surface,
        context,
        gl,
        renderer,
        egui,
        dump: std::env::var_os("SPALL_FRAME_DUMP").map(std::path::PathBuf::from),
    })
}

/// `--follow`: polls the file twice a second and says when it changed (grew, was rewritten
/// or replaced). Ends with the event loop.
pub(crate) fn watch(path: std::path::PathBuf, proxy: EventLoopProxy<UserEvent>) {
    std::thread::spawn(move || {
        let mut last = FileStamp::of(&path);
        loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let now = FileStamp::of(&path);
            if now != last {
                last = now;
                if proxy.send_event(UserEvent::FileChanged).is_err() {
                    return;
                }
            }
        }
    });
}

/// The query panel's runner in the window: a worker thread owns the SQLite connection, so a
/// long query never holds up a frame; Cancel interrupts it.
struct ThreadRunner {
    tx: std::sync::mpsc::Sender<String>,
    rx: std::sync::mpsc::Receiver<Result<trace_sql::QueryResult, String>>,
    interrupt: std::sync::mpsc::Receiver<trace_sql::InterruptHandle>,
    handle: Option<trace_sql::InterruptHandle>,
    busy: bool,
}

impl ThreadRunner {
    fn new(
        trace: std::sync::Arc<trace_model::Trace>,
        proxy: EventLoopProxy<UserEvent>,
    ) -> ThreadRunner {
        let (tx, jobs) = std::sync::mpsc::channel::<String>();
        let (done, rx) = std::sync::mpsc::channel();
        let (give, interrupt) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let db = match trace_sql::TraceDb::new(trace) {
                Ok(db) => db,
                Err(e) => {
                    let _ = done.send(Err(e.to_string()));
                    return;
                }
            };
            let _ = give.send(db.interrupt_handle());
            // Ends when the runner (and so the sender) is dropped.
            while let Ok(sql) = jobs.recv() {
                let r = db
                    .query_limited(&sql, crate::panels::query::MAX_ROWS)
                    .map_err(|e| crate::panels::query::error_text(&sql, &e));
                if done.send(r).is_err() {
                    return;
                }
                let _ = proxy.send_event(UserEvent::Repaint(std::time::Duration::ZERO));
            }
        });
        ThreadRunner {
            tx,
            rx,
            interrupt,
            handle: None,
            busy: false,
        }
    }
}

impl QueryRunner for ThreadRunner {
    fn start(&mut self, sql: &str) {
        if self.busy {
            self.cancel();
            // The cancelled query's answer comes first: drop it.
            let _ = self.rx.recv();
        }
        self.busy = self.tx.send(sql.to_string()).is_ok();
    }

    fn poll(&mut self) -> Option<Result<trace_sql::QueryResult, String>> {
        let r = self.rx.try_recv().ok()?;
        self.busy = false;
        Some(r)
    }

    fn cancel(&mut self) {
        if self.handle.is_none() {
            self.handle = self.interrupt.try_recv().ok();
        }
        if let Some(h) = &self.handle {
            h.interrupt();
        }
    }
}

/// Loads a trace (the demo for `None`) on a thread of its own, reporting progress into
/// `loading` and the result as [`UserEvent::Loaded`].
pub(crate) fn load(
    path: Option<std::path::PathBuf>,
    decode: &trace_model::DecodeOptions,
    loading: &Loading,
    proxy: EventLoopProxy<UserEvent>,
) {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    let (d, t, decode) = (loading.done.clone(), loading.total.clone(), decode.clone());
    std::thread::spawn(move || {
        let mut last = Instant::now();
        let result = crate::load(path.as_deref(), &decode, |a, b| {
            d.store(a, Ordering::Relaxed);
            t.store(b, Ordering::Relaxed);
            if last.elapsed() > Duration::from_millis(50) {
                last = Instant::now();
                let _ = proxy.send_event(UserEvent::Progress);
            }
        });
        let _ = proxy.send_event(UserEvent::Loaded(Box::new(result)));
    });
}

/// The back buffer as RGBA pixels, rows from the top.
fn read_frame(gl: &glow::Context, w: u32, h: u32) -> Vec<u8> {
    use glow::HasContext;
    let mut px = vec![0u8; (w * h * 4) as usize];
    // SAFETY: the buffer holds w × h RGBA pixels; the context is current.
    unsafe {
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
        gl.read_pixels(
            0,
            0,
            w as i32,
            h as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut px)),
        );
    }
    let row = (w * 4) as usize;
    (0..h as usize)
        .rev()
        .flat_map(|y| px[y * row..(y + 1) * row].iter().copied())
        .collect()
}
