//! The timeline scene: minimap, ruler, tracks of spans through trace-index's level of
//! detail, the other kinds of events, flow arrows and markers, built into a render-gl
//! `Scene` on the CPU.
//!
//! - [`scene`]: the scene for a view: tracks, labels, selection, search marks, tooltip.
//! - [`kinds`]: the rows that are not span lanes (counters, instants, async, samples), flows.
//! - [`markers`]: flags at a time, with a note.

pub(crate) mod kinds;
pub mod markers;
pub mod scene;
