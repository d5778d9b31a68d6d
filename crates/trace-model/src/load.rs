//! Loading a trace file or bytes into a [`Trace`].

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use spall_format::{DecodeOptions, Error, EventSink, Input, RawEvent, Steps, Summary};
use spall_util::timing::stage;

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

    fn sample(&mut self, sample: &spall_format::RawSample<'_>) {
        self.builder.sample(sample);
    }

    fn sample_kind_default(&mut self, kind: &str, unit: spall_format::SampleUnit) {
        self.builder.sample_kind_default(kind, unit);
    }

    fn tree_nodes(&mut self, nodes: usize) {
        self.builder.tree_nodes(nodes);
    }

    fn sched(&mut self, sched: &spall_format::RawSched<'_>) {
        self.builder.sched(sched);
    }

    fn sched_compact(&mut self, block: &spall_format::CompactSched<'_>) {
        self.builder.sched_compact(block);
    }

    fn progress(&mut self, done: u64, total: u64) {
        (self.progress)(done, total);
    }

    fn spall_buffer(&mut self, pid: u32, tid: u32) {
        self.builder.spall_buffer(pid, tid);
    }

    #[inline]
    fn spall_begin(&mut self, event: &RawEvent<'_>) {
        self.builder.spall_begin(event);
    }

    #[inline]
    fn spall_end(&mut self, event: &RawEvent<'_>) {
        self.builder.spall_end(event);
    }

    #[inline]
    fn thread_slice(&mut self, slice: &spall_format::ThreadSlice<'_>) {
        self.builder.thread_slice(slice);
    }

    fn track_counter(&mut self, counter: &spall_format::TrackCounter<'_>) {
        self.builder.track_counter(counter);
    }
}

/// Loads a trace file (`.spall`, JSON or gzip, detected by content).
pub fn load(path: impl AsRef<Path>) -> Result<Trace, Error> {
    load_with(path, &DecodeOptions::default(), |_, _| {})
}

/// [`load`] with limits and a progress callback `(bytes done, bytes total)`.
///
/// Before anything is built, the memory the load needs is estimated
/// ([`estimate_memory`](crate::estimate_memory)) and checked against `opts.max_memory`.
///
/// The input is decoded in chunks on every core (rayon's pool), each into its own builder,
/// and the builders are merged in file order; B/E events are matched as they stream in. A
/// thread whose B/E events go back in time, or that trace_processor would pair otherwise,
/// is paired again from the events its builders kept, alone: each byte is decoded once
/// ([`Summary::parsed_bytes`]); a `.spall` thread (v3 or v1), from the stacks it had
/// before and after each step back. A builder that kept no events for a thread it cannot
/// pair (none does today) would make the file decode a second time, in one piece, with
/// buffering. The result does not depend on the number of threads.
pub fn load_with(
    path: impl AsRef<Path>,
    opts: &DecodeOptions,
    progress: impl FnMut(u64, u64) + Send,
) -> Result<Trace, Error> {
    let path = path.as_ref();
    let input = Input::open(path, opts)?;
    crate::memory::check_memory(&input, opts.max_memory).map_err(|e| e.with_path(path))?;
    stage("memory estimate checked");
    load_input(&input, progress).map_err(|e| e.with_path(path))
}

/// Loads a trace held in memory (as [`load_with`] does a file, with no copy unless gzip).
pub fn load_bytes(bytes: &[u8]) -> Result<Trace, Error> {
    let opts = DecodeOptions::default();
    let new = TraceBuilder::streaming_for(bytes);
    load_parts(
        || spall_format::decode_parallel(bytes, &opts, new, &|_, _| {}),
        |b| spall_format::decode_with(bytes, &opts, b),
    )
}

fn load_input(input: &Input, progress: impl FnMut(u64, u64) + Send) -> Result<Trace, Error> {
    let progress = Mutex::new(progress);
    // Chunks report from any thread; a report that finds the callback busy is dropped.
    let report = |done: u64, total: u64| {
        if let Ok(mut p) = progress.try_lock() {
            p(done, total);
        }
    };
    let new = TraceBuilder::streaming_for(input.bytes());
    load_parts(
        || input.decode_parallel(new, &report),
        |builder| {
            let mut p = progress.lock().unwrap_or_else(PoisonError::into_inner);
            input.decode(&mut Sink {
                builder,
                progress: &mut *p,
            })
        },
    )
}

/// The parallel load (chunk builders, merged), or, when a `.spall` thread's B/E events go
/// back in time, one buffered decode with `buffered` (counted in the summary's
/// `parsed_bytes`). `SPALL_TIMING=1` prints the stage times.
fn load_parts(
    parallel: impl FnOnce() -> Result<(Summary, Vec<TraceBuilder>), Error>,
    buffered: impl FnOnce(&mut TraceBuilder) -> Result<Summary, Error>,
) -> Result<Trace, Error> {
    let (summary, chunks) = parallel()?;
    let summary_parsed = summary.parsed_bytes;
    stage("decoded by chunk builders");
    let trace = TraceBuilder::finish_chunks(chunks, summary);
    stage("model built");
    if let Some(t) = trace {
        return Ok(t);
    }
    let first = summary_parsed;
    let mut builder = TraceBuilder::new();
    let mut summary = buffered(&mut builder)?;
    summary.parsed_bytes += first;
    Ok(builder.finish(summary))
}

/// A load a step at a time, for a caller with no threads that may not block (a browser's
/// main thread): [`step`](Self::step) decodes a few megabytes and returns; the page yields
/// between steps and draws [`progress`](Self::progress). The result is [`load_bytes`]'s.
///
/// ```
/// let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#.to_vec();
/// let mut load = trace_model::LoadSteps::new(json, &Default::default());
/// while !load.step().unwrap() {}
/// assert_eq!(load.finish().unwrap().span_count(), 1);
/// ```
#[derive(Debug)]
pub struct LoadSteps {
    steps: Steps<TraceBuilder>,
    max_memory: spall_format::MemoryLimit,
    checked: bool,
}

impl LoadSteps {
    /// Nothing is decoded until the first step. The bytes are taken as already allocated:
    /// the memory check counts only what the load adds.
    pub fn new(bytes: Vec<u8>, opts: &DecodeOptions) -> LoadSteps {
        let new = TraceBuilder::streaming_for(&bytes);
        LoadSteps {
            steps: Steps::new(bytes, opts, new),
            max_memory: opts.max_memory,
            checked: false,
        }
    }

    /// `(done, total)` bytes of the current stage (decompression, then decoding).
    pub fn progress(&self) -> (u64, u64) {
        self.steps.progress()
    }

    /// Whether gzip is still being decompressed.
    pub fn decompressing(&self) -> bool {
        self.steps.decompressing()
    }

    /// Decodes a few megabytes; `Ok(true)` when all is decoded and
    /// [`finish`](Self::finish) is next. Before the first event, the memory the load
    /// needs is checked as in [`load_with`].
    pub fn step(&mut self) -> Result<bool, Error> {
        if !self.checked {
            if let Some(b) = self.steps.decoded() {
                self.checked = true;
                crate::memory::check_bytes(b, false, self.max_memory)?;
            }
        }
        self.steps.step()
    }

    /// Merges the chunks and nests the spans (the one step that takes time in proportion to
    /// the whole trace); a trace a builder cannot pair (see [`load_with`]) is decoded
    /// again, buffered.
    pub fn finish(self) -> Result<Trace, Error> {
        let done = self.steps.finish()?;
        let input = done.input;
        load_parts(|| Ok((done.summary, done.sinks)), |b| input.decode(b))
    }
}
