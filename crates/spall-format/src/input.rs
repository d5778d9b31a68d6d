//! Getting bytes: memory-mapped files, gzip, and format detection by content.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use spall_util::{LimitSource, MemoryLimit};

use crate::diag::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorKind};
use crate::mapped::MappedFile;
use crate::spall::{AUTO_MAGIC, MAGIC};

/// What the first bytes say the input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detected {
    /// Little-endian u64 magic `0x0BADF00D`.
    Spall,
    /// Little-endian u64 magic `0xABADF00D`: spall's auto-tracing format (not supported).
    SpallAuto,
    /// `1f 8b`: decompress, then detect again.
    Gzip,
    /// A Perfetto protobuf trace: a length-delimited field 1 (`TracePacket`) whose first
    /// fields parse.
    Proto,
    /// A sampling profile (see [`crate::sampled::sniff`]).
    Profile(crate::sampled::ProfileFormat),
    /// UTF-16 text with a byte-order mark: made UTF-8, then detected again.
    Utf16,
    /// Ftrace text (`# tracer:`) or a systrace HTML page (see [`crate::ftrace::text`]).
    Systrace,
    /// Anything else is treated as JSON.
    Json,
}

/// Detects the format from content alone, never from the file name.
pub fn detect(b: &[u8]) -> Detected {
    if b.len() >= 8 {
        match u64::from_le_bytes(b[..8].try_into().unwrap()) {
            MAGIC => return Detected::Spall,
            AUTO_MAGIC => return Detected::SpallAuto,
            _ => {}
        }
    }
    if b.starts_with(&[0x1f, 0x8b]) {
        return Detected::Gzip;
    }
    if let Some(p) = crate::sampled::sniff_binary(b) {
        return Detected::Profile(p);
    }
    if crate::proto::looks_like(b) {
        return Detected::Proto;
    }
    if b.starts_with(&[0xFF, 0xFE]) || b.starts_with(&[0xFE, 0xFF]) {
        return Detected::Utf16;
    }
    if crate::ftrace::text::looks_like(b) {
        return Detected::Systrace;
    }
    if let Some(p) = crate::sampled::sniff(b) {
        return Detected::Profile(p);
    }
    // A short file with a partial .spall magic is still recognisably .spall.
    if b.len() < 8 && !b.is_empty() && MAGIC.to_le_bytes().starts_with(b) {
        return Detected::Spall;
    }
    Detected::Json
}

/// Limits on decoding.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// The most bytes gzip input may expand to (default 16 GiB). A gzip bomb stops here with
    /// [`ErrorKind::DecompressedTooLarge`].
    pub max_decompressed: u64,
    /// The memory a load may take (default: what the system has available). Decompression
    /// stops at it, and `trace_model::load_with` checks its estimate against it before
    /// building anything.
    pub max_memory: MemoryLimit,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_decompressed: 16 << 30,
            max_memory: MemoryLimit::Available,
        }
    }
}

/// The bytes of a trace: mapped from a file, or owned (after decompression).
#[derive(Debug)]
pub enum Bytes {
    /// The file itself, memory-mapped.
    Mapped(MappedFile),
    /// Bytes in memory: decompressed, copied from the caller, or read where mapping failed.
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

impl Bytes {
    /// Whether the mapped file shrank under a read (see [`MappedFile::faulted`]).
    pub fn faulted(&self) -> bool {
        matches!(self, Bytes::Mapped(m) if m.faulted())
    }

    /// An error if the file shrank while it was being read.
    pub(crate) fn check_intact(&self) -> Result<(), Error> {
        if self.faulted() {
            return Err(Error::new(ErrorKind::FileShrank, 0));
        }
        Ok(())
    }

    /// Tells the kernel that `range` of a mapped file will not be read again soon, so its
    /// pages leave this process's resident memory (they stay in the page cache, and a later
    /// read maps them back). Does nothing for bytes held in memory. Assumes 4 KiB pages: on
    /// a system with larger pages the kernel refuses the misaligned range, and nothing is
    /// released.
    pub fn release(&self, range: std::ops::Range<usize>) {
        const PAGE: usize = 4096;
        let Bytes::Mapped(m) = self else { return };
        let start = range.start.div_ceil(PAGE) * PAGE;
        let end = range.end.min(m.len()) / PAGE * PAGE;
        #[cfg(unix)]
        if end > start {
            // SAFETY: the map is read-only and private: dropping its pages loses nothing,
            // and the next read of them faults the file's contents back in.
            #[allow(unsafe_code)]
            let _ = unsafe {
                m.map().unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start,
                    end - start,
                )
            };
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }
}

/// Maps (or, for pipes and special files, reads) a whole file; `-` reads standard input
/// to its end.
pub fn read_file(path: &Path) -> Result<Bytes, Error> {
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e), 0).with_path(path);
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::stdin().lock().read_to_end(&mut v).map_err(io)?;
        return Ok(Bytes::Owned(v));
    }
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::other(
            "it is a directory, not a trace file",
        )));
    }
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is read-only. If another process truncates the file while it is
        // mapped, reads past its new end fault: `MappedFile` turns that into zeros and a
        // flag, which the decoder reports as an error.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) };
        if let Ok(m) = map {
            return Ok(Bytes::Mapped(MappedFile::new(m)));
        }
    }
    let mut v = Vec::new();
    (&file).read_to_end(&mut v).map_err(io)?;
    Ok(Bytes::Owned(v))
}

