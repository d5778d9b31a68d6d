#!/usr/bin/env bash
# The Python package (crates/spall-py): installs maturin, pytest, pandas and pyarrow into a
# virtual environment (target/py-venv), builds the package into it with `maturin develop`
# (a debug build in cargo's target/), and runs its tests against the CLI (SPALL_CLI, else
# target/debug/spall-cli built here). scripts/test.sh runs it; run from anywhere.
#
# SPALL_PY_MODULE names an extension module the caller built (a cdylib of spall-py with the
# features pyproject.toml gives maturin): it is put where `maturin develop` would put it,
# and maturin is neither installed nor run. scripts/test.sh builds it beside `cargo test`,
# with the workspace's dependency features: maturin builds spall-py alone, whose features
# differ, and rebuilt most dependencies (about four minutes of a clean run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
pkgs=(pytest pandas pyarrow)
[ -n "${SPALL_PY_MODULE:-}" ] || pkgs+=("maturin>=1.7,<2")
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pkgs[@]}"
# The CLI the tests compare with: SPALL_CLI where the caller built one (scripts/test.sh
# passes the one `cargo test` built: built alone, with other dependency features, it took
# about three minutes of a clean run), else built here.
if [ -z "${SPALL_CLI:-}" ]; then
  cargo build --quiet --locked -p spall-cli
  SPALL_CLI=$root/target/debug/spall-cli
fi
[ -x "$SPALL_CLI" ] || { echo "test-python: SPALL_CLI=$SPALL_CLI is not an executable" >&2; exit 1; }
if [ -n "${SPALL_PY_MODULE:-}" ]; then
  [ -f "$SPALL_PY_MODULE" ] || { echo "test-python: SPALL_PY_MODULE=$SPALL_PY_MODULE is not a file" >&2; exit 1; }
  # As `maturin develop` lays out a mixed package: module-name `spall._spall` (abi3) beside
  # python/spall, which a .pth file puts on the venv's path.
  module=$(sed -n 's/^module-name = "\(.*\)"$/\1/p' crates/spall-py/pyproject.toml)
  features=$(sed -n 's/^features = \(.*\)$/\1/p' crates/spall-py/pyproject.toml)
  if [ "$module" != spall._spall ] || [ "$features" != '["extension-module"]' ]; then
    echo "test-python: pyproject.toml's module-name or features changed: mend SPALL_PY_MODULE's layout here and its build in scripts/test.sh" >&2
    exit 1
  fi
  cp "$SPALL_PY_MODULE" crates/spall-py/python/spall/_spall.abi3.so
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$root/crates/spall-py/python" >"$site/spall.pth"
else
  (cd crates/spall-py && VIRTUAL_ENV=$venv "$venv/bin/maturin" develop --quiet --locked)
fi
SPALL_CLI=$SPALL_CLI "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  crates/spall-py/tests
