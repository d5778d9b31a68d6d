// The load worker: a second instance of the viewer's WebAssembly module (the page sends the
// module it compiled) that reads a trace in chunks, decodes it (.spall, JSON, protobuf, perf
// script text and collapsed stacks, gzipped or not, as the chunks arrive) and builds the model, and hands the model to the page in pieces
// (typed arrays of its columns, transferred).
// The page's thread only draws meanwhile.
//
// On a cross-origin-isolated page the worker runs the threaded loader-only module instead
// (spall_web_threads.js, see `threaded`); elsewhere, with {simd: true} (unless the page has
// ?simd=0) and where the browser has wasm SIMD, the loader-only module built with simd128
// (spall_web_simd.js, see `vector`; the page sends it compiled as {simdModule}); else the
// page's module. Both of the first two need SIMD.
//
// Messages to the page: {started, threads, simd} (threads: the pool's size, 0 without;
// simd: whether the module that runs was built with simd128),
// {progress: [done, total, stage]}, {warm: bytes} (the model's size as the page will hold
// it, estimated: the page makes room for it while this worker decodes), {model}
// (Loader.finish's: the trace), {index} (Loader.finish_index's: the index, built while the
// page copies the trace in), {stats: Uint8Array} (the whole-trace statistics, once the page says
// {taken}), {error: message},
// {startFailed: message} (the page then loads without a worker). Messages in: optionally
// {prepare: true, module, simdModule, simd, threads, gather} first (a worker the page
// starts ahead of a file: the module instantiated and a reader started meanwhile), then
// the load: {name, file or url, chunk} with the same module fields. The page ends the worker
// (terminate) to cancel a load, and once the statistics are in. The same file, started by
// the load worker with the name "spall-reader", is its reader (see `reader`).
import init, { Loader as PageLoader, warm_spall, warm_proto } from "./spall_web.js";

// The Loader of the module this worker runs: the page's, the threaded one's or the SIMD
// one's; and its generators of the warm-up's binary files (see warmFiles). `adopt` takes
// both from a module, so that they always come from the same one.
let Loader, warmBinary;
const adopt = (m) => {
  Loader = m.Loader;
  warmBinary = { spall: m.warm_spall, proto: m.warm_proto };
};
adopt({ Loader: PageLoader, warm_spall, warm_proto });

// How much of a File is read at a time, after a smaller first slice: the memory guard's
// sample (trace_model::SAMPLE_BYTES), so that the decode starts sooner.
const CHUNK = 8 << 20;
const FIRST = 4 << 20;
// Progress is posted every this many bytes of a fetch.
const REPORT = 4 << 20;
// How many pieces of a File the reader may have read ahead of the decoder.
const AHEAD = 4;

// A module whose one function uses v128 (i8x16.splat, i8x16.popcnt): it validates where
// the browser has wasm SIMD.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0,
  253, 15, 253, 98, 11,
]);

const message = (e) => (typeof e === "string" ? e : (e && e.message) || String(e));

const report = (loader) =>
  postMessage({ progress: [...loader.progress(), loader.streaming() ? "loading" : "reading"] });

// A File's bytes in pieces (ArrayBuffers of their own): `first` bytes, then `size` bytes
// each, the last shorter. Read from the File's byte stream into buffers of that size (a
// reader that fills the buffer it is given, BYOB), where the browser has one: reading
// slices (`File.slice().arrayBuffer()`) took the browser and the page twice the CPU, which
// the decode on a two-core machine shares (docs/PERFORMANCE.md, "Loading in a worker").
async function* fileSlices(file, size, first) {
  let stream = null;
  try {
    stream = file.stream().getReader({ mode: "byob" });
  } catch {}
  if (!stream) {
    for (let at = 0; at < file.size;) {
      const end = Math.min(at ? at + size : first, file.size);
      yield await file.slice(at, end).arrayBuffer();
      at = end;
    }
    return;
  }
  try {
    for (let at = 0; at < file.size;) {
      const want = Math.min(at ? size : first, file.size - at);
      let buf = new ArrayBuffer(want), filled = 0, done = false;
      while (filled < want && !done) {
        const r = await stream.read(new Uint8Array(buf, filled, want - filled));
        // The buffer given moves into the answer's (the given one is detached).
        if (r.value) (buf = r.value.buffer), (filled += r.value.length);
        done = r.done;
      }
      if (filled) yield filled === want ? buf : buf.slice(0, filled);
      at += filled;
      // A File that shrank while read: what it had.
      if (done) return;
    }
  } finally {
    stream.cancel().catch(() => {});
  }
}

