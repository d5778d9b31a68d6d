//! Shared by the CLI's test modules (each uses some of it), on top of
//! `spall-test-support`.
#![allow(dead_code)]

pub mod pair;

use std::path::Path;
use std::process::{Command, Output};

pub use spall_test_support::doc;

/// The `spall-cli` binary this package built.
pub const SPALL_CLI: &str = env!("CARGO_BIN_EXE_spall-cli");

/// A file of `tests/fixtures`, as a path string (the form command lines take).
pub fn fixture(rel: &str) -> String {
    spall_test_support::fixture(rel).display().to_string()
}

/// `python3`, for the tests that compare with a reference script; `None` (after saying
/// so) when it is missing, which `SPALL_REQUIRE_PYTHON` (set by `.ci/run`) turns into a
/// failure.
pub fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    spall_test_support::available(
        ok,
        "SPALL_REQUIRE_PYTHON",
        "python3 is not installed; the reference scripts need it",
    )
    .then_some("python3")
}

/// Runs `spall-cli ARGS` to its end, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    spall_test_support::run(SPALL_CLI, args)
}

/// Runs `spall-cli ARGS`, which must exit 0; its output.
pub fn run_ok(args: &[&str]) -> Output {
    spall_test_support::run_ok(SPALL_CLI, args)
}

/// Runs `spall-cli ARGS` with `input` on its standard input.
pub fn piped(args: &[&str], input: &[u8]) -> Output {
    spall_test_support::piped(SPALL_CLI, args, input)
}

/// Runs `spall-cli ARGS`, which must succeed; its stdout as JSON (`Null` if it is not).
pub fn spall_json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// Writes `text` to `dir/name`; its path as a string.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}
