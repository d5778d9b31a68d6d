//! What spall's programs (`spall`, `spall-cli`, the web viewer) share besides traces:
//! sizes and times for people, how much memory a load may take, files written so that a
//! failure never destroys what was there, where settings live, and two switches for a
//! load's speed (heap tuning and `SPALL_TIMING`).
//!
//! It sits below `spall-format` (whose decode options carry a [`MemoryLimit`] and whose
//! stages report to [`timing::stage`]) and depends on no spall crate.
//!
//! # Example
//!
//! ```
//! use spall_util::{format_duration, human_bytes, parse_size, parse_time_range, MemoryLimit};
//!
//! assert_eq!(parse_size("512M"), Ok(512 << 20));
//! assert_eq!(human_bytes(512 << 20), "512 MB"); // powers of 1024, as parse_size reads
//! assert_eq!(parse_time_range("10ms..1.5s"), Ok((Some(10_000_000), Some(1_500_000_000))));
//! assert_eq!(format_duration(1_234_000), "1.234 ms");
//! assert_eq!(MemoryLimit::Bytes(5).resolve().map(|(n, _)| n), Some(5));
//! ```

#![warn(missing_docs)]

mod atomic_file;
mod config;
mod heap;
mod memory;
mod size;
mod time;
pub mod timing;

pub use atomic_file::{remove_partial_files, write_atomically, AtomicFile, WriteError};
pub use config::{config_dir, settings_path, CONFIG_DIR_VAR};
pub use heap::{prefetch, release_free, tune_heap};
pub use memory::{parse_memory_limit, LimitSource, MemoryLimit};
pub use size::{human_bytes, parse_size};
pub use time::{format_duration, parse_time_range, parse_time_with_unit};
