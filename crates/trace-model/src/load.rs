//! Loading a trace file or bytes into a [`Trace`].

use std::path::Path;

use spall_format::{DecodeOptions, Error, EventSink, Input, RawEvent};

use crate::build::TraceBuilder;
use crate::trace::Trace;

/// Forwards events to the builder and progress to a callback.
struct Sink<'a, F: FnMut(u64, u64)> {
    builder: &'a mut TraceBuilder,
    progress: &'a mut F,
}

impl<F: FnMut(u64, u64)> EventSink for Sink<'_, F> {
    #[inline]
    fn event(&mut self, event: &RawEvent<'_>) {
        self.builder.event(event);
    }

    fn progress(&mut self, done: u64, total: u64) {
        (self.progress)(done, total);
    }
}

/// Loads a trace file (`.spall`, JSON or gzip, detected by content).
pub fn load(path: impl AsRef<Path>) -> Result<Trace, Error> {
    load_with(path, &DecodeOptions::default(), |_, _| {})
}

/// [`load`] with limits and a progress callback `(bytes done, bytes total)`.
///
/// B/E events are matched as they stream in; a file whose B/E events go back in time on
/// some thread is decoded a second time with buffering (progress then runs twice).
pub fn load_with(
    path: impl AsRef<Path>,
    opts: &DecodeOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<Trace, Error> {
    let path = path.as_ref();
    let input = Input::open(path, opts)?;
    let mut decode = |builder: &mut TraceBuilder| {
        input
            .decode(&mut Sink {
                builder,
                progress: &mut progress,
            })
            .map_err(|e| e.with_path(path))
    };
    let mut streaming = TraceBuilder::streaming();
    let summary = decode(&mut streaming)?;
    match streaming.try_finish(summary) {
        Some(t) => Ok(t),
        None => {
            let mut buffered = TraceBuilder::new();
            let summary = decode(&mut buffered)?;
            Ok(buffered.finish(summary))
        }
    }
}

/// Loads a trace held in memory.
pub fn load_bytes(bytes: &[u8]) -> Result<Trace, Error> {
    let mut streaming = TraceBuilder::streaming();
    let summary = spall_format::decode(bytes, &mut streaming)?;
    match streaming.try_finish(summary) {
        Some(t) => Ok(t),
        None => {
            let mut buffered = TraceBuilder::new();
            let summary = spall_format::decode(bytes, &mut buffered)?;
            Ok(buffered.finish(summary))
        }
    }
}
