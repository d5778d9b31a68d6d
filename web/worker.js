// The load worker: a second instance of the viewer's WebAssembly module (the page sends the
// module it compiled) that reads a trace in chunks, decodes it (.spall and JSON, gzipped or not,
// as the chunks arrive) and builds the model, and hands the model to the page as one
// transferred buffer.
// The page's thread only draws meanwhile.
//
// Messages to the page: {started}, {progress: [done, total, stage]}, {model: Uint8Array},
// {stats: Uint8Array} (the whole-trace statistics, once the page says {taken}), {error: message},
// {startFailed: message} (the page then loads without a worker). The page ends the worker
// (terminate) to cancel a load, and once the statistics are in.
import init, { Loader } from "./spall_web.js";

// How much of a File is read at a time.
const CHUNK = 8 << 20;
// Progress is posted every this many bytes of a fetch.
const REPORT = 4 << 20;

const message = (e) => (typeof e === "string" ? e : (e && e.message) || String(e));

const report = (loader) =>
  postMessage({ progress: [...loader.progress(), loader.streaming() ? "loading" : "reading"] });

// Feeds a File to a new Loader, a slice of `size` bytes at a time; `runs`: the stream's runs
// (0: as natively).
const readFile = async (name, file, stream, size, runs) => {
  const loader = new Loader(name, file.size, stream, runs);
  for (let at = 0; at < file.size; at += size) {
    let chunk;
    try {
      chunk = new Uint8Array(await file.slice(at, at + size).arrayBuffer());
    } catch (e) {
      throw `${name}: cannot be read: ${message(e)}`;
    }
    loader.push(chunk);
    report(loader);
  }
  return loader;
};

// Feeds a fetch body to a new Loader as it arrives.
const readUrl = async (name, url, stream) => {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw `${name}: cannot be fetched: ${message(e)}`;
  }
  if (!r.ok) throw `${name}: the server answered ${r.status} ${r.statusText}`;
  // Compressed in transit, the length is the compressed one: progress stops short.
  const loader = new Loader(name, Number(r.headers.get("content-length")) || 0, stream, 0);
  const reader = r.body.getReader();
  let done = 0, reported = 0;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    loader.push(value);
    done += value.length;
    if (done - reported >= REPORT) {
      reported = done;
      report(loader);
    }
  }
  return loader;
};

onmessage = async ({ data }) => {
  const { module, name, file, url, chunk } = data;
  try {
    await init({ module_or_path: module });
  } catch (e) {
    postMessage({ startFailed: message(e) });
    return;
  }
  postMessage({ started: true });
  const progress = (done, total, stage) => postMessage({ progress: [done, total, stage] });
  // A test's small slices (?chunk=) make small runs too, so a small file crosses many.
  const read = (stream) =>
    file ? readFile(name, file, stream, chunk || CHUNK, chunk || 0) : readUrl(name, url, stream);
  try {
    let loader = await read(true);
    let model = loader.finish(progress);
    // A streamed file whose events go back in time (or whose decode warns in a way a stream
    // cannot, see LoadStream::finish) is decoded again, whole.
    if (model.length === 0) {
      loader = await read(false);
      model = loader.finish(progress);
    }
    // The side panel's statistics, once the page has taken the trace (not competing with
    // it for a core meanwhile).
    const taken = new Promise((resolve) => { onmessage = resolve; });
    postMessage({ model }, [model.buffer]);
    await taken;
    const stats = loader.stats();
    postMessage({ stats }, [stats.buffer]);
  } catch (e) {
    postMessage({ error: message(e) });
  }
};
