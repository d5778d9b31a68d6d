//! Loading a trace as its bytes arrive (a browser's worker reading a file in chunks), so
//! only the model and a few megabytes of the file are ever held: `.spall`, Chrome JSON,
//! Perfetto protobuf, and any of them gzipped ([`spall_format::TraceStream`]).
//!
//! The streams cut the file where the parallel decode does (runs of whole `.spall`
//! buffers or version 1 events, runs of JSON elements), each run into its own chunk builder, and the builders
//! are merged as [`load_bytes`](crate::load_bytes) merges its chunks: the trace is
//! `load_bytes`'s.

use spall_format::{Error, TraceStream};

use crate::build::TraceBuilder;
use crate::trace::Trace;

/// A trace loaded as its bytes arrive: [`push`](Self::push) the bytes, then
/// [`finish`](Self::finish). The result is [`load_bytes`](crate::load_bytes)'s.
///
/// ```
/// let json = br#"{"traceEvents": [{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]}"#;
/// let mut load = trace_model::LoadStream::new(json).expect("JSON is streamed");
/// for piece in json.chunks(5) {
///     load.push(piece).unwrap();
/// }
/// assert_eq!(load.finish().unwrap().unwrap().span_count(), 1);
/// ```
#[derive(Debug)]
pub struct LoadStream {
    stream: TraceStream<TraceBuilder>,
}

impl LoadStream {
    /// Whether a file starting with `head` can be loaded so: `.spall` (at least its 32-byte
    /// header), JSON (its first character), Perfetto protobuf (its first packet's fields),
    /// or any of them gzipped (enough of the gzip stream to show which); not gzip within
    /// gzip.
    pub fn accepts(head: &[u8]) -> bool {
        LoadStream::new(head).is_some()
    }

    /// A load of a file whose first bytes are `head` (only looked at: push every byte),
    /// or `None` if it cannot be loaded so ([`accepts`](Self::accepts)).
    pub fn new(head: &[u8]) -> Option<LoadStream> {
        LoadStream::with_target(head, spall_format::CHUNK_BYTES)
    }

    /// [`new`](Self::new) with runs of `target` bytes (tests cut small files in many runs).
    #[doc(hidden)]
    pub fn with_target(head: &[u8], target: usize) -> Option<LoadStream> {
        let stream = TraceStream::with_target(head, target, TraceBuilder::streaming_for(head))?;
        Some(LoadStream { stream })
    }

    /// Whether the stream holds the file's (decompressed) bytes until its end: a sampling
    /// profile gathered, then decoded whole ([`spall_format::Gathered`]).
    pub fn holds_file(&self) -> bool {
        self.stream.holds_file()
    }

    /// `(read, decoded)` bytes.
    pub fn progress(&self) -> (u64, u64) {
        self.stream.progress()
    }

    /// The file's next bytes: the runs they complete are decoded.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.stream.push(chunk)
    }

    /// Merges the chunks and nests the spans. `None` when the whole file must be decoded
    /// again, which the stream no longer has: the decode would warn in a way a stream
    /// cannot (see [`TraceStream::finish`]). A JSON or protobuf thread whose events go back
    /// in time, or that trace_processor would pair otherwise, is paired again from the
    /// events its builders kept; a `.spall` thread, from its stacks.
    pub fn finish(self) -> Result<Option<Trace>, Error> {
        let decoded = self.stream.finish()?;
        Ok(decoded.and_then(|(summary, chunks)| TraceBuilder::finish_chunks(chunks, summary)))
    }
}