// The reader: this file again, as a worker of the load worker's own. A File's bytes come
// through a data pipe that only the reading thread drains, so a thread that decodes between
// reads leaves the browser's reading idle; the reader reads AHEAD pieces ahead of the
// decoder on a thread of its own and transfers them (no copy). Messages in: {file, size,
// first} (the first piece's size), then {more: true} for each piece taken. Out: {piece:
// ArrayBuffer}, {end: true}, {error}.
const reader = () => {
  let credit = AHEAD, wake = null;
  onmessage = async ({ data: { file, size, first } }) => {
    onmessage = () => { credit++; if (wake) { wake(); wake = null; } };
    try {
      const it = fileSlices(file, size, first);
      for (;;) {
        while (credit <= 0) await new Promise((r) => (wake = r));
        credit--;
        const { value: piece, done } = await it.next();
        if (done) break;
        postMessage({ piece }, [piece]);
      }
      postMessage({ end: true });
    } catch (e) {
      postMessage({ error: message(e) });
    }
  };
};

const newReader = () => new Worker(new URL(import.meta.url), { type: "module", name: "spall-reader" });
// A reader started ahead ({prepare}), for the next File.
let spareReader = null;

// The pieces of a File (`size` bytes each after the first's `first`) or of a fetch body,
// in order. A File of more than two pieces is read ahead by a reader worker; a smaller one
// (which gains less than the reader takes to start), a fetch body, or a File where a worker
// cannot start one, on this thread. A fetch body's pipe
// fills while this thread decodes, so its reads wait little; a reader worker cost more
// CPU than it saved (docs/PERFORMANCE.md). Yields `{length}` first for a fetch.
async function* pieces(source, size, first) {
  let w = spareReader;
  spareReader = null;
  try {
    if (!source.file || source.file.size <= 2 * size) throw "here";
    w = w || newReader();
  } catch {
    if (w) w.terminate();
    yield* piecesHere(source, size, first);
    return;
  }
  const queue = [];
  let wake = null;
  const arrived = (m) => { queue.push(m); if (wake) { wake(); wake = null; } };
  w.onmessage = ({ data }) => arrived(data);
  w.onerror = (e) => {
    e.preventDefault();
    arrived({ error: e.message || "the reader worker failed" });
  };
  w.postMessage({ ...source, size, first });
  try {
    for (;;) {
      if (!queue.length) await new Promise((r) => (wake = r));
      const m = queue.shift();
      if (m.error) throw m.error;
      if (m.end) return;
      w.postMessage({ more: true });
      yield new Uint8Array(m.piece);
    }
  } finally {
    w.terminate();
  }
}

