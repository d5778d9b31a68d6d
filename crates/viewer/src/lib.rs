//! The spall viewer as a library: everything but the event loop, so the view logic,
//! frame building and screenshots are tested without a window.
//!
//! - [`viewport`]: which time is at which pixel; zoom, pan, fit, ruler ticks.
//! - [`layout`]: process and thread tracks, one row per depth, collapsible.
//! - [`state`]: selection, hover, range, search and highlights, and their operations.
//! - [`frame`]: builds a render-gl `Scene` for a state, through trace-index's level of detail.
//! - [`screenshot`]: renders a frame headless to a PNG.

mod error;
pub mod frame;
pub mod layout;
pub mod loaded;
pub mod panel;
pub mod screenshot;
pub mod state;
pub mod theme;
pub mod viewport;
pub mod window;

pub use error::ViewerError;
pub use loaded::Loaded;

/// A real `clang -ftime-trace` trace (tests/fixtures), shown when no file is given.
pub const DEMO: &[u8] =
    include_bytes!("../../../tests/fixtures/real/clang/self-win-clang-19.1_BuildEvents.json");
pub const DEMO_NAME: &str = "demo: clang -ftime-trace (built in)";

/// Loads a trace file, or the demo when `path` is `None`; `progress` gets (bytes done, total).
pub fn load(
    path: Option<&std::path::Path>,
    progress: impl FnMut(u64, u64) + Send,
) -> Result<Loaded, ViewerError> {
    match path {
        Some(p) => {
            let t = trace_model::load_with(p, &trace_model::DecodeOptions::default(), progress)?;
            Ok(Loaded::new(t, p.display().to_string()))
        }
        None => {
            let t = trace_model::load_bytes(DEMO)?;
            Ok(Loaded::new(t, DEMO_NAME.to_string()))
        }
    }
}
