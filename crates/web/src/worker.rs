//! The load worker's half (`web/worker.js` runs a second instance of this module in a Web
//! Worker): the file's bytes come in as they are read, the worker decodes them, builds the
//! trace and hands it to the page in pieces
//! ([`pack_trace`](spall_web_transfer::pack_trace): its columns in typed arrays outside
//! wasm memory), which the page copies into its model in steps while the worker builds
//! and hands over the index ([`pack_index`](spall_web_transfer::pack_index)).
//! The page's thread only draws and handles input meanwhile.
//!
//! A `.spall`, Chrome JSON or Perfetto protobuf file, `perf script` text or collapsed
//! stacks, gzipped or not, is decoded as its chunks arrive ([`trace_model::LoadStream`]):
//! the worker holds the model and a few megabytes of the file, never the whole file. A
//! `.cpuprofile` whose first key is `nodes` (V8's), speedscope's format, Gecko profiles and
//! pprof are streamed too; the older `.cpuprofile` goes through the stream as well, which
//! gathers its bytes (gzip undone as they arrive, so the file is held once) and decodes
//! them at the end (its arrays refer to each other in any order). A file a stream cannot take (gzip
//! within gzip) is gathered whole, then decoded, as is one whose stream could not give the
//! whole decode's result (the worker reads the file again).
//!
//! Before anything is decoded, the memory the trace will take is estimated from the first
//! bytes and the file's size, and a load that would not fit ends with the memory guard's
//! message (the same as the desktop's).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use trace_model::{DecodeOptions, LoadSteps, LoadStream, MemoryLimit, SAMPLE_BYTES};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_time::{Duration, Instant};

/// How often progress is posted to the page while decoding gathered bytes.
const REPORT_EVERY: Duration = Duration::from_millis(50);

#[derive(Debug)]
enum Mode {
    /// The first bytes, kept until the memory guard has seen enough of them.
    Start(Vec<u8>),
    /// `.spall`, JSON, protobuf or a text profile (gzipped or not), decoded as it arrives.
    Stream(Box<LoadStream>),
    /// Anything else: gathered, then decoded.
    Whole(Vec<u8>),
}

/// A load in the worker: [`push`](Self::push) each chunk of the file in order, then
/// [`finish`](Self::finish).
#[wasm_bindgen]
#[derive(Debug)]
pub struct Loader {
    name: String,
    /// The file's size as the page knows it (0: not known, as for a fetch with no length).
    size: u64,
    /// Whether the file may be streamed (not when reading it again, whole).
    may_stream: bool,
    /// The stream's runs, in bytes (0: the parallel decoder's chunks, as natively).
    runs: usize,
    mode: Mode,
    /// The trace handed over, kept for its statistics.
    built: Option<trace_model::Trace>,
    /// The most bytes [`progress`](Self::progress) said were done.
    shown: Cell<u64>,
    /// What [`stages`](Self::stages) returns.
    stages: Vec<f64>,
    /// Bytes of the columns [`finish`](Self::finish) will pack, as the memory guard
    /// estimates them (0 before it has run).
    packed: u64,
    /// Bytes of the model as the page will hold it, estimated (0 before the memory guard).
    warm: u64,
    /// The pieces [`finish`](Self::finish) left unused, for
    /// [`finish_index`](Self::finish_index).
    pool: Vec<js_sys::ArrayBuffer>,
    /// The index [`finish_pyramids`](Self::finish_pyramids) sent, and the levels it chose,
    /// for [`finish_levels`](Self::finish_levels).
    coarse: Option<(trace_index::TraceIndex, trace_index::LevelPlan)>,
}

#[wasm_bindgen]
impl Loader {
    /// A load of `name`, `size` bytes long (0 if not known); `stream`: decode `.spall`
    /// version 3, JSON and protobuf as they arrive, in runs of `runs` bytes (0: as natively; tests
    /// make small files cross many runs).
    #[wasm_bindgen(constructor)]
    pub fn new(name: String, size: f64, stream: bool, runs: f64) -> Loader {
        Loader {
            name,
            size: size as u64,
            may_stream: stream,
            runs: runs as usize,
            mode: Mode::Start(Vec::new()),
            built: None,
            shown: Cell::new(0),
            stages: Vec::new(),
            packed: 0,
            warm: 0,
            pool: Vec::new(),
            coarse: None,
        }
    }

