// The load worker's decode without a browser: the built module's `Loader` (what web/worker.js
// runs) in Node, whose V8 is Chromium's engine, fed a file in 8 MB slices as `File.slice`
// reads it, streamed (`.spall` v3, JSON) and gathered (the file pushed whole, then decoded in
// steps), alternately, RUNS (default 6) of each after one warm-up of each (the first runs
// include compiling the module's hot functions). Prints each run, then the medians: the
// decode's time without the page's hand-off, file reads or the browser's scheduling.
//
//   scripts/build-web.sh target/web-site
//   node tests/web/loader-bench.mjs target/web-site FILE
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const site = resolve(process.argv[2]);
const file = process.argv[3];
const runs = Number(process.env.RUNS || 6);
const { default: init, Loader } = await import(`${site}/spall_web.js`);
await init({ module_or_path: readFileSync(`${site}/spall_web_bg.wasm`) });
const bytes = readFileSync(file);
const SLICE = 8 << 20;

const load = (stream) => {
  const t0 = performance.now();
  const loader = new Loader(file, bytes.length, stream, 0);
  for (let at = 0; at < bytes.length; at += SLICE) loader.push(bytes.subarray(at, at + SLICE));
  const streaming = loader.streaming();
  const t1 = performance.now();
  const model = loader.finish(() => {});
  const t2 = performance.now();
  loader.free();
  if (stream && !streaming) console.log("  (this file's format is not streamed)");
  return { ms: t2 - t0, pushed: t1 - t0, model: model.length };
};

load(true);
load(false);
const times = { streamed: [], gathered: [] };
for (let i = 0; i < runs; i++) {
  for (const [what, stream] of [["streamed", true], ["gathered", false]]) {
    const r = load(stream);
    times[what].push(r.ms);
    console.log(`${what}: ${r.ms.toFixed(0)} ms (pushing ${r.pushed.toFixed(0)} ms), model ${r.model} bytes`);
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const mb = bytes.length / 1e6;
for (const [what, v] of Object.entries(times)) {
  const m = median(v);
  console.log(`${file}: ${what} ${m.toFixed(0)} ms median, ${(mb / m * 1000).toFixed(0)} MB/s`);
}
