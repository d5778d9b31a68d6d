//! What the viewer remembers: between runs (settings, each file's view, key bindings) and
//! across a reload of the same file.
//!
//! - [`settings`]: `settings.json` (theme, recent files, views), written atomically.
//! - [`saved_view`]: a file's view (range, collapsed, hidden and pinned tracks) by path.
//! - [`keys`]: every action, its default keys, and bindings from the settings.
//! - [`reload`]: carrying the view over to a new load of the same file.

pub mod keys;
pub mod reload;
pub mod saved_view;
pub mod settings;