async function* piecesHere({ file, url }, size, first) {
  if (file) {
    for await (const piece of fileSlices(file, size, first)) yield new Uint8Array(piece);
    return;
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(`the server answered ${r.status} ${r.statusText}`);
  yield { length: Number(r.headers.get("content-length")) || 0 };
  const body = r.body.getReader();
  for (;;) {
    const { value, done } = await body.read();
    if (done) return;
    yield value;
  }
}

// The least bytes of a piece worth keeping for the columns (a fetch body's small pieces
// are not), unless the slices are smaller (a test's ?chunk=).
const KEEP_PIECE = 1 << 20;

// Feeds a File (read in slices of `size` bytes, the first smaller) or a fetch body to a
// new Loader as its pieces arrive; `runs`: the stream's runs (0: as natively). Once pushed (copied into the
// module), a piece's buffer goes to `pool`, up to the bytes the Loader's columns will take
// (keep_bytes, once the memory guard has seen the first bytes): Loader.finish packs the columns into them, memory already written, rather
// than into new arrays, whose fresh pages cost more than the copy (docs/PERFORMANCE.md).
const feed = async (name, source, stream, size, runs, pool) => {
  const what = source.file ? "cannot be read" : "cannot be fetched";
  const it = pieces(source, size, Math.min(FIRST, size));
  let loader = source.file ? new Loader(name, source.file.size, stream, runs) : null;
  let done = 0, reported = 0, warned = false;
  try {
    for (;;) {
      let next;
      try {
        next = await it.next();
      } catch (e) {
        const m = message(e);
        throw m.startsWith("the server answered") ? `${name}: ${m}` : `${name}: ${what}: ${m}`;
      }
      if (next.done) return loader;
      const piece = next.value;
      if (!(piece instanceof Uint8Array)) {
        loader = new Loader(name, piece.length, stream, runs);
        continue;
      }
      loader.push(piece);
      done += piece.length;
      // Until the memory guard has run (the first 4 MB) every piece is kept; then the
      // pool is cut to the estimate.
      const keep = loader.keep_bytes() || Infinity;
      // The page warms its memory for the model meanwhile (docs/WEB.md), once it is known.
      if (!warned && keep < Infinity) {
        warned = true;
        postMessage({ warm: loader.warm_bytes() });
      }
      const whole = piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength;
      if (whole && piece.length >= Math.min(KEEP_PIECE, size) && pool.bytes < keep) {
        pool.push(piece.buffer);
        pool.bytes += piece.length;
      }
      while (pool.bytes > keep) pool.bytes -= pool.pop().byteLength;
      if (source.file || done - reported >= REPORT) {
        reported = done;
        report(loader);
      }
    }
  } finally {
    await it.return();
  }
};

// On a cross-origin-isolated page (SharedArrayBuffer allowed), the loader-only module built
// with threads, its rayon pool on `want` workers (default: one a core) sharing its memory,
// which builds the trace on all threads (and, with `gather` (?gather=1), gathers the files
// that fit and decodes them on all threads). Returns the pool's size; 0 (one thread) where
// the page is not isolated, `want` is under 2 (?threads=0), the browser has no wasm SIMD
// (the module is built with simd128), or the module cannot start (a site built without it).
const threaded = async (want, gather) => {
  const n = want ?? navigator.hardwareConcurrency ?? 1;
  if (!self.crossOriginIsolated || !(n >= 2) || !WebAssembly.validate(SIMD_PROBE)) return 0;
  try {
    const m = await import("./spall_web_threads.js");
    await m.default();
    // A pool whose workers never start (a browser that cannot start workers from a worker)
    // would wait forever: the single worker after 15 s.
    let late;
    const stop = new Promise((_, no) => { late = setTimeout(() => no("its pool did not start"), 15_000); });
    try {
      await Promise.race([m.initThreadPool(n), stop]);
    } finally {
      clearTimeout(late);
    }
    m.gather_files(!!gather);
    adopt(m);
    return n;
  } catch (e) {
    console.warn(`spall: the threaded loader did not start (${message(e)}); one thread`);
    return 0;
  }
};

// Where the browser has wasm SIMD, the loader-only module built with simd128 (its JSON
// scans 16 bytes an instruction): `compiled` where the page compiled it, else fetched here.
// True once its Loader is this worker's. False (the page's scalar module) without SIMD, or
// where the module cannot start (a site built without it).
const vector = async (compiled) => {
  if (!WebAssembly.validate(SIMD_PROBE)) return false;
  try {
    const m = await import("./spall_web_simd.js");
    await m.default(compiled ? { module_or_path: compiled } : undefined);
    adopt(m);
    return true;
  } catch (e) {
    console.warn(`spall: the SIMD loader did not start (${message(e)}); the scalar one`);
    return false;
  }
};

// The module this worker runs, started once: on {prepare} (the page starts a worker ahead of
// the file it will load) or with the load's own message. Resolves to [threads, simd].
let starting = null;
const startModule = (data) => (starting ||= (async () => {
  const threads = await threaded(data.threads, data.gather);
  // data.simd (unless ?simd=0): the SIMD loader rather than the page's module.
  const simd = threads > 0 || (data.simd === true && (await vector(data.simdModule)));
  if (!simd) await init({ module_or_path: data.module });
  return [threads, simd];
})());

// Small files of the formats most opened, loaded once by a worker started ahead: a
// module's functions are compiled at their first call, with the baseline compiler, and
// optimized only once they have run a while, so the first load of a worker spent 40-100
// ms compiling and running slow code in its first slice and its finish
// (docs/PERFORMANCE.md, "The load worker's warm-up"). The code compiled is the
// module's, shared with the next workers. The files are big enough for the decoders'
// per-record functions to be optimized before a person picks a file (smaller ones left them
// slow into the real load's first slices).
const warmFiles = () => {
  const n = 30000, nodes = [], samples = [], deltas = [];
  for (let i = 1; i <= n; i++) {
    const kids = i * 2 <= n ? `,"children":[${[i * 2, i * 2 + 1].filter((k) => k <= n)}]` : "";
    nodes.push(`{"id":${i},"callFrame":{"functionName":"f${i % 97}","scriptId":"${i % 7}",` +
      `"url":"file:///w/m${i % 13}.js","lineNumber":${i % 50},"columnNumber":3},"hitCount":1${kids},` +
      `"positionTicks":[{"line":${i % 50},"ticks":1}]}`);
    samples.push(n - (i % (n >> 1)));
    deltas.push(100 + (i % 7));
  }
  const cpu = `{"nodes":[${nodes}],"startTime":1,"endTime":${n * 110},` +
    `"samples":[${samples}],"timeDeltas":[${deltas}]}`;
  const perf = [], folded = [], events = [];
  for (let i = 0; i < 4000; i++) {
    perf.push(`w ${100 + (i % 3)}/${100 + (i % 3)} [00${i % 2}] ${1000 + i}.000100: 250000 cycles:u: `);
    for (let d = 0; d < 8; d++) perf.push(`\t    ${(0x400000 + d * 16 + i).toString(16)} f${(i + d) % 31}+0x${d}${d} (/w/a.out)`);
    perf.push("");
    folded.push(`main;f${i % 31};g${i % 17};h${i % 5} ${1 + (i % 9)}`);
    events.push(`{"name":"f${i % 31}","cat":"c","ph":"X","ts":${i * 10},"dur":${5 + (i % 4)},"pid":1,"tid":${i % 3},"args":{"a":${i}}}`);
  }
  // perf's default header, and frames whose lines repeat (a few stacks sampled again and
  // again: the line table and the call tree kept, a record read from the last one), where
  // each record above is new (the tree given up): the two warm files take one path each.
  const spin = [];
  for (let i = 0; i < 4000; i++) {
    spin.push(`spin   ${611 + (i % 2)}  ${(2592 + i * 0.0005).toFixed(6)}:     500000 cpu-clock:ppp: `);
    for (let d = 2 + (i % 5); d >= 0; d--) {
      const leaf = d === 0 ? i % 3 : 0;
      spin.push(`\t            ${(0x1190 + d * 0x29 + leaf).toString(16)} f${d}+0x${(leaf + 1).toString(16)} (/w/spin)`);
    }
    spin.push("");
  }
  const text = (s) => new TextEncoder().encode(s);
  // The binary formats, made by the module (20,000 spans each): without them a first
  // `.spall` or protobuf load ran its decoder and builder unoptimized.
  let binary = [];
  try {
    binary = [["w.spall", warmBinary.spall(20000)], ["w.pftrace", warmBinary.proto(20000)]];
  } catch {}
  return [["w.cpuprofile", text(cpu)], ["w.perf", text(perf.join("\n"))],
    ["w2.perf", text(spin.join("\n"))],
    ["w.folded", text(folded.join("\n"))], ["w.json", text(`{"traceEvents":[${events}]}`)],
    ...binary];
};

// Each of warmFiles loaded as a file is (decoded, built, packed, its statistics), the
// results dropped; where one fails, the rest still run.
const warmUp = () => {
  for (const [name, bytes] of warmFiles()) {
    try {
      const loader = new Loader(name, bytes.length, true, 0);
      loader.push(bytes);
      loader.finish(() => {}, []);
      loader.finish_index();
      loader.stats();
      loader.free();
    } catch {}
  }
};

const main = async ({ data }) => {
  if (data.prepare) {
    // A worker started ahead: the module and a reader ready before the file is picked,
    // and the module's loading code compiled.
    startModule(data).then(warmUp).catch(() => {});
    try {
      spareReader = newReader();
    } catch {}
    return;
  }
  const { name, file, url, chunk, levelsLater } = data;
  let threads = 0, simd = false;
  try {
    [threads, simd] = await startModule(data);
  } catch (e) {
    postMessage({ startFailed: message(e) });
    return;
  }
  postMessage({ started: true, threads, simd });
  const progress = (done, total, stage) => postMessage({ progress: [done, total, stage] });
  // A test's small slices (?chunk=) make small runs too, so a small file crosses many.
  // The file's pieces kept for the columns (see feed), and their bytes.
  const pool = Object.assign([], { bytes: 0 });
  const read = (stream) =>
    feed(name, file ? { file } : { url }, stream, chunk || CHUNK, file ? chunk || 0 : 0, pool);
  try {
    let loader = await read(true);
    let model = loader.finish(progress, pool);
    // A streamed file whose events go back in time (or whose decode warns in a way a stream
    // cannot, see LoadStream::finish) is decoded again, whole.
    if (!model) {
      loader = await read(false);
      model = loader.finish(progress, pool);
    }
    pool.length = 0;
    // The side panel's statistics, once the page has taken the trace (not competing with
    // it for a core meanwhile).
    const taken = new Promise((resolve) => { onmessage = resolve; });
    // The trace first: the page copies its columns in while this worker builds the index,
    // the model's second part. A page that asks (levelsLater) gets the index's pyramids
    // first and draws from them, then its stored levels, which make frames cheaper.
    postMessage({ model }, model.buffers);
    const index = levelsLater ? loader.finish_pyramids() : loader.finish_index();
    postMessage({ index }, index.buffers);
    const levels = levelsLater && loader.finish_levels();
    if (levels) postMessage({ levels }, levels.buffers);
    await taken;
    const stats = loader.stats();
    postMessage({ stats }, [stats.buffer]);
  } catch (e) {
    postMessage({ error: message(e) });
  }
};

if (self.name === "spall-reader") reader();
else onmessage = main;
