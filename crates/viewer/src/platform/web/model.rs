//! The worker's model crossing to the page: the trace's and index's columns written
//! straight into typed arrays of at most 32 MB in the worker ([`pack`]), transferred, and
//! copied into the page's model a few megabytes a step ([`Taking`]), then the views' data
//! derived a part a step (the minimap, O(spans), comes from the worker).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_time::{Duration, Instant};

use crate::kinds::Kinds;
use crate::loaded::{Loaded, MINIMAP_BINS};

/// Bytes of a column stream in one typed array of a model's pieces.
const PIECE_BYTES: u32 = 32 << 20;

/// A typed array the worker writes a column stream into, a piece at a time.
trait Typed: Sized + JsCast {
    type Item: Copy;
    const SIZE: u32;
    fn with_length(n: u32) -> Self;
    fn len(&self) -> u32;
    fn part(&self, a: u32, b: u32) -> Self;
    fn fill_from(&self, v: &[Self::Item]);
    fn fill_to(&self, v: &mut [Self::Item]);
    fn trimmed(&self, n: u32) -> Self;
}

macro_rules! typed {
    ($t:ty, $item:ty) => {
        impl Typed for $t {
            type Item = $item;
            const SIZE: u32 = std::mem::size_of::<$item>() as u32;
            fn with_length(n: u32) -> Self {
                <$t>::new_with_length(n)
            }
            fn len(&self) -> u32 {
                self.length()
            }
            fn part(&self, a: u32, b: u32) -> Self {
                self.subarray(a, b)
            }
            fn fill_from(&self, v: &[$item]) {
                self.copy_from(v)
            }
            fn fill_to(&self, v: &mut [$item]) {
                self.copy_to(v)
            }
            fn trimmed(&self, n: u32) -> Self {
                self.slice(0, n)
            }
        }
    };
}
typed!(js_sys::BigInt64Array, i64);
typed!(js_sys::Uint32Array, u32);
typed!(js_sys::Uint8Array, u8);

/// One column stream as typed arrays, written in order, then read in order.
#[derive(Debug)]
struct Pieces<T> {
    arrays: Vec<T>,
    /// Bytes of a new array.
    bytes: u32,
    /// Values used of the last array (writing), or read of the current one (reading).
    at: u32,
    /// The array being read.
    next: usize,
}

impl<T: Typed> Pieces<T> {
    fn new(arrays: Vec<T>, bytes: u32) -> Pieces<T> {
        Pieces {
            arrays,
            bytes,
            at: 0,
            next: 0,
        }
    }

    fn push(&mut self, mut v: &[T::Item]) {
        while !v.is_empty() {
            let room = self.arrays.last().map_or(0, |a| a.len() - self.at);
            if room == 0 {
                self.arrays
                    .push(T::with_length((self.bytes / T::SIZE).max(1)));
                self.at = 0;
                continue;
            }
            let n = room.min(v.len().try_into().unwrap_or(u32::MAX));
            let last = self.arrays.last().expect("an array");
            last.part(self.at, self.at + n).fill_from(&v[..n as usize]);
            self.at += n;
            v = &v[n as usize..];
        }
    }

    /// The arrays, the last cut to what was written.
    fn finish(mut self) -> Vec<T> {
        if let Some(last) = self.arrays.pop() {
            let whole = last.len() == self.at;
            self.arrays
                .push(if whole { last } else { last.trimmed(self.at) });
        }
        self.arrays
    }

    fn take(&mut self, mut dst: &mut [T::Item]) -> bool {
        while !dst.is_empty() {
            let Some(a) = self.arrays.get(self.next) else {
                return false;
            };
            let left = a.len() - self.at;
            if left == 0 {
                self.next += 1;
                self.at = 0;
                continue;
            }
            let n = left.min(dst.len().try_into().unwrap_or(u32::MAX));
            let (now, rest) = dst.split_at_mut(n as usize);
            a.part(self.at, self.at + n).fill_to(now);
            self.at += n;
            dst = rest;
        }
        true
    }

    fn values(&self) -> u64 {
        self.arrays.iter().map(|a| a.len() as u64).sum()
    }
}

/// The three column streams of a model in pieces.
#[derive(Debug)]
struct Streams {
    i64s: Pieces<js_sys::BigInt64Array>,
    u32s: Pieces<js_sys::Uint32Array>,
    u8s: Pieces<js_sys::Uint8Array>,
}

impl Streams {
    /// Empty streams, written in arrays of `bytes`.
    fn new(bytes: u32) -> Streams {
        Streams {
            i64s: Pieces::new(Vec::new(), bytes),
            u32s: Pieces::new(Vec::new(), bytes),
            u8s: Pieces::new(Vec::new(), bytes),
        }
    }
}

impl trace_model::ColumnSink for Streams {
    fn i64s(&mut self, v: &[i64]) {
        self.i64s.push(v);
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u32s.push(v);
    }
    fn u8s(&mut self, v: &[u8]) {
        self.u8s.push(v);
    }
}

