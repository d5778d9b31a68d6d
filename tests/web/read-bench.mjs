// What reading a picked File costs the browser, by the way it is read, with no decode: a
// worker reads the file in 8 MB pieces and drops them, and the CPU of Chromium's processes
// (from /proc) from the pick to the last piece is printed beside the time, RUNS (default
// 3) rounds of each way. The ways: `slice` (File.slice().arrayBuffer(), one at a time),
// `sync` (FileReaderSync on slices), `stream` (File.stream()'s default reader, the pieces
// as it gives them), `byob` (File.stream() with a reader that fills 8 MB buffers: what
// web/worker.js reads with) and `whole` (File.arrayBuffer()).
//
//   node tests/web/read-bench.mjs FILE [WAY...]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { cpuByKind } from "./proc-cpu.mjs";
import { serveSite } from "./site-server.mjs";

const [file, ...asked] = process.argv.slice(2);
const ways = asked.length ? asked : ["slice", "sync", "stream", "byob", "whole"];
const runs = Number(process.env.RUNS || 3);

const site = mkdtempSync(join(tmpdir(), "spall-read-"));
writeFileSync(join(site, "index.html"), `<!doctype html><input type=file id=f><script type=module>
const f = document.getElementById("f");
f.addEventListener("change", () => {
  const w = new Worker("w.js"), t0 = performance.now();
  w.onmessage = ({ data }) => { globalThis.result_ = { ms: performance.now() - t0, ...data }; w.terminate(); };
  w.postMessage({ file: f.files[0], way: new URLSearchParams(location.search).get("way") });
});
</script>`);
writeFileSync(join(site, "w.js"), `onmessage = async ({ data: { file, way } }) => {
  const S = 8 << 20;
  let bytes = 0, pieces = 0;
  const got = (n) => { bytes += n; pieces++; };
  if (way === "slice") {
    for (let at = 0; at < file.size; at += S) got((await file.slice(at, at + S).arrayBuffer()).byteLength);
  } else if (way === "sync") {
    const r = new FileReaderSync();
    for (let at = 0; at < file.size; at += S) got(r.readAsArrayBuffer(file.slice(at, at + S)).byteLength);
  } else if (way === "stream") {
    const r = file.stream().getReader();
    for (;;) { const { value, done } = await r.read(); if (done) break; got(value.length); }
  } else if (way === "byob") {
    const r = file.stream().getReader({ mode: "byob" });
    for (let end = false; !end;) {
      let buf = new ArrayBuffer(S), filled = 0;
      while (filled < S) {
        const { value, done } = await r.read(new Uint8Array(buf, filled, S - filled));
        if (value) (buf = value.buffer), (filled += value.length);
        if (done) { end = true; break; }
      }
      if (filled) got(filled);
    }
  } else if (way === "whole") {
    got((await file.arrayBuffer()).byteLength);
  }
  postMessage({ bytes, pieces });
};`);
const { server, base } = await serveSite(site);
const browser = await launchChromium();

try {
  for (let round = 0; round < runs; round++) {
    for (const way of ways) {
      const page = await browser.newPage();
      await page.goto(`${base}?way=${way}`);
      await page.waitForTimeout(300);
      const c0 = cpuByKind();
      await page.setInputFiles("#f", file);
      await page.waitForFunction(() => globalThis.result_, null, { timeout: 120_000, polling: 10 });
      const c1 = cpuByKind();
      const r = await page.evaluate(() => result_);
      const ms = (k) => Math.round(((c1[k] || 0) - (c0[k] || 0)) * 1000);
      console.log(`${way}: ${r.ms.toFixed(0)} ms, ${r.bytes} bytes in ${r.pieces} pieces; CPU browser ` +
        `${ms("browser")} ms, renderer ${ms("renderer")} ms (the worker's thread included)`);
      await page.close();
    }
  }
} finally {
  await browser.close();
  server.close();
}
