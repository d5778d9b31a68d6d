//! The viewer library's error.

use std::fmt;

/// Why the viewer could not load, render or open a window.
#[derive(Debug)]
#[non_exhaustive]
pub enum ViewerError {
    /// The trace could not be read or decoded.
    Load(trace_model::Error),
    /// Rendering failed (headless or in the window).
    Render(render_gl::RenderError),
    /// `--select NAME` matched no span.
    NoSuchSpan(String),
    /// `--thread SPEC` matched no thread.
    NoSuchThread(String),
    /// A flame graph option (`--select`, `--sandwich`) named no frame in the graph.
    NoSuchFrame {
        /// The option, e.g. `"--sandwich"`.
        option: &'static str,
        /// The name it gave.
        name: String,
    },
    /// The window system or the window's OpenGL context could not be set up.
    Window {
        /// The step that failed.
        what: &'static str,
        /// The window system's or GL's message.
        detail: String,
    },
    /// A file (a screenshot) could not be written; an existing one is unchanged.
    Write(spall_util::WriteError),
}

impl fmt::Display for ViewerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewerError::Load(e) => e.fmt(f),
            ViewerError::Render(e) => e.fmt(f),
            ViewerError::NoSuchSpan(name) => write!(
                f,
                "--select {name:?}: no span, async slice or instant has that name"
            ),
            ViewerError::NoSuchThread(spec) => write!(
                f,
                "--thread {spec:?}: no such thread (use PID:TID, a thread name, a TID or part of a name)"
            ),
            ViewerError::NoSuchFrame { option, name } => write!(
                f,
                "{option} {name:?}: no frame of the flame graph has that name"
            ),
            ViewerError::Window { what, detail } => write!(f, "{what}: {detail}"),
            ViewerError::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ViewerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ViewerError::Load(e) => Some(e),
            ViewerError::Render(e) => Some(e),
            ViewerError::Write(e) => Some(e),
            _ => None,
        }
    }
}

impl From<trace_model::Error> for ViewerError {
    fn from(e: trace_model::Error) -> ViewerError {
        ViewerError::Load(e)
    }
}

impl From<render_gl::RenderError> for ViewerError {
    fn from(e: render_gl::RenderError) -> ViewerError {
        ViewerError::Render(e)
    }
}

impl From<spall_util::WriteError> for ViewerError {
    fn from(e: spall_util::WriteError) -> ViewerError {
        ViewerError::Write(e)
    }
}
