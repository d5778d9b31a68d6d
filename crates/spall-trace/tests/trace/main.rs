//! spall-trace's integration tests, one binary: the `tracing` layer and the recording
//! sessions, through the public API only.

mod layer;
mod sessions;
