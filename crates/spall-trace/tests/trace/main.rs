//! spall-trace's integration tests, one binary: the `tracing` layer and the recording
//! sessions, through the public API only.

use std::sync::{Mutex, MutexGuard};

mod layer;
mod sessions;

/// A recording session is process-wide: the tests that start one take turns.
fn one_session() -> MutexGuard<'static, ()> {
    static SESSION: Mutex<()> = Mutex::new(());
    SESSION.lock().unwrap_or_else(|e| e.into_inner())
}
