//! The load worker's half (`web/worker.js` runs a second instance of this module in a Web
//! Worker): the file's bytes come in as they are read, the worker decodes them and builds
//! the trace, and hands the page the trace as one buffer
//! ([`trace_model::Trace::to_transfer`]), which the page takes without a copy and rebuilds
//! with copies of its columns. The page's thread only draws and handles input meanwhile.
//!
//! Before anything is decoded, the memory the trace will take is estimated from the first
//! bytes and the file's size, and a load that would not fit ends with the memory guard's
//! message (the same as the desktop's).

use trace_model::{DecodeOptions, LoadSteps, MemoryLimit, SAMPLE_BYTES};
use wasm_bindgen::prelude::*;
use web_time::{Duration, Instant};

/// How often progress is posted to the page.
const REPORT_EVERY: Duration = Duration::from_millis(50);

/// A load in the worker: [`push`](Self::push) each chunk of the file in order, then
/// [`finish`](Self::finish).
#[wasm_bindgen]
#[derive(Debug)]
pub struct Loader {
    name: String,
    /// The file's size as the page knows it (0: not known, as for a fetch with no length).
    size: u64,
    bytes: Vec<u8>,
    checked: bool,
}

#[wasm_bindgen]
impl Loader {
    /// A load of `name`, `size` bytes long (0 if not known).
    #[wasm_bindgen(constructor)]
    pub fn new(name: String, size: f64) -> Loader {
        let size = size as u64;
        Loader {
            name,
            size,
            bytes: Vec::new(),
            checked: false,
        }
    }

    /// Takes the next chunk of the file. Once the first few megabytes are in, the memory
    /// guard runs: an error (its message) ends the load before any decoding.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.bytes.extend_from_slice(chunk);
        if !self.checked && self.bytes.len() >= SAMPLE_BYTES {
            self.check()?;
            // Room for the rest at once, now that it is known to fit.
            let rest = self.size.saturating_sub(self.bytes.len() as u64);
            self.bytes.reserve_exact(rest as usize);
        }
        Ok(())
    }

    /// Decodes and builds the trace, calling `progress(done, total, stage)` a few times a
    /// second, and returns the trace as [`trace_model::Trace::to_transfer`]'s bytes.
    pub fn finish(&mut self, progress: &js_sys::Function) -> Result<Vec<u8>, String> {
        if !self.checked {
            self.check()?;
        }
        let report = |done: u64, total: u64, stage: &str| {
            let args = [done as f64, total as f64].map(JsValue::from);
            let _ = progress.call3(&JsValue::NULL, &args[0], &args[1], &stage.into());
        };
        let bytes = std::mem::take(&mut self.bytes);
        let mut load = LoadSteps::new(bytes, &DecodeOptions::default());
        let mut last = Instant::now();
        loop {
            let done = load.step().map_err(|e| self.failed(e))?;
            if done {
                break;
            }
            if last.elapsed() >= REPORT_EVERY {
                last = Instant::now();
                let (d, t) = load.progress();
                report(
                    d,
                    t,
                    if load.decompressing() {
                        "decompressing"
                    } else {
                        "loading"
                    },
                );
            }
        }
        let (_, t) = load.progress();
        report(t, t, "building");
        let trace = load.finish().map_err(|e| self.failed(e))?;
        Ok(trace.to_transfer())
    }

    fn failed(&self, e: trace_model::Error) -> String {
        e.with_path(&self.name).to_string()
    }

    /// The memory guard: the model and its transfer buffer must fit (in the worker, and
    /// again in the page), with the file's bytes while they are held.
    fn check(&mut self) -> Result<(), String> {
        self.checked = true;
        let total = self.size.max(self.bytes.len() as u64);
        let mut e = trace_model::estimate_sample(&self.bytes, total, true);
        e.bytes += e.spans * TRANSFER_SPAN_BYTES + e.other_events * TRANSFER_EVENT_BYTES;
        trace_model::check_estimate(&e, MemoryLimit::Available).map_err(|e| self.failed(e))
    }
}

/// A span's bytes in the transfer buffer (its columns: start, duration, name, category,
/// arguments, flags).
const TRANSFER_SPAN_BYTES: u64 = 29;
/// Another event's, at most.
const TRANSFER_EVENT_BYTES: u64 = 48;
