// The load worker's decode without a browser: the built module's `Loader` (what web/worker.js
// runs) in Node, whose V8 is Chromium's engine, fed a file in 8 MB slices as `File.slice`
// reads it, streamed (`.spall` v3, JSON) and gathered (the file pushed whole, then decoded in
// steps), alternately, RUNS (default 6) of each after one warm-up of each (the first runs
// include compiling the module's hot functions). Each load runs in a fresh instance of the
// module, with fresh memory, as each of the page's workers does (the compiled code is
// shared); REUSE=1 loads them all in one instance, whose memory has grown already. Prints
// each run, then the medians: the decode's time without the page's hand-off, file reads or
// the browser's scheduling, and the finish's stages (the trace built, indexed, packed for
// the page). Each slice is a buffer of its own, kept for the packed columns as the worker
// keeps them (docs/WEB.md, "Loading in a worker"). Several sites compare builds, run by
// run. Each load's CPU time (the process's, V8's own threads included) is printed too: on
// a busy machine it follows the work where the wall time follows the load.
//
//   scripts/build-web.sh target/web-site
//   node tests/web/loader-bench.mjs target/web-site FILE
//   ONLY=streamed node tests/web/loader-bench.mjs SITE_A,SITE_B FILE
//   node tests/web/loader-bench.mjs SITE:simd,SITE FILE   (the SIMD loader module,
//     spall_web_simd, against the page's scalar one)
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

// SITE, or SITE:simd for its SIMD module.
const sites = process.argv[2].split(",").map((s) =>
  s.endsWith(":simd") ? { site: resolve(s.slice(0, -5)), name: "spall_web_simd", label: s } : { site: resolve(s), name: "spall_web", label: s });
const file = process.argv[3];
const runs = Number(process.env.RUNS || 6);
const reuse = process.env.REUSE === "1";
// ONLY=streamed or ONLY=gathered: the one way.
const ways = [["streamed", true], ["gathered", false]].filter(([w]) => !process.env.ONLY || w === process.env.ONLY);
const bytes = readFileSync(file);
const SLICE = 8 << 20;

// Per site: the compiled module, and a fresh instance of it (a new copy of the glue, whose
// state is the instance) for each load, or the first one again with REUSE=1.
let fresh = 0;
const builds = await Promise.all(
  sites.map(async ({ site, name, label }) => ({
    site,
    name,
    label,
    module: await WebAssembly.compile(readFileSync(`${site}/${name}_bg.wasm`)),
  })),
);
const instance = async (b) => {
  if (reuse && b.glue) return b.glue;
  const glue = await import(`${b.site}/${b.name}.js?instance=${fresh++}`);
  await glue.default({ module_or_path: b.module });
  b.glue = glue;
  return glue;
};

const load = async (b, stream) => {
  const { Loader } = await instance(b);
  // Each slice in a buffer of its own, as the page's reader hands them over, made before
  // the clock starts (another thread's work there); kept for the columns as web/worker.js
  // keeps them, up to the Loader's keep_bytes.
  const slices = [];
  for (let at = 0; at < bytes.length; at += SLICE) slices.push(new Uint8Array(bytes.subarray(at, at + SLICE)));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const loader = new Loader(file, bytes.length, stream, 0);
  const pool = [];
  let kept = 0;
  for (const s of slices) {
    loader.push(s);
    const keep = loader.keep_bytes ? loader.keep_bytes() || Infinity : 0;
    if (kept < keep) (pool.push(s.buffer), (kept += s.length));
    while (kept > keep) kept -= pool.pop().byteLength;
  }
  slices.length = 0;
  const streaming = loader.streaming();
  const t1 = performance.now();
  loader.finish(() => {}, pool);
  pool.length = 0;
  // The index, the model's second part (a build before Loader.finish_index has none).
  if (loader.finish_index) loader.finish_index();
  // The finish's stages (a build before Loader.stages has none): built/indexed/packed, or
  // with the index sent apart built/trace packed/indexed/index packed.
  const stages = loader.stages ? [...loader.stages()].map((m) => m.toFixed(0)).join("/") : "";
  const t2 = performance.now();
  const c = process.cpuUsage(c0);
  loader.free();
  if (stream && !streaming) console.log("  (this file's format is not streamed)");
  return { ms: t2 - t0, pushed: t1 - t0, cpu: (c.user + c.system) / 1000, stages };
};

for (const b of builds) for (const [, stream] of ways) await load(b, stream);
const times = {};
const cpus = {};
for (let i = 0; i < runs; i++) {
  for (const b of builds) {
    for (const [how, stream] of ways) {
      const what = sites.length > 1 ? `${b.label} ${how}` : how;
      const r = await load(b, stream);
      (times[what] ||= []).push(r.ms);
      (cpus[what] ||= []).push(r.cpu);
      console.log(`${what}: ${r.ms.toFixed(0)} ms (pushing ${r.pushed.toFixed(0)} ms${r.stages && `; finish stages ${r.stages} ms`}), CPU ${r.cpu.toFixed(0)} ms`);
    }
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const mb = bytes.length / 1e6;
for (const [what, v] of Object.entries(times)) {
  const m = median(v);
  const c = median(cpus[what]);
  console.log(`${file}: ${what} ${m.toFixed(0)} ms median, ${(mb / m * 1000).toFixed(0)} MB/s; CPU ${c.toFixed(0)} ms median, least ${Math.min(...cpus[what]).toFixed(0)} ms`);
}
