// The web viewer end to end, in headless Chromium (Debian's chromium, driven by
// playwright-core): a corpus trace through ?trace=, the canvas showing a timeline, wheel
// zoom, a click selecting a span and changing the details panel, SQL through ?sql= and the
// page's spall.run_sql, a hostile file through the file picker and a missing URL both shown
// as errors, a dropped .spall and Perfetto protobuf file, HiDPI, the load worker (files
// read in slices that records straddle, by the SIMD loader and by the page's module with
// ?simd=0, cancelling a load by opening another), compare mode
// (?trace=&compare=, the second file picker, a Shift-drop), sampling profiles streamed by
// the worker and drawn, and no console error anywhere.
// The same site served cross-origin isolated (COOP/COEP) loads in the threaded module.
//
//   node tests/web/e2e.mjs SITE_DIR            (SITE_DIR from scripts/build-web.sh)
//   node tests/web/e2e.mjs SITE_DIR --bench FILE...   (load times; docs/PERFORMANCE.md)
//
// Traces are served from the same origin under /traces/: the repository's tests/fixtures
// and, when present, ../shared/corpus.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { join, resolve, extname, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const site = resolve(process.argv[2] || join(repo, "target/web-site"));
const bench = process.argv.indexOf("--bench");
const roots = {
  fixtures: join(repo, "tests/fixtures"),
  corpus: resolve(repo, "../shared/corpus"),
  // --bench only: any file, by its absolute path.
  ...(bench > 0 ? { files: "/" } : {}),
};
const types = {
  ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm",
  ".json": "application/json",
};

// A static server: the site at /, traces at /traces/{fixtures,corpus,files}/...; `isolated`:
// with the headers that make the page cross-origin isolated (so the load worker's threads).
const serve = (isolated) => createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const generated = path.startsWith("/chunked/") && chunked.get(path.slice("/chunked/".length));
  if (generated) return serveChunked(res, generated);
  let file = join(site, path === "/" ? "index.html" : path);
  const m = path.match(/^\/traces\/(\w+)\/(.*)$/);
  if (m && roots[m[1]]) file = join(roots[m[1]], m[2]);
  try {
    if (!(await stat(file)).isFile()) throw new Error("not a file");
    const iso = isolated ? { "cross-origin-opener-policy": "same-origin",
      "cross-origin-embedder-policy": "require-corp" } : {};
    res.writeHead(200, { ...iso, "content-type": types[extname(file)] || "application/octet-stream" });
    res.end(await readFile(file));
  } catch {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found");
  }
});
// Bodies served at /chunked/NAME in 64 KiB writes with no Content-Length (a chunked
// response, as a compressing server's), so the page does not know their size.
const chunked = new Map();
const serveChunked = async (res, body) => {
  res.writeHead(200, { "content-type": "application/json" });
  for (let at = 0; at < body.length; at += 64 << 10) {
    if (!res.write(body.subarray(at, at + (64 << 10)))) await new Promise((r) => res.once("drain", r));
  }
  res.end();
};
const server = serve(false), isoServer = serve(true);
await new Promise((r) => server.listen(0, "127.0.0.1", r));
await new Promise((r) => isoServer.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;
const isoBase = `http://127.0.0.1:${isoServer.address().port}`;

const launch = (extra = []) => chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-unsafe-swiftshader", ...extra],
});
const browser = await launch();
// HiDPI needs a real device scale: emulation alone changes devicePixelRatio but not the
// device pixels ResizeObserver reports.
const hidpi = bench > 0 ? null : await launch(["--force-device-scale-factor=2"]);

let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures++;
};

// `expected`: a resource whose failure to load is the point of the test.
async function newPage(scale = 1, expected = null) {
  const context = await (scale === 1 ? browser : hidpi).newContext({
    viewport: { width: 1280, height: 720 }, deviceScaleFactor: scale,
  });
  const page = await context.newPage();
  page.errors = [];
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    if (expected && (m.location().url || "").includes(expected)) return;
    page.errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => page.errors.push(String(e)));
  return page;
}

const state = (page) => page.evaluate(() => ({ ...document.body.dataset }));

async function waitState(page, want, timeout = 120_000) {
  await page.waitForFunction((w) => ["loaded", "error", "fatal"].includes(document.body.dataset.state)
    && (w !== "loaded" || document.body.dataset.state === "loaded"), want, { timeout })
    .catch(() => {});
  return state(page);
}

// Pixels of the page, decoded by the browser itself (no PNG library here). The RGBA bytes
// come back as base64: as an array of numbers (4 million of them, JSON over the protocol)
// each call took half a minute.
async function pixels(page) {
  const png = (await page.screenshot()).toString("base64");
  const img = await page.evaluate(async (b64) => {
    const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
    const bmp = await createImageBitmap(blob);
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const g = c.getContext("2d");
    g.drawImage(bmp, 0, 0);
    const data = g.getImageData(0, 0, bmp.width, bmp.height).data;
    let bin = "";
    for (let i = 0; i < data.length; i += 0x8000) bin += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return { w: bmp.width, h: bmp.height, data: btoa(bin) };
  }, png);
  return { ...img, data: Buffer.from(img.data, "base64") };
}

// Colours in a region and the share of it that is not the most common colour.
function stats(img, x0, y0, x1, y1) {
  const counts = new Map();
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
    const i = (y * img.w + x) * 4;
    const k = (img.data[i] << 16) | (img.data[i + 1] << 8) | img.data[i + 2];
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  const total = (x1 - x0) * (y1 - y0);
  const top = Math.max(...counts.values());
  return { colours: counts.size, busy: 1 - top / total, background: [...counts].find(([, n]) => n === top)[0] };
}

// Pixels right of x0 (the side panel) that differ between two screenshots.
function changedRight(img, before, x0) {
  let n = 0;
  for (let y = 0; y < img.h; y++) for (let x = x0; x < img.w; x++) {
    const i = (y * img.w + x) * 4;
    if (img.data[i] !== before.data[i] || img.data[i + 1] !== before.data[i + 1]) n++;
  }
  return n;
}

