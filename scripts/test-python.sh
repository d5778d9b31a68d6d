#!/usr/bin/env bash
# The Python package (crates/spall-py): installs maturin, pytest, pandas and pyarrow into a
# virtual environment (target/py-venv), builds the package into it with `maturin develop`
# (a debug build in cargo's target/), and runs its tests against the CLI (SPALL_CLI, else
# target/debug/spall-cli built here). scripts/test.sh runs it; run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.7,<2" pytest pandas pyarrow
# The CLI the tests compare with: SPALL_CLI where the caller built one (scripts/test.sh
# passes the one `cargo test` built: built alone, with other dependency features, it took
# about three minutes of a clean run), else built here.
if [ -z "${SPALL_CLI:-}" ]; then
  cargo build --quiet --locked -p spall-cli
  SPALL_CLI=$root/target/debug/spall-cli
fi
[ -x "$SPALL_CLI" ] || { echo "test-python: SPALL_CLI=$SPALL_CLI is not an executable" >&2; exit 1; }
(cd crates/spall-py && VIRTUAL_ENV=$venv "$venv/bin/maturin" develop --quiet --locked)
SPALL_CLI=$SPALL_CLI "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  crates/spall-py/tests
