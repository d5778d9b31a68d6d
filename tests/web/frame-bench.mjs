// What a redrawn frame of the page costs in Debian's Chromium, where WebGL is drawn on the
// CPU (SwiftShader, as on machines without a usable GPU): the page shown at 1280×720 (the
// demo, or FILE picked and loaded), then MOVES (default 20) pointer moves over the
// timeline, each followed by two animation frames, timed from the first move to the last
// frame. Each move redraws the canvas (the hover changes), so the time per move is the
// frames it causes; the canvas's GL calls are counted per move. Sites are run in turn,
// RUNS (default 3) fresh pages each, medians printed.
//
// With `--quads N`, no site: a bare page draws N small opaque quads a frame, instanced (as
// render-gl drew them) and as indexed triangles (as it draws them now), for 20 frames each.
//
//   node tests/web/frame-bench.mjs SITE[,SITE...] [FILE]
//   node tests/web/frame-bench.mjs --quads 10000
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { launchChromium } from "./perfetto-ui.mjs";
import { serveSite } from "./site-server.mjs";

const [sites, file] = process.argv.slice(2);
const runs = Number(process.env.RUNS || 3);
const moves = Number(process.env.MOVES || 20);
const browser = await launchChromium();
if (sites === "--quads") {
  await quads(Number(file));
  process.exit(0);
}
const servers = await Promise.all(sites.split(",").map((s) => serveSite(resolve(s))));

// Counts the page's draw calls and clears (a clear starts each of our frames).
function countCalls() {
  globalThis.glCalls_ = { draws: 0, frames: 0 };
  const P = WebGL2RenderingContext.prototype;
  for (const k of ["drawElements", "drawArrays", "drawArraysInstanced", "drawElementsInstanced"]) {
    const f = P[k];
    P[k] = function (...a) { glCalls_.draws++; return f.apply(this, a); };
  }
  const clear = P.clear;
  P.clear = function (...a) { glCalls_.frames++; return clear.apply(this, a); };
}

async function run(base) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.addInitScript(countCalls);
  await page.goto(base);
  await page.waitForFunction(() => document.body.dataset.state === "loaded", null, { timeout: 60_000 });
  if (file) {
    const demo = await page.evaluate(() => document.body.dataset.spans);
    await page.setInputFiles("#spall-file", file);
    await page.waitForFunction((d) => ["loaded", "error"].includes(document.body.dataset.state) &&
      document.body.dataset.spans !== d, demo, { timeout: 600_000 });
  }
  await page.waitForTimeout(1000);
  await page.evaluate(() => { glCalls_.draws = 0; glCalls_.frames = 0; });
  const t0 = Date.now();
  for (let i = 0; i < moves; i++) {
    await page.mouse.move(100 + (i % 5) * 20, 150 + (i % 3) * 30);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  const ms = (Date.now() - t0) / moves;
  const c = await page.evaluate(() => glCalls_);
  await page.close();
  return { ms, frames: c.frames / moves, draws: c.draws / Math.max(1, c.frames) };
}

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
try {
  const all = servers.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [k, s] of servers.entries()) all[k].push(await run(s.base));
  }
  for (const [k, site] of sites.split(",").entries()) {
    const r = all[k];
    console.log(`${site}${file ? ` ${file}` : " (demo)"}: ${median(r.map((x) => x.ms)).toFixed(1)} ms a move ` +
      `(${r.map((x) => x.ms.toFixed(1)).join(", ")}), ${median(r.map((x) => x.frames)).toFixed(1)} frames a move, ` +
      `${median(r.map((x) => x.draws)).toFixed(0)} draw calls a frame, load average ${loadavg()[0].toFixed(1)}`);
  }
} finally {
  await browser.close();
  for (const s of servers) s.server.close();
}

