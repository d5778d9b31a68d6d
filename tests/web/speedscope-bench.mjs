// Load time of speedscope (npm `speedscope`, its built site in dist/release) on the same
// files as spall's page, in Debian's Chromium: a file picked with its file picker, from the
// picker's change to the first frame after speedscope names the profile in the page's
// title (it does once the import is done and the flame chart is set up), the median of
// RUNS (default 3) fresh pages. What tests/web/load-bench.mjs measures for spall's page.
//
// Any profile speedscope reads: `perf script` text, .cpuprofile, collapsed stacks, pprof...
// With PAGE=SITE (scripts/build-web.sh's OUTDIR), each run of speedscope is followed by one
// of spall's page on the same file (from the picker's change to the frame after the one that
// set data-state="loaded", as tests/web/load-bench.mjs times it), so that the machine's load
// moves both alike, and the line gives both medians and their ratio, with the load average.
//
//   npm install --prefix /tmp/ss speedscope@1.25
//   SPEEDSCOPE=/tmp/ss/node_modules/speedscope node tests/web/speedscope-bench.mjs FILE...
//   PAGE=target/web-site SPEEDSCOPE=... node tests/web/speedscope-bench.mjs FILE...
import { readFileSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { serveSite } from "./site-server.mjs";

const runs = Number(process.env.RUNS || 3);
// The wait between a page shown and the pick (a person picks a file no sooner), both sites.
const settle = Number(process.env.SETTLE ?? 1000);
const pkg = resolve(process.env.SPEEDSCOPE || "node_modules/speedscope");
const { server, base } = await serveSite(join(pkg, "dist/release"));
const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));

const spall = process.env.PAGE ? await serveSite(resolve(process.env.PAGE)) : null;

const browser = await launchChromium();

// spall's page: from the picker's change to the frame after the one that set
// data-state="loaded" with the file's spans (the demo's first, so the module is compiled
// and drawing, and the load worker started ahead, before the clock starts).
async function spallRun(file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(spall.base);
  await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
  // As tests/web/load-bench.mjs: SETTLE ms before the pick, as for speedscope.
  await page.waitForTimeout(settle);
  await page.evaluate(() => {
    const d = document.body.dataset, demo = d.spans;
    new MutationObserver((ms, o) => {
      if (!["loaded", "error"].includes(d.state) || d.spans === demo) return;
      o.disconnect();
      requestAnimationFrame(() => { globalThis.shown_ = performance.now(); });
    }).observe(document.body, { attributes: true });
  });
  const t0 = await page.evaluate(() => performance.now());
  await page.setInputFiles("#spall-file", file);
  await page.waitForFunction(() => globalThis.shown_, null, { timeout: 600_000, polling: 20 });
  const r = await page.evaluate((t0) => ({ ms: shown_ - t0, state: document.body.dataset.state,
    error: document.body.dataset.error }), t0);
  await page.close();
  if (r.state !== "loaded") console.log(`${file}: spall's page: ${r.state} ${r.error}`);
  return r.state === "loaded" ? Math.round(r.ms) : null;
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
try {
  for (const file of process.argv.slice(2)) {
    const size = statSync(file).size;
    const times = [], ours = [];
    for (let i = 0; i < runs; i++) {
      if (spall) {
        const t = await spallRun(file);
        if (t !== null) ours.push(t);
      }
      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      let failed = null;
      page.on("pageerror", (e) => { failed = String(e); });
      page.on("dialog", (d) => { failed = d.message(); d.dismiss(); });
      await page.goto(base);
      await page.waitForSelector("input[type=file]", { state: "attached" });
      await page.waitForTimeout(settle);
      const t0 = Date.now();
      await page.setInputFiles("input[type=file]", file);
      await page.waitForFunction(() => document.title.endsWith(" - speedscope"), null,
        { timeout: 600_000, polling: 50 }).catch((e) => { failed ||= String(e); });
      // A page that ran out of memory crashed: a failed run.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
        .catch((e) => { failed ||= String(e); });
      const t = Date.now() - t0;
      if (failed) console.log(`${file}: speedscope failed after ${t} ms: ${failed}`);
      else times.push(t);
      if (process.env.SHOT && !failed) await page.screenshot({ path: process.env.SHOT });
      await page.close().catch(() => {});
    }
    const m = times.length ? median(times) : null;
    if (m !== null) console.log(`${file}: speedscope ${version} ${(size / 1e6 / (m / 1e3)).toFixed(1)} MB/s, ${m} ms (${times.join(", ")})`);
    if (ours.length) {
      const o = median(ours);
      console.log(`${file}: spall's page ${o} ms (${ours.join(", ")})` +
        `${m !== null ? `: ${(m / o).toFixed(1)}x` : ""}, load average ${loadavg()[0].toFixed(1)}`);
    }
  }
} finally {
  await browser.close();
  server.close();
  spall?.server.close();
}
