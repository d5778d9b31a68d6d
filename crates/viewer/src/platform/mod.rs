//! The two platforms the app runs on: a native window (glutin, threads, files) and a web
//! page's canvas (WebGL2, no threads, traces loaded a step at a time). Exactly one is
//! compiled.

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;
#[cfg(target_arch = "wasm32")]
pub mod web;
