//! `SPALL_TIMING=1`: where a load's time goes, printed on stderr as each stage ends.

use std::sync::OnceLock;
use std::time::Instant;

/// With `SPALL_TIMING` set, prints `spall timing: T ms LABEL` on stderr, `T` counted from
/// the process's first call. Without it, does nothing and reads no clock (`Instant::now`
/// panics on wasm32-unknown-unknown).
pub fn stage(label: &str) {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    let start = START.get_or_init(|| std::env::var_os("SPALL_TIMING").map(|_| Instant::now()));
    if let Some(t0) = start {
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        eprintln!("spall timing: {ms:7.1} ms  {label}");
    }
}
