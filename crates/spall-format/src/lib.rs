//! Bytes in, raw events out: decoders for `.spall` (versions 1 and 3), Chrome JSON
//! trace-event files and Perfetto protobuf traces ([`proto`]), sampling profiles
//! ([`sampled`]: `perf script`, collapsed stacks, `.cpuprofile`, speedscope, pprof, Gecko), plus a
//! `.spall` version 3 writer.
//!
//! The format is detected from content, never from the file name: `.spall` magic, gzip
//! (decompressed, then detected again), UTF-16 text (made UTF-8, then detected again), a
//! protobuf `TracePacket`, a sampling profile ([`sampled::sniff`]), else JSON. Decoding streams events to an
//! [`EventSink`] one at a time, borrowing names and arguments from the input wherever no
//! unescaping or repair was needed, so no list of events is ever built here.
//!
//! Times are integer nanoseconds, converted exactly: JSON's decimal microseconds from their
//! text (`1712195495519689.047` µs is `1712195495519689047` ns, which no `f64` holds), and
//! `.spall` ticks by exact 128-bit multiplication with the header's unit.
//!
//! Problems that lose no more than the broken part (a truncated last event, a trailing
//! comma, invalid UTF-8, an undecodable `.spall` record) are counted in [`Diagnostics`]; only
//! input that is not a trace at all is an [`Error`].
//!
//! # Example
//!
//! ```
//! use spall_format::{decode, Phase, RawEvent};
//!
//! let json = br#"{"traceEvents": [
//!     {"name": "main", "ph": "X", "ts": 1.5, "dur": 10, "pid": 1, "tid": 1},
//!     {"name": "tick", "ph": "i", "ts": 2.25, "pid": 1, "tid": 1},
//! ]}"#;
//! let mut names = Vec::new();
//! let summary = decode(json, &mut |ev: &RawEvent<'_>| {
//!     names.push((ev.ph, ev.name.to_string(), ev.ts, ev.dur));
//! })
//! .unwrap();
//! assert_eq!(summary.events, 2);
//! assert_eq!(names[0], (Phase::COMPLETE, "main".to_string(), 1500, Some(10_000)));
//! assert_eq!(names[1].2, 2250);
//! // The trailing comma was accepted, and counted.
//! assert_eq!(summary.diagnostics.total(), 1);
//! ```

#![warn(missing_docs)]

mod arch;
mod diag;
mod error;
mod event;
pub mod ftrace;
pub mod hash;
mod input;
pub mod json;
mod json_writer;
mod mapped;
mod parallel;
pub mod proto;
pub mod sampled;
pub mod spall;
mod steps;
mod stream;
#[cfg(feature = "synth")]
pub mod synth;
#[cfg(feature = "synth")]
mod synth_proto;
pub mod tagged;
pub mod time;
mod trace_stream;
mod writer;

use std::path::Path;

pub use diag::{DiagnosticKind, Diagnostics, Warning, WarningKind, EXAMPLES_PER_KIND};
pub use error::{Error, ErrorKind};
pub use event::{
    Args, Collect, CounterValue, EventSink, Id2, Phase, RawEvent, RawId, ThreadSlice, TrackCounter,
};
pub use ftrace::{CompactRec, CompactRecs, CompactSched, RawSched, SchedKind};
pub use input::{detect, gunzip, read_file, Bytes, DecodeOptions, Detected};
pub use json::{JsonInfo, JsonStream, TopLevelKey};
pub use json_writer::{JsonWriter, WriteCounts};
pub use mapped::MappedFile;
// The memory limit is part of DecodeOptions and of an ErrorKind: re-exported so
// that decoding needs no second import.
pub use parallel::{decode_parallel, CHUNK_BYTES};
pub use proto::ProtoStream;
pub use sampled::{ProfileFormat, ProfileStream, RawFrame, RawSample, SampleUnit};
pub use spall::SpallHeader;
pub use spall_util::{LimitSource, MemoryLimit};
pub use steps::{Decoded, Steps};
pub use stream::SpallStream;
pub use trace_stream::{Gathered, Gunzipping, TraceStream};
pub use writer::SpallWriter;

