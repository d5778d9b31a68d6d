//! The timeline's drawing: minimap, ruler, tracks of spans through trace-index's level of
//! detail, the other kinds of events, flow arrows and markers, into a render-gl `Scene`
//! on the CPU.
//!
//! - `kinds`: the rows that are not span lanes (counters, instants, async, samples), flows.
//! - `marks`: a counter's step graph and a curved arrow, drawn by several kinds of rows.
//! - [`markers`]: flags at a time, with a note.
//! - `sched`: a system trace's CPU counters and thread-state strips (its CPUs' slices are
//!   drawn as span lanes by `draw`).
//! - `stacks`: a thread's samples as stacks over time (drawn as span lanes by `draw`).
//! - [`draw`]: tracks, labels, selection, search marks, ruler, minimap, tooltip.
//! - `base_pane`: compare mode's divider and BASE's tracks under NEW's, drawn by `draw`'s
//!   code through BASE's own view.

pub(crate) mod base_pane;
pub mod draw;
pub(crate) mod kinds;
pub mod markers;
pub(crate) mod marks;
pub mod sched;
pub(crate) mod stacks;
