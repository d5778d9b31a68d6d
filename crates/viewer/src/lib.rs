//! The spall viewer as a library: everything but the event loop, so the view logic,
//! scene building and screenshots are tested without a window.
//!
//! Modules, from the bottom up (each imports only modules listed before it):
//!
//! - [`theme`], `error`: colours; the library's error.
//! - [`kinds`], [`loaded`]: picks and the index of kinds; a loaded trace with what the viewer
//!   derives from it once.
//! - [`view`]: what the user is looking at (viewport, layout, flame graph view, state). No GL.
//! - [`overlay`]: what is drawn over either scene (tooltip box, warnings banner).
//! - [`timeline`]: the timeline's drawing (tracks, other kinds, flows, markers), for render-gl.
//! - [`flame`]: the flame graph's drawing and panel section.
//! - [`scene`]: the main area's scene: the timeline or the flame graph, per the mode.
//! - [`panels`]: the egui side panel and its sections (details, names, SQL).
//! - [`persist`]: what is remembered between runs and across a reload.
//! - [`screenshot`]: renders a frame headless to a PNG.
//! - [`platform`]: the native window and the web page.
//! - [`app`]: the interactive app and its event loop, on either platform.

#![warn(missing_docs)]

pub mod app;
mod error;
pub mod flame;
pub mod kinds;
pub mod loaded;
pub mod overlay;
pub mod panels;
pub mod persist;
pub mod platform;
pub mod scene;
pub mod screenshot;
pub mod theme;
pub mod timeline;
pub mod view;

pub use error::ViewerError;
pub use loaded::Loaded;

/// A real Chrome trace (250 ms cut from catapult's `lthi_cats` test trace by
/// `scripts/make-demo.py`; see tests/fixtures/README.md), shown when no file is given: spans,
/// counters, instants, async operations and flows.
pub const DEMO: &[u8] = include_bytes!("../../../tests/fixtures/real/demo_lthi_excerpt.json");
/// The name the demo is shown under, in place of a file name.
pub const DEMO_NAME: &str = "demo: a Chrome trace (built in)";

/// Loads a trace file, or the demo when `path` is `None`; `progress` gets (bytes done, total).
#[cfg(not(target_arch = "wasm32"))]
pub fn load(
    path: Option<&std::path::Path>,
    opts: &trace_model::DecodeOptions,
    progress: impl FnMut(u64, u64) + Send,
) -> Result<Loaded, ViewerError> {
    match path {
        Some(p) => {
            let t = trace_model::load_with(p, opts, progress)?;
            Ok(Loaded::new(t, p.display().to_string()))
        }
        None => {
            let t = trace_model::load_bytes(DEMO)?;
            Ok(Loaded::new(t, DEMO_NAME.to_string()))
        }
    }
}