// The bare page of `--quads`: ms a frame drawing `n` quads each way, each frame's data
// uploaded as render-gl uploads it.
async function quads(n) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.setContent('<canvas width="1280" height="720"></canvas>');
  const r = await page.evaluate(async (n) => {
    const gl = document.querySelector("canvas").getContext("webgl2", { antialias: false });
    const prog = (vs) => {
      const p = gl.createProgram();
      for (const [t, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER,
        "precision highp float; in vec4 v; out vec4 o; void main() { o = v; }"]]) {
        const sh = gl.createShader(t);
        gl.shaderSource(sh, "#version 300 es\n" + src);
        gl.compileShader(sh);
        gl.attachShader(p, sh);
      }
      gl.linkProgram(p);
      return p;
    };
    const ndc = "gl_Position = vec4(p.x / 640.0 - 1.0, 1.0 - p.y / 360.0, 0.0, 1.0); v = c;";
    const inst = prog(`layout(location=0) in vec4 r; layout(location=1) in vec4 c; out vec4 v;
      void main() { vec2 k = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
      vec2 p = r.xy + k * r.zw; ${ndc} }`);
    const tri = prog(`layout(location=0) in vec2 p; layout(location=1) in vec4 c; out vec4 v;
      void main() { ${ndc} }`);
    const rects = new Float32Array(n * 4), verts = new Float32Array(n * 12);
    const colors = new Uint8Array(n * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 37) & 255));
    const vcolors = new Uint8Array(n * 16);
    const index = new Uint32Array(n * 6);
    for (let i = 0; i < n; i++) {
      const [x, y, w, h] = [(i * 37) % 1200, (i * 4) % 700, 3 + (i % 7) * 4, 12];
      rects.set([x, y, w, h], i * 4);
      verts.set([x, y, x + w, y, x, y + h, x + w, y + h], i * 8);
      for (let k = 0; k < 4; k++) vcolors.set(colors.subarray(i * 4, i * 4 + 4), (i * 4 + k) * 4);
      index.set([0, 1, 2, 2, 1, 3].map((j) => 4 * i + j), i * 6);
    }
    const buffer = (target, data) => {
      const b = gl.createBuffer();
      gl.bindBuffer(target, b);
      gl.bufferData(target, data, gl.STREAM_DRAW);
      return b;
    };
    const attr = (b, loc, size, type, norm, divisor) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, type, norm, 0, 0);
      gl.vertexAttribDivisor(loc, divisor);
    };
    const vaoI = gl.createVertexArray();
    gl.bindVertexArray(vaoI);
    const rb = buffer(gl.ARRAY_BUFFER, rects), cb = buffer(gl.ARRAY_BUFFER, colors);
    attr(rb, 0, 4, gl.FLOAT, false, 1);
    attr(cb, 1, 4, gl.UNSIGNED_BYTE, true, 1);
    const vaoT = gl.createVertexArray();
    gl.bindVertexArray(vaoT);
    const vb = buffer(gl.ARRAY_BUFFER, verts), vcb = buffer(gl.ARRAY_BUFFER, vcolors);
    attr(vb, 0, 2, gl.FLOAT, false, 0);
    attr(vcb, 1, 4, gl.UNSIGNED_BYTE, true, 0);
    buffer(gl.ELEMENT_ARRAY_BUFFER, index);
    const draw = {
      instanced() {
        gl.useProgram(inst);
        gl.bindVertexArray(vaoI);
        gl.bindBuffer(gl.ARRAY_BUFFER, rb);
        gl.bufferData(gl.ARRAY_BUFFER, rects, gl.STREAM_DRAW);
        gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, n);
      },
      triangles() {
        gl.useProgram(tri);
        gl.bindVertexArray(vaoT);
        gl.bindBuffer(gl.ARRAY_BUFFER, vb);
        gl.bufferData(gl.ARRAY_BUFFER, verts, gl.STREAM_DRAW);
        gl.drawElements(gl.TRIANGLES, n * 6, gl.UNSIGNED_INT, 0);
      },
    };
    const frame = (f) => new Promise((r) => requestAnimationFrame(() => {
      gl.clear(gl.COLOR_BUFFER_BIT);
      f();
      r();
    }));
    const out = {};
    for (const [k, f] of Object.entries(draw)) {
      for (let i = 0; i < 5; i++) await frame(f);
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) await frame(f);
      out[k] = (performance.now() - t0) / 20;
    }
    return out;
  }, n);
  console.log(`${n} quads: instanced ${r.instanced.toFixed(1)} ms a frame, as triangles ` +
    `${r.triangles.toFixed(1)} ms (frames come at the display's rate, 16.7 ms, at best)`);
  await browser.close();
}
