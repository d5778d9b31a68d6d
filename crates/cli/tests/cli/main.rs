//! spall-cli's integration tests, one binary: a module per area, each running the built
//! `spall-cli` (`CARGO_BIN_EXE_spall-cli`) or calling the library. `config_dir.rs` is a
//! binary of its own because it sets environment variables for its whole process.

mod common;

mod cli;
mod diff_flame;
mod export;
mod export_dataset;
mod flame;
mod fleet;
mod gate;
mod outputs;
mod profile_diff;
mod profiles;
mod proto;
mod proto_threads;
mod spall_trace;
mod sql;
mod systrace;
