//! The typed arrays: a column stream written into them a piece at a time in the worker,
//! read back from them in order on the page.

use wasm_bindgen::{JsCast, JsValue};

use crate::MINIMAP_BINS;

/// Bytes of a column stream in one typed array of a model's pieces.
const PIECE_BYTES: u32 = 32 << 20;

/// A typed array a column stream is written into, a piece at a time.
trait Typed: Sized + JsCast {
    type Item: Copy;
    const SIZE: u32;
    fn with_length(n: u32) -> Self;
    /// A view of the whole of `b` (the values that fit), `None` if none fit.
    fn view(b: &js_sys::ArrayBuffer) -> Option<Self>;
    fn len(&self) -> u32;
    fn part(&self, a: u32, b: u32) -> Self;
    fn fill_from(&self, v: &[Self::Item]);
    fn fill_to(&self, v: &mut [Self::Item]);
}

macro_rules! typed {
    ($t:ty, $item:ty) => {
        impl Typed for $t {
            type Item = $item;
            const SIZE: u32 = std::mem::size_of::<$item>() as u32;
            fn with_length(n: u32) -> Self {
                <$t>::new_with_length(n)
            }
            fn view(b: &js_sys::ArrayBuffer) -> Option<Self> {
                let n = b.byte_length() / Self::SIZE;
                (n > 0).then(|| <$t>::new_with_byte_offset_and_length(b, 0, n))
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

    /// Appends `v`: into the pool's buffers while there are any, then into new arrays.
    fn push(&mut self, mut v: &[T::Item], pool: &mut Vec<js_sys::ArrayBuffer>) {
        while !v.is_empty() {
            let room = self.arrays.last().map_or(0, |a| a.len() - self.at);
            if room == 0 {
                let reused = std::iter::from_fn(|| pool.pop()).find_map(|b| T::view(&b));
                let fresh = || T::with_length((self.bytes / T::SIZE).max(1));
                self.arrays.push(reused.unwrap_or_else(fresh));
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

    /// The arrays, the last cut to what was written: a view of its first values (its
    /// buffer, transferred whole, goes with it).
    fn finish(mut self) -> Vec<T> {
        if let Some(last) = self.arrays.pop() {
            let whole = last.len() == self.at;
            self.arrays
                .push(if whole { last } else { last.part(0, self.at) });
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

/// The three column streams of a model in pieces: written by [`pack_trace`] and [`pack_index`] (a
/// [`trace_model::ColumnSink`]), read by the page (a [`trace_model::ColumnSource`]).
#[derive(Debug)]
pub struct Streams {
    i64s: Pieces<js_sys::BigInt64Array>,
    u32s: Pieces<js_sys::Uint32Array>,
    u8s: Pieces<js_sys::Uint8Array>,
    /// Buffers to write into before new arrays are made (see [`pack_trace`]).
    pool: Vec<js_sys::ArrayBuffer>,
}

impl Streams {
    /// Empty streams, written in arrays of `bytes`.
    pub fn new(bytes: u32) -> Streams {
        Streams {
            i64s: Pieces::new(Vec::new(), bytes),
            u32s: Pieces::new(Vec::new(), bytes),
            u8s: Pieces::new(Vec::new(), bytes),
            pool: Vec::new(),
        }
    }

    /// Values in each stream (i64s, u32s, u8s), read or not.
    pub fn lens(&self) -> [u64; 3] {
        [self.i64s.values(), self.u32s.values(), self.u8s.values()]
    }
}

impl trace_model::ColumnSink for Streams {
    fn i64s(&mut self, v: &[i64]) {
        self.i64s.push(v, &mut self.pool);
    }
    fn u32s(&mut self, v: &[u32]) {
        self.u32s.push(v, &mut self.pool);
    }
    fn u8s(&mut self, v: &[u8]) {
        self.u8s.push(v, &mut self.pool);
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

/// A trace and its index as the page received them from the worker ([`pack_trace`], then
/// [`pack_index`]): the heads of both (their small parts) and their large columns in typed
/// arrays of at most 32 MB, outside either side's wasm memory. The trace's part comes
/// first, and the page copies its columns while the worker still builds the index
/// ([`add_index`](Self::add_index) adds the index's part once it arrives).
#[derive(Debug)]
pub struct Model {
    /// The trace's head ([`trace_model::TraceIn::new`] reads it).
    pub trace: Vec<u8>,
    /// The index's head ([`trace_index::IndexIn::new`] reads it; empty until its part is
    /// in, see [`has_index`](Self::has_index)).
    pub index: Vec<u8>,
    /// Both columns, the trace's first.
    pub streams: Streams,
    /// The minimap's columns, computed by the worker ([`MINIMAP_BINS`] of them; empty if
    /// it sent none).
    pub minimap: Vec<f32>,
    /// Values in each column stream of the index's part (0 until it is in).
    index_lens: [u64; 3],
    /// Whether the index's part is in.
    indexed: bool,
}

fn get(o: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(o, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn array<T: JsCast>(o: &JsValue, key: &str) -> Vec<T> {
    let a: js_sys::Array = get(o, key).dyn_into().unwrap_or_default();
    a.iter().filter_map(|x| x.dyn_into().ok()).collect()
}

fn bytes(o: &JsValue, key: &str) -> Vec<u8> {
    get(o, key)
        .dyn_into::<js_sys::Uint8Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default()
}

fn minimap(o: &JsValue) -> Vec<f32> {
    get(o, "minimap")
        .dyn_into::<js_sys::Float32Array>()
        .map_or(Vec::new(), |a| a.to_vec())
}

impl Model {
    /// The trace's part [`pack_trace`] made, as the page received it (what is missing or of
    /// another type is empty: a damaged model, which reading it says); an object that also
    /// has an `index` head holds both parts.
    pub fn from_js(o: &JsValue) -> Model {
        let mut m = Model {
            trace: bytes(o, "trace"),
            index: Vec::new(),
            streams: Streams {
                i64s: Pieces::new(array(o, "i64s"), 0),
                u32s: Pieces::new(array(o, "u32s"), 0),
                u8s: Pieces::new(array(o, "u8s"), 0),
                pool: Vec::new(),
            },
            minimap: Vec::new(),
            index_lens: [0; 3],
            indexed: false,
        };
        if !get(o, "index").is_undefined() {
            m.index = bytes(o, "index");
            m.minimap = minimap(o);
            m.indexed = true;
        }
        m
    }

    /// Adds the index's part, as [`pack_index`] made it (its columns after the trace's).
    pub fn add_index(&mut self, o: &JsValue) {
        let s = &mut self.streams;
        let before = s.lens();
        s.i64s.arrays.extend(array(o, "i64s"));
        s.u32s.arrays.extend(array(o, "u32s"));
        s.u8s.arrays.extend(array(o, "u8s"));
        let after = s.lens();
        self.index_lens = std::array::from_fn(|k| after[k] - before[k]);
        self.index = bytes(o, "index");
        self.minimap = minimap(o);
        self.indexed = true;
    }

    /// Whether the index's part is in (with the trace's, or added).
    pub fn has_index(&self) -> bool {
        self.indexed
    }

    /// Values in each column stream of the index's part when it came on its own (0 when
    /// both came at once: the trace's head counts them then).
    pub fn index_lens(&self) -> [u64; 3] {
        self.index_lens
    }

    /// Values in each column stream (i64s, u32s, u8s).
    pub fn lens(&self) -> [u64; 3] {
        self.streams.lens()
    }

    /// Values in each column stream for the trace's head: all of them, less the index's
    /// part when it came on its own (it may come before the trace's head is read).
    pub fn trace_lens(&self) -> [u64; 3] {
        let (all, index) = (self.lens(), self.index_lens);
        std::array::from_fn(|k| all[k] - index[k])
    }
}

/// Typed arrays of `s`'s streams, their buffers listed in `buffers` to be transferred.
fn lists(s: Streams, buffers: &js_sys::Array) -> [JsValue; 3] {
    let list = |arrays: Vec<JsValue>| {
        let a = js_sys::Array::new();
        for x in arrays {
            buffers.push(&get(&x, "buffer"));
            a.push(&x);
        }
        JsValue::from(a)
    };
    [
        list(s.i64s.finish().into_iter().map(Into::into).collect()),
        list(s.u32s.finish().into_iter().map(Into::into).collect()),
        list(s.u8s.finish().into_iter().map(Into::into).collect()),
    ]
}

/// An object of `parts`, with `{head, i64s, u32s, u8s, buffers, reused}`: `head` under
/// `key`, `s`'s streams, what to transfer, and how many buffers of the pool were taken.
fn part(
    key: &str,
    head: Vec<u8>,
    s: Streams,
    reused: usize,
    parts: &[(&str, JsValue)],
) -> js_sys::Object {
    let buffers = js_sys::Array::new();
    let head = js_sys::Uint8Array::from(&head[..]);
    buffers.push(&head.buffer());
    let [i64s, u32s, u8s] = lists(s, &buffers);
    let o = js_sys::Object::new();
    let all = [
        (key, head.into()),
        ("i64s", i64s),
        ("u32s", u32s),
        ("u8s", u8s),
        ("reused", (reused as f64).into()),
    ];
    for (k, v) in all.into_iter().chain(parts.iter().cloned()) {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    }
    let _ = js_sys::Reflect::set(&o, &"buffers".into(), &buffers);
    o
}

/// Streams written in arrays of `piece_bytes` (0: 32 MB), into `pool`'s buffers first.
fn streams(piece_bytes: u32, pool: Vec<js_sys::ArrayBuffer>) -> Streams {
    let bytes = if piece_bytes == 0 {
        PIECE_BYTES
    } else {
        piece_bytes
    };
    let mut s = Streams::new(bytes);
    // Popped from the end: the pieces in the order given.
    s.pool = pool.into_iter().rev().collect();
    s
}

/// A trace for the page, the first part of a model: `{trace, i64s, u32s, u8s, buffers,
/// reused}`, its head ([`trace_model::Trace::to_transfer_pieces`]) and its column streams,
/// each column copied once, straight from the model into typed arrays of at most 32 MB;
/// `buffers`: what to transfer. `piece_bytes`: the arrays' size (0: 32 MB; tests make it
/// small, so that a small trace crosses in many). The page copies these columns in while
/// the worker builds the index ([`pack_index`], the second part).
///
/// The columns go first into `pool`'s buffers, each whole (the file's pieces, which the
/// worker keeps once they are pushed), then into new arrays: a new array's memory is fresh
/// pages, which the copy faults in at a few hundred MB/s on a busy machine, where a buffer
/// already written runs at memory's speed. Returns the part and what is left of the pool
/// (for the index); `reused` says how many of its buffers were taken (for tests and
/// benchmarks).
pub fn pack_trace(
    trace: &trace_model::Trace,
    piece_bytes: u32,
    pool: Vec<js_sys::ArrayBuffer>,
) -> (js_sys::Object, Vec<js_sys::ArrayBuffer>) {
    let mut s = streams(piece_bytes, pool);
    let given = s.pool.len();
    let head = trace.to_transfer_pieces(&mut s);
    let left: Vec<_> = std::mem::take(&mut s.pool).into_iter().rev().collect();
    let o = part("trace", head, s, given - left.len(), &[]);
    (o, left)
}

/// The index of the trace [`pack_trace`] packed, the model's second part: `{index, i64s,
/// u32s, u8s, minimap, buffers, reused}`, as `pack_trace` packs the trace, into `pool`'s
/// buffers first (what is left of it is dropped), with the minimap
/// ([`trace_model::Trace::activity`] over [`MINIMAP_BINS`]: O(spans), so the worker's work,
/// not the page's).
pub fn pack_index(
    trace: &trace_model::Trace,
    index: &trace_index::TraceIndex,
    piece_bytes: u32,
    pool: Vec<js_sys::ArrayBuffer>,
) -> js_sys::Object {
    let mut s = streams(piece_bytes, pool);
    let given = s.pool.len();
    let minimap = js_sys::Float32Array::from(&trace.activity(MINIMAP_BINS)[..]);
    let head = index.to_transfer_pieces(&mut s);
    let reused = given - s.pool.len();
    s.pool.clear();
    part("index", head, s, reused, &[("minimap", minimap.into())])
}

/// The stored levels [`pack_index`]'s part left for later
/// ([`trace_index::TraceIndex::build_pyramids`]), without pyramids:
/// `{index, i64s, u32s, u8s, buffers}`, in new arrays, which the page reads with
/// [`trace_index::IndexIn::levels`] and adds to the index it drew from
/// ([`trace_index::TraceIndex::set_levels`]).
pub fn pack_levels(levels: &trace_index::IndexLevels, piece_bytes: u32) -> js_sys::Object {
    let mut s = streams(piece_bytes, Vec::new());
    let head = levels.to_transfer_pieces(&mut s);
    part("index", head, s, 0, &[])
}
