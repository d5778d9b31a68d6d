//! The trace model: raw events from `spall-format` turned into an immutable `Trace`
//! (processes, threads, interned names, spans per thread and depth, self time, counters,
//! instants, flows, diagnostics and statistics).
//!
//! This crate is being built; see the project's issue "Trace model and spall-cli".
