"""Shared fixtures: the repository's test traces and the spall-cli binary to compare with.

SPALL_CLI names the binary (default: target/debug/spall-cli, which `cargo test` builds).
With SPALL_REQUIRE_PYTHON_PKG=1 (CI) a missing binary fails instead of skipping.
"""

import functools
import os
import pathlib
import subprocess

import pytest

import spall

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def fixtures():
    return FIXTURES


@pytest.fixture(scope="session")
def cli():
    path = pathlib.Path(os.environ.get("SPALL_CLI", ROOT / "target" / "debug" / "spall-cli"))
    if not path.exists():
        if os.environ.get("SPALL_REQUIRE_PYTHON_PKG"):
            pytest.fail(f"{path} is missing (build it: cargo build -p spall-cli)")
        pytest.skip(f"{path} is missing (build it: cargo build -p spall-cli)")

    def run(*args, codes=(0, 1)):
        r = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True)
        if r.returncode not in codes:
            raise AssertionError(f"spall-cli {' '.join(map(str, args))}: {r.stderr}")
        return r

    return run


@pytest.fixture(scope="session")
def load():
    """spall.load, each path loaded once per session (the debug build loads slowly)."""
    return functools.lru_cache(maxsize=None)(lambda path: spall.load(str(path)))