/// gzip nested deeper than this (a .json.gz gzipped again, and again) is refused.
pub(crate) const GZIP_LEVELS: usize = 4;

/// The most bytes gzip `bytes` may expand to, and the memory limit behind it when that is
/// what decides: the decompressed text is held in memory, so it may not outgrow the limit.
pub(crate) fn gzip_limit(bytes: &[u8], opts: &DecodeOptions) -> (u64, Option<(u64, LimitSource)>) {
    let memory = (detect(bytes) == Detected::Gzip)
        .then(|| opts.max_memory.resolve())
        .flatten();
    let limit = match memory {
        Some((m, _)) => m.min(opts.max_decompressed),
        None => opts.max_decompressed,
    };
    (limit, memory)
}

/// A decompression error, told as the memory limit it ran into when that was the limit.
pub(crate) fn gzip_error(
    e: Error,
    memory: Option<(u64, LimitSource)>,
    opts: &DecodeOptions,
) -> Error {
    match (e.kind, memory) {
        (ErrorKind::DecompressedTooLarge { limit }, Some((m, source)))
            if m < opts.max_decompressed =>
        {
            let kind = ErrorKind::NotEnoughMemory {
                needed: None,
                limit,
                source,
                basis: "decompressing the gzip stream alone takes".into(),
            };
            Error::new(kind, e.offset)
        }
        (kind, _) => Error::new(kind, e.offset),
    }
}

/// Decompresses a whole gzip stream (all members), stopping at `limit` bytes of output.
/// A stream that ends early keeps what it produced and counts a warning.
pub fn gunzip(b: &[u8], limit: u64, d: &mut Diagnostics) -> Result<Vec<u8>, Error> {
    let mut g = Gunzip::new(b, limit);
    while !g.step(usize::MAX, d)? {}
    Ok(g.out)
}

/// A gzip stream decompressed a step at a time (so a caller that must not block, a
/// browser's main thread, can yield between steps); [`gunzip`] runs it to the end.
pub(crate) struct Gunzip<R: Read> {
    dec: flate2::read::MultiGzDecoder<R>,
    pub(crate) out: Vec<u8>,
    limit: u64,
    chunk: Vec<u8>,
}

impl<R: Read> Gunzip<R> {
    /// Output is refused past `limit` bytes; `capacity` is the first allocation.
    pub(crate) fn with_capacity(reader: R, capacity: usize, limit: u64) -> Self {
        Gunzip {
            dec: flate2::read::MultiGzDecoder::new(reader),
            out: Vec::with_capacity(capacity),
            limit,
            chunk: vec![0u8; 1 << 20],
        }
    }

    /// The reader, to see how far it got.
    pub(crate) fn reader(&self) -> &R {
        self.dec.get_ref()
    }

    /// Decompresses about `budget` more bytes; `Ok(true)` once the stream is done (a stream
    /// that ends early or turns corrupt after good data is done, with a warning).
    pub(crate) fn step(&mut self, budget: usize, d: &mut Diagnostics) -> Result<bool, Error> {
        let out = &mut self.out;
        let goal = out.len().saturating_add(budget);
        while out.len() < goal {
            match self.dec.read(&mut self.chunk) {
                Ok(0) => return Ok(true),
                Ok(n) => {
                    if out.len() as u64 + n as u64 > self.limit {
                        return Err(Error::new(
                            ErrorKind::DecompressedTooLarge { limit: self.limit },
                            out.len() as u64,
                        ));
                    }
                    out.extend_from_slice(&self.chunk[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    d.warn(WarningKind::GzipTruncated, out.len() as u64, || {
                        format!(
                            "the gzip stream ends early; the {} bytes decompressed so far were decoded",
                            out.len()
                        )
                    });
                    return Ok(true);
                }
                Err(e) => {
                    if out.is_empty() {
                        return Err(Error::new(ErrorKind::Gzip(e.to_string()), 0));
                    }
                    // Corruption after good data: keep what decompressed, like a truncation.
                    d.warn(WarningKind::GzipTruncated, out.len() as u64, || {
                        format!(
                            "the gzip stream is corrupt ({e}); the {} bytes decompressed before it were decoded",
                            out.len()
                        )
                    });
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

impl<'a> Gunzip<&'a [u8]> {
    fn new(b: &'a [u8], limit: u64) -> Self {
        Gunzip::with_capacity(b, gzip_capacity(b, limit), limit)
    }
}

/// A first allocation for decompressing `compressed`: the trailer's size field (the size
/// mod 2^32), at least the compressed size, at most `limit` and 1 GiB.
pub(crate) fn gzip_capacity(compressed: &[u8], limit: u64) -> usize {
    compressed
        .len()
        .checked_sub(4)
        .map(|i| u32::from_le_bytes(compressed[i..].try_into().unwrap()) as u64)
        .unwrap_or(0)
        .max(compressed.len() as u64)
        .min(limit)
        .min(1 << 30) as usize
}
