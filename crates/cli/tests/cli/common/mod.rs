//! Shared by the CLI's integration tests (each uses some of it).
#![allow(dead_code)]

pub mod pair;

use std::path::PathBuf;
use std::process::Command;

/// A file of `tests/fixtures`, as a path string.
pub fn fixture(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// `python3`, for the tests that compare with a reference script; `None` (after saying
/// so) when it is missing, which `SPALL_REQUIRE_PYTHON` (set by `.ci/run`) turns into a
/// failure.
pub fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("SPALL_REQUIRE_PYTHON").is_none(),
            "SPALL_REQUIRE_PYTHON is set but python3 is missing"
        );
        eprintln!("SKIPPED: python3 is not installed; the reference scripts need it");
        return None;
    }
    Some("python3")
}

/// Runs `spall-cli ARGS`, which must succeed; its stdout as JSON (`Null` if it is not).
pub fn spall_json(args: &[&str]) -> serde_json::Value {
    let o = Command::new(env!("CARGO_BIN_EXE_spall-cli"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// A document of `docs/`, as text.
pub fn doc(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs")
            .join(name),
    )
    .unwrap()
}