impl trace_model::ColumnSource for Streams {
    fn i64s(&mut self, dst: &mut [i64]) -> bool {
        self.i64s.take(dst)
    }
    fn u32s(&mut self, dst: &mut [u32]) -> bool {
        self.u32s.take(dst)
    }
    fn u8s(&mut self, dst: &mut [u8]) -> bool {
        self.u8s.take(dst)
    }
}

/// A trace and its index as they cross from the worker to the page ([`pack`]): the heads
/// of both (their small parts) and their large columns in typed arrays of at most 32 MB,
/// outside either side's wasm memory.
#[derive(Debug)]
pub struct Model {
    trace: Vec<u8>,
    index: Vec<u8>,
    streams: Streams,
    /// The minimap's columns ([`Loaded::minimap`]), computed by the worker.
    minimap: Vec<f32>,
}

fn array<T: JsCast>(o: &JsValue, key: &str) -> Vec<T> {
    let v = js_sys::Reflect::get(o, &key.into()).unwrap_or(JsValue::UNDEFINED);
    let a: js_sys::Array = v.dyn_into().unwrap_or_default();
    a.iter().filter_map(|x| x.dyn_into().ok()).collect()
}

fn bytes(o: &JsValue, key: &str) -> Vec<u8> {
    let v = js_sys::Reflect::get(o, &key.into()).unwrap_or(JsValue::UNDEFINED);
    v.dyn_into::<js_sys::Uint8Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default()
}

impl Model {
    /// The model [`pack`] made, as the page received it (what is missing or of another
    /// type is empty: a damaged model, which taking it says).
    pub fn from_js(o: &JsValue) -> Model {
        Model {
            trace: bytes(o, "trace"),
            index: bytes(o, "index"),
            streams: Streams {
                i64s: Pieces::new(array(o, "i64s"), 0),
                u32s: Pieces::new(array(o, "u32s"), 0),
                u8s: Pieces::new(array(o, "u8s"), 0),
            },
            minimap: js_sys::Reflect::get(o, &"minimap".into())
                .ok()
                .and_then(|v| v.dyn_into::<js_sys::Float32Array>().ok())
                .map_or(Vec::new(), |a| a.to_vec()),
        }
    }

    fn lens(&self) -> [u64; 3] {
        let s = &self.streams;
        [s.i64s.values(), s.u32s.values(), s.u8s.values()]
    }
}

/// A trace and its index for the page: `{trace, index, i64s, u32s, u8s, minimap, buffers}`,
/// the heads of both ([`trace_model::Trace::to_transfer_pieces`],
/// [`trace_index::TraceIndex::to_transfer_pieces`]) and their column streams, each column
/// copied once, straight from the model into typed arrays of at most 32 MB; the minimap
/// ([`Loaded::minimap`]: O(spans), so the worker's work, not the page's); `buffers`: what
/// to transfer. `piece_bytes`: the arrays' size (0: 32 MB; tests make it small, so
/// that a small trace crosses in many).
pub fn pack(
    trace: &trace_model::Trace,
    index: &trace_index::TraceIndex,
    piece_bytes: u32,
) -> js_sys::Object {
    let bytes = if piece_bytes == 0 {
        PIECE_BYTES
    } else {
        piece_bytes
    };
    let mut s = Streams::new(bytes);
    let trace_minimap = trace.activity(MINIMAP_BINS);
    let heads = [
        trace.to_transfer_pieces(&mut s),
        index.to_transfer_pieces(&mut s),
    ];
    let [trace, index] = heads.map(|h| js_sys::Uint8Array::from(&h[..]));
    let o = js_sys::Object::new();
    let buffers = js_sys::Array::new();
    let list = |arrays: Vec<JsValue>| {
        let a = js_sys::Array::new();
        for x in arrays {
            let buffer = js_sys::Reflect::get(&x, &"buffer".into()).unwrap_or_default();
            buffers.push(&buffer);
            a.push(&x);
        }
        a
    };
    let i64s = list(s.i64s.finish().into_iter().map(Into::into).collect());
    let u32s = list(s.u32s.finish().into_iter().map(Into::into).collect());
    let u8s = list(s.u8s.finish().into_iter().map(Into::into).collect());
    let heads = list(vec![trace.into(), index.into()]);
    let minimap = js_sys::Float32Array::from(&trace_minimap[..]);
    let parts = [
        ("i64s", i64s.into()),
        ("u32s", u32s.into()),
        ("u8s", u8s.into()),
        ("minimap", minimap.into()),
    ];
    for (k, v) in [("trace", heads.get(0)), ("index", heads.get(1))]
        .into_iter()
        .chain(parts)
        .chain([("buffers", buffers.into())])
    {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    }
    o
}

/// How long one step of taking the worker's model may run before the page draws a frame.
const TAKE_STEP: Duration = Duration::from_millis(50);
/// Bytes of columns copied between two looks at the clock.
const TAKE_BYTES: usize = 8 << 20;

