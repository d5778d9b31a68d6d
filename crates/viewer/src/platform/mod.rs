//! The two platforms the app runs on, behind one interface the app calls (they never call
//! the app): a native window (glutin, threads, files) and a web page's canvas (WebGL2, no
//! threads, traces loaded a step at a time). Exactly one is compiled.
//!
//! Both halves give, with the same names: `Gl` (the window or canvas with its GL context,
//! renderer and egui; `resize`, `swap`), `create_gl`, `spawn` (work off the UI thread, or
//! after the page's turn), `pick_file`, `stored_settings` and `save_settings` (what a page
//! keeps in its storage; a native window's file is the app's), `query_runner`,
//! `frame_drawn` (after each frame: the native frame dump, the page's `data-*` report) and
//! `save_screenshot`. Loading differs: `native::load` runs on a thread (and
//! `native::watch` follows the file); a page loads in `web::Stepping`s between frames.
//! What both sides share (the events that reach the app, a load under way) is in `common`.

mod common;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub(crate) use common::{Loading, UserEvent};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use native::{
    create_gl, frame_drawn, pick_file, query_runner, save_screenshot, save_settings, spawn,
    stored_settings, Gl,
};
#[cfg(target_arch = "wasm32")]
pub(crate) use web::{
    create_gl, frame_drawn, pick_file, query_runner, save_screenshot, save_settings, spawn,
    stored_settings, Gl,
};