    /// How many bytes of the file's pieces the worker may keep, once pushed, for
    /// [`finish`](Self::finish) to pack the columns into (see
    /// [`pack_trace`](spall_web_transfer::pack_trace)): the columns' estimated size, so that the
    /// pieces never take more than the packed columns would, and only at the end; 0 until
    /// the memory guard has seen the file's first bytes.
    pub fn keep_bytes(&self) -> f64 {
        self.packed as f64
    }

    /// How many bytes of memory the page will take the model into, estimated from the
    /// spans and other events of the file's first bytes (at most
    /// [`keep_bytes`](Self::keep_bytes)): the page writes that much of its memory while
    /// this worker decodes (docs/WEB.md); 0 until the memory guard has run.
    pub fn warm_bytes(&self) -> f64 {
        self.warm as f64
    }

    /// Takes the next chunk of the file. Once the first few megabytes are in, the memory
    /// guard runs: an error (its message) ends the load before any decoding.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), String> {
        match &mut self.mode {
            Mode::Start(b) => {
                b.extend_from_slice(chunk);
                if b.len() >= SAMPLE_BYTES {
                    self.begin()?;
                }
            }
            Mode::Stream(s) => s.push(chunk).map_err(|e| failed(&self.name, e))?,
            Mode::Whole(b) => b.extend_from_slice(chunk),
        }
        Ok(())
    }

    /// `[done, total]` bytes: read while gathering, and while streaming decoded, or read
    /// until the stream's first run is decoded (a fetch's body arrives in small pieces, and
    /// the first run waits for megabytes of them), never less than before; `total` is 0
    /// while the file's size is not known (a fetch with no length), not the bytes read so far.
    pub fn progress(&self) -> Vec<f64> {
        let known = |read: u64| {
            if self.size > 0 {
                self.size.max(read)
            } else {
                0
            }
        };
        let (done, total) = match &self.mode {
            Mode::Start(b) | Mode::Whole(b) => (b.len() as u64, self.size),
            Mode::Stream(s) => match s.progress() {
                (read, 0) => (read, known(read)),
                (read, decoded) => (decoded, known(read)),
            },
        };
        let done = done.max(self.shown.get());
        self.shown.set(done);
        vec![done as f64, total as f64]
    }

    /// Whether the file is being decoded as it arrives.
    pub fn streaming(&self) -> bool {
        matches!(self.mode, Mode::Stream(_))
    }

    /// Decodes what is left and builds the trace, calling `progress(done, total, stage)` a
    /// few times a second, and returns the trace as
    /// [`pack_trace`](spall_web_transfer::pack_trace) packs it (`buffers`: the ones to
    /// transfer), first into `pool`'s `ArrayBuffer`s if it is an array of them (the pieces
    /// the worker kept, see [`keep_bytes`](Self::keep_bytes)); what is left of them is
    /// kept for [`finish_index`](Self::finish_index), the model's second part.
    /// `undefined` when a streamed file must be read again, whole (see
    /// [`trace_model::LoadStream::finish`]): the worker reads it again with `stream` false.
    pub fn finish(
        &mut self,
        progress: &js_sys::Function,
        pool: JsValue,
    ) -> Result<Option<js_sys::Object>, String> {
        let started = Instant::now();
        if let Mode::Start(_) = self.mode {
            self.begin()?;
        }
        let report = |done: u64, total: u64, stage: &str| {
            let args = [done as f64, total as f64].map(JsValue::from);
            let _ = progress.call3(&JsValue::NULL, &args[0], &args[1], &stage.into());
        };
        let name = self.name.clone();
        let trace = match std::mem::replace(&mut self.mode, Mode::Whole(Vec::new())) {
            Mode::Stream(s) => {
                let (read, _) = s.progress();
                report(read, read, "building");
                match s.finish().map_err(|e| failed(&name, e))? {
                    Some(t) => t,
                    None => return Ok(None),
                }
            }
            // The threaded module: the native parallel load, on the pool.
            Mode::Whole(bytes) | Mode::Start(bytes) if THREADS => {
                let n = bytes.len() as u64;
                report(0, n, "loading");
                let trace = trace_model::load_bytes(&bytes).map_err(|e| failed(&name, e))?;
                report(n, n, "building");
                trace
            }
            Mode::Whole(bytes) | Mode::Start(bytes) => {
                let mut load = LoadSteps::new(bytes, &DecodeOptions::default());
                let mut last = Instant::now();
                while !load.step().map_err(|e| failed(&name, e))? {
                    if last.elapsed() >= REPORT_EVERY {
                        last = Instant::now();
                        let (d, t) = load.progress();
                        let stage = if load.decompressing() {
                            "decompressing"
                        } else {
                            "loading"
                        };
                        report(d, t, stage);
                    }
                }
                let (_, t) = load.progress();
                report(t, t, "building");
                load.finish().map_err(|e| failed(&name, e))?
            }
        };
        let built = Instant::now();
        let pool = pool.dyn_into::<js_sys::Array>().unwrap_or_default();
        let pool = pool.iter().filter_map(|b| b.dyn_into().ok()).collect();
        let (packed, left) = spall_web_transfer::pack_trace(&trace, self.piece(), pool);
        self.pool = left;
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        self.stages = vec![ms(started, built), ms(built, Instant::now())];
        self.built = Some(trace);
        Ok(Some(packed))
    }

    /// The index of the trace [`finish`](Self::finish) returned, built and packed as
    /// [`pack_index`](spall_web_transfer::pack_index) packs it (with the minimap), into
    /// the pieces `finish` left unused first: the model's second part, built while the
    /// page copies the first in. `undefined` if `finish` returned no trace.
    pub fn finish_index(&mut self) -> Option<js_sys::Object> {
        let trace = self.built.as_ref()?;
        let started = Instant::now();
        let mut index = trace_index::TraceIndex::build(trace);
        // The samples' stacks over time too, which the page would build in one step.
        index.add_sample_stacks(trace);
        let (pool, indexed) = (std::mem::take(&mut self.pool), Instant::now());
        let packed = spall_web_transfer::pack_index(trace, &index, self.piece(), pool);
        self.note(started, indexed);
        Some(packed)
    }

    /// The index's first part, for a page that draws before the rest comes: every lane's
    /// pyramid and the samples' stacks (about half of [`finish_index`](Self::finish_index)'s
    /// work, and a quarter of its bytes), which queries answer from
    /// ([`trace_index::TraceIndex::build_pyramids`]); [`finish_levels`](Self::finish_levels)
    /// sends the rest.
    pub fn finish_pyramids(&mut self) -> Option<js_sys::Object> {
        let trace = self.built.as_ref()?;
        let started = Instant::now();
        let (mut index, plan) = trace_index::TraceIndex::build_pyramids(trace);
        index.add_sample_stacks(trace);
        let (pool, indexed) = (std::mem::take(&mut self.pool), Instant::now());
        let packed = spall_web_transfer::pack_index(trace, &index, self.piece(), pool);
        self.note(started, indexed);
        self.coarse = Some((index, plan));
        Some(packed)
    }

    /// The stored levels of the index [`finish_pyramids`](Self::finish_pyramids) sent
    /// ([`pack_levels`](spall_web_transfer::pack_levels)); `undefined` where it sent none.
    pub fn finish_levels(&mut self) -> Option<js_sys::Object> {
        let (trace, (mut index, plan)) = (self.built.as_ref()?, self.coarse.take()?);
        let started = Instant::now();
        index.add_levels(trace, plan);
        let (levels, indexed) = (index.take_levels(), Instant::now());
        let packed = spall_web_transfer::pack_levels(&levels, self.piece());
        self.note(started, indexed);
        Some(packed)
    }

    /// Notes an index's stages: built from `started` to `indexed`, packed since.
    fn note(&mut self, started: Instant, indexed: Instant) {
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        self.stages
            .extend([ms(started, indexed), ms(indexed, Instant::now())]);
    }

    /// The typed arrays' size for [`pack_trace`](spall_web_transfer::pack_trace): tests'
    /// small runs make small pieces of the model too (0: the default).
    fn piece(&self) -> u32 {
        if self.runs > 0 {
            4096
        } else {
            0
        }
    }

    /// Milliseconds of the last load's stages: the trace built (what was left to decode,
    /// merging, nesting) and packed for the page (its columns copied out), by
    /// [`finish`](Self::finish); then indexed and packed (the minimap and the index's
    /// columns), by [`finish_index`](Self::finish_index); empty before. For benchmarks.
    pub fn stages(&self) -> Vec<f64> {
        self.stages.clone()
    }

    /// The whole-trace statistics of the trace [`finish`](Self::finish) returned (the side
    /// panel's first table, a sampling profile's per function: O(spans), so they are
    /// computed here, after the page has the trace), as [`pack_stats`](spall_web_transfer::pack_stats) packs them; empty if none.
    pub fn stats(&mut self) -> Vec<u8> {
        let Some(trace) = self.built.take() else {
            return Vec::new();
        };
        let stats = trace.table_stats(&trace_model::StatsFilter::default());
        spall_web_transfer::pack_stats(&stats)
    }

    /// Whether the threaded module gathers the file (starting with `head`), then decodes it
    /// on all threads at once (as natively), rather than streaming it (decoded on one
    /// thread while it is read, built on all): when `gather_files` asked for it, its
    /// size is known, it is not gzipped (decompressing is one thread's work either way),
    /// the model fits with the whole file beside it, and no test asked for small runs.
    fn gather(&self, head: &[u8]) -> bool {
        let e = || trace_model::estimate_sample(head, self.size, true);
        THREADS
            && GATHER.load(Ordering::Relaxed)
            && self.size > 0
            && self.runs == 0
            && !head.starts_with(&[0x1f, 0x8b])
            && trace_model::check_estimate(&e(), MemoryLimit::Available).is_ok()
    }

    /// The memory guard on the first bytes, then the mode: streamed or gathered.
    fn begin(&mut self) -> Result<(), String> {
        let Mode::Start(head) = std::mem::replace(&mut self.mode, Mode::Whole(Vec::new())) else {
            return Ok(());
        };
        let stream = match self.runs {
            0 => LoadStream::new(&head),
            n => LoadStream::with_target(&head, n),
        };
        // The model must fit, with the file's bytes when they are gathered (its columns
        // cross to the page in typed arrays outside wasm memory).
        let total = self.size.max(head.len() as u64);
        let stream = stream.filter(|_| self.may_stream && !self.gather(&head));
        let held = stream.as_ref().is_none_or(LoadStream::holds_file);
        let e = trace_model::estimate_sample(&head, total, held);
        trace_model::check_estimate(&e, MemoryLimit::Available)
            .map_err(|e| failed(&self.name, e))?;
        self.packed = e.bytes.saturating_sub(e.held);
        let model = e.spans * PAGE_SPAN_BYTES
            + e.other_events * PAGE_EVENT_BYTES
            + e.stack_frames * PAGE_STACK_FRAME_BYTES;
        self.warm = model.min(self.packed);
        self.mode = if let Some(s) = stream {
            let mut s = Box::new(s);
            s.push(&head).map_err(|e| failed(&self.name, e))?;
            Mode::Stream(s)
        } else {
            let mut head = head;
            // Room for the rest at once, now that it is known to fit.
            head.reserve_exact(total.saturating_sub(head.len() as u64) as usize);
            Mode::Whole(head)
        };
        Ok(())
    }
}

