//! Visible-range queries and level of detail over a trace, with cost bounded by pixels on
//! screen rather than by events in the trace.
//!
//! This crate is being built; see the project's issue "trace-index".
