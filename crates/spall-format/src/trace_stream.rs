//! A trace decoded as its bytes arrive, whatever the format a stream can take: `.spall`
//! versions 1 and 3 ([`SpallStream`]), Chrome JSON ([`JsonStream`]), Perfetto protobuf
//! ([`ProtoStream`]), sampling profiles ([`ProfileStream`]), and any of
//! them gzipped
//! (decompressed as the bytes arrive, the output pushed on at once, so neither the file
//! nor its decompressed text is ever held whole).
//!
//! The sampling profiles no stream reads (a `.cpuprofile` in the older `head` form,
//! UTF-16 text) are gathered
//! ([`Gathered`]): their bytes, decompressed as they arrive when gzipped, so the file is
//! held once (never its compressed bytes beside its text), and decoded whole at the end.
//!
//! A gzip stream that a whole-file decode would warn about (it ends early, is corrupt, or
//! has bytes after its last member) or refuse (it outgrows the decompression limit) is not
//! decoded here: [`finish`](TraceStream::finish) says to decode the file again, whole, to
//! get that decode's result.

use std::io::Write;

use crate::error::Error;
use crate::event::EventSink;
use crate::proto::ProtoStream;
use crate::sampled::ProfileStream;
use crate::{detect, DecodeOptions, Detected, JsonStream, SpallStream, Summary};

/// How much of a gzip file's start is decompressed to see what it holds.
const HEAD: usize = 64 << 10;

/// One of the streams, by the file's first bytes: [`push`](Self::push) the file's bytes in
/// order, then [`finish`](Self::finish).
///
/// ```
/// use spall_format::{Collect, TraceStream};
/// use std::io::Write;
///
/// let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#;
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
/// gz.write_all(json).unwrap();
/// let file = gz.finish().unwrap();
/// let mut stream = TraceStream::new(&file, Collect::default).expect("gzipped JSON");
/// for piece in file.chunks(7) {
///     stream.push(piece).unwrap();
/// }
/// let (summary, _sinks) = stream.finish().unwrap().expect("a sound gzip stream");
/// assert!(summary.gzip);
/// assert_eq!(summary.events, 1);
/// ```
#[derive(Debug)]
pub enum TraceStream<S: EventSink> {
    /// `.spall` version 3.
    Spall(SpallStream<S>),
    /// Chrome JSON.
    Json(JsonStream<S>),
    /// Perfetto protobuf.
    Proto(Box<ProtoStream<S>>),
    /// A sampling profile read as it arrives (`perf script`, collapsed stacks,
    /// `.cpuprofile`, speedscope, Gecko).
    Profile(ProfileStream<S>),
    /// Any of them, gzipped.
    Gzip(Box<Gunzipping<S>>),
    /// A sampling profile read whole: its bytes gathered, then decoded at the end.
    Gathered(Gathered<S>),
}

/// A sampling profile that cannot be decoded before its end (its samples refer to tables
/// that may come after them): its (decompressed) bytes gathered as they arrive, then
/// decoded whole by [`finish`](TraceStream::finish), into one sink.
pub struct Gathered<S> {
    bytes: Vec<u8>,
    new_sink: Box<dyn Fn() -> S>,
}

impl<S> std::fmt::Debug for Gathered<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gathered")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A gzipped file's stream: what decompresses goes on to the stream within.
pub struct Gunzipping<S: EventSink> {
    dec: flate2::write::MultiGzDecoder<Feed<S>>,
    read: u64,
    /// The gzip stream is one a whole-file decode warns about or refuses.
    unsound: bool,
}

impl<S: EventSink> std::fmt::Debug for Gunzipping<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gunzipping")
            .field("read", &self.read)
            .field("decompressed", &self.dec.get_ref().out)
            .finish()
    }
}

/// Where decompressed bytes go.
struct Feed<S: EventSink> {
    inner: TraceStream<S>,
    out: u64,
    limit: u64,
    /// The inner stream's error, returned by the next push.
    error: Option<Error>,
}