// A point inside a span: the middle of the first run of `n` pixels of one saturated colour
// at or below y0 (headers, rows' bands and folded async groups' merged bars are greys).
function findSpan(img, x1, bg, y0 = 180, n = 10) {
  for (let y = y0; y < img.h - 20; y += 3) {
    let run = 0, last = -1;
    for (let x = 10; x < x1; x++) {
      const i = (y * img.w + x) * 4;
      const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
      const k = (r << 16) | (g << 8) | b;
      const saturated = Math.max(r, g, b) - Math.min(r, g, b) > 40;
      run = k === last && k !== bg && saturated ? run + 1 : 0;
      last = k;
      if (run === n - 1) return { x: x - Math.floor(n / 2), y };
    }
  }
  return null;
}

async function e2e() {
  const corpus = existsSync(join(roots.corpus, "real/catapult_lthi_cats.json.gz"));
  if (!corpus && process.env.SPALL_REQUIRE_CORPUS) {
    check(false, "the corpus (../shared/corpus) is required (SPALL_REQUIRE_CORPUS)");
    return;
  }
  // A real Chrome trace, gzip: decompressed and decoded in steps.
  const trace = corpus ? "corpus/real/catapult_lthi_cats.json.gz" : "fixtures/real/catapult_big_trace.json";
  if (!corpus) console.log("note: ../shared/corpus is missing; using a fixture instead");
  const page = await newPage();
  await page.goto(`${base}/?trace=traces/${trace}`);
  let s = await waitState(page, "loaded");
  check(s.state === "loaded", `?trace=${trace} loads (state ${s.state} ${s.error || ""})`);
  check(Number(s.spans) > 1000, `it has spans (${s.spans})`);
  check(s.loader === "worker", `it was loaded by the worker (loader ${s.loader})`);
  const panelX = 1280 - 530; // the side panel takes about 520 points on the right
  // egui may still be laying out on the first frames: let it settle.
  await page.waitForTimeout(500);
  // The first screen shows the work (docs/VIEWER.md): a thread's spans in the top half.
  const first = Number((await state(page)).firstSpans);
  check(first > 0 && first < 360, `a thread's spans start in the top half of the page (y ${first})`);
  let img = await pixels(page);
  const tl = stats(img, 0, 120, panelX, 700);
  check(tl.colours > 20 && tl.busy > 0.05, `the canvas shows a timeline (${tl.colours} colours, ${(tl.busy * 100).toFixed(1)}% drawn)`);

  // Wheel zoom at the middle of the timeline.
  const [a0, b0] = s.view.split(" ").map(Number);
  await page.mouse.move(panelX / 2, 400);
  await page.mouse.wheel(0, -600);
  await page.waitForFunction((v) => document.body.dataset.view !== v, s.view, { timeout: 10_000 }).catch(() => {});
  s = await state(page);
  const [a1, b1] = s.view.split(" ").map(Number);
  check(b1 - a1 < (b0 - a0) * 0.8, `the wheel zooms in (${b0 - a0} ns to ${b1 - a1} ns visible)`);

  // Click a span: it is selected, and the details panel changes. The threads come first,
  // and the top one's spans are a few pixels wide at this zoom.
  img = await pixels(page);
  const panelBefore = img;
  const at = findSpan(img, panelX - 20, tl.background, first > 0 ? Math.round(first) + 4 : 180, 2);
  check(at !== null, `a span is on screen${at ? ` at ${at.x},${at.y}` : ""}`);
  if (at) {
    await page.mouse.click(at.x, at.y);
    await page.waitForFunction(() => document.body.dataset.selected, null, { timeout: 10_000 }).catch(() => {});
    s = await state(page);
    check(!!s.selected, `a click selects it (${JSON.stringify(s.selected)})`);
    await page.waitForTimeout(300);
    img = await pixels(page);
    const changed = changedRight(img, panelBefore, panelX + 20);
    check(changed > 500, `the details panel shows it (${changed} pixels changed)`);
  }

  // Keyboard: F fits the selection... and W zooms; the canvas has focus.
  const before = (await state(page)).view;
  await page.keyboard.press("w");
  await page.waitForFunction((v) => document.body.dataset.view !== v, before, { timeout: 5_000 }).catch(() => {});
  check((await state(page)).view !== before, "W zooms (keyboard reaches the canvas)");

  // Ctrl+S downloads the canvas as a PNG; T's theme is kept in localStorage.
  const download = page.waitForEvent("download", { timeout: 10_000 }).catch(() => null);
  await page.keyboard.press("Control+s");
  const png = await download;
  check(!!png && png.suggestedFilename().endsWith(".png"),
    `Ctrl+S downloads a PNG (${png ? png.suggestedFilename() : "no download"})`);
  await page.keyboard.press("t");
  await page.waitForFunction(() => (localStorage.getItem("spall-settings") || "").includes("theme"),
    null, { timeout: 5_000 }).catch(() => {});
  const kept = await page.evaluate(() => localStorage.getItem("spall-settings"));
  check(/"theme":"(light|dark)"/.test(kept || ""), `T's theme is kept in localStorage (${kept})`);

  // N drops a marker at the mouse (still over the timeline); it and the view are kept for
  // this trace, by its name and size, and are back when the page is opened again (after
  // the hostile file).
  await page.keyboard.press("n");
  await page.waitForFunction(() => document.body.dataset.markers === "1", null, { timeout: 5_000 }).catch(() => {});
  check((await state(page)).markers === "1", "N adds a marker");

  // A hostile file through the file picker: an error on the page, the old trace kept.
  await page.setInputFiles("#spall-file", {
    name: "hostile.json", mimeType: "application/json",
    buffer: Buffer.from("<html><body>not a trace</body></html>\n".repeat(50)),
  });
  await page.waitForFunction(() => document.body.dataset.state === "error", null, { timeout: 30_000 }).catch(() => {});
  s = await state(page);
  check(s.state === "error" && s.error.length > 10, `a hostile file shows an error (${JSON.stringify(s.error)})`);
  img = await pixels(page);
  check(stats(img, 0, 120, panelX, 700).colours > 20, "the canvas is not blank after the error");
  check(page.errors.length === 0, `no console errors (${page.errors.join(" | ")})`);
  // The error widens the side panel over a few frames, and the view's end with it: the
  // view left is the one once it has stopped moving.
  for (let i = 0, was = null; i < 20; i++) {
    const v = (await state(page)).view;
    if (v === was) break;
    was = v;
    await new Promise((r) => setTimeout(r, 500));
  }
  const left = await state(page);
  await page.goto(`${base}/?trace=traces/${trace}`);
  s = await waitState(page, "loaded");
  check(s.markers === "1", `the marker is back when the trace is opened again (${s.markers} marker(s))`);
  // (The side panel settles its width over the first frames, and again when the worker's
  // statistics arrive; the view is shown again once it has.)
  await page.waitForFunction(() => document.body.dataset.stats === "ready", null, { timeout: 30_000 }).catch(() => {});
  await page.waitForFunction((v) => document.body.dataset.view === v, left.view, { timeout: 15_000 }).catch(() => {});
  s = await state(page);
  // Its start exactly; its end within 1% of its length, as the panel's width may settle a
  // few pixels apart from the error's (a view not restored is the whole trace's).
  const [shown0, shown1] = s.view.split(" ").map(Number);
  const [saved0, saved1] = left.view.split(" ").map(Number);
  check(shown0 === saved0 && Math.abs(shown1 - saved1) <= (saved1 - saved0) / 100, `and so is the view (${s.view}; was ${left.view})`);
  await page.context().close();

  // SQL (SQLite compiled to wasm32): ?sql= runs once the trace is loaded; the count of span
  // slices (kind = 'span': instants and async slices are slices too) must be the model's own
  // count of spans.
  const q = await newPage();
  await q.goto(`${base}/?trace=traces/${trace}&sql=${encodeURIComponent("SELECT COUNT(*) AS n FROM slice WHERE kind = 'span'")}`);
  s = await waitState(q, "loaded");
  await q.waitForFunction(() => ["done", "error"].includes(document.body.dataset.sql), null, { timeout: 30_000 }).catch(() => {});
  s = await state(q);
  check(s.sql === "done" && s.sqlRows === "1" && s.sqlFirst === s.spans,
    `?sql= counts the slices (${s.sql} ${s.sqlRows} row(s): ${s.sqlFirst}; the trace has ${s.spans} spans) ${s.sqlError || ""}`);
  await q.waitForTimeout(300);
  const sqlBefore = await pixels(q);
  await q.evaluate(() => spall.run_sql("SELECT no_such_column FROM slice"));
  await q.waitForFunction(() => document.body.dataset.sql === "error", null, { timeout: 10_000 }).catch(() => {});
  s = await state(q);
  check(/no such column/.test(s.sqlError || ""), `a bad query shows SQLite's error (${JSON.stringify(s.sqlError)})`);
  await q.waitForTimeout(300);
  const sqlChanged = changedRight(await pixels(q), sqlBefore, panelX + 20);
  check(sqlChanged > 200, `the SQL section shows it (${sqlChanged} pixels changed)`);
  check(q.errors.length === 0, `no console errors (${q.errors.join(" | ")})`);
  await q.context().close();

  // The page's SQL answers as trace_processor does: every parity query recorded for
  // catapult_big (tests/fixtures/sql-parity), its rows as one JSON cell.
  const parity = JSON.parse(await readFile(join(repo, "tests/fixtures/sql-parity/expected/catapult_big.json"), "utf8"));
  const pq = await newPage();
  await pq.goto(`${base}/?trace=traces/fixtures/${parity.trace.replace(/^tests\/fixtures\//, "")}`);
  s = await waitState(pq, "loaded");
  const sortedRows = (rows) => rows.map((r) => JSON.stringify(r)).sort();
  const sameRows = (sql, got, want) => {
    const [g, w] = /ORDER BY/i.test(sql) ? [got.map((r) => JSON.stringify(r)), want.map((r) => JSON.stringify(r))]
      : [sortedRows(got), sortedRows(want)];
    return g.length === w.length && g.every((r, i) => r === w[i]
      || JSON.parse(r).every((v, j) => v === JSON.parse(w[i])[j]
        || (typeof v === "number" && Math.abs(v - JSON.parse(w[i])[j]) <= 1e-9 * Math.max(1, Math.abs(v)))));
  };
  let asked = 0;
  const differ = [];
  for (const { name, sql, columns, rows } of parity.queries) {
    if (!rows || rows.length === 0) continue;
    const cols = columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(", ");
    // Numbered, so that the answer shown is this query's.
    const tag = `${asked}:`;
    const digest = `SELECT '${tag}' || json_group_array(json_array(${cols})) AS rows FROM (${sql})`;
    await pq.evaluate((q) => spall.run_sql(q), digest);
    await pq.waitForFunction((t) => document.body.dataset.sql === "error" || (document.body.dataset.sql === "done"
      && document.body.dataset.sqlFirst.startsWith(t)), tag, { timeout: 20_000 }).catch(() => {});
    const d = await state(pq);
    asked++;
    let got = null;
    try { got = JSON.parse((d.sqlFirst || "").slice(tag.length)); } catch { /* reported below */ }
    if (d.sql !== "done" || !got || !sameRows(sql, got, rows)) differ.push(`${name}: ${d.sqlError || (d.sqlFirst || "").slice(0, 200)}`);
  }
  check(asked >= 20 && differ.length === 0,
    `the page's SQL gives trace_processor's rows for ${asked - differ.length} of ${asked} parity queries on ${parity.trace} ${differ.join(" | ")}`);
  check(pq.errors.length === 0, `no console errors (${pq.errors.join(" | ")})`);
  await pq.context().close();

  // A ?trace= URL that is not there, at twice the pixel density.
  const hi = await newPage(2, "no-such-trace.json");
  await hi.goto(`${base}/?trace=traces/fixtures/no-such-trace.json`);
  s = await waitState(hi, "error", 30_000);
  check(s.state === "error" && /404/.test(s.error), `a missing ?trace= shows the server's answer (${JSON.stringify(s.error)})`);
  const size = await hi.evaluate(() => {
    const c = document.getElementById("spall-canvas");
    return [c.width, c.clientWidth, devicePixelRatio];
  });
  check(size[0] === size[1] * 2, `HiDPI: the canvas has ${size[0]} pixels for ${size[1]} CSS pixels at devicePixelRatio ${size[2]}`);
  // The binary format, dropped on the page (a real .spall v3 file).
  const bytes = await readFile(join(roots.fixtures, "spall/odingengine_v3.spall"));
  await hi.evaluate(async (b64) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([data], "odingengine_v3.spall"));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, bytes.toString("base64"));
  await hi.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 }).catch(() => {});
  s = await state(hi);
  check(s.state === "loaded" && Number(s.spans) > 0, `a dropped .spall file loads (${s.spans} spans)`);
  // Perfetto protobuf, dropped uncompressed as a recorder writes it (Chromium 148's startup
  // trace: 11,786 spans by spall-cli info).
  const pf = gunzipSync(await readFile(join(roots.fixtures, "real/chromium148_startup.pftrace.gz")));
  await hi.evaluate(async (b64) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([data], "chromium148_startup.pftrace"));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, pf.toString("base64"));
  await hi.waitForFunction((before) => ["loaded", "error"].includes(document.body.dataset.state)
    && document.body.dataset.spans !== before, s.spans, { timeout: 60_000 }).catch(() => {});
  const p = await state(hi);
  check(p.state === "loaded" && p.spans === "11786", `a dropped .pftrace loads (${p.spans} spans, ${p.error || "no error"})`);
  check(hi.errors.length === 0, `no console errors (${hi.errors.join(" | ")})`);
  await hi.context().close();

  // The load worker reads a picked file in slices (?chunk= makes them 4,099 bytes, so
  // records straddle them): a .spall streamed as it arrives and a JSON, each with the
  // spans spall-cli info counts. Its model crosses to the page in 4,096-byte typed arrays
  // (a few hundred of them, each column crossing several), which the page takes in steps
  // with frames between them: the trace's head, its columns, the index's head, its
  // columns, the kinds, the rest of the views' data (`data-take-steps`), never in one; steps
  // run back to back for up to 50 ms a turn (`data-take-turns`, at most one a step). The
  // columns are packed into the file's slices the worker kept once it had decoded them
  // (`data-reused`, buffers of 4,099 bytes: odd sizes, each stream crossing many), with
  // the same spans. The first file's load runs in the worker the page started ahead of it
  // (`data-ahead`).
  const c = await newPage();
  await c.goto(`${base}/?chunk=4099`);
  await waitState(c, "loaded");
  const pick = async (file, spans) => {
    const before = (await state(c)).spans;
    await c.setInputFiles("#spall-file", file);
    await c.waitForFunction((b) => ["loaded", "error"].includes(document.body.dataset.state)
      && document.body.dataset.spans !== b, before, { timeout: 60_000 }).catch(() => {});
    await c.waitForFunction((n) => document.body.dataset.spans === n, spans, { timeout: 5_000 }).catch(() => {});
    return state(c);
  };
  // The progress overlay's bar, each time the page sets it while the overlay is shown.
  await c.evaluate(() => {
    globalThis.progress_ = [];
    const bar = document.getElementById("progress-bar"), box = document.getElementById("progress");
    new MutationObserver(() => { if (!box.hidden) progress_.push(bar.value / bar.max); })
      .observe(bar, { attributes: true, attributeFilter: ["value", "max"] });
  });
  for (const [file, spans] of [["spall/odingengine_v3.spall", "91542"],
    ["real/chrome116_devtools_export.json", "2456"]]) {
    await c.evaluate(() => { progress_.length = 0; });
    s = await pick(join(roots.fixtures, file), spans);
    // The overlay moves with the worker's messages (hundreds of slices, no canvas frame
    // between them), never back, and is gone once the trace is shown.
    const p = await c.evaluate(() => ({ seen: progress_, hidden: document.getElementById("progress").hidden }));
    const mid = new Set(p.seen.filter((v) => v > 0 && v < 1));
    const ordered = p.seen.every((v, i) => i === 0 || v >= p.seen[i - 1]);
    check(mid.size >= 3 && ordered && p.hidden,
      `${file}: the progress overlay advanced through ${mid.size} values (3 or more), in order: ${ordered}, hidden once loaded: ${p.hidden}`);
    check(s.spans === spans && s.loader === "worker" && s.threads === "0" && s.simd === "1",
      `${file} in 4,099-byte slices by the ${s.loader} on ${s.threads} threads, SIMD ${s.simd}: ${s.spans} spans (spall-cli info: ${spans})`);
    check(Number(s.takeSteps) >= 6 && Number(s.takeTurns) >= 1 && Number(s.takeTurns) <= Number(s.takeSteps),
      `${file}: the page took the worker's model in ${s.takeSteps} steps (6 or more) over ${s.takeTurns} turns`);
    check(Number(s.reused) > 1, `${file}: its columns were packed into ${s.reused} of the file's slices (2 or more)`);
    if (file.endsWith(".spall")) check(s.ahead === "1", `${file}: loaded by the worker started ahead (data-ahead ${s.ahead})`);
    // The index's stored levels come after the pyramids the page drew from first, and the
    // page takes them while it draws (`data-levels`).
    if (file.endsWith(".spall")) {
      await c.waitForFunction(() => document.body.dataset.levels, null, { timeout: 10_000 }).catch(() => {});
      const levels = await c.evaluate(() => document.body.dataset.levels);
      check(levels === "taken", `${file}: the index's levels taken after its first frame (data-levels ${levels})`);
    }
  }
  // Perfetto protobuf is streamed too: the 1.2 MB Chromium trace after 4.2 MB of packets of
  // a kind not modelled (field 89, 1,000 zero bytes each), so that its own packets come
  // after the memory guard's first 4 MB, while the worker decodes as it reads ("loading"
  // reports; a file gathered whole is all "reading", and one the stream gave up on is
  // read twice): the spans spall-cli info counts.
  await c.evaluate(() => {
    const show = globalThis.spall_progress;
    globalThis.stages_ = [];
    globalThis.spall_progress = (...a) => { stages_.push(a[2]); return show(...a); };
  });
  const pad = Buffer.concat([Buffer.from([0x0a, 0xec, 0x07, 0xca, 0x05, 0xe8, 0x07]), Buffer.alloc(1000)]);
  const padded = Buffer.concat([...Array(4200).fill(pad), pf]);
  s = await pick({ name: "padded.pftrace", mimeType: "application/octet-stream", buffer: padded }, "11786");
  const stages = await c.evaluate(() => stages_);
  const count = (stage) => stages.filter((x) => x === stage).length;
  const slices = Math.ceil(padded.length / 4099);
  check(s.spans === "11786" && s.loader === "worker" && count("loading") >= slices / 5 && count("reading") <= slices,
    `a .pftrace streamed by the ${s.loader}: ${s.spans} spans (spall-cli info: 11786), ${count("loading")} of ${slices} slices decoded as read, ${count("reading")} gathered`);
  // .spall version 1 is streamed as well: 60,000 nested spans on three threads after a
  // Pad_Skip of 4.2 MB (past the guard's first 4 MB; the stream drops a pad's bytes as they
  // come), decoded as read, every span there.
  const v1 = [Buffer.alloc(32)];
  v1[0].writeBigUInt64LE(0x0badf00dn, 0);
  v1[0].writeBigUInt64LE(1n, 8);
  v1[0].writeDoubleLE(0.001, 16);
  const skip = Buffer.alloc(5 + 4_200_000);
  skip[0] = 7;
  skip.writeUInt32LE(4_200_000, 1);
  v1.push(skip);
  const v1Event = (type, tid, ts, name) => {
    const e = Buffer.alloc(type === 3 ? 20 + name.length : 17);
    e[0] = type;
    const at = type === 3 ? 2 : 1;
    e.writeUInt32LE(1, at);
    e.writeUInt32LE(tid, at + 4);
    e.writeDoubleLE(ts, at + 8);
    if (type === 3) {
      e[18] = name.length;
      e.write(name, 20, "latin1");
    }
    return e;
  };
  for (let i = 0; i < 10_000; i++) {
    for (let tid = 1; tid <= 3; tid++) {
      v1.push(v1Event(3, tid, i * 100, `v1 outer ${i % 37}`), v1Event(3, tid, i * 100 + 10, `v1 inner ${i % 11}`),
        v1Event(4, tid, i * 100 + 20), v1Event(4, tid, i * 100 + 50));
    }
  }
  const paddedV1 = Buffer.concat(v1);
  await c.evaluate(() => { stages_.length = 0; });
  s = await pick({ name: "padded_v1.spall", mimeType: "application/octet-stream", buffer: paddedV1 }, "60000");
  const stagesV1 = await c.evaluate(() => stages_);
  const countV1 = (stage) => stagesV1.filter((x) => x === stage).length;
  const slicesV1 = Math.ceil(paddedV1.length / 4099);
  check(s.spans === "60000" && s.loader === "worker" && countV1("loading") >= slicesV1 / 5 && countV1("reading") <= slicesV1,
    `a .spall version 1 streamed by the ${s.loader}: ${s.spans} spans (60,000 written), ${countV1("loading")} of ${slicesV1} slices decoded as read, ${countV1("reading")} gathered`);
  // ?simd=0: the page's scalar module loads them instead, with the same spans.
  const sc = await newPage();
  await sc.goto(`${base}/?simd=0&chunk=4099`);
  await waitState(sc, "loaded");
  for (const [file, spans] of [["spall/odingengine_v3.spall", "91542"],
    ["real/chrome116_devtools_export.json", "2456"]]) {
    const before = (await state(sc)).spans;
    await sc.setInputFiles("#spall-file", join(roots.fixtures, file));
    await sc.waitForFunction((n) => document.body.dataset.spans === n || document.body.dataset.state === "error",
      spans, { timeout: 60_000 }).catch(() => {});
    const t = await state(sc);
    check(t.spans === spans && t.loader === "worker" && t.simd === "0" && before !== t.spans,
      `?simd=0: ${file} by the scalar ${t.loader}, SIMD ${t.simd}: ${t.spans} spans (spall-cli info: ${spans})`);
  }
  check(sc.errors.length === 0, `?simd=0: no console errors (${sc.errors.join(" | ")})`);
  await sc.context().close();
  // A ?trace= URL's body, read by the load worker as it arrives (in the network's pieces,
  // tens of kilobytes each): the same spans.
  for (const [file, spans] of [["spall/odingengine_v3.spall", "91542"],
    ["real/chrome116_devtools_export.json", "2456"]]) {
    const r = await newPage();
    await r.goto(`${base}/?trace=traces/fixtures/${file}`);
    await r.waitForFunction((n) => document.body.dataset.spans === n || document.body.dataset.state === "error",
      spans, { timeout: 60_000 }).catch(() => {});
    const t = await state(r);
    check(t.spans === spans && t.loader === "worker" && r.errors.length === 0,
      `?trace=${file} fetched by the ${t.loader}: ${t.spans} spans (spall-cli info: ${spans}; ${t.error || r.errors.join(" | ") || "no error"})`);
    await r.context().close();
  }
  // The whole-trace statistics come from the worker after the trace.
  await c.waitForFunction(() => document.body.dataset.stats === "ready", null, { timeout: 30_000 }).catch(() => {});
  check((await state(c)).stats === "ready", `the worker's statistics arrive (${(await state(c)).stats})`);
  // Cancel: a 40 MB JSON, then at once a small file: the first load's worker is ended, the
  // small trace is shown, and stays.
  const events = [];
  for (let i = 0; i < 400_000; i++) {
    events.push(`{"ph":"X","name":"big ${i % 977}","ts":${i * 10},"dur":5,"pid":1,"tid":${i % 7},"args":{"i":${i}}}`);
  }
  await c.setInputFiles("#spall-file", { name: "big.json", mimeType: "application/json",
    buffer: Buffer.from(`[${events.join(",\n")}]`) });
  s = await pick(join(roots.fixtures, "real/demo_lthi_excerpt.json"), "2318");
  await c.waitForTimeout(3_000);
  const after = await state(c);
  check(after.spans === "2318" && after.state === "loaded" && Number(after.cancelled) >= 1,
    `opening a second file cancels the first (${after.spans} spans, ${after.cancelled} cancelled)`);
  // The same 40 MB JSON loaded whole: the worker's estimate of its model (400k spans)
  // reached the page, which warmed that much of its memory, and the trace is whole.
  s = await pick({ name: "big.json", mimeType: "application/json",
    buffer: Buffer.from(`[${events.join(",\n")}]`) }, "400000");
  check(s.spans === "400000" && Number(s.warm) > 0,
    `a 40 MB JSON's model is warmed for (${s.warm} bytes) and loads (${s.spans} spans)`);
  check(c.errors.length === 0, `no console errors (${c.errors.join(" | ")})`);
  await c.context().close();

  // Compare mode: ?trace=NEW&compare=BASE, two clang -ftime-trace runs of different sources
  // (1,048 and 824 spans by spall-cli info), BASE by a load worker of its own; the page opens
  // on the flame graph, red where NEW grew and blue where it shrank or BASE's stacks are
  // drawn. "Compare with…"'s picker then swaps BASE.
  const clang = "traces/fixtures/real/clang";
  const d = await newPage();
  await d.goto(`${base}/?trace=${clang}/self-win-clang-19.1_BuildEvents.json&compare=${clang}/blender-mac-clang14_obj_export_file_writer.json`);
  await waitState(d, "loaded", 30_000);
  await d.waitForFunction(() => document.body.dataset.baseSpans, null, { timeout: 30_000 }).catch(() => {});
  s = await state(d);
  check(s.spans === "1048" && s.baseSpans === "824",
    `?trace=&compare= compares (${s.spans} spans with BASE's ${s.baseSpans}; ${s.error || "no error"})`);
  await d.waitForTimeout(300);
  // Counted in the page: only the two counts come back (pixels() would send them all).
  const shot = await d.screenshot({ clip: { x: 0, y: 40, width: panelX, height: 360 } });
  const [red, blue] = await d.evaluate(async (b64) => {
    const bmp = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const g = new OffscreenCanvas(bmp.width, bmp.height).getContext("2d");
    g.drawImage(bmp, 0, 0);
    const px = g.getImageData(0, 0, bmp.width, bmp.height).data;
    let red = 0, blue = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i] > px[i + 1] + 60 && px[i] > px[i + 2] + 60) red++;
      if (px[i + 2] > px[i] + 60 && px[i + 2] > px[i + 1] + 40) blue++;
    }
    return [red, blue];
  }, shot.toString("base64"));
  check(red > 800 && blue > 800, `the compare flame graph is drawn red and blue (${red}, ${blue} pixels)`);
  await d.setInputFiles("#spall-base-file", join(roots.fixtures, "real/catapult_simple_trace.json"));
  await d.waitForFunction(() => document.body.dataset.baseSpans === "12", null, { timeout: 15_000 }).catch(() => {});
  s = await state(d);
  check(s.baseSpans === "12" && s.spans === "1048", `"Compare with…" swaps BASE (${s.baseSpans} spans)`);
  // A file dropped with Shift held becomes BASE, NEW stays (catapult_tall_trace.json: 18 spans).
  const tall = await readFile(join(roots.fixtures, "real/catapult_tall_trace.json"));
  await d.evaluate(async (text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], "catapult_tall_trace.json"));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true, shiftKey: true }));
    }
  }, tall.toString("utf8"));
  await d.waitForFunction(() => document.body.dataset.baseSpans === "18", null, { timeout: 15_000 }).catch(() => {});
  s = await state(d);
  check(s.baseSpans === "18" && s.spans === "1048", `a Shift-drop swaps BASE (${s.baseSpans} spans; NEW ${s.spans})`);
  check(d.errors.length === 0, `no console errors (${d.errors.join(" | ")})`);
  await d.context().close();
}

