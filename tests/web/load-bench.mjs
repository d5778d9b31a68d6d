// How fast the web page opens a trace picked with its file picker, and how well it keeps
// drawing meanwhile: from the picker's change to the first frame of the loaded trace
// shown (the browser's next frame after the one that set `data-state="loaded"` with the
// file's spans; the module sets it as it draws), in Debian's Chromium, the median of RUNS
// (default 3) fresh pages. While loading, a requestAnimationFrame counter on the page
// gives the frames per second while the worker decodes, and the longest gap between two
// frames (the page's thread blocked for that long: the hand-off, where the page takes the
// model and indexes it).
//
//   scripts/build-web.sh target/web-site
//   node tests/web/load-bench.mjs target/web-site FILE...
//   NO_WORKER=1 node tests/web/load-bench.mjs ...   (the page's own thread: ?worker=0)
//   node tests/web/load-bench.mjs SITE_A,SITE_B FILE...   (two builds, run by run)
//   node tests/web/load-bench.mjs SITE:isolated,SITE FILE...   (served with COOP/COEP: the
//     load worker's threads; against the same site not isolated, its single worker)
//   node tests/web/load-bench.mjs 'SITE:isolated?threads=2' FILE...   (a query for the page)
//   node tests/web/load-bench.mjs 'SITE,SITE?simd=0' FILE...   (the SIMD loader against
//     the page's scalar module)
//   SETTLE=MS ...   (the wait between the demo shown and the pick; default 1000)
//   JS_FLAGS="--no-wasm-bounds-checks" ...   (flags for V8, in every page: compare its settings)
//   EACH=1 ...   (each run's line too: when the picker's `change` event came (playwright's
//     and the browser's part, the same for any page), the worker said `started`, its first progress,
//     the hand-off, the frame that set data-state="loaded" and the one after it (shown),
//     and where the longest frame gap was)
//   THREADS=1 ...   (each run's CPU time of Chromium's threads from the pick to the frame
//     shown, by process kind and thread name, and in brackets their time runnable but
//     waiting for a core, from /proc: what the load costs beside the worker's thread, and
//     how long the worker waited for a core the others held; THREADS=each: by thread)
//
// Prints one line per file (and site, when there are several): MB/s, the time, the frame
// rate while loading, when the worker's model reached the page (its decode) and the time on
// the page after it (the hand-off), and the path the page used (`worker`, or `page` for the
// fallback), its threads, whether its loader was built with SIMD, whether its worker was
// started ahead of the file (`data-ahead`) and in how many turns the page took the model
// (`data-take-turns`; `-` for a site without them). Several sites take
// turns, run by run, so that the machine's load moves them alike.
import { statSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { chromiumThreads } from "./proc-cpu.mjs";
import { serveSite, watchHandoff } from "./site-server.mjs";

const runs = Number(process.env.RUNS || 3);
const settle = Number(process.env.SETTLE ?? 1000);
const sites = process.argv[2].split(",");
const files = process.argv.slice(3);

// SITE[:isolated][?QUERY]
const served = await Promise.all(sites.map(async (spec) => {
  const [s, query] = spec.split("?");
  const isolated = s.endsWith(":isolated");
  const site = await serveSite(resolve(isolated ? s.slice(0, -":isolated".length) : s), { isolated });
  return { ...site, query: query || "" };
}));

const browser = await launchChromium();

// What each thread took between two snapshots, summed by kind and name (THREADS=each: by
// thread), largest first: ms on a core, and in brackets ms runnable but waiting for one.
const threadCpu = (a, b) => {
  const by = new Map();
  for (const [k, t] of b) {
    const ran = t.ran - (a.get(k)?.ran ?? 0), waited = t.waited - (a.get(k)?.waited ?? 0);
    if (ran < 0.005) continue;
    const key = process.env.THREADS === "each" ? `${t.kind} ${k}: ${t.name}` : `${t.kind}: ${t.name}`;
    const s = by.get(key) || { ran: 0, waited: 0 };
    by.set(key, { ran: s.ran + ran, waited: s.waited + waited });
  }
  const total = [...by.values()].reduce((x, y) => x + y.ran, 0) * 1000;
  const ms = (x) => (x * 1000).toFixed(0);
  const text = `CPU ${total.toFixed(0)} ms: ` + [...by].sort((x, y) => y[1].ran - x[1].ran)
    .map(([k, s]) => `${k} ${ms(s.ran)} (${ms(s.waited)})`).join(", ");
  return { total, text };
};
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
try {
  for (const file of files) {
    const size = statSync(file).size;
    const results = sites.map(() => []);
    for (let i = 0; i < runs; i++) for (const [k, { base, query }] of served.entries()) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      page.on("pageerror", (e) => console.log(`page error: ${e}`));
      if (process.env.CONSOLE) page.on("console", (m) => console.log(`  console: ${m.text()}`));
      // The demo first: the module is compiled and the page drawing before the clock starts.
      const q = [process.env.NO_WORKER ? "worker=0" : "", query].filter(Boolean).join("&");
      await page.goto(q ? `${base}?${q}` : base);
      await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
      // A second (SETTLE ms) before the pick, as a person picks a file no sooner: the load
      // worker the page starts ahead has its module started and warmed by then.
      await page.waitForTimeout(settle);
      const demo = await page.evaluate(() => document.body.dataset.spans);
      await page.evaluate(watchHandoff);
      // The end: the frame after the one that set data-state="loaded" with the new
      // spans (the module writes it as it draws, before the browser shows the frame).
      await page.evaluate((demo) => {
        globalThis.frames_ = [];
        const tick = (t) => { frames_.push(t); requestAnimationFrame(tick); };
        requestAnimationFrame(tick);
        const d = document.body.dataset;
        // The times of the worker's `started` (data-threads set), of its first progress
        // (some bytes done) and of the frame that set data-state="loaded".
        globalThis.at_ = {};
        document.querySelector("#spall-file").addEventListener("change", () => {
          at_.change ??= performance.now();
        }, { capture: true });
        const show = globalThis.spall_progress;
        globalThis.spall_progress = (...a) => {
          if (a[0] > 0) at_.progress ??= performance.now();
          return show(...a);
        };
        new MutationObserver((ms, o) => {
          if (ms.some((m) => m.attributeName === "data-threads")) at_.started ??= performance.now();
          if (!["loaded", "error"].includes(d.state) || d.spans === demo) return;
          o.disconnect();
          at_.loaded = performance.now();
          requestAnimationFrame(() => { globalThis.shown_ = performance.now(); });
        }).observe(document.body, { attributes: true });
      }, demo);
      const t0 = await page.evaluate(() => performance.now());
      const cpu0 = process.env.THREADS && chromiumThreads();
      await page.setInputFiles("#spall-file", file);
      await page.waitForFunction(() => globalThis.shown_, null, { timeout: 600_000, polling: 20 });
      const cpu = cpu0 && threadCpu(cpu0, chromiumThreads());
      if (cpu) console.log(`  ${file} [${sites[k]}]: ${cpu.text}`);
      const r = await page.evaluate((t0) => {
        const end = shown_;
        // Until the hand-off (the worker's decode), and all of it.
        const h = globalThis.handoff_ || end;
        const f = frames_.filter((t) => t >= t0 && t <= end);
        const before = f.filter((t) => t <= h);
        let gap = 0, gapAt = 0;
        for (let i = 1; i < f.length; i++) {
          if (f[i] - f[i - 1] > gap) [gap, gapAt] = [f[i] - f[i - 1], f[i - 1] - h];
        }
        const d = document.body.dataset;
        return { ms: end - t0, fps: before.length / ((h - t0) / 1000), gap, gapAt, page: end - h,
          spans: d.spans, state: d.state, loader: d.loader, threads: d.threads, simd: d.simd,
          ahead: d.ahead, turns: d.takeTurns, error: d.error, handoff: h - t0,
          change: (at_.change ?? NaN) - t0, started: (at_.started ?? NaN) - t0,
          progress: (at_.progress ?? NaN) - t0,
          loaded: at_.loaded - h };
      }, t0);
      r.cpu = cpu && cpu.total;
      if (r.state !== "loaded") console.log(`${file}: ${r.state} ${r.error}`);
      if (process.env.EACH) console.log(`  ${file} [${sites[k]}]: ${r.ms.toFixed(0)} ms; the picker's ` +
        `change after ${r.change.toFixed(0)} ms, the worker's started after ${r.started.toFixed(0)} ms, ` +
        `its first progress ${r.progress.toFixed(0)} ms, the ` +
        `hand-off ${r.handoff.toFixed(0)} ms, then loaded +${r.loaded.toFixed(0)} ms, shown +${r.page.toFixed(0)} ms; ` +
        `longest frame gap ${r.gap.toFixed(0)} ms at ${r.gapAt.toFixed(0)} ms from the hand-off`);
      results[k].push(r);
      await page.close();
    }
    for (const [k, site] of sites.entries()) {
      const rs = results[k];
      const ms = median(rs.map((r) => r.ms));
      const fps = median(rs.map((r) => r.fps));
      const gap = median(rs.map((r) => r.gap));
      const page = median(rs.map((r) => r.page));
      const decode = median(rs.map((r) => r.ms - r.page));
      console.log(`${file}${sites.length > 1 ? ` [${site}]` : ""}: ${(size / 1e6 / (ms / 1000)).toFixed(0)} MB/s, ` +
        `${ms.toFixed(0)} ms (${rs.map((r) => r.ms.toFixed(0)).join(", ")}), ${fps.toFixed(0)} frames/s ` +
        `while the worker decodes (its model after ${decode.toFixed(0)} ms), then ${page.toFixed(0)} ms ` +
        `on the page (longest frame gap ${gap.toFixed(0)} ms), ${rs[0].spans} spans, loader ${rs[0].loader}, ` +
        `threads ${rs[0].threads}, simd ${rs[0].simd}, worker started ahead ${rs[0].ahead ?? "-"}, ` +
        `taken in ${rs[0].turns ?? "-"} turns, ` +
        (process.env.THREADS ? `CPU ${median(rs.map((r) => r.cpu)).toFixed(0)} ms (median), ` : "") +
        `load average ${loadavg()[0].toFixed(1)}`);
    }
  }
} finally {
  await browser.close();
  for (const { server } of served) server.close();
}
