//! Decoding a `.spall` file as its bytes arrive (a browser reading a `File` or a `fetch`
//! body in chunks), so the whole file is never held: only the bytes of the buffers (or,
//! in version 1, the events) not decoded yet, about one pushed piece.
//!
//! Chunks may end anywhere, inside a buffer header or an event. Once the whole buffers
//! held reach [`CHUNK_BYTES`](crate::CHUNK_BYTES), they are decoded as one run into its own
//! sink with the file's offsets, as the parallel decoder's chunks are
//! ([`decode_parallel`](crate::decode_parallel)); version 1, a flat run of events, is cut
//! after any whole event. The events are those of [`decode`](crate::decode), in file order,
//! warnings included. What is left at the end (a buffer or event cut off by the end of the
//! file) is decoded as a whole-file decode would.
//!
//! ```
//! use spall_format::{Collect, SpallStream};
//! # let file = {
//! #     let mut w = spall_format::SpallWriter::new(Vec::new(), 1.0).unwrap();
//! #     w.begin(1, 1, 10, "main", "").unwrap();
//! #     w.end(1, 1, 20).unwrap();
//! #     w.finish().unwrap()
//! # };
//! assert!(SpallStream::<Collect>::accepts(&file));
//! let mut stream = SpallStream::new(Collect::default);
//! for piece in file.chunks(7) {
//!     stream.push(piece).unwrap();
//! }
//! let (summary, sinks) = stream.finish().unwrap();
//! assert_eq!(summary.events, 2);
//! assert_eq!(sinks.iter().map(|s| s.0.len()).sum::<usize>(), 2);
//! ```

use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::EventSink;
use crate::parallel::CHUNK_BYTES;
use crate::spall::{self, SpallHeader, BUFFER_HEADER_LEN, HEADER_LEN};
use crate::time::TickScale;
use crate::{detect, Detected, Format, Summary};

/// A `.spall` decode fed chunk by chunk: [`push`](Self::push) the file's bytes in order,
/// then [`finish`](Self::finish).
pub struct SpallStream<S> {
    /// The bytes not decoded yet: from the file's start until the header is read, then from
    /// the start of a buffer (version 1: of an event).
    window: Vec<u8>,
    /// The file's offset of `window[0]`.
    at: u64,
    /// Where the walk over whole buffers (or events) in `window` stopped: a buffer's start.
    walked: usize,
    /// Version 1: bytes of a Pad_Skip that runs past what has arrived, dropped as they come.
    skip: u64,
    /// Version 1: an event of no known layout, where and its type; the rest is not read.
    stopped: Option<(u64, u8)>,
    header: Option<(SpallHeader, TickScale)>,
    /// A run is decoded once its whole buffers hold this many bytes.
    target: usize,
    diags: Diagnostics,
    sinks: Vec<S>,
    events: u64,
    read: u64,
    new_sink: Box<dyn Fn() -> S>,
}