/// Bytes a span takes in the page's model: its columns (29) and the index's (up to 8), as
/// they cross (docs/WEB.md); the memory guard counts the worker's peak, 48 for `.spall`.
const PAGE_SPAN_BYTES: u64 = 37;
/// Bytes another event (an instant, a counter's value, a sample) takes in the page's model,
/// at most.
const PAGE_EVENT_BYTES: u64 = 32;

/// Bytes a profile's stack frame takes in the page's model: the stacks over time the page
/// builds, a box of 29 bytes for every 2 to 12 frames in their growing lanes, and their
/// index.
const PAGE_STACK_FRAME_BYTES: u64 = 20;

/// Whether this is the threaded module (`threads`), whose pool builds the trace (and
/// decodes a gathered file).
const THREADS: bool = cfg!(feature = "threads");

/// Whether the threaded module gathers the files that fit (see `Loader::gather`).
static GATHER: AtomicBool = AtomicBool::new(false);

/// The threaded module: gather the files that fit and decode them on all threads
/// (`?gather=1`), rather than stream them. Off by default: on a busy 2-core machine the
/// stream, decoded while the file is read, was as fast or faster (docs/PERFORMANCE.md).
#[cfg(feature = "threads")]
#[wasm_bindgen]
pub fn gather_files(on: bool) {
    GATHER.store(on, Ordering::Relaxed);
}

/// A generated `.spall` of `spans` spans, for the warm-up of a load worker started ahead
/// (`web/worker.js`): its decoder's and the trace builder's functions run, and are
/// optimized, before the file a person picks.
#[wasm_bindgen]
pub fn warm_spall(spans: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = warm_synth(spans).write_spall(&mut out);
    out
}

/// The same spans as Perfetto protobuf (TrackEvent slices), for the same warm-up.
#[wasm_bindgen]
pub fn warm_proto(spans: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = warm_synth(spans).write_proto(&mut out);
    out
}

fn warm_synth(spans: u32) -> spall_format::synth::Synth {
    spall_format::synth::Synth {
        spans: spans.into(),
        processes: 1,
        threads: 4,
        names: 200,
        ..Default::default()
    }
}

fn failed(name: &str, e: trace_model::Error) -> String {
    e.with_path(name).to_string()
}