/// The container format of a decoded trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `.spall` version 1 (each event names its thread).
    SpallV1,
    /// `.spall` version 3 (events in per-thread buffers).
    SpallV3,
    /// Chrome's trace event JSON, array or object form.
    Json,
    /// A Perfetto protobuf trace.
    Proto,
    /// A sampling profile.
    Profile(ProfileFormat),
    /// Ftrace text or a systrace HTML page ([`ftrace::text`]).
    Systrace,
}

impl Format {
    /// `"spall-v1"`, `"spall-v3"`, `"json"` or `"perfetto"`: a stable name for scripts.
    pub fn name(self) -> &'static str {
        match self {
            Format::SpallV1 => "spall-v1",
            Format::SpallV3 => "spall-v3",
            Format::Json => "json",
            Format::Proto => "perfetto",
            Format::Profile(ProfileFormat::Perf) => "perf-script",
            Format::Profile(ProfileFormat::Collapsed) => "collapsed",
            Format::Profile(ProfileFormat::CpuProfile) => "cpuprofile",
            Format::Profile(ProfileFormat::Speedscope) => "speedscope",
            Format::Profile(ProfileFormat::Pprof) => "pprof",
            Format::Profile(ProfileFormat::Gecko) => "gecko",
            Format::Systrace => "systrace",
        }
    }

    /// Whether the trace is `.spall`: its spans all come from Begin/End pairs that need no
    /// flag saying so.
    pub fn is_spall(self) -> bool {
        matches!(self, Format::SpallV1 | Format::SpallV3)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a decode found, besides the events themselves.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The container format the input was decoded as.
    pub format: Format,
    /// Whether the input was gzip-compressed.
    pub gzip: bool,
    /// Size of the input as given (compressed, if it was).
    pub input_bytes: u64,
    /// Size of the decoded text or binary (after decompression).
    pub decoded_bytes: u64,
    /// Bytes the decoders went through, over every pass of the load: `decoded_bytes` when
    /// each byte is decoded once; more when a JSON chunk cut at a wrong guess is parsed
    /// again, or a load decodes the whole input a second time.
    pub parsed_bytes: u64,
    /// Events passed to the sink.
    pub events: u64,
    /// Warnings the decode counted (bad events skipped or repaired).
    pub diagnostics: Diagnostics,
    /// The `.spall` header, for `.spall` input.
    pub spall: Option<SpallHeader>,
    /// Top-level keys and display unit, for JSON input.
    pub json: Option<JsonInfo>,
}

/// A trace's bytes, ready to decode: mapped from disk, decompressed if it was gzip.
#[derive(Debug)]
pub struct Input {
    bytes: Bytes,
    gzip: bool,
    input_bytes: u64,
    diagnostics: Diagnostics,
    /// `DecodeOptions::max_decompressed`: also bounds protobuf's compressed packets.
    max_decompressed: u64,
}

impl Input {
    /// Opens a file: memory-maps it and, if it is gzip, decompresses it.
    /// Errors name the file.
    pub fn open(path: impl AsRef<Path>, opts: &DecodeOptions) -> Result<Input, Error> {
        let path = path.as_ref();
        let raw = read_file(path)?;
        Input::from_bytes(raw, opts).map_err(|e| e.with_path(path))
    }

    /// Wraps bytes already in memory, decompressing gzip.
    pub fn from_bytes(raw: Bytes, opts: &DecodeOptions) -> Result<Input, Error> {
        let input_bytes = raw.len() as u64;
        let mut diagnostics = Diagnostics::default();
        let mut bytes = raw;
        let mut gzip = false;
        let (limit, memory) = input::gzip_limit(&bytes, opts);
        // Decompress nested gzip too (a .json.gz that was gzipped again), a few levels deep.
        for _ in 0..input::GZIP_LEVELS {
            if detect(&bytes) != Detected::Gzip {
                break;
            }
            gzip = true;
            let out = gunzip(&bytes, limit, &mut diagnostics);
            bytes.check_intact()?;
            bytes = Bytes::Owned(out.map_err(|e| input::gzip_error(e, memory, opts))?);
        }
        Ok(Input {
            bytes,
            gzip,
            input_bytes,
            diagnostics,
            max_decompressed: opts.max_decompressed,
        })
    }

    pub(crate) fn from_parts(
        bytes: Bytes,
        gzip: bool,
        input_bytes: u64,
        diagnostics: Diagnostics,
        max_decompressed: u64,
    ) -> Input {
        Input {
            bytes,
            gzip,
            input_bytes,
            diagnostics,
            max_decompressed,
        }
    }