// The cross-origin-isolated page: its load worker runs the threaded module, a pool of 2
// (?threads=2, whatever the machine's cores). A .spall and a JSON are streamed in
// 4,099-byte slices and runs (?chunk=), then in runs of 4 MB, then gathered whole and
// decoded on the pool as natively (?gather=1), each trace built on the pool; in the last
// two, a 12 MB JSON whose events straddle its three runs (or parallel chunks), and in all
// three a .spall version 1. Each with the spans spall-cli info counts.
async function isolated() {
  const t = await newPage();
  const pick = async (file, spans) => {
    const before = (await state(t)).spans;
    await t.setInputFiles("#spall-file", file);
    await t.waitForFunction((b) => ["loaded", "error"].includes(document.body.dataset.state)
      && document.body.dataset.spans !== b, before, { timeout: 60_000 }).catch(() => {});
    await t.waitForFunction((n) => document.body.dataset.spans === n, spans, { timeout: 5_000 }).catch(() => {});
    return state(t);
  };
  const events = [];
  for (let i = 0; i < 120_000; i++) {
    events.push(`{"ph":"X","name":"n${i % 101}","ts":${i * 10},"dur":${4 + (i % 3)},"pid":1,"tid":${i % 5},"args":{"i":${i},"pad":"${"p".repeat(i % 40)}"}}`);
  }
  const big = { name: "threads.json", mimeType: "application/json", buffer: Buffer.from(`[${events.join(",\n")}]`) };
  for (const query of ["?threads=2&chunk=4099", "?threads=2", "?threads=2&gather=1"]) {
    await t.goto(`${isoBase}/${query}`);
    await waitState(t, "loaded");
    const files = [[join(roots.fixtures, "spall/odingengine_v3.spall"), "91542"],
      [join(roots.fixtures, "real/chrome116_devtools_export.json"), "2456"]];
    files.push([join(roots.fixtures, "spall/crux_v1.spall"), "21449"]);
    if (!query.includes("chunk")) files.push([big, "120000"]);
    for (const [file, spans] of files) {
      const s = await pick(file, spans);
      check(s.spans === spans && s.loader === "worker" && s.threads === "2" && s.simd === "1",
        `isolated ${query}: ${file.name || file.slice(roots.fixtures.length + 1)} by the ${s.loader} on ${s.threads} threads, SIMD ${s.simd}: ${s.spans} spans (expected ${spans})`);
    }
  }
  await t.waitForFunction(() => document.body.dataset.stats === "ready", null, { timeout: 30_000 }).catch(() => {});
  check((await state(t)).stats === "ready", `isolated: the threaded worker's statistics arrive (${(await state(t)).stats})`);
  check(t.errors.length === 0, `isolated: no console errors (${t.errors.join(" | ")})`);
  await t.context().close();
}

