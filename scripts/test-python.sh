#!/usr/bin/env bash
# The Python package (crates/spall-py): installs maturin, pytest, pandas and pyarrow into a
# virtual environment (target/py-venv), builds the package into it with `maturin develop`
# (a debug build in cargo's target/), and runs its tests against the CLI (SPALL_CLI, else
# target/debug/spall-cli built here). scripts/test.sh runs it; run from anywhere.
#
# SPALL_PY_BUILD=workspace builds the extension module with cargo instead, with the same
# package and target selection as `cargo test --workspace` (scripts/test.sh, which runs it
# after its tests): cargo then resolves the dependencies' features as it did for the tests
# and compiles only pyo3's crates, arrow-pyarrow and spall-py. maturin builds spall-py alone,
# whose dependency features differ, and rebuilt most dependencies (about four minutes of a
# clean run). The module is laid out as `maturin develop` lays out a mixed package, from
# pyproject.toml's module-name, python-source and features.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
build=${SPALL_PY_BUILD:-maturin}
case $build in
  maturin | workspace) ;;
  *) echo "test-python: SPALL_PY_BUILD is 'maturin' (the default) or 'workspace', not '$build'" >&2; exit 1 ;;
esac
pkgs=(pytest pandas pyarrow)
[ "$build" = workspace ] || pkgs+=("maturin>=1.7,<2")
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pkgs[@]}"
# The CLI the tests compare with: SPALL_CLI where the caller built one (scripts/test.sh
# passes the one `cargo test` built: built alone, with other dependency features, it took
# about three minutes of a clean run), else built here.
if [ -z "${SPALL_CLI:-}" ]; then
  cargo build --quiet --locked -p spall-cli
  SPALL_CLI=$root/target/debug/spall-cli
fi
[ -x "$SPALL_CLI" ] || { echo "test-python: SPALL_CLI=$SPALL_CLI is not an executable" >&2; exit 1; }
if [ "$build" = workspace ]; then
  # pyproject.toml's [tool.maturin]: the module's package and name (the crate's library
  # is named as the module), its Python sources' directory and the crate's features.
  read -r pkg name src features < <("$venv/bin/python" -c '
import tomllib
m = tomllib.load(open("crates/spall-py/pyproject.toml", "rb"))["tool"]["maturin"]
pkg, name = m["module-name"].split(".")
print(pkg, name, m["python-source"], ",".join("spall-py/" + f for f in m.get("features", [])) or "-")')
  [ "$features" = - ] && features=
  cargo build --locked --workspace --lib --tests ${features:+--features "$features"}
  cp "target/debug/lib$name.so" "crates/spall-py/$src/$pkg/$name.abi3.so"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$root/crates/spall-py/$src" >"$site/$pkg.pth"
else
  (cd crates/spall-py && VIRTUAL_ENV=$venv "$venv/bin/maturin" develop --quiet --locked)
fi
SPALL_CLI=$SPALL_CLI "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  crates/spall-py/tests
