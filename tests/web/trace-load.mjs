// A Chrome performance trace of the page opening a file picked with its file picker: each
// thread's (the page's, its load worker's, the reader's, the GPU's, the compositor's) tasks
// of more than MIN ms (default 4), in ms from the pick, until the first frame of the trace
// shown, with the page's own marks. Where a load's fixed costs go (the worker's start, its
// first slice, the hand-off, the page's first frame).
//
//   node tests/web/trace-load.mjs SITE FILE
//   TRACE_OUT=trace.json ...   (also writes the trace, for DevTools or ui.perfetto.dev)
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { serveSite, watchHandoff } from "./site-server.mjs";

const [site, file] = process.argv.slice(2);
const min = Number(process.env.MIN || 4);
const { server, base } = await serveSite(resolve(site));
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base);
  await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
  if (process.env.WAIT) await page.waitForTimeout(Number(process.env.WAIT));
  const demo = await page.evaluate(() => document.body.dataset.spans);
  await page.evaluate(watchHandoff);
  await page.evaluate((demo) => {
    const d = document.body.dataset;
    new MutationObserver((ms, o) => {
      if (!["loaded", "error"].includes(d.state) || d.spans === demo) return;
      o.disconnect();
      performance.mark("spall-loaded");
      requestAnimationFrame(() => { globalThis.shown_ = performance.now(); performance.mark("spall-shown"); });
    }).observe(document.body, { attributes: true });
  }, demo);
  await browser.startTracing(page, {
    categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing",
      "v8", "v8.wasm", "toplevel", "gpu", "cc", "viz", "loading", "disabled-by-default-v8.compile"],
  });
  const t0 = await page.evaluate(() => { performance.mark("spall-pick"); return performance.now(); });
  await page.setInputFiles("#spall-file", file);
  await page.waitForFunction(() => globalThis.shown_, null, { timeout: 600_000, polling: 20 });
  const total = await page.evaluate((t0) => shown_ - t0, t0);
  await page.waitForTimeout(100);
  const buf = await browser.stopTracing();
  if (process.env.TRACE_OUT) writeFileSync(process.env.TRACE_OUT, buf);
  const events = JSON.parse(buf.toString()).traceEvents;
  const names = new Map();
  for (const e of events) {
    if (e.ph === "M" && e.name === "thread_name") names.set(`${e.pid}:${e.tid}`, e.args.name);
  }
  const pick = events.find((e) => e.name === "spall-pick");
  const zero = pick ? pick.ts : Math.min(...events.filter((e) => e.ts).map((e) => e.ts));
  const ms = (us) => ((us - zero) / 1000).toFixed(1);
  console.log(`${file}: shown ${total.toFixed(0)} ms after the pick`);
  for (const e of events) {
    if (e.cat === "blink.user_timing" && e.name.startsWith("spall-")) console.log(`  mark ${e.name} at ${ms(e.ts)}`);
  }
  // Top-level tasks (no enclosing X event on their thread) and their longest child.
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== "X" || !(e.dur >= min * 1000) || e.ts < zero) continue;
    const k = `${e.pid}:${e.tid}`;
    if (!byThread.has(k)) byThread.set(k, []);
    byThread.get(k).push(e);
  }
  for (const [k, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    console.log(`${names.get(k) || k}:`);
    let end = -1;
    for (const e of list) {
      const top = e.ts >= end;
      if (top) end = e.ts + e.dur;
      const what = e.args?.data?.functionName || e.args?.data?.url || e.args?.data?.type || "";
      console.log(`  ${top ? "" : "  "}${ms(e.ts)} +${(e.dur / 1000).toFixed(1)} ${e.name} ${what}`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
