//! Fatal decode errors: the file cannot be read as a trace at all.

use std::fmt;
use std::path::PathBuf;

use spall_util::{human_bytes, LimitSource};

/// What went wrong, with enough detail for a person to act on it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The input is empty (or only whitespace).
    Empty,
    /// A `.spall` header that is shorter than its 32 bytes.
    TruncatedHeader {
        /// The input's length, in bytes.
        len: u64,
    },
    /// The `0xABADF00D` magic of spall's native auto-tracing format.
    AutoTraceUnsupported,
    /// A `.spall` version this decoder does not know.
    UnsupportedVersion {
        /// The version the header gives.
        version: u64,
    },
    /// A `.spall` timestamp unit that is zero, negative, infinite or NaN.
    BadTimestampUnit {
        /// The unit the header gives.
        unit: f64,
    },
    /// The JSON does not start with an array or an object of trace events.
    NotATrace {
        /// What was found instead, for a message (for JSON, its first bytes, quoted).
        found: String,
    },
    /// A sampling profile (detected as one) that cannot be read at all.
    Profile(String),
    /// The gzip stream is corrupt.
    Gzip(String),
    /// A protobuf trace whose packet framing breaks before its first packet.
    Protobuf(String),
    /// Decompression would exceed the configured limit (a likely gzip bomb).
    DecompressedTooLarge {
        /// The limit, in decompressed bytes.
        limit: u64,
    },
    /// The file shrank while it was being read (it is being rewritten or was truncated).
    FileShrank,
    /// The load would need more memory than the limit: stopped before allocating the model.
    NotEnoughMemory {
        /// The estimate, in bytes; `None` when decompressing alone outgrew the limit.
        needed: Option<u64>,
        /// The limit, in bytes.
        limit: u64,
        /// Where the limit came from.
        source: LimitSource,
        /// What the estimate rests on ("10.2M spans and 1.1M other events, estimated from
        /// the first 4.0 MB").
        basis: String,
    },
}

/// A fatal decode error: the file, the byte offset and what was expected.
#[derive(Debug)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset into the decoded (decompressed) input where the problem was found.
    pub offset: u64,
    /// The file, when decoding started from a path.
    pub path: Option<PathBuf>,
}

impl Error {
    /// An error of `kind` found at byte `offset`.
    pub fn new(kind: ErrorKind, offset: u64) -> Error {
        Error {
            kind,
            offset,
            path: None,
        }
    }

    /// Attaches the path of the file being decoded.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Error {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) if p.as_os_str() == "-" => f.write_str("standard input: ")?,
            Some(p) => write!(f, "{}: ", p.display())?,
            None => {}
        }
        let at = self.offset;
        match &self.kind {
            ErrorKind::Io(e) => write!(f, "cannot read the file: {e}"),
            ErrorKind::Empty => write!(f, "the file is empty: expected a .spall header or JSON trace events"),
            ErrorKind::TruncatedHeader { len } => write!(
                f,
                "at byte {at}: the .spall header is cut short ({len} of 32 bytes): expected magic, version, timestamp unit and a zero word"
            ),
            ErrorKind::AutoTraceUnsupported => write!(
                f,
                "at byte {at}: this is a spall auto-tracing file (magic 0xABADF00D), which is not supported: record with spall.h's manual tracing (magic 0x0BADF00D) or export Chrome JSON"
            ),
            ErrorKind::UnsupportedVersion { version } => write!(
                f,
                "at byte {at}: unsupported .spall version {version}: expected version 1 or 3"
            ),
            ErrorKind::BadTimestampUnit { unit } => write!(
                f,
                "at byte {at}: invalid .spall timestamp unit {unit}: expected a finite number greater than zero"
            ),
            ErrorKind::NotATrace { found } => write!(
                f,
                "at byte {at}: not a trace: expected a .spall header, a gzip stream, or JSON starting with '[' or '{{', found {found}"
            ),
            ErrorKind::Profile(msg) => write!(f, "at byte {at}: {msg}"),
            ErrorKind::Gzip(msg) => write!(f, "at byte {at} of the gzip stream: corrupt data: {msg}"),
            ErrorKind::Protobuf(msg) => write!(
                f,
                "not a Perfetto protobuf trace: {msg}: expected length-delimited TracePackets (field 1)"
            ),
            ErrorKind::DecompressedTooLarge { limit } => write!(
                f,
                "the gzip stream expands past the limit of {limit} bytes (a gzip bomb?): raise the limit if the file is genuine"
            ),
            ErrorKind::FileShrank => write!(
                f,
                "the file shrank while it was being read (is another program rewriting or truncating it?): load it again once it is written"
            ),
            ErrorKind::NotEnoughMemory {
                needed,
                limit,
                source,
                basis,
            } => {
                let limit = human_bytes(*limit);
                match needed {
                    Some(n) => write!(
                        f,
                        "not enough memory: loading needs about {} ({basis}), more than {limit}, {source}",
                        human_bytes(*n)
                    )?,
                    None => write!(
                        f,
                        "not enough memory: {basis} more than {limit}, {source}"
                    )?,
                }
                write!(f, ". Free some memory, or give a larger --max-memory (or --max-memory off) to try anyway")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}
