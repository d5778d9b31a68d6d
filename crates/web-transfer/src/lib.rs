//! A trace and its index crossing from the web page's load worker to the page, shared by
//! both modules that load (the page's, which has the viewer, and the threaded loader's,
//! which has not): the worker writes the trace's columns straight into typed arrays of at
//! most 32 MB (`pack_trace`) and transfers them, then the index's (`pack_index`), which it
//! builds while the page copies the trace's in; the page reads them back
//! (`Model::from_js`, then `Streams` as a [`trace_model::ColumnSource`]), a few
//! megabytes a step. The whole-trace statistics cross as bytes ([`pack_stats`],
//! [`read_stats`]).
//!
//! ```
//! use spall_web_transfer::{pack_stats, read_stats};
//! let trace = trace_model::load_bytes(br#"[{"ph":"X","name":"a","ts":0,"dur":5}]"#)?;
//! let stats = trace.stats(&trace_model::StatsFilter::default());
//! let bytes = pack_stats(&stats);
//! assert_eq!(read_stats(&bytes, &trace), Some(stats));
//! // Cut short: refused, never a panic.
//! assert_eq!(read_stats(&bytes[..bytes.len() - 1], &trace), None);
//! # Ok::<(), trace_model::Error>(())
//! ```
//!
//! Only [`MINIMAP_BINS`] and the statistics exist off wasm32 (`pack_trace`, `pack_index`, `Model` and
//! `Streams` are the browser's typed arrays).

#[cfg(target_arch = "wasm32")]
mod typed;
#[cfg(target_arch = "wasm32")]
pub use typed::{pack_index, pack_levels, pack_trace, Model, Streams};

/// Columns in the minimap's profile ([`trace_model::Trace::activity`]): the worker computes
/// it for the page, which refuses a minimap of another length.
pub const MINIMAP_BINS: usize = 1024;

/// Whole-trace statistics as bytes, as [`read_stats`] reads them back.
pub fn pack_stats(stats: &[trace_model::NameStats]) -> Vec<u8> {
    let mut w = trace_model::TransferWriter::with_capacity(stats.len() * 76 + 8);
    w.list(stats, |w, s| {
        w.u32(s.name.0);
        w.u64(s.count);
        let times = [s.total_ns, s.self_ns, s.min_ns, s.max_ns, s.mean_ns];
        for t in times.into_iter().chain([s.p50_ns, s.p90_ns, s.p99_ns]) {
            w.i64(t);
        }
    });
    w.into_bytes()
}

/// The statistics [`pack_stats`] packed for `trace`; `None` if there are none or they do
/// not fit it.
pub fn read_stats(bytes: &[u8], trace: &trace_model::Trace) -> Option<Vec<trace_model::NameStats>> {
    let mut r = trace_model::TransferReader::new(bytes);
    let names = trace.strings().len() as u32;
    let stats = r.list(|r| {
        let name = r.u32()?;
        if name >= names {
            return Err(r.fail("a name of the trace"));
        }
        Ok(trace_model::NameStats {
            name: trace_model::StrId(name),
            count: r.u64()?,
            total_ns: r.i64()?,
            self_ns: r.i64()?,
            min_ns: r.i64()?,
            max_ns: r.i64()?,
            mean_ns: r.i64()?,
            p50_ns: r.i64()?,
            p90_ns: r.i64()?,
            p99_ns: r.i64()?,
        })
    });
    stats.ok().filter(|_| r.at_end())
}
