// Runs a wasm32-wasip1 program (a test binary) in Node's WASI, as cargo's runner:
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node scripts/wasi-run.mjs" \
//     cargo test --target wasm32-wasip1 -p spall-format --lib scan
// Arguments after the program go to it; the current directory is readable as `.`.
// The exit status is the program's (a trap, such as a failed test's abort, exits 1).
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import process from "node:process";

const [program, ...args] = process.argv.slice(2);
if (!program) {
  console.error("usage: node scripts/wasi-run.mjs PROGRAM.wasm [ARGS...]");
  process.exit(2);
}
const wasi = new WASI({ version: "preview1", args: [program, ...args], env: process.env, preopens: { ".": "." } });
try {
  const module = await WebAssembly.compile(await readFile(program));
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  process.exitCode = wasi.start(instance);
} catch (e) {
  console.error(`wasi-run: ${program}: ${e && e.stack ? e.stack : e}`);
  process.exitCode = 1;
}
