//! The flame graph's drawing and its section of the side panel. Its view state (scope,
//! zoom, selection) is [`crate::view::flame`].
//!
//! - `draw`: the header strip and the panes, drawn into a render-gl `Scene`.
//! - `panel`: scope, orientation, order, breadcrumb, occurrences and the sandwich.
//! - `changes`: compare mode's colours and tooltip lines for the changes that
//!   [`trace_model::changes`] works out.

pub mod changes;
pub(crate) mod draw;
pub(crate) mod panel;

pub use draw::{describe, describe_removed};
