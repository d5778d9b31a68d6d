// A CPU profile of the page's load worker while it opens a file picked with the file picker:
// Chromium started with a DevTools port, the page driven by playwright-core over it, and a
// second DevTools connection that attaches to the page's load worker (as it starts, paused
// until the profiler runs, or the one the page started ahead, from the file's pick) and
// profiles it until the model is handed to the page.
// Prints the top functions by self time (WebAssembly functions by their name-section names)
// and the worker's own timeline (its `timing` console lines, when CONSOLE is set).
//
//   scripts/build-web.sh target/web-site
//   node --experimental-websocket tests/web/worker-profile.mjs target/web-site FILE [TOP]
//   PROFILE_OUT=worker.cpuprofile ...     (also writes the profile, for DevTools)
//   JS_FLAGS="--no-liftoff" ...           (flags for V8, to compare its tiers)
//   CALLERS=1 ...                         (each function's three heaviest callers)
//   PAGE=1 ...                            (the page's main thread instead, from the model's
//                                          arrival to the first frame of the trace)
//   PAGE=1 AFTER=MS ...                   (and MS milliseconds of the page after it)
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { cpuByKind } from "./proc-cpu.mjs";
import { serveSite, watchHandoff } from "./site-server.mjs";

const site = resolve(process.argv[2]);
const file = process.argv[3];
const top = Number(process.argv[4] || 25);

const { server, base } = await serveSite(site);

// The same flags as every browser test here (tests/web/perfetto-ui.mjs), and a port.
const profileDir = mkdtempSync(join(tmpdir(), "spall-profile-"));
const args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--enable-unsafe-swiftshader", "--remote-debugging-port=0", `--user-data-dir=${profileDir}`,
  ...(process.env.JS_FLAGS ? [`--js-flags=${process.env.JS_FLAGS}`] : []), "about:blank"];
const proc = spawn(process.env.CHROMIUM || "/usr/bin/chromium", args, { stdio: ["ignore", "ignore", "pipe"] });
const endpoint = await new Promise((resolve, reject) => {
  let err = "";
  proc.stderr.on("data", (d) => {
    err += d;
    const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
    if (m) resolve(m[1]);
  });
  proc.on("exit", () => reject(new Error(`chromium exited: ${err}`)));
});

// CPU seconds of Chromium's processes by kind (browser, renderer, gpu-process, utility):
// what the load costs beside the worker's thread.
const cpu = () => cpuByKind(proc.pid);

// A DevTools connection of our own: flat sessions, one per attached target.
const ws = new WebSocket(endpoint);
await new Promise((r) => ws.addEventListener("open", r));
let nextId = 1;
const pending = new Map();
const handlers = [];
ws.addEventListener("message", ({ data }) => {
  const m = JSON.parse(data);
  if (m.id && pending.has(m.id)) {
    const { resolve, reject } = pending.get(m.id);
    pending.delete(m.id);
    m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result);
  } else if (m.method) {
    for (const h of handlers) h(m);
  }
});
const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
});

const browser = await chromium.connectOverCDP(endpoint);
const context = browser.contexts()[0];
const page = await context.newPage();
await page.setViewportSize({ width: 1280, height: 720 });
page.on("pageerror", (e) => console.log(`page error: ${e}`));
await page.goto(base);
await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
const demo = await page.evaluate(() => document.body.dataset.spans);

