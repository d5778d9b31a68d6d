//! What the app and both platforms share: the events that reach the app's loop, a load
//! under way, and the renderer and egui set up on a platform's GL context.

#![allow(unsafe_code)] // The renderer's GL calls are unsafe by signature.

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use render_gl::{Renderer, ShaderVersion};
use trace_model::{FlameOptions, FlameSort, FlameTree};
use web_time::{Duration, Instant};

use crate::loaded::Loaded;
use crate::ViewerError;

/// Events from other threads.
#[derive(Debug)]
pub enum UserEvent {
    /// A load on a native thread advanced (a page's load steps between frames instead).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Progress,
    /// A native load thread finished.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Loaded(Box<Result<Loaded, ViewerError>>),
    Repaint(Duration),
    /// A flame graph built off the UI thread, what it was built for, and in compare mode
    /// the trace compared with and each frame's change.
    Flame(Box<FlameBuilt>),
    /// Compare mode's BASE trace finished loading: its path (a page's: its name) and the
    /// trace, or the error.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Base(Box<(PathBuf, Result<Loaded, String>)>),
    /// `--follow`: the file changed on disk.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
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
    /// The page's load worker began, advanced, or built its trace.
    #[cfg(target_arch = "wasm32")]
    Page(PageLoad),
    /// The page's load of compare mode's BASE began, built it, or failed.
    #[cfg(target_arch = "wasm32")]
    PageBase(super::web::base::PageBase),
    /// The page's `?sql=`: a query for the SQL section.
    #[cfg(target_arch = "wasm32")]
    Sql(String),
    /// The file dialog closed: the file picked, and whether it gave up at once (no portal
    /// answered and no zenity), in which case the path prompt is shown instead.
    #[cfg(not(target_arch = "wasm32"))]
    Picked(Option<PathBuf>, bool),
}

/// A flame graph built off the UI thread: what for, the tree, and in compare mode the
/// BASE it was compared with and each frame's change.
pub(crate) type FlameBuilt = (
    (FlameOptions, FlameSort),
    FlameTree,
    Option<Arc<trace_model::Trace>>,
    crate::view::flame::Compared,
);

/// A load under way: what is loaded, its progress (written by the loader), and when it
/// started.
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
    pub(crate) fn new(source: String, reload: bool) -> Loading {
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

/// The timeline's renderer and the side panel's egui, on a GL context that is current.
pub(crate) fn drawing(
    el: &winit::event_loop::ActiveEventLoop,
    gl: &std::sync::Arc<glow::Context>,
    window: &winit::window::Window,
    version: ShaderVersion,
) -> Result<(Renderer, egui_glow::EguiGlow), crate::ViewerError> {
    // SAFETY: the caller's context is current, and stays with the renderer.
    let renderer = unsafe { Renderer::new(gl.clone(), version) }?;
    let scale = Some(window.scale_factor() as f32);
    let egui = egui_glow::EguiGlow::new(el, gl.clone(), None, scale, true);
    Ok((renderer, egui))
}

/// What the page's load worker reports (`web/worker.js`): the page's thread only draws.
#[cfg(target_arch = "wasm32")]
#[derive(Debug)]
pub enum PageLoad {
    /// A load began: it replaces any under way (whose worker the page ended).
    Begun(String),
    /// Bytes done of the stage's total.
    Progress {
        /// Bytes done.
        done: u64,
        /// Bytes in all (0: not known yet).
        total: u64,
        /// What is being done: "reading", "decompressing", "loading", "building",
        /// "indexing".
        stage: &'static str,
    },
    /// The worker built the trace: its name and `web::pack_trace`'s part of the model.
    Built(String, super::web::model::Model),
    /// The worker built the trace's index: its name and `web::pack_index`'s part.
    Index(String, super::web::model::IndexPart),
    /// The index's stored levels, which its part above left for later (the page drew from
    /// its pyramids meanwhile): its name and `web::pack_levels`' part.
    Levels(String, super::web::model::IndexPart),
    /// The worker's whole-trace statistics of the trace it built (`web::pack_stats`; empty:
    /// none, the page computes them).
    Stats(String, Vec<u8>),
}
