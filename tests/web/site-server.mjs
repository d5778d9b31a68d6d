// The built site (scripts/build-web.sh's OUTDIR) served on 127.0.0.1, and the page's hooks,
// for the benchmarks.
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { join, extname } from "node:path";

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

/// The headers that make a page cross-origin isolated (SharedArrayBuffer, so the load
/// worker's threads), as scripts/serve-web.sh sends them.
export const ISOLATION = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
};

/// Serves `site` on a free port; resolves to the server and its base URL. `isolated`: every
/// answer carries the ISOLATION headers.
export async function serveSite(site, { isolated = false } = {}) {
  const extra = isolated ? ISOLATION : {};
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const file = join(site, path === "/" ? "index.html" : path);
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
    } catch {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { ...extra, "content-type": types[extname(file)] || "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, base: `http://127.0.0.1:${server.address().port}/` };
}

/// Run in the page (`page.evaluate(watchHandoff)`): `globalThis.handoff_` becomes the time a
/// load worker's model reaches the page, where the page's own work starts: the page's
/// `spall-handoff` mark (its load worker may be started before this runs), or for a site
/// built before that mark, the first message with a model from a worker started after.
export function watchHandoff() {
  const at = (t) => { globalThis.handoff_ ||= t; };
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) if (e.name === "spall-handoff") at(e.startTime);
  }).observe({ entryTypes: ["mark"] });
  const W = Worker;
  globalThis.Worker = function (...a) {
    const w = new W(...a);
    w.addEventListener("message", (e) => { if (e.data.model) at(performance.now()); });
    return w;
  };
}
