//! What the user is looking at, and the operations on it: no GL, no egui, unit-tested
//! directly. Every scene and panel reads it; none of it draws.
//!
//! - [`viewport`]: which time is at which pixel; zoom, pan, fit, ruler ticks.
//! - [`layout`]: process and thread tracks, one row per depth, collapsible.
//! - [`flame`]: the flame graph's view: scope, zoom, selection, sandwich, hit testing.
//! - [`removed_stacks`]: compare mode's flame graph, widened for the stacks only BASE has.
//! - [`timeline`]: one pane of tracks: axis, scroll, rows, selection, hover, markers,
//!   search matches.
//! - [`state`]: the whole view, in parts: the timeline, the flame graph, compare mode's
//!   BASE pane; the range and the mode.
//! - [`base_pane`]: compare mode's timeline: BASE's tracks under NEW's, on one time axis.
//! - [`search`]: the names that match a query, stepped through in time order.
//! - [`geometry`]: the on-screen box of a span or another pick.
//! - [`drawn`]: the tracks drawn, where, and whether on screen (`--layout-json`).

pub mod base_pane;
pub mod drawn;
pub mod flame;
pub mod geometry;
pub mod layout;
pub mod removed_stacks;
pub mod search;
pub mod state;
pub mod timeline;
pub mod viewport;
