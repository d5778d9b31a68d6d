//! The egui side panel and its sections (the timeline and flame graph are render-gl's).
//!
//! - `csv`: tables as CSV or TSV for the copy buttons.
//! - `details`: the selection's details (a span's ancestors and arguments, other kinds).
//! - `names`: per-name analysis (duration histogram, percentiles, slowest occurrences).
//! - [`query`]: SQL over the trace, with a sortable result table.
//! - [`side`]: the panel: trace summary, search, selection and its sections; in it
//!   `side/stats.rs` (the statistics table) and `side/range.rs` (counters and async slices
//!   over a range).

pub(crate) mod csv;
pub(crate) mod details;
pub(crate) mod names;
pub mod query;
pub mod side;