    /// The decoded bytes (after decompression).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the bytes are held in memory (decompressed, or read from a pipe) rather than
    /// mapped from a file.
    pub fn is_owned(&self) -> bool {
        matches!(self.bytes, Bytes::Owned(_))
    }

    /// Decodes every event into `sink`.
    pub fn decode<S: EventSink>(&self, sink: &mut S) -> Result<Summary, Error> {
        let r = decode_plain(
            &self.bytes,
            self.gzip,
            self.input_bytes,
            self.diagnostics.clone(),
            self.max_decompressed,
            sink,
        );
        // Zeros read past a shrunken file's end decode to anything: the error comes first.
        self.bytes.check_intact()?;
        r
    }

    /// An error if the mapped file shrank while it was read (any decode checks this).
    pub fn check_intact(&self) -> Result<(), Error> {
        self.bytes.check_intact()
    }
}

/// Decodes a trace held in memory (any supported format, gzip included).
pub fn decode<S: EventSink>(bytes: &[u8], sink: &mut S) -> Result<Summary, Error> {
    decode_with(bytes, &DecodeOptions::default(), sink)
}

/// [`decode`] with explicit limits.
pub fn decode_with<S: EventSink>(
    bytes: &[u8],
    opts: &DecodeOptions,
    sink: &mut S,
) -> Result<Summary, Error> {
    if detect(bytes) == Detected::Gzip {
        return Input::from_bytes(Bytes::Owned(bytes.to_vec()), opts)?.decode(sink);
    }
    // Uncompressed input is decoded in place, with no copy.
    let len = bytes.len() as u64;
    let limit = opts.max_decompressed;
    decode_plain(bytes, false, len, Diagnostics::default(), limit, sink)
}

/// Decodes uncompressed bytes; `diagnostics` may already hold decompression warnings;
/// `max_decompressed` bounds what protobuf's compressed packets may inflate to.
pub(crate) fn decode_plain<S: EventSink>(
    b: &[u8],
    gzip: bool,
    input_bytes: u64,
    mut diagnostics: Diagnostics,
    max_decompressed: u64,
    sink: &mut S,
) -> Result<Summary, Error> {
    let (format, events, spall, json) = match detect(b) {
        Detected::Spall => {
            let (h, n) = spall::decode(b, sink, &mut diagnostics)?;
            let f = if h.version == 1 {
                Format::SpallV1
            } else {
                Format::SpallV3
            };
            (f, n, Some(h), None)
        }
        Detected::SpallAuto => return Err(Error::new(ErrorKind::AutoTraceUnsupported, 0)),
        Detected::Gzip => {
            return Err(Error::new(
                ErrorKind::Gzip("gzip nested more than 4 levels deep".into()),
                0,
            ))
        }
        Detected::Json => {
            let (info, n) = json::decode(b, sink, &mut diagnostics)?;
            (Format::Json, n, None, Some(info))
        }
        Detected::Proto => {
            let n = proto::decode(b, sink, &mut diagnostics, max_decompressed)?;
            (Format::Proto, n, None, None)
        }
        Detected::Profile(p) => {
            let n = sampled::decode(b, p, sink, &mut diagnostics)?;
            (Format::Profile(p), n, None, None)
        }
        Detected::Systrace => {
            let n = ftrace::text::decode(b, max_decompressed, sink, &mut diagnostics);
            (Format::Systrace, n, None, None)
        }
        Detected::Utf16 => {
            let Some(utf8) = sampled::utf16_to_utf8(b) else {
                return Err(Error::new(ErrorKind::Empty, 0));
            };
            let (limit, gz) = (max_decompressed, gzip);
            return decode_plain(&utf8, gz, input_bytes, diagnostics, limit, sink);
        }
    };
    Ok(Summary {
        format,
        gzip,
        input_bytes,
        decoded_bytes: b.len() as u64,
        parsed_bytes: b.len() as u64,
        events,
        diagnostics,
        spall,
        json,
    })
}

/// Opens and decodes a file. Errors name the file.
pub fn decode_file<S: EventSink>(path: impl AsRef<Path>, sink: &mut S) -> Result<Summary, Error> {
    let path = path.as_ref();
    Input::open(path, &DecodeOptions::default())?
        .decode(sink)
        .map_err(|e| e.with_path(path))
}
