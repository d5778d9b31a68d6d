#!/usr/bin/env bash
# The Python package (crates/spall-py): installs maturin, pytest, pandas and pyarrow into a
# virtual environment (target/py-venv), builds the package into it with `maturin develop`
# (a debug build in cargo's target/, sharing what `cargo test` built), and runs its tests
# against target/debug/spall-cli. scripts/test.sh runs it; run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.7,<2" pytest pandas pyarrow
# The CLI the tests compare with (`cargo test` has built it already).
cargo build --quiet --locked -p spall-cli
(cd crates/spall-py && VIRTUAL_ENV=$venv "$venv/bin/maturin" develop --quiet --locked)
SPALL_CLI=$root/target/debug/spall-cli "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  crates/spall-py/tests