// The page's target, then its workers as they start, each paused until profiled.
const { targetInfos } = await send("Target.getTargets");
const pageTarget = targetInfos.find((t) => t.type === "page" && t.url.startsWith(base));
const { sessionId: pageSession } = await send("Target.attachToTarget", { targetId: pageTarget.targetId, flatten: true });
let worker = null;
const workerStarted = new Promise((resolve) => handlers.push(async (m) => {
  if (m.method === "Target.attachedToTarget" && m.params.targetInfo.type === "worker" && !worker) {
    worker = m.params.sessionId;
    await send("Runtime.enable", {}, worker);
    await send("Profiler.enable", {}, worker);
    await send("Profiler.setSamplingInterval", { interval: 200 }, worker);
    await send("Profiler.start", {}, worker);
    await send("Runtime.runIfWaitingForDebugger", {}, worker);
    resolve(performance.now());
  } else if (m.method === "Target.attachedToTarget") {
    await send("Runtime.runIfWaitingForDebugger", {}, m.params.sessionId);
  } else if (m.method === "Runtime.consoleAPICalled" && m.sessionId === worker && process.env.CONSOLE) {
    console.log(`  worker: ${m.params.args.map((a) => a.value ?? a.description).join(" ")}`);
  }
}));
await send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, pageSession);
await page.evaluate(watchHandoff);
// PAGE: the page's thread, profiled by the page itself (console.profile) from the moment the
// worker's model arrives until the page shows the trace.
const pageProfile = process.env.PAGE && new Promise((resolve) => handlers.push((m) => {
  if (m.method === "Profiler.consoleProfileFinished" && m.sessionId === pageSession) resolve(m.params.profile);
}));
if (pageProfile) {
  await send("Profiler.enable", {}, pageSession);
  await send("Profiler.setSamplingInterval", { interval: 200 }, pageSession);
  await page.evaluate((after) => {
    // From the page's spall-handoff mark (or, for a site built before it, the first
    // message with a model from a worker started after this).
    let started = false;
    const begin = () => {
      if (started) return;
      started = true;
      console.profile("page");
      const d = document.body.dataset, before = d.spans;
      new MutationObserver((_, o) => {
        if (!["loaded", "error"].includes(d.state) || d.spans === before) return;
        o.disconnect();
        setTimeout(() => console.profileEnd("page"), after);
      }).observe(document.body, { attributes: true });
    };
    new PerformanceObserver((l) => {
      if (l.getEntries().some((e) => e.name === "spall-handoff")) begin();
    }).observe({ entryTypes: ["mark"] });
    const W = Worker;
    globalThis.Worker = function (...a) {
      const w = new W(...a);
      w.addEventListener("message", (e) => { if (e.data.model) begin(); });
      return w;
    };
  }, Number(process.env.AFTER || 0));
}
// What the page costs shown and idle, for comparison: 2 s before the load.
const idle0 = cpu();
await new Promise((r) => setTimeout(r, 2000));
const idle1 = cpu();
const t0 = await page.evaluate(() => performance.now());
const cpu0 = cpu();
// A load worker the page started ahead of the file is profiled from here on.
if (worker) {
  await send("Profiler.stop", {}, worker);
  await send("Profiler.start", {}, worker);
}
// Playwright sends only small files over a DevTools port; DevTools itself names the path.
const { root } = await send("DOM.getDocument", {}, pageSession);
const { nodeId } = await send("DOM.querySelector", { nodeId: root.nodeId, selector: "#spall-file" }, pageSession);
await send("DOM.setFileInputFiles", { files: [resolve(file)], nodeId }, pageSession);
await workerStarted;
await page.waitForFunction(() => globalThis.handoff_, null, { timeout: 600_000, polling: 20 });
const cpu1 = cpu();
const { profile: workerProfile } = await send("Profiler.stop", {}, worker);
await page.waitForFunction((d) => ["loaded", "error"].includes(document.body.dataset.state)
  && document.body.dataset.spans !== d, demo, { timeout: 600_000, polling: 20 });
const profile = pageProfile ? await pageProfile : workerProfile;
const r = await page.evaluate((t0) => ({ decode: handoff_ - t0, all: performance.now() - t0,
  state: document.body.dataset.state, spans: document.body.dataset.spans }), t0);
console.log(`${file}: ${r.state}, ${r.spans} spans; to the hand-off ${r.decode.toFixed(0)} ms, ` +
  `loaded ${r.all.toFixed(0)} ms (the profiler slows both)`);
const used = (a, b) => Object.entries(b).filter(([k, v]) => v > (a[k] || 0))
  .map(([k, v]) => `${k} ${((v - (a[k] || 0)) * 1000).toFixed(0)} ms`).join(", ");
console.log(`CPU of Chromium's processes: to the hand-off ${used(cpu0, cpu1)}; ` +
  `the page idle for 2 s before it ${used(idle0, idle1) || "none"}`);
if (process.env.PROFILE_OUT) writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));

// Self time per function, from the samples and their time deltas, and per caller.
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
const label = (id) => {
  const { functionName, url } = byId.get(id).callFrame;
  return `${functionName || "(anonymous)"}${url ? `  [${url.replace(/^.*\//, "")}]` : ""}`;
};
const self = new Map();
const callers = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] / 1000;
  const key = label(id);
  self.set(key, (self.get(key) || 0) + dt);
  const p = parent.has(id) ? label(parent.get(id)) : "(root)";
  const c = callers.get(key) || new Map();
  callers.set(key, c.set(p, (c.get(p) || 0) + dt));
  total += dt;
});
// When the worker waited (for the module, for the file's pieces): idle time per tenth.
const tenths = Array(10).fill(0);
let at = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] / 1000;
  if (byId.get(id).callFrame.functionName === "(idle)") tenths[Math.min(9, Math.floor(10 * at / total))] += dt;
  at += dt;
});
console.log(`idle per tenth of the load: ${tenths.map((t) => t.toFixed(0)).join(" ")} ms`);
console.log(`profile: ${total.toFixed(0)} ms sampled; top ${top} by self time:`);
for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${ms.toFixed(0).padStart(7)} ms ${(100 * ms / total).toFixed(1).padStart(5)}%  ${k}`);
  if (!process.env.CALLERS) continue;
  for (const [c, cms] of [...callers.get(k)].sort((a, b) => b[1] - a[1]).slice(0, 3)) {
    console.log(`${" ".repeat(16)}${cms.toFixed(0).padStart(7)} ms from ${c}`);
  }
}
await browser.close().catch(() => {});
ws.close();
proc.kill();
await new Promise((r) => (proc.exitCode === null ? proc.on("exit", r) : r()));
server.close();
// Chromium's helpers may still be writing into the profile as it exits: what they leave
// is left in the temporary directory, not an error after the profile has printed.
try {
  rmSync(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
} catch (e) {
  console.error(`(${profileDir} not removed: ${e.code || e.message})`);
}
