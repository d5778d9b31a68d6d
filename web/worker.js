// The load worker: a second instance of the viewer's WebAssembly module (the page sends the
// module it compiled) that reads a trace, decodes it and builds the model, and hands the
// model to the page as one transferred buffer. The page's thread only draws meanwhile.
//
// Messages to the page: {started}, {progress: [done, total, stage]}, {model: Uint8Array},
// {error: message}. The page ends the worker (terminate) to cancel a load.
import init, { Loader } from "./spall_web.js";

// How much of a File is read at a time.
const CHUNK = 8 << 20;
// Progress is posted every this many bytes read.
const REPORT = 4 << 20;

const message = (e) => (typeof e === "string" ? e : (e && e.message) || String(e));

const readFile = async (loader, file) => {
  for (let at = 0; at < file.size; at += CHUNK) {
    const chunk = new Uint8Array(await file.slice(at, at + CHUNK).arrayBuffer());
    loader.push(chunk);
    postMessage({ progress: [at + chunk.length, file.size, "reading"] });
  }
};

const readUrl = async (url, name) => {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw `${name}: cannot be fetched: ${message(e)}`;
  }
  if (!r.ok) throw `${name}: the server answered ${r.status} ${r.statusText}`;
  // Compressed in transit, the length is the compressed one: progress stops short.
  const size = Number(r.headers.get("content-length")) || 0;
  const loader = new Loader(name, size);
  const reader = r.body.getReader();
  let done = 0, reported = 0;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    loader.push(value);
    done += value.length;
    if (done - reported >= REPORT) {
      reported = done;
      postMessage({ progress: [done, Math.max(size, done), "reading"] });
    }
  }
  return loader;
};

onmessage = async ({ data }) => {
  const { module, name, file, url } = data;
  try {
    await init({ module_or_path: module });
  } catch (e) {
    postMessage({ startFailed: message(e) });
    return;
  }
  postMessage({ started: true });
  try {
    let loader;
    if (file) {
      loader = new Loader(name, file.size);
      await readFile(loader, file);
    } else {
      loader = await readUrl(url, name);
    }
    const model = loader.finish((done, total, stage) => postMessage({ progress: [done, total, stage] }));
    postMessage({ model }, [model.buffer]);
  } catch (e) {
    postMessage({ error: message(e) });
  }
};