impl<S> std::fmt::Debug for SpallStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpallStream")
            .field("read", &self.read)
            .field("held", &self.window.len())
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl<S: EventSink> SpallStream<S> {
    /// Whether a file whose first bytes are `head` (at least the 32-byte header) is one
    /// this decodes: `.spall` version 1 or 3.
    pub fn accepts(head: &[u8]) -> bool {
        detect(head) == Detected::Spall
            && head.len() >= HEADER_LEN
            && spall::read_header(head).is_ok()
    }

    /// A stream whose runs of buffers each go to a new sink from `new_sink`.
    pub fn new(new_sink: impl Fn() -> S + 'static) -> Self {
        SpallStream::with_target(CHUNK_BYTES, new_sink)
    }

    /// [`new`](Self::new) with runs of `target` bytes (tests cut small files in many runs).
    #[doc(hidden)]
    pub fn with_target(target: usize, new_sink: impl Fn() -> S + 'static) -> Self {
        SpallStream {
            window: Vec::new(),
            at: 0,
            walked: 0,
            skip: 0,
            stopped: None,
            header: None,
            target: target.max(1),
            diags: Diagnostics::default(),
            sinks: Vec::new(),
            events: 0,
            read: 0,
            new_sink: Box::new(new_sink),
        }
    }

    /// `(read, decoded)`: bytes pushed so far, and bytes decoded of them.
    pub fn progress(&self) -> (u64, u64) {
        (self.read, self.at)
    }

    /// The next bytes of the file. Decodes every run of whole buffers that is complete; an
    /// error only for a header that is not `.spall`'s.
    pub fn push(&mut self, mut chunk: &[u8]) -> Result<(), Error> {
        self.read += chunk.len() as u64;
        if self.stopped.is_some() {
            self.at += chunk.len() as u64;
            return Ok(());
        }
        if self.skip > 0 {
            let n = self.skip.min(chunk.len() as u64);
            self.skip -= n;
            self.at += n;
            chunk = &chunk[n as usize..];
        }
        self.window.extend_from_slice(chunk);
        match self.header {
            None if self.window.len() < HEADER_LEN => return Ok(()),
            None => self.read_header()?,
            Some(_) => {}
        }
        match self.header.map(|h| h.0.version) {
            Some(1) => self.decode_whole_events(),
            _ => self.decode_whole_runs(),
        }
        Ok(())
    }

    fn read_header(&mut self) -> Result<(), Error> {
        let mut d = Diagnostics::default();
        let (header, scale) = spall::prepare(&self.window, &mut d)?;
        self.diags.merge(d);
        self.header = Some((header, scale));
        self.window.drain(..HEADER_LEN);
        self.at = HEADER_LEN as u64;
        Ok(())
    }

    /// Walks the buffer headers in the window; when its whole buffers reach the target,
    /// decodes them all as one run and lets them go. Only the buffer cut off by the piece's
    /// end is left to move to the window's start (a run per target's worth of bytes would
    /// move the rest of the piece once per run).
    fn decode_whole_runs(&mut self) {
        let mut p = self.walked;
        while self.window.len() - p >= BUFFER_HEADER_LEN {
            let size = u32::from_le_bytes(self.window[p..p + 4].try_into().expect("4 bytes"));
            let end = (p + BUFFER_HEADER_LEN).saturating_add(size as usize);
            if end > self.window.len() {
                break;
            }
            p = end;
        }
        if p >= self.target {
            self.decode_run(p);
            p = 0;
        }
        self.walked = p;
    }

    /// Version 1: walks the events in the window; when the whole ones reach the target,
    /// decodes them as one run. A Pad_Skip that runs past the window ends a run, its rest
    /// dropped as it arrives; an event of no known layout ends the decode, as in a
    /// whole-file decode.
    fn decode_whole_events(&mut self) {
        let mut p = self.walked;
        loop {
            let left = (self.window.len() - p) as u64;
            match spall::v1_event_len(&self.window[p..]) {
                Ok(Some(n)) if n <= left => p += n as usize,
                Ok(Some(n)) if self.window[p] == spall::event_type::PAD_SKIP => {
                    self.skip = n - left;
                    self.decode_run(self.window.len());
                    self.walked = 0;
                    return;
                }
                Ok(_) => break,
                Err(t) => {
                    if p > 0 {
                        self.decode_run(p);
                    }
                    self.stopped = Some((self.at, t));
                    self.at += self.window.len() as u64;
                    self.window = Vec::new();
                    self.walked = 0;
                    return;
                }
            }
        }
        if p >= self.target {
            self.decode_run(p);
            p = 0;
        }
        self.walked = p;
    }

    /// Decodes `window[..end]` into a new sink and drops those bytes.
    fn decode_run(&mut self, end: usize) {
        let Some((header, scale)) = &self.header else {
            return;
        };
        let mut sink = (self.new_sink)();
        let mut d = Diagnostics::default();
        let b = &self.window[..end];
        let v = header.version;
        self.events += spall::decode_chunk(b, v, (0, end), self.at, scale, &mut sink, &mut d);
        self.diags.merge(d);
        self.sinks.push(sink);
        self.window.drain(..end);
        self.at += end as u64;
    }

    /// Decodes what is left (a last buffer the file cut off is warned about, as a
    /// whole-file decode does) and returns the summary and the sinks, in file order.
    pub fn finish(mut self) -> Result<(Summary, Vec<S>), Error> {
        if self.header.is_none() {
            // Too short for a header: the header's own error.
            spall::read_header(&self.window)?;
            self.read_header()?;
        }
        if !self.window.is_empty() {
            self.decode_run(self.window.len());
        }
        if let Some((at, t)) = self.stopped {
            spall::unsupported(&mut self.diags, at, t, self.read - at, "file");
        }
        let header = self.header.map(|h| h.0);
        let summary = Summary {
            format: match header.map(|h| h.version) {
                Some(1) => Format::SpallV1,
                _ => Format::SpallV3,
            },
            gzip: false,
            input_bytes: self.read,
            decoded_bytes: self.read,
            parsed_bytes: self.read,
            events: self.events,
            diagnostics: self.diags,
            spall: header,
            json: None,
        };
        Ok((summary, self.sinks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Collect, RawEvent};

    fn events(sinks: Vec<Collect>) -> Vec<RawEvent<'static>> {
        sinks.into_iter().flat_map(|s| s.0).collect()
    }

    /// What a whole-file decode gives, as text to compare.
    fn whole(b: &[u8]) -> String {
        let mut c = Collect::default();
        match crate::decode(b, &mut c) {
            Ok(s) => format!("{:?} {:?} {:?} {:?}", s.events, s.diagnostics, s.spall, c.0),
            Err(e) => format!("error {e}"),
        }
    }

    /// The same, streamed in the pieces `cuts` makes, with runs of `target` bytes.
    fn streamed(b: &[u8], cuts: &[usize], target: usize) -> String {
        let mut s = SpallStream::with_target(target, Collect::default);
        let mut from = 0;
        for &c in cuts.iter().chain([&b.len()]) {
            if let Err(e) = s.push(&b[from..c.max(from)]) {
                return format!("error {e}");
            }
            from = c.max(from);
        }
        match s.finish() {
            Ok((sum, sinks)) => {
                let ev = events(sinks);
                format!(
                    "{:?} {:?} {:?} {:?}",
                    sum.events, sum.diagnostics, sum.spall, ev
                )
            }
            Err(e) => format!("error {e}"),
        }
    }

    /// A small v3 file: two threads, names, args, a thread name, nesting.
    fn small() -> Vec<u8> {
        let mut w = crate::SpallWriter::new(Vec::new(), 2.5).unwrap();
        w.begin(1, 1, 10, "main", "").unwrap();
        w.begin(1, 2, 11, "worker", "x=1").unwrap();
        w.begin(1, 1, 12, "inner", "").unwrap();
        w.end(1, 1, 15).unwrap();
        w.end(1, 2, 30).unwrap();
        w.end(1, 1, 40).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn every_cut_gives_the_whole_decode() {
        let b = small();
        let want = whole(&b);
        assert!(want.contains("worker"), "{want}");
        for target in [1, 40, 1 << 20] {
            for c in 0..=b.len() {
                assert_eq!(
                    streamed(&b, &[c], target),
                    want,
                    "cut at {c}, runs of {target}"
                );
            }
        }
        // Every byte its own chunk.
        let each: Vec<usize> = (1..b.len()).collect();
        assert_eq!(streamed(&b, &each, 1), want);
    }

    #[test]
    fn a_file_cut_short_warns_as_the_whole_decode() {
        let b = small();
        for len in HEADER_LEN..b.len() {
            let b = &b[..len];
            for c in [0, len / 3, len / 2, len - 1] {
                assert_eq!(streamed(b, &[c], 1), whole(b), "length {len}, cut at {c}");
            }
        }
        // Shorter than a header: the header's error, as decode's.
        assert!(streamed(&b[..20], &[10], 1).starts_with("error"));
    }

    #[test]
    fn random_cuts_of_random_prefixes() {
        // Several cuts at once, in files cut short anywhere: a fixed-seed generator.
        let b = small();
        let mut rng = crate::synth::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        for _ in 0..2_000 {
            let len = HEADER_LEN + next(b.len() - HEADER_LEN + 1);
            let b = &b[..len];
            let mut cuts: Vec<usize> = (0..1 + next(6)).map(|_| next(len + 1)).collect();
            cuts.sort_unstable();
            let target = [1, 30, 100, 1 << 20][next(4)];
            assert_eq!(
                streamed(b, &cuts, target),
                whole(b),
                "{len} bytes, cuts {cuts:?}"
            );
        }
    }

    /// A small version 1 file: two threads, args, a Pad_Skip between events, then `tail`.
    fn small_v1(tail: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [spall::MAGIC, 1, 2.5f64.to_bits(), 0] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        let begin = |b: &mut Vec<u8>, tid: u32, t: f64, name: &str, args: &str| {
            b.extend_from_slice(&[spall::event_type::BEGIN, 0]);
            b.extend_from_slice(&7u32.to_le_bytes());
            b.extend_from_slice(&tid.to_le_bytes());
            b.extend_from_slice(&t.to_le_bytes());
            b.extend_from_slice(&[name.len() as u8, args.len() as u8]);
            b.extend_from_slice(name.as_bytes());
            b.extend_from_slice(args.as_bytes());
        };
        let end = |b: &mut Vec<u8>, tid: u32, t: f64| {
            b.push(spall::event_type::END);
            b.extend_from_slice(&7u32.to_le_bytes());
            b.extend_from_slice(&tid.to_le_bytes());
            b.extend_from_slice(&t.to_le_bytes());
        };
        begin(&mut b, 1, 10.0, "main", "");
        begin(&mut b, 2, 11.5, "worker", "x=1");
        b.extend_from_slice(&[spall::event_type::PAD_SKIP, 3, 0, 0, 0, 9, 9, 9]);
        end(&mut b, 2, 30.0);
        begin(&mut b, 1, 12.0, "inner", "");
        end(&mut b, 1, 15.25);
        end(&mut b, 1, 40.0);
        b.extend_from_slice(tail);
        b
    }

    #[test]
    fn version_1_at_every_cut_gives_the_whole_decode() {
        // As it is; ending in a Pad_Skip that runs past the end; then an event of no known
        // layout with bytes after it (the rest of the file skipped, warned).
        let pad = [spall::event_type::PAD_SKIP, 0xff, 0xff, 0, 0, 1, 2, 3];
        let unknown = [6, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        for tail in [&[][..], &pad, &unknown] {
            let b = small_v1(tail);
            let want = whole(&b);
            assert!(
                want.contains("worker") && want.contains("version: 1"),
                "{want}"
            );
            assert_eq!(want.contains("SpallUnsupportedEvent"), tail == unknown);
            for target in [1, 40, 1 << 20] {
                for c in 0..=b.len() {
                    let got = streamed(&b, &[c], target);
                    assert_eq!(got, want, "tail {tail:?}, cut at {c}, runs of {target}");
                }
            }
            let each: Vec<usize> = (1..b.len()).collect();
            assert_eq!(streamed(&b, &each, 1), want, "tail {tail:?}, byte by byte");
            // Cut short anywhere, in pieces.
            for len in HEADER_LEN..b.len() {
                let b = &b[..len];
                for c in [len / 3, len / 2, len - 1] {
                    assert_eq!(streamed(b, &[c], 1), whole(b), "length {len}, cut at {c}");
                }
            }
        }
    }

    #[test]
    fn a_real_version_1_file_in_odd_pieces() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/spall/crux_v1.spall"
        );
        let b = std::fs::read(path).unwrap();
        assert!(SpallStream::<Collect>::accepts(&b));
        let want = whole(&b);
        let cuts: Vec<usize> = (1..b.len()).step_by(4_099).collect();
        for target in [4096, 1 << 20] {
            assert_eq!(streamed(&b, &cuts, target), want, "runs of {target}");
        }
    }

    #[test]
    fn a_real_file_in_odd_pieces() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/spall/odingengine_v3.spall"
        );
        let b = std::fs::read(path).unwrap();
        let want = whole(&b);
        let cuts: Vec<usize> = (1..b.len()).step_by(65_521).collect();
        for target in [4096, 1 << 20] {
            assert_eq!(streamed(&b, &cuts, target), want, "runs of {target}");
        }
    }
}
