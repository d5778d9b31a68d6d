//! trace-model's integration tests, one binary: a module per area, through the public API
//! only. Two tests keep binaries of their own: `memory_guard.rs` (a counting global
//! allocator for its whole process) and `hostile_full.rs` (full-size hostile input, run
//! in release by `scripts/test.sh`, its peak memory the process's).

#[path = "../common/mod.rs"]
mod common;

mod edge_snapshots;
mod export;
mod fuzz_regressions;
mod generated;
mod hostile;
mod navigation;
mod parallel;
mod pprof;
mod profiles;
mod proto;
mod self_time;
mod semantics;
mod stream;
mod streaming;
mod systrace;
