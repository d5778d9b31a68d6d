//! The spall viewer as a library: everything but the event loop, so the view logic,
//! frame building and screenshots are tested without a window.
//!
//! - [`viewport`]: which time is at which pixel; zoom, pan, fit, ruler ticks.
//! - [`layout`]: process and thread tracks, one row per depth, collapsible.
//! - [`state`]: selection, hover, range, search and highlights, and their operations.
//! - [`frame`]: builds a render-gl `Scene` for a state, through trace-index's level of detail.
//! - [`flame`]: the flame graph view (merged call stacks, sandwich), drawn by render-gl too.
//! - [`screenshot`]: renders a frame headless to a PNG.
//! - [`query_panel`]: SQL over the trace (trace-sql) in the side panel.
//! - [`window`]: the interactive app, on a native window or (`web`, wasm32) a page's canvas.

mod csv;
mod error;
pub mod flame;
mod flame_draw;
mod flame_panel;
pub mod frame;
mod frame_kinds;
pub mod keys;
pub mod kinds;
pub mod layout;
pub mod loaded;
pub mod markers;
mod name_panel;
#[cfg(not(target_arch = "wasm32"))]
mod native;
pub mod panel;
mod panel_details;
pub mod query_panel;
pub mod reload;
pub mod saved_view;
pub mod screenshot;
pub mod settings;
pub mod state;
pub mod theme;
pub mod viewport;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod window;
mod window_parts;

pub use error::ViewerError;
pub use loaded::Loaded;

/// A real Chrome trace (250 ms cut from catapult's `lthi_cats` test trace by
/// `scripts/make-demo.py`; see tests/fixtures/README.md), shown when no file is given: spans,
/// counters, instants, async operations and flows.
pub const DEMO: &[u8] = include_bytes!("../../../tests/fixtures/real/demo_lthi_excerpt.json");
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
