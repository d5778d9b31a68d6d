//! The viewer's integration tests, one binary: a module per area, headless (Mesa's EGL,
//! no display). The real-window test, `window.rs`, keeps a binary of its own: it drives
//! one X server's windows one test at a time, apart from the headless rendering here.

#[path = "common/compare_pair.rs"]
mod compare_pair;

mod compare_flame;
mod compare_timeline;
mod flame;
mod hostile;
mod kinds;
mod panel_layout;
mod query_panel;
mod reload;
mod screenshots;
mod settings;
mod system;
