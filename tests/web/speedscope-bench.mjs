// Load time of speedscope (npm `speedscope`, its built site in dist/release) on the same
// files as spall's page, in Debian's Chromium: a file picked with its file picker, from the
// picker's change to the first frame after speedscope names the profile in the page's
// title (it does once the import is done and the flame chart is set up), the median of
// RUNS (default 3) fresh pages. What tests/web/load-bench.mjs measures for spall's page.
//
// Any profile speedscope reads: `perf script` text, .cpuprofile, collapsed stacks, pprof...
//
//   npm install --prefix /tmp/ss speedscope@1.25
//   SPEEDSCOPE=/tmp/ss/node_modules/speedscope node tests/web/speedscope-bench.mjs FILE...
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { serveSite } from "./site-server.mjs";

const runs = Number(process.env.RUNS || 3);
const pkg = resolve(process.env.SPEEDSCOPE || "node_modules/speedscope");
const { server, base } = await serveSite(join(pkg, "dist/release"));
const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));

const browser = await launchChromium();
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
try {
  for (const file of process.argv.slice(2)) {
    const size = statSync(file).size;
    const times = [];
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      let failed = null;
      page.on("pageerror", (e) => { failed = String(e); });
      page.on("dialog", (d) => { failed = d.message(); d.dismiss(); });
      await page.goto(base);
      await page.waitForSelector("input[type=file]", { state: "attached" });
      const t0 = Date.now();
      await page.setInputFiles("input[type=file]", file);
      await page.waitForFunction(() => document.title.endsWith(" - speedscope"), null,
        { timeout: 600_000, polling: 50 }).catch((e) => { failed ||= String(e); });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const t = Date.now() - t0;
      if (failed) console.log(`${file}: speedscope failed after ${t} ms: ${failed}`);
      else times.push(t);
      if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });
      await page.close();
    }
    if (times.length) {
      const m = median(times);
      console.log(`${file}: speedscope ${version} ${(size / 1e6 / (m / 1e3)).toFixed(1)} MB/s, ${m} ms (${times.join(", ")})`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
