//! Loading a trace file or bytes into a [`Trace`].

use std::path::Path;
use std::sync::Mutex;

use spall_format::{DecodeOptions, Error, EventSink, Input, RawEvent};

use crate::build::TraceBuilder;
use crate::trace::Trace;

/// Forwards events to the builder and progress to a callback.
struct Sink<'a, F: FnMut(u64, u64)> {
    builder: &'a mut TraceBuilder,
    progress: &'a mut F,
}

impl<F: FnMut(u64, u64)> EventSink for Sink<'_, F> {
    #[inline]
    fn event(&mut self, event: &RawEvent<'_>) {
        self.builder.event(event);
    }

    fn progress(&mut self, done: u64, total: u64) {
        (self.progress)(done, total);
    }
}

/// Loads a trace file (`.spall`, JSON or gzip, detected by content).
pub fn load(path: impl AsRef<Path>) -> Result<Trace, Error> {
    load_with(path, &DecodeOptions::default(), |_, _| {})
}

/// [`load`] with limits and a progress callback `(bytes done, bytes total)`.
///
/// The input is decoded in chunks on every core (rayon's pool), each into its own builder,
/// and the builders are merged in file order; B/E events are matched as they stream in. A
/// file whose B/E events go back in time on some thread is decoded a second time, in one
/// piece, with buffering (progress then runs twice). The result does not depend on the
/// number of threads.
pub fn load_with(
    path: impl AsRef<Path>,
    opts: &DecodeOptions,
    progress: impl FnMut(u64, u64) + Send,
) -> Result<Trace, Error> {
    let path = path.as_ref();
    let input = Input::open(path, opts)?;
    load_input(&input, progress).map_err(|e| e.with_path(path))
}

/// Loads a trace held in memory (as [`load_with`] does a file, with no copy unless gzip).
pub fn load_bytes(bytes: &[u8]) -> Result<Trace, Error> {
    let opts = DecodeOptions::default();
    let (summary, chunks) =
        spall_format::decode_parallel(bytes, &opts, TraceBuilder::chunk, &|_, _| {})?;
    if let Some(t) = TraceBuilder::merge(chunks).try_finish(summary) {
        return Ok(t);
    }
    let mut buffered = TraceBuilder::new();
    let summary = spall_format::decode_with(bytes, &opts, &mut buffered)?;
    Ok(buffered.finish(summary))
}

fn load_input(input: &Input, progress: impl FnMut(u64, u64) + Send) -> Result<Trace, Error> {
    let progress = Mutex::new(progress);
    // Chunks report from any thread; a report that finds the callback busy is dropped.
    let report = |done: u64, total: u64| {
        if let Ok(mut p) = progress.try_lock() {
            p(done, total);
        }
    };
    let timing = std::env::var_os("SPALL_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let (summary, chunks) = input.decode_parallel(TraceBuilder::chunk, &report)?;
    let t1 = std::time::Instant::now();
    let merged = TraceBuilder::merge(chunks);
    let t2 = std::time::Instant::now();
    let trace = merged.try_finish(summary);
    if timing {
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        eprintln!(
            "spall timing: decode+build {:.0} ms, merge {:.0} ms, finish {:.0} ms",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, std::time::Instant::now())
        );
    }
    if let Some(t) = trace {
        return Ok(t);
    }
    let mut progress = progress.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut buffered = TraceBuilder::new();
    let summary = input.decode(&mut Sink {
        builder: &mut buffered,
        progress: &mut progress,
    })?;
    Ok(buffered.finish(summary))
}
