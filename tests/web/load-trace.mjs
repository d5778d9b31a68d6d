// Where the page's threads spend a load: a Chrome trace (the `toplevel`, `devtools.timeline`
// and `gpu` categories) from the file picker's change (or, with URL=1, from navigating to
// `?trace=` the file) to the first frame of the loaded trace, in Debian's Chromium, and from
// it, per thread, wall time against time on a core:
// - the page's main thread: its busy time and CPU, and the waits for the canvas to be read
//   back (`GLES2::ReadPixels`, where the browser draws WebGL on the CPU: the frame waits
//   for the GPU process to draw ours), split at the worker's hand-off;
// - each worker (the load worker, its reader): busy, idle between its first and last long
//   task (waiting on its input), CPU, tasks.
//
//   scripts/build-web.sh target/web-site
//   node tests/web/load-trace.mjs target/web-site FILE
//   URL=1 node tests/web/load-trace.mjs target/web-site FILE   (?trace=, the file served)
//   TRACE_OUT=load.json ...                                    (also writes the trace)
import { createServer } from "node:http";
import { createReadStream, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { serveSite } from "./site-server.mjs";

const [site, file] = process.argv.slice(2);
const { server, base } = await serveSite(resolve(site));
// The file for ?trace=, on a port of its own (any origin may fetch it).
const files = createServer((req, res) => {
  res.writeHead(200, { "access-control-allow-origin": "*", "content-length": statSync(file).size });
  createReadStream(file).pipe(res);
});
await new Promise((r) => files.listen(0, "127.0.0.1", r));

// Run in the page: a user-timing mark where a load worker's model reaches it.
function markHandoff() {
  const W = Worker;
  globalThis.Worker = function (...a) {
    const w = new W(...a);
    w.addEventListener("message", (e) => { if (e.data.model) performance.mark("spall-handoff"); });
    return w;
  };
}

const browser = await launchChromium();
let events;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base);
  await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
  const demo = await page.evaluate(() => document.body.dataset.spans);
  await browser.startTracing(page, { categories: ["toplevel", "devtools.timeline", "gpu", "blink.user_timing"] });
  if (process.env.URL) {
    await page.addInitScript(markHandoff);
    await page.goto(`${base}?trace=${encodeURIComponent(`http://127.0.0.1:${files.address().port}/f`)}`);
  } else {
    await page.evaluate(markHandoff);
    await page.setInputFiles("#spall-file", file);
  }
  await page.waitForFunction((d) => ["loaded", "error"].includes(document.body.dataset.state)
    && document.body.dataset.spans !== d, demo, { timeout: 600_000, polling: 20 });
  const s = await page.evaluate(() => ({ ...document.body.dataset }));
  if (s.state !== "loaded") console.log(`${file}: ${s.state} ${s.error}`);
  const trace = await browser.stopTracing();
  if (process.env.TRACE_OUT) writeFileSync(process.env.TRACE_OUT, trace);
  events = JSON.parse(trace.toString()).traceEvents;
  console.log(`${file}${process.env.URL ? " (?trace=)" : ""}: ${s.spans} spans, load average ${loadavg()[0].toFixed(1)}`);
} finally {
  await browser.close();
  server.close();
  files.close();
}

const names = new Map();
for (const e of events) {
  if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args.name);
}
// Each thread's outermost tasks (nested ones are inside them), by start.
const tasks = new Map();
for (const e of [...events].sort((a, b) => a.ts - b.ts || b.dur - a.dur)) {
  if (e.ph !== "X" || e.dur === undefined) continue;
  const k = `${e.pid}:${e.tid}`;
  const list = tasks.get(k) || tasks.set(k, []).get(k);
  const last = list[list.length - 1];
  if (!last || e.ts >= last.ts + last.dur) list.push(e);
}
const ms = (us) => `${(us / 1000).toFixed(0)} ms`;
const sum = (list, f) => list.reduce((a, e) => a + (f(e) || 0), 0);

const [main] = [...names].find(([, n]) => n === "CrRendererMain") || [];
const mainTasks = tasks.get(main) || [];
const start = mainTasks.length ? mainTasks[0].ts : 0;
const mark = events.find((e) => e.name === "spall-handoff");
const handoff = mark ? mark.ts : Infinity;
const readBacks = events.filter((e) => `${e.pid}:${e.tid}` === main && e.name === "GLES2::ReadPixels"
  && e.ph === "X" && e.dur !== undefined);
const parts = [["until the hand-off", start, handoff], ["after it", handoff, Infinity]];
for (const [what, a, b] of parts) {
  const t = mainTasks.filter((e) => e.ts >= a && e.ts < b);
  if (!t.length) continue;
  const r = readBacks.filter((e) => e.ts >= a && e.ts < b);
  const span = t[t.length - 1].ts + t[t.length - 1].dur - t[0].ts;
  console.log(`page's main thread, ${what} (${ms(span)}): busy ${ms(sum(t, (e) => e.dur))}, ` +
    `${ms(sum(t, (e) => e.tdur))} on a core; ${r.length} canvas read-backs waited ` +
    `${ms(sum(r, (e) => e.dur))} (${ms(sum(r, (e) => e.tdur))} on a core), the longest ` +
    `${ms(Math.max(0, ...r.map((e) => e.dur)))}`);
}
for (const [k, n] of names) {
  if (n !== "DedicatedWorker thread") continue;
  const long = (tasks.get(k) || []).filter((e) => e.dur > 5000);
  if (!long.length) continue;
  const [a, b] = [long[0].ts, long[long.length - 1].ts + long[long.length - 1].dur];
  const t = tasks.get(k).filter((e) => e.ts >= a && e.ts < b);
  const busy = sum(t, (e) => e.dur);
  console.log(`worker ${k.split(":")[1]}: ${ms(b - a)} from its first long task to its last: busy ` +
    `${ms(busy)} (${ms(sum(t, (e) => e.tdur))} on a core), idle ${ms(b - a - busy)}, ${t.length} tasks`);
}