/// The worker's model ([`pack`]) taken in steps, the page drawing a frame between them:
/// the trace's head, its columns a few megabytes at a time, the index's likewise, then
/// the views' data: the kinds (O(events other than spans)) in a step, the colours and
/// warnings (O(names)) in the last, with the worker's minimap. Nothing is decoded or
/// checked again beyond the ids and offsets the copies pass through.
pub(crate) struct Taking {
    model: Model,
    /// The kinds, derived in a step of their own once the trace and index are in.
    kinds: Option<Kinds>,
    /// Steps run so far (`<body data-take-steps>` once taken).
    steps: u32,
    trace_in: Option<trace_model::TraceIn>,
    trace: Option<trace_model::Trace>,
    index_in: Option<trace_index::IndexIn>,
    index: Option<trace_index::TraceIndex>,
    /// The stream values left for the index once the trace is in.
    left: [u64; 3],
}

impl Taking {
    pub(crate) fn new(model: Model) -> Taking {
        Taking {
            model,
            kinds: None,
            steps: 0,
            trace_in: None,
            trace: None,
            index_in: None,
            index: None,
            left: [0; 3],
        }
    }

    /// The next step; the trace, ready to show, after the last (the page is told, see
    /// [`taken`]). The error says where the model is damaged.
    pub(crate) fn run(&mut self, source: &str) -> Option<Result<Loaded, String>> {
        self.steps += 1;
        let r = self.step(source);
        if r.is_some() {
            taken(self.steps);
        }
        r
    }

    fn step(&mut self, source: &str) -> Option<Result<Loaded, String>> {
        if let (None, None, Some(_), Some(_)) =
            (&self.trace_in, &self.index_in, &self.trace, &self.index)
        {
            // The views' data: the kinds in a step, the rest in the next.
            let Some(kinds) = self.kinds.take() else {
                self.kinds = Some(Kinds::new(self.trace.as_ref()?));
                return None;
            };
            let trace = self.trace.as_ref()?;
            if self.model.minimap.is_empty() {
                // A worker that sent none: the page's own (O(spans)), in a step of its own.
                self.model.minimap = trace.activity(MINIMAP_BINS);
                self.kinds = Some(kinds);
                return None;
            }
            let minimap = std::mem::take(&mut self.model.minimap);
            let columns = minimap.len();
            if columns != MINIMAP_BINS || !minimap.iter().all(|v| (0.0..=1.0).contains(v)) {
                let e = format!(
                    "its minimap has {columns} columns (of {MINIMAP_BINS}) or values outside 0..=1"
                );
                return Some(Err(format!("the worker's model is damaged: {e}")));
            }
            let (t, i) = (self.trace.take()?, self.index.take()?);
            let source = source.to_string();
            return Some(Ok(Loaded::with_views(t, i, kinds, minimap, source)));
        }
        let until = Instant::now() + TAKE_STEP;
        loop {
            let stage = self.stage();
            match self.advance() {
                Err(e) => return Some(Err(format!("the worker's model is damaged: {e}"))),
                Ok(true) => return None,
                Ok(false) if Instant::now() >= until => return None,
                // A head read next (a model's worth of columns allocated): a step of its own.
                Ok(false) if stage != self.stage() => return None,
                Ok(false) => {}
            }
        }
    }

    /// Which of the trace's, then the index's, head and columns is being read.
    fn stage(&self) -> [bool; 3] {
        [
            self.trace_in.is_some(),
            self.trace.is_some(),
            self.index_in.is_some(),
        ]
    }

    /// Some of the work; true once the trace and index are whole.
    fn advance(&mut self) -> Result<bool, trace_model::TransferError> {
        let m = &mut self.model;
        match (&mut self.trace_in, &self.trace, &mut self.index_in) {
            (None, None, _) => {
                self.trace_in = Some(trace_model::TraceIn::new(&m.trace, m.lens())?);
            }
            (Some(tin), _, _) => {
                if tin.fill(&mut m.streams, TAKE_BYTES)? {
                    self.left = tin.left();
                    self.trace = self.trace_in.take().and_then(|t| t.finish());
                }
            }
            (None, Some(trace), None) => {
                let index = trace_index::IndexIn::new(&m.index, self.left, trace)?;
                self.index_in = Some(index);
            }
            (None, Some(trace), Some(iin)) => {
                if iin.fill(&mut m.streams, TAKE_BYTES, trace)? {
                    self.index = self.index_in.take().and_then(|i| i.finish());
                    // The typed arrays are garbage now.
                    m.streams = Streams::new(0);
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// Tells the page that the worker's model is taken, in `steps` (it calls
/// `globalThis.spall_taken` if it set one, and `<body data-take-steps>` says how many):
/// the worker may then compute the statistics without taking a core from the page's steps.
fn taken(steps: u32) {
    if let Some(body) = super::document().and_then(|d| d.body()) {
        let _ = body.dataset().set("takeSteps", &steps.to_string());
    }
    let f = js_sys::Reflect::get(&js_sys::global(), &"spall_taken".into());
    if let Some(f) = f.ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let _ = f.call0(&JsValue::NULL);
    }
}
