//! Loading a trace as its bytes arrive (a browser's worker reading a file in chunks), so
//! only the model and about one chunk of the file are ever held: `.spall` version 3
//! ([`spall_format::SpallStream`]) and Chrome JSON ([`spall_format::JsonStream`]).
//!
//! The streams cut the file where the parallel decode does (runs of whole `.spall`
//! buffers, runs of JSON elements), each run into its own chunk builder, and the builders
//! are merged as [`load_bytes`](crate::load_bytes) merges its chunks: the trace is
//! `load_bytes`'s.

use spall_format::{Error, JsonStream, SpallStream, Summary};

use crate::build::TraceBuilder;
use crate::trace::Trace;

#[derive(Debug)]
enum Stream {
    Spall(SpallStream<TraceBuilder>),
    Json(JsonStream<TraceBuilder>),
}

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
    stream: Stream,
}

impl LoadStream {
    /// Whether a file starting with `head` can be loaded so: `.spall` version 3 (at least
    /// its 32-byte header) or JSON (its first character). Gzip, protobuf and `.spall`
    /// version 1 cannot.
    pub fn accepts(head: &[u8]) -> bool {
        SpallStream::<TraceBuilder>::accepts(head) || JsonStream::<TraceBuilder>::accepts(head)
    }

    /// A load of a file whose first bytes are `head` (only looked at: push every byte),
    /// or `None` if it cannot be loaded so ([`accepts`](Self::accepts)).
    pub fn new(head: &[u8]) -> Option<LoadStream> {
        LoadStream::with_target(head, spall_format::CHUNK_BYTES)
    }

    /// [`new`](Self::new) with runs of `target` bytes (tests cut small files in many runs).
    #[doc(hidden)]
    pub fn with_target(head: &[u8], target: usize) -> Option<LoadStream> {
        let stream = if SpallStream::<TraceBuilder>::accepts(head) {
            Stream::Spall(SpallStream::with_target(target, TraceBuilder::streaming))
        } else if JsonStream::<TraceBuilder>::accepts(head) {
            Stream::Json(JsonStream::with_target(target, TraceBuilder::streaming))
        } else {
            return None;
        };
        Some(LoadStream { stream })
    }

    /// `(read, decoded)` bytes.
    pub fn progress(&self) -> (u64, u64) {
        match &self.stream {
            Stream::Spall(s) => s.progress(),
            Stream::Json(s) => s.progress(),
        }
    }

    /// The file's next bytes: the runs they complete are decoded.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        match &mut self.stream {
            Stream::Spall(s) => s.push(chunk),
            Stream::Json(s) => s.push(chunk),
        }
    }

    /// Merges the chunks and nests the spans. `None` when the whole file must be decoded
    /// again, which the stream no longer has: some thread's B/E events go back in time
    /// (a second, buffered decode), or a JSON file that is not all UTF-8 has a malformed
    /// event read as text (see [`JsonStream::finish`]).
    pub fn finish(self) -> Result<Option<Trace>, Error> {
        let decoded: Option<(Summary, Vec<TraceBuilder>)> = match self.stream {
            Stream::Spall(s) => Some(s.finish()?),
            Stream::Json(s) => s.finish()?,
        };
        Ok(decoded.and_then(|(summary, chunks)| TraceBuilder::finish_chunks(chunks, summary)))
    }
}
