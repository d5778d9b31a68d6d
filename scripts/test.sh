#!/usr/bin/env bash
# Every check CI runs: formatting, lints, and all tests. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

# rustdoc reads the dependencies' check that clippy made: the docs take half a minute here
# and two and a half without it (hence clippy is not folded into the test build, as
# wasm32's is into the web build).
echo "== cargo doc -D warnings (no broken links in the API docs)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

echo "== cargo test"
cargo test --workspace --locked

echo "== the vector kernels as wasm32 simd128, in Node's WASI (scripts/wasi-run.mjs)"
if rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1 && command -v node >/dev/null; then
  CARGO_TARGET_WASM32_WASIP1_RUNNER="node --no-warnings $PWD/scripts/wasi-run.mjs" \
    CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C target-feature=+simd128" \
    cargo test --locked --target wasm32-wasip1 -p spall-format --lib -- arch:: json::scan::
elif [ -n "${SPALL_REQUIRE_WEB:-}" ]; then
  echo "the wasm32-wasip1 target and node are required (SPALL_REQUIRE_WEB)" >&2; exit 1
else
  echo "SKIPPED: no wasm32-wasip1 target or node"
fi

echo "== the Python package (crates/spall-py, pytest in a venv)"
# Needs python3 with venv (Debian: python3-venv) and PyPI for maturin, pandas and pyarrow.
venv_check=$(mktemp -d)
if python3 -m venv "$venv_check/v" >/dev/null 2>&1; then
  rm -rf "$venv_check"
  # The CLI `cargo test` built, and the extension module built beside it with the same
  # dependency features (scripts/test-python.sh says why).
  SPALL_CLI=$PWD/target/debug/spall-cli SPALL_PY_BUILD=workspace scripts/test-python.sh
elif [ -n "${SPALL_REQUIRE_PYTHON_PKG:-}" ]; then
  echo "the Python package's tests need python3 with venv (SPALL_REQUIRE_PYTHON_PKG)" >&2
  exit 1
else
  echo "SKIPPED: the Python package's tests need python3 with venv (Debian: python3-venv)"
fi

# The full-size tests need optimized code: the debug build's dependencies already are
# (Cargo.toml's dependency profile), so the workspace's own crates are rebuilt at the same
# opt-level, with the same selection as `cargo test` (hence the same dependency features),
# and every dependency is reused: a release build compiled them all again (SQLite's C
# among them), twice as long. Debug assertions stay on.
full=(env CARGO_PROFILE_DEV_OPT_LEVEL=2 cargo test --workspace --locked)
echo "== the full-size tests' build (the workspace's crates optimized)"
"${full[@]}" --test hostile_full --test sql --no-run
echo "== hostile input at full size (optimized)"
"${full[@]}" --test hostile_full -- --ignored --test-threads=1

echo "== SQL parity on the large Chromium traces (optimized)"
"${full[@]}" --test sql parity:: -- --ignored

echo "== the web viewer in headless Chromium (tests/web/e2e.mjs)"
# Needs wasm-bindgen-cli, Debian's chromium, node and `npm ci` in tests/web (see .ci/run).
if command -v wasm-bindgen >/dev/null && [ -x /usr/bin/chromium ] && command -v node >/dev/null \
   && [ -d tests/web/node_modules/playwright-core ]; then
  # Clippy lints the wasm32 code as the site is built: clippy-driver compiles the
  # workspace's crates (RUSTC_WORKSPACE_WRAPPER, as `cargo clippy` runs it for a check),
  # which saves a check of every wasm32 dependency beside the build (four minutes).
  if ! command -v clippy-driver >/dev/null; then
    echo "clippy-driver is required (rustup component add clippy)" >&2; exit 1
  fi
  RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__ \
    scripts/build-web.sh target/web-site
  node tests/web/e2e.mjs target/web-site
elif [ -n "${SPALL_REQUIRE_WEB:-}" ]; then
  echo "the web test needs wasm-bindgen-cli, /usr/bin/chromium, node and tests/web/node_modules (SPALL_REQUIRE_WEB)" >&2
  exit 1
else
  echo "SKIPPED: the web test needs wasm-bindgen-cli, /usr/bin/chromium, node and 'npm ci' in tests/web"
  # Its build linted the wasm32 code; without it, a check does.
  . scripts/wasm-cc.sh
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown && wasm_cc; then
    echo "== cargo clippy -D warnings, wasm32 (the web viewer's library)"
    cargo clippy --locked --target wasm32-unknown-unknown -p spall-viewer -p spall-web --lib -- -D warnings
  else
    echo "SKIPPED: no wasm32 lints either: no wasm32-unknown-unknown target or clang 16+"
  fi
fi

echo "== all checks passed"
