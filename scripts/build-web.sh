#!/usr/bin/env bash
# Builds the viewer as a static web site in OUTDIR: index.html, worker.js (the load
# worker), spall_web.js (the wasm-bindgen glue) and spall_web_bg.wasm. Serve OUTDIR with any static file server.
#
# Needs the wasm32-unknown-unknown target (installed with rustup if missing), clang 16 or
# newer for SQLite's C (scripts/wasm-cc.sh) and wasm-bindgen-cli at the version of the wasm-bindgen crate in Cargo.lock (the command to
# install it is printed if it is missing).
set -euo pipefail
out=${1:?usage: scripts/build-web.sh OUTDIR}
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root"

if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

. scripts/wasm-cc.sh
wasm_cc

want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
  echo "build-web: wasm-bindgen-cli $want is needed (found: ${have:-none}); install it with" >&2
  echo "  cargo install wasm-bindgen-cli --version $want" >&2
  exit 1
fi

cargo build --locked --profile web --target wasm32-unknown-unknown -p spall-web
# Where cargo put it: CARGO_TARGET_DIR, build.target-dir in a config file, or target/.
target=$(cargo metadata --locked --no-deps --format-version 1 |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
wasm="$target/wasm32-unknown-unknown/web/spall_web.wasm"
[ -f "$wasm" ] || { echo "build-web: $wasm not found after the build" >&2; exit 1; }
wasm-bindgen --target web --no-typescript --out-dir "$out" "$wasm"
cp web/index.html web/worker.js "$out/"
size=$(stat -c %s "$out/spall_web_bg.wasm")
gz=$(gzip -9 -c "$out/spall_web_bg.wasm" | wc -c)
echo "build-web: $out (spall_web_bg.wasm: $size bytes, $gz gzipped)"