impl<S: EventSink> Write for Feed<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out += buf.len() as u64;
        if self.out > self.limit {
            return Err(std::io::Error::other("past the decompression limit"));
        }
        if let Err(e) = self.inner.push(buf) {
            self.error = Some(e);
            return Err(std::io::Error::other("the stream within failed"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<S: EventSink> TraceStream<S> {
    /// A stream for a file whose first bytes are `head` (only looked at: push every byte),
    /// its runs each into a new sink from `new_sink`; `None` if the file is not one a
    /// stream decodes (gzip within gzip).
    pub fn new(head: &[u8], new_sink: impl Fn() -> S + 'static) -> Option<Self> {
        TraceStream::with_target(head, crate::CHUNK_BYTES, new_sink)
    }

    /// [`new`](Self::new) with runs of `target` bytes (tests cut small files in many runs).
    #[doc(hidden)]
    pub fn with_target(
        head: &[u8],
        target: usize,
        new_sink: impl Fn() -> S + 'static,
    ) -> Option<Self> {
        if detect(head) == Detected::Gzip {
            let mut out = Vec::new();
            let dec = flate2::read::MultiGzDecoder::new(head);
            // A head cut off by its length ends early: what came out is enough.
            let _ =
                std::io::Read::read_to_end(&mut std::io::Read::take(dec, HEAD as u64), &mut out);
            let inner = match TraceStream::with_target(&out, target, new_sink)? {
                TraceStream::Gzip(_) => return None,
                plain => plain,
            };
            let feed = Feed {
                inner,
                out: 0,
                limit: DecodeOptions::default().max_decompressed,
                error: None,
            };
            let dec = flate2::write::MultiGzDecoder::new(feed);
            return Some(TraceStream::Gzip(Box::new(Gunzipping {
                dec,
                read: 0,
                unsound: false,
            })));
        }
        if SpallStream::<S>::accepts(head) {
            Some(TraceStream::Spall(SpallStream::with_target(
                target, new_sink,
            )))
        } else if JsonStream::<S>::accepts(head) {
            Some(TraceStream::Json(JsonStream::with_target(target, new_sink)))
        } else if ProtoStream::<S>::accepts(head) {
            Some(TraceStream::Proto(Box::new(ProtoStream::with_target(
                target, new_sink,
            ))))
        } else if let Some(f) = ProfileStream::<S>::accepts(head) {
            Some(TraceStream::Profile(ProfileStream::with_target(
                f, target, new_sink,
            )))
        } else if let Detected::Profile(_) = detect(head) {
            Some(TraceStream::Gathered(Gathered {
                bytes: Vec::new(),
                new_sink: Box::new(new_sink),
            }))
        } else {
            None
        }
    }

    /// Whether the stream holds the file's (decompressed) bytes until its end, as a
    /// [`Gathered`] profile does.
    pub fn holds_file(&self) -> bool {
        match self {
            TraceStream::Gathered(_) => true,
            TraceStream::Gzip(g) => g.dec.get_ref().inner.holds_file(),
            _ => false,
        }
    }

    /// `(read, decoded)` bytes of the file (a gzipped file's bytes are decoded as they are
    /// read).
    pub fn progress(&self) -> (u64, u64) {
        match self {
            TraceStream::Spall(s) => s.progress(),
            TraceStream::Json(s) => s.progress(),
            TraceStream::Proto(s) => s.progress(),
            TraceStream::Profile(s) => s.progress(),
            TraceStream::Gzip(g) => (g.read, g.read),
            TraceStream::Gathered(g) => (g.bytes.len() as u64, 0),
        }
    }

    /// Why a protobuf stream gave up, so far: [`finish`](Self::finish) will say to decode
    /// the file again, whole (see [`ProtoStream::finish`]).
    pub fn gave_up(&self) -> Option<&'static str> {
        match self {
            TraceStream::Proto(s) => s.gave_up(),
            TraceStream::Profile(s) => s.gave_up(),
            TraceStream::Gzip(g) if g.unsound => Some("a gzip stream a whole decode warns about"),
            TraceStream::Gzip(g) => g.dec.get_ref().inner.gave_up(),
            _ => None,
        }
    }

    /// The file's next bytes: the runs they complete are decoded.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        match self {
            TraceStream::Spall(s) => s.push(chunk),
            TraceStream::Json(s) => s.push(chunk),
            TraceStream::Proto(s) => s.push(chunk),
            TraceStream::Profile(s) => s.push(chunk),
            TraceStream::Gathered(g) => {
                g.bytes.extend_from_slice(chunk);
                Ok(())
            }
            TraceStream::Gzip(g) => {
                g.read += chunk.len() as u64;
                if g.unsound {
                    return Ok(());
                }
                if g.dec.write_all(chunk).is_err() {
                    if let Some(e) = g.dec.get_mut().error.take() {
                        return Err(e);
                    }
                    g.unsound = true;
                }
                Ok(())
            }
        }
    }

    /// Decodes what is left: the summary and the sinks, in file order, or `None` when the
    /// file must be decoded again, whole, for its result (see [`JsonStream::finish`],
    /// [`ProtoStream::finish`], and a gzip stream a whole-file decode warns about).
    #[allow(clippy::type_complexity)]
    pub fn finish(self) -> Result<Option<(Summary, Vec<S>)>, Error> {
        match self {
            TraceStream::Spall(s) => s.finish().map(Some),
            TraceStream::Json(s) => s.finish(),
            TraceStream::Proto(s) => s.finish(),
            TraceStream::Profile(s) => s.finish(),
            TraceStream::Gathered(g) => {
                let mut sink = (g.new_sink)();
                let (n, limit) = (
                    g.bytes.len() as u64,
                    DecodeOptions::default().max_decompressed,
                );
                let d = crate::diag::Diagnostics::default();
                let summary = crate::decode_plain(&g.bytes, false, n, d, limit, &mut sink)?;
                Ok(Some((summary, vec![sink])))
            }
            TraceStream::Gzip(g) => {
                let read = g.read;
                // A stream that ends early fails here (the inner stream's own error is the
                // whole-file decode's too).
                let feed = match g.dec.finish() {
                    Ok(feed) if !g.unsound => feed,
                    _ => return Ok(None),
                };
                let Some((mut summary, sinks)) = feed.inner.finish()? else {
                    return Ok(None);
                };
                summary.gzip = true;
                summary.input_bytes = read;
                summary.decoded_bytes = feed.out;
                Ok(Some((summary, sinks)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Collect;

    fn gz(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// What a whole-file decode gives, as text to compare.
    fn whole(b: &[u8]) -> String {
        let mut c = Collect::default();
        match crate::decode(b, &mut c) {
            Ok(s) => format!("{s:?} {:?}", c.0),
            Err(e) => format!("error {e}"),
        }
    }

    fn streamed(b: &[u8], piece: usize, target: usize) -> String {
        let Some(mut s) = TraceStream::with_target(b, target, Collect::default) else {
            return "not streamed".into();
        };
        for p in b.chunks(piece) {
            if let Err(e) = s.push(p) {
                return format!("error {e}");
            }
        }
        match s.finish() {
            Ok(Some((sum, sinks))) => {
                let ev: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                format!("{sum:?} {ev:?}")
            }
            Ok(None) => "decode again".into(),
            Err(e) => format!("error {e}"),
        }
    }

    fn json() -> Vec<u8> {
        let mut s = String::from(r#"{"traceEvents": ["#);
        for i in 0..3_000 {
            s.push_str(&format!(
                r#"{{"name":"n{}","ph":"X","ts":{i},"dur":1,"pid":1,"tid":{}}},"#,
                i % 17,
                i % 3
            ));
        }
        s.push_str(r#"{}], "displayTimeUnit": "ns"}"#);
        s.into_bytes()
    }

    #[test]
    fn gzipped_json_and_spall_give_the_whole_decode() {
        let mut w = crate::SpallWriter::new(Vec::new(), 1.0).unwrap();
        for i in 0..2_000 {
            w.begin(1, i % 3, 2 * i as u64, "s", "").unwrap();
            w.end(1, i % 3, 2 * i as u64 + 1).unwrap();
        }
        for plain in [json(), w.finish().unwrap()] {
            let file = gz(&plain);
            // Two members, as a gzip appended to another.
            let mut two = gz(&plain[..plain.len() / 2]);
            two.extend(gz(&plain[plain.len() / 2..]));
            for file in [file, two] {
                let want = whole(&file);
                assert!(want.contains("gzip: true"), "{want}");
                // One run, and many (the same events in the same order).
                for (piece, target) in [(1 << 20, 1 << 20), (4_099, 1 << 20), (333, 10_000)] {
                    let got = streamed(&file, piece, target);
                    assert_eq!(got, want, "pieces of {piece}, runs of {target}");
                }
            }
        }
    }

    #[test]
    fn unsound_gzip_is_decoded_again_whole() {
        let file = gz(&json());
        // Cut short, corrupt, trailing bytes: a whole-file decode warns.
        let mut corrupt = file.clone();
        corrupt[file.len() / 2] ^= 0x55;
        let mut trailing = file.clone();
        trailing.extend_from_slice(b"xyz");
        for (what, b) in [
            ("cut", file[..file.len() - 100].to_vec()),
            ("cut in the trailer", file[..file.len() - 3].to_vec()),
            ("corrupt", corrupt),
            ("trailing", trailing),
        ] {
            assert!(whole(&b).contains("GzipTruncated"), "{what}: {}", whole(&b));
            assert_eq!(streamed(&b, 4_099, 1 << 20), "decode again", "{what}");
        }
        // Gzip within gzip is not streamed.
        assert_eq!(streamed(&gz(&file), 100, 1 << 20), "not streamed");
    }
}
