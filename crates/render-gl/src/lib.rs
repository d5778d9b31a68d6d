//! A hand-written `glow` renderer for timelines: rectangles, lines with arrow heads, and
//! glyph-atlas text, on a window or headless. It knows nothing about traces.
//!
//! Drawing has two halves:
//! - [`Scene`] is the CPU side: plain vectors of 16-byte rectangle instances, line and
//!   glyph instances, and clip batches. No GL, so it is tested and benchmarked anywhere.
//! - [`Renderer`] uploads a scene as quads (four vertices each, through one shared index
//!   buffer) and draws it with one call per primitive kind and clip batch. Buffers and the
//!   glyph atlas are reused between frames.
//!
//! [`Fonts`] measures and lays out text (the embedded Hack font) with no GL, so callers can
//! truncate labels with an ellipsis before drawing. [`Headless`] opens an EGL context on a
//! device with no display (Mesa's llvmpipe when nothing else exists), for screenshots and
//! pixel tests.
//!
//! # Example
//!
//! ```no_run
//! use render_gl::{Color, Fonts, Headless, Renderer, Scene, ShaderVersion, VAlign};
//!
//! let headless = Headless::new(320, 120).unwrap();
//! let mut renderer = unsafe { Renderer::new(headless.gl().clone(), ShaderVersion::Gl33) }.unwrap();
//! let mut fonts = Fonts::new();
//! let mut scene = Scene::new();
//! scene.begin(320, 120, Color::WHITE);
//! scene.rect(10.0, 10.0, 200.0, 24.0, Color::rgb(70, 130, 180));
//! scene.text(&mut fonts, 14.0, 22.0, 14.0, VAlign::Center, Color::WHITE, "render_frame");
//! headless.bind();
//! unsafe { renderer.render(&mut scene, &fonts) };
//! let pixels = headless.read_rgba();
//! let mut png = Vec::new();
//! render_gl::encode_png(&mut png, 320, 120, &pixels).unwrap();
//! ```

#![warn(missing_docs)]
#![allow(unsafe_code)] // Every GL call is unsafe by signature; see the SAFETY notes.

mod atlas;
mod color;
#[cfg(not(target_arch = "wasm32"))]
mod headless;
mod image;
mod renderer;
mod scene;
mod shaders;
mod text;

pub use atlas::{AtlasPacker, AtlasSlot};
pub use color::{hsl, Color};
#[cfg(not(target_arch = "wasm32"))]
pub use headless::Headless;
pub use image::encode_png;
pub use renderer::Renderer;
pub use scene::{Batch, ClipRect, GlyphInstance, LineInstance, RectInstance, Scene, VAlign};
pub use shaders::ShaderVersion;
pub use text::{size_key, Fonts, GlyphBox, GlyphKey, ELLIPSIS};

/// Why rendering could not be set up or finished.
#[derive(Debug)]
#[non_exhaustive]
pub enum RenderError {
    /// EGL or the GL context could not be set up; `what` was being done.
    Context {
        /// The step that failed, e.g. "finding an EGL device".
        what: &'static str,
        /// EGL's or glutin's message.
        detail: String,
    },
    /// The GL driver refused to create an object, or the framebuffer is incomplete.
    Gl {
        /// What was being created or checked.
        what: &'static str,
        /// The driver's message, or the framebuffer status.
        detail: String,
    },
    /// A shader failed to compile (`stage` is `"vertex"` or `"fragment"`) or to link
    /// (`"link"`); `log` is the driver's.
    Shader {
        /// `"vertex"`, `"fragment"` or `"link"`.
        stage: &'static str,
        /// The driver's compile or link log.
        log: String,
    },
    /// A framebuffer of zero width or height was asked for.
    ZeroSize,
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::Context { what, detail } => write!(f, "OpenGL set-up: {what}: {detail}"),
            RenderError::Gl { what, detail } => write!(f, "OpenGL: {what}: {detail}"),
            RenderError::Shader { stage, log } => write!(f, "{stage} shader: {log}"),
            RenderError::ZeroSize => write!(f, "a framebuffer of zero width or height"),
        }
    }
}

impl std::error::Error for RenderError {}

/// A GL error (glow reports them as strings) while `what` was being done.
pub(crate) fn gl_err(what: &'static str) -> impl Fn(String) -> RenderError {
    move |detail| RenderError::Gl { what, detail }
}
