#!/usr/bin/env bash
# Every check CI runs: formatting, lints, and all tests. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc -D warnings (no broken links in the API docs)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

echo "== cargo test"
cargo test --workspace --locked

echo "== hostile input at full size (release build)"
cargo test --release --locked -p trace-model --test hostile_full -- --ignored --test-threads=1

echo "== all checks passed"