// Sampling profiles in the load worker. A real `perf record -g` (spin.perf) 90 times end to
// end (each copy's times after the last: 5.6 MB, past the memory guard's first 4 MB), picked
// and read in 4,099-byte slices: decoded as read ("loading" reports, not a gathered file's
// "reading"), every sample there (perf_sample against the headers counted here), drawn on
// the timeline; a gzipped one streamed through gzip; node's .cpuprofile (streamed too) with
// the samples its JSON lists; pprof, Gecko and speedscope's format with theirs.
async function profiles() {
  const p = await newPage();
  await p.goto(`${base}/?chunk=4099`);
  await waitState(p, "loaded");
  await p.evaluate(() => {
    const show = globalThis.spall_progress;
    globalThis.stages_ = [];
    globalThis.spall_progress = (...a) => { stages_.push(a[2]); return show(...a); };
  });
  // The count of `sql`'s first cell once it is `want` (the trace picked has arrived).
  const count = async (sql, want) => {
    let got = null;
    for (let i = 0; i < 60 && got !== String(want); i++) {
      await p.evaluate((q) => spall.run_sql(q), sql);
      await p.waitForFunction(() => ["done", "error"].includes(document.body.dataset.sql), null, { timeout: 10_000 }).catch(() => {});
      got = (await state(p)).sqlFirst;
      if (got !== String(want)) await p.waitForTimeout(500);
    }
    return got;
  };
  const spin = await readFile(join(roots.fixtures, "real/profiles/spin.perf"), "utf8");
  const headers = spin.split("\n").filter((l) => /^\S/.test(l) && !l.startsWith("#"));
  const times = headers.map((l) => Number(l.match(/ (\d+\.\d+):/)[1]));
  const span = Math.max(...times) - Math.min(...times) + 0.001;
  const copies = 90;
  const big = Buffer.from(Array.from({ length: copies }, (_, i) =>
    spin.replace(/^(\S.*? )(\d+\.\d+):/gm, (_, a, t) => `${a}${(Number(t) + i * span).toFixed(6)}:`)).join("\n"));
  await p.setInputFiles("#spall-file", { name: "spin90.perf", mimeType: "text/plain", buffer: big });
  const n = await count("SELECT COUNT(*) FROM perf_sample", headers.length * copies);
  const stages = await p.evaluate(() => stages_);
  const slices = Math.ceil(big.length / 4099);
  const loading = stages.filter((x) => x === "loading").length, reading = stages.filter((x) => x === "reading").length;
  let s = await state(p);
  check(n === String(headers.length * copies) && s.loader === "worker" && loading >= slices / 5 && reading <= slices,
    `perf script (${(big.length / 1e6).toFixed(1)} MB) streamed by the ${s.loader}: ${n} samples (${headers.length * copies} headers), ${loading} of ${slices} slices decoded as read, ${reading} gathered`);
  await p.waitForTimeout(500);
  const img = await pixels(p);
  const tl = stats(img, 0, 120, 1280 - 530, 700);
  check(tl.colours > 10 && tl.busy > 0.05, `its samples are drawn (${tl.colours} colours, ${(tl.busy * 100).toFixed(1)}% of the timeline)`);
  // The statistics panel lists the profile's functions (spin.perf has 32 distinct names:
  // `spall-cli stats`, and SQL's stack_profile_frame).
  const fns = await count("SELECT COUNT(DISTINCT name) FROM stack_profile_frame", 32);
  await p.waitForFunction(() => document.body.dataset.stats === "ready", null, { timeout: 30_000 }).catch(() => {});
  s = await state(p);
  check(fns === "32" && s.statsRows === "32", `its statistics: one row a function (${s.statsRows} rows, ${fns} functions)`);
  const rust = gunzipSync(await readFile(join(roots.fixtures, "real/profiles/demangle_rust.perf.gz"))).toString();
  const rustSamples = rust.split("\n").filter((l) => /^\S/.test(l) && !l.startsWith("#")).length;
  await p.setInputFiles("#spall-file", join(roots.fixtures, "real/profiles/demangle_rust.perf.gz"));
  check(await count("SELECT COUNT(*) FROM perf_sample", rustSamples) === String(rustSamples),
    `a gzipped perf script through the worker: ${rustSamples} samples`);
  const cpu = JSON.parse(await readFile(join(roots.fixtures, "real/profiles/work.cpuprofile"), "utf8"));
  await p.setInputFiles("#spall-file", join(roots.fixtures, "real/profiles/work.cpuprofile"));
  const got = await count("SELECT COUNT(*) FROM cpu_profile_stack_sample", cpu.samples.length);
  check(got === String(cpu.samples.length), `node's .cpuprofile through the worker: ${got} samples (its JSON: ${cpu.samples.length})`);
  // The profiles gathered by the worker's stream (gzip undone as the slices arrive), each
  // against an independent reading: Go's pprof (its `go tool pprof -raw` listing beside
  // it: one line a sample), a real Firefox profile (its samples' rows, nested processes
  // included), and speedscope's format written here from spin.perf's samples.
  const raw = await readFile(join(roots.fixtures, "real/profiles/go_cpu.raw.txt"), "utf8");
  // Every sample type is a kind of its own: a sample is one of each type it has a value for.
  const lines = raw.split("\n");
  const types = lines[lines.findIndex((l) => l.startsWith("Samples:")) + 1].trim().split(/\s+/).length;
  const pprofSamples = lines.filter((l) => /^\s+\d+\s+\d+: /.test(l))
    .reduce((n, l) => n + l.trim().split(/\s+/).slice(0, types).filter((v) => Number(v) !== 0).length, 0);
  await p.setInputFiles("#spall-file", join(roots.fixtures, "real/profiles/go_cpu.pb.gz"));
  const pp = await count("SELECT COUNT(*) FROM cpu_profile_stack_sample", pprofSamples);
  check(pp === String(pprofSamples), `Go's pprof through the worker: ${pp} samples of its ${types} types (its -raw listing: ${pprofSamples})`);
  const gecko = JSON.parse(gunzipSync(await readFile(join(roots.fixtures, "real/profiles/firefox_page.json.gz"))));
  const rows = (g) => g.threads.reduce((n, t) => n + t.samples.data.filter((r) => r[t.samples.schema.stack] !== null).length, 0) +
    (g.processes || []).reduce((n, q) => n + rows(q), 0);
  const geckoSamples = rows(gecko);
  await p.setInputFiles("#spall-file", join(roots.fixtures, "real/profiles/firefox_page.json.gz"));
  const gs = await count("SELECT COUNT(*) FROM cpu_profile_stack_sample", geckoSamples);
  check(gs === String(geckoSamples), `a Firefox profile through the worker: ${gs} samples (its rows with a stack: ${geckoSamples})`);
  const frames = [], ids = new Map(), samples = [];
  for (const rec of spin.split("\n\n")) {
    const lines = rec.split("\n").filter((l) => l.startsWith("\t"));
    if (!lines.length) continue;
    samples.push(lines.reverse().map((l) => {
      const name = l.trim().split(" ")[1];
      if (!ids.has(name)) (ids.set(name, frames.length), frames.push({ name }));
      return ids.get(name);
    }));
  }
  const ss = { $schema: "https://www.speedscope.app/file-format-schema.json", shared: { frames },
    profiles: [{ type: "sampled", name: "spin", unit: "none", startValue: 0, endValue: samples.length,
      samples, weights: samples.map(() => 1) }] };
  await p.setInputFiles("#spall-file", { name: "spin.speedscope.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(ss)) });
  const sc = await count("SELECT COUNT(*) FROM cpu_profile_stack_sample", samples.length);
  check(sc === String(samples.length), `speedscope's format through the worker: ${sc} samples (written: ${samples.length})`);
  check(p.errors.length === 0, `profiles: no console errors (${p.errors.join(" | ")})`);
  await p.context().close();
}

// Load times: from navigation to the first frame of the loaded trace, median of 3.
async function timings(files) {
  for (const f of files) {
    const times = [];
    for (let i = 0; i < 3; i++) {
      const page = await newPage();
      const t0 = Date.now();
      await page.goto(`${base}/?trace=traces/files${resolve(f)}`);
      const s = await waitState(page, "loaded", 600_000);
      times.push(Date.now() - t0);
      if (s.state !== "loaded") console.log(`${f}: ${s.state} ${s.error || ""}`);
      await page.context().close();
    }
    times.sort((a, b) => a - b);
    console.log(`${f}: ${times[1]} ms (median of ${times.join(", ")})`);
  }
}

// A ?trace= body of unknown size (no Content-Length), 10 MB, more than the worker's first
// runs and its progress steps (4 MB): the card never shows a total below the bytes the file
// has (no "of" while the size is unknown, the file's size once read), never "decoding" 0 MB,
// and the trace loads whole.
async function unknownSize() {
  const events = [];
  for (let i = 0; i < 120_000; i++) {
    events.push(`{"ph":"X","name":"big ${i % 977}","ts":${i * 10},"dur":5,"pid":1,"tid":${i % 7},"args":{"i":${i}}}`);
  }
  const body = Buffer.from(`[${events.join(",\n")}]`);
  chunked.set("unknown-size.json", body);
  const u = await newPage();
  // Every text of the progress card, as the page sets it.
  await u.addInitScript(() => {
    globalThis.card_ = [];
    new MutationObserver(() => {
      const [stage, detail] = ["stage", "detail"].map((id) => document.getElementById(`progress-${id}`));
      const text = stage && detail && `${stage.textContent} | ${detail.textContent}`;
      if (text && text !== card_[card_.length - 1]) card_.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await u.goto(`${base}/?trace=chunked/unknown-size.json`);
  await u.waitForFunction(() => document.body.dataset.spans === "120000" || document.body.dataset.state === "error",
    null, { timeout: 60_000 }).catch(() => {});
  const t = await state(u);
  const card = await u.evaluate(() => card_);
  const mb = body.length / 1e6;
  // "decoding · 40% | 5.2 of 12 MB · ..." or "building the trace | 12 MB · ...".
  const shown = card.map((c) => {
    const [stage, detail] = c.split(" | ");
    if (!stage) return { stage, done: 0, total: null };
    const [, done, total] = detail.match(/^([\d.]+)(?: of ([\d.]+))? MB/) || [];
    const bytes = /^(reading|decoding|decompressing)/.test(stage);
    return { stage, done: Number(done), total: bytes ? (total === undefined ? null : Number(total)) : Number(done) };
  });
  // The card rounds to 0.1 MB below 10 MB, to 1 MB above.
  const small = shown.filter((c) => c.total !== null && !(c.total >= mb - 0.5));
  const unknown = shown.filter((c) => c.total === null && c.done > 0);
  const zero = shown.filter((c) => c.stage.startsWith("decoding") && !(c.done > 0));
  check(t.spans === "120000" && t.loader === "worker" && t.state === "loaded" && u.errors.length === 0,
    `a ?trace= body of unknown size (${mb.toFixed(1)} MB, chunked): ${t.spans} spans by the ${t.loader} (expected 120000; ${t.error || u.errors.join(" | ") || "no error"})`);
  check(card.length >= 3 && small.length === 0 && unknown.length >= 1 && zero.length === 0,
    `its progress card (${card.length} texts) shows bytes with no total while the size is unknown (${unknown.length}), never a total under ${mb.toFixed(1)} MB (${small.map((c) => c.total).join(", ") || "none"}), never decoding 0 MB (${zero.length}): ${JSON.stringify(card.slice(0, 3))}...`);
  await u.context().close();
}

try {
  if (bench > 0) await timings(process.argv.slice(bench + 1));
  else {
    await e2e();
    await profiles();
    await unknownSize();
    await isolated();
  }
} finally {
  await browser.close();
  if (hidpi) await hidpi.close();
  server.close();
  isoServer.close();
}
if (failures) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
