//! The worker's trace and index packed for the page in the threaded load worker's module,
//! which has no viewer: the writing half of `spall_viewer::platform::web::pack`, the same
//! typed arrays in the same order, and the minimap, which the page reads back
//! (`open_model`).

/// The minimap's columns, the viewer's `loaded::MINIMAP_BINS` (the page refuses a model
/// whose minimap has another length: the e2e's isolated page would fail).
const MINIMAP_BINS: usize = 1024;

/// Bytes of a column stream in one typed array.
const PIECE_BYTES: u32 = 32 << 20;

/// A typed array a column stream is written into, a piece at a time.
trait Typed: Sized + Into<wasm_bindgen::JsValue> {
    type Item: Copy;
    const SIZE: u32;
    fn with_length(n: u32) -> Self;
    fn len(&self) -> u32;
    fn fill(&self, at: u32, v: &[Self::Item]);
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
            fn fill(&self, at: u32, v: &[$item]) {
                self.subarray(at, at + v.len() as u32).copy_from(v)
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

/// One column stream, written in order into arrays of `bytes`.
struct Pieces<T> {
    arrays: Vec<T>,
    bytes: u32,
    /// Values written to the last array.
    at: u32,
}

impl<T: Typed> Pieces<T> {
    fn new(bytes: u32) -> Pieces<T> {
        Pieces {
            arrays: Vec::new(),
            bytes,
            at: 0,
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
            last.fill(self.at, &v[..n as usize]);
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
}

/// The three column streams of a model.
struct Streams {
    i64s: Pieces<js_sys::BigInt64Array>,
    u32s: Pieces<js_sys::Uint32Array>,
    u8s: Pieces<js_sys::Uint8Array>,
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

/// A trace and its index for the page: `{trace, index, i64s, u32s, u8s, minimap,
/// buffers}`, the heads of both ([`trace_model::Trace::to_transfer_pieces`],
/// [`trace_index::TraceIndex::to_transfer_pieces`]) and their column streams, each column
/// copied once, straight from the model into typed arrays of at most 32 MB; the minimap
/// ([`trace_model::Trace::activity`], O(spans): the worker's work); `buffers`: what to
/// transfer. `piece_bytes`: the arrays' size (0: 32 MB; tests make it small, so
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
    let mut s = Streams {
        i64s: Pieces::new(bytes),
        u32s: Pieces::new(bytes),
        u8s: Pieces::new(bytes),
    };
    let minimap = trace.activity(MINIMAP_BINS);
    let heads = [
        trace.to_transfer_pieces(&mut s),
        index.to_transfer_pieces(&mut s),
    ];
    let [trace, index] = heads.map(|h| js_sys::Uint8Array::from(&h[..]));
    let o = js_sys::Object::new();
    let buffers = js_sys::Array::new();
    let list = |arrays: Vec<wasm_bindgen::JsValue>| {
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
    let minimap = js_sys::Float32Array::from(&minimap[..]);
    let parts = [
        ("trace", heads.get(0)),
        ("index", heads.get(1)),
        ("i64s", i64s.into()),
        ("u32s", u32s.into()),
        ("u8s", u8s.into()),
        ("minimap", minimap.into()),
        ("buffers", buffers.into()),
    ];
    for (k, v) in parts {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    }
    o
}

/// Whole-trace statistics as bytes, as `spall_viewer::platform::web::open_stats` reads them.
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
