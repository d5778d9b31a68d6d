#!/usr/bin/env bash
# Builds the viewer as a static web site in OUTDIR: index.html, worker.js (the load
# worker), spall_web.js (the wasm-bindgen glue) and spall_web_bg.wasm, the load worker's
# SIMD module (spall_web_simd.js and spall_web_simd_bg.wasm: the loader alone, built with
# simd128, which the worker runs unless the page has ?simd=0), and the threaded
# load worker's module (spall_web_threads.js, spall_web_threads_bg.wasm and the thread
# pool's snippets/), which a cross-origin-isolated page uses. Serve OUTDIR with any static
# file server (with COOP/COEP headers for threads: docs/WEB.md).
#
# The threaded module is built with atomics and a rebuilt std (the rust-src component,
# added with rustup if missing; nightly flags through RUSTC_BOOTSTRAP on a stable
# toolchain) into its own target directory; SPALL_WEB_THREADS=0 skips it (the site then
# loads on one thread everywhere), as does a toolchain without rust-src. It has simd128
# too (every browser with wasm threads has SIMD; the worker still checks). The SIMD module
# has a target directory of its own as well (other flags); SPALL_WEB_SIMD=0 skips it (the
# worker then runs the page's scalar module).
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
rm -rf "$out/spall_web_threads.js" "$out/spall_web_threads_bg.wasm" "$out/snippets"
rm -f "$out/spall_web_simd.js" "$out/spall_web_simd_bg.wasm"
if [ "${SPALL_WEB_SIMD:-1}" != 0 ]; then
  # No default features: the Loader alone (no viewer, no SQLite).
  RUSTFLAGS="-C target-feature=+simd128" cargo build --locked --profile web \
    --target wasm32-unknown-unknown --target-dir "$target/web-simd" -p spall-web \
    --no-default-features
  wasm-bindgen --target web --no-typescript --out-name spall_web_simd --out-dir "$out" \
    "$target/web-simd/wasm32-unknown-unknown/web/spall_web.wasm"
  echo "build-web: SIMD load worker module: $(stat -c %s "$out/spall_web_simd_bg.wasm") bytes"
else
  echo "build-web: no SIMD load worker module (SPALL_WEB_SIMD=0)"
fi
threads=${SPALL_WEB_THREADS:-1}
if [ "$threads" != 0 ] && command -v rustup >/dev/null &&
  ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
  rustup component add rust-src || threads=0
fi
if [ "$threads" != 0 ]; then
  # Shared memory up to wasm32's 4 GiB (the linker's default maximum is the initial size).
  flags="-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128"
  for a in --shared-memory --import-memory --max-memory=4294967296 --export=__wasm_init_tls \
    --export=__tls_size --export=__tls_align --export=__tls_base; do
    flags="$flags -C link-arg=$a"
  done
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="$flags" cargo build --locked --profile web \
    --target wasm32-unknown-unknown --target-dir "$target/web-threads" -p spall-web \
    --no-default-features --features threads -Z build-std=std,panic_abort
  wasm-bindgen --target web --no-typescript --out-name spall_web_threads --out-dir "$out" \
    "$target/web-threads/wasm32-unknown-unknown/web/spall_web.wasm"
  tsize=$(stat -c %s "$out/spall_web_threads_bg.wasm")
  echo "build-web: threaded load worker module: $tsize bytes"
else
  echo "build-web: no threaded load worker module (SPALL_WEB_THREADS=0 or no rust-src)"
fi
size=$(stat -c %s "$out/spall_web_bg.wasm")
gz=$(gzip -9 -c "$out/spall_web_bg.wasm" | wc -c)
echo "build-web: $out (spall_web_bg.wasm: $size bytes, $gz gzipped)"
