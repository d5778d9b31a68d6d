//! The commands of `spall-cli`, as a library for its binary (`src/main.rs`, which parses the
//! command line) and for the fuzz targets (`fuzz/`), which feed `check`'s budget parser
//! and the like hostile input. Not a stable API: scripts use the command line and its JSON
//! output (docs/CLI.md).

pub mod check;
pub mod convert;
pub mod diff;
mod diff_cpu;
mod diff_flame;
mod diff_row;
mod diff_samples;
#[cfg(feature = "sql")]
pub mod export;
pub mod flame;
pub mod info;
pub mod markers;
mod min_delta;
#[cfg(feature = "sql")]
pub mod query;
pub mod sched;
pub mod select;
pub mod stats;
pub mod util;
pub mod validate;

use clap::ValueEnum;

/// `stats --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Table,
    Json,
    Csv,
}

/// `stats --sort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    #[value(name = "self")]
    SelfTime,
    Total,
    Count,
    Mean,
    Max,
    Name,
}
