//! Helpers shared by the integration tests.
#![allow(dead_code)]

use trace_model::{Trace, TraceBuilder};

/// Runs `f` on a thread with a 256 KiB stack, so deep input that recursed would overflow.
pub fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// The trace from the sequential, buffered builder: the reference for the loaders.
pub fn buffered(bytes: &[u8]) -> Trace {
    let mut b = TraceBuilder::new();
    let summary = spall_format::decode(bytes, &mut b).unwrap();
    b.finish(summary)
}

/// Runs `f` in a rayon pool of `n` threads.
pub fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
        .install(f)
}
