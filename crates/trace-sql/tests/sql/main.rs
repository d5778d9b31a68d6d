//! trace-sql's integration tests, one binary: the tables on real traces, and the parity
//! with trace_processor's answers.

mod parity;
mod samples;
mod sql;
