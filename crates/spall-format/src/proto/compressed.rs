//! `compressed_packets` (TracePacket field 50): a zlib (or gzip) stream of a serialized
//! `Trace`, that is more framed packets, as the tracing service writes them when the trace
//! config asks for deflate compression. Each bundle is inflated before the first pass into
//! a buffer of its own, held for the whole decode; its packets take the bundle's place in
//! file order, in both passes.
//!
//! Offsets in warnings about packets inside a bundle count from the bundle's packet, in its
//! inflated bytes.

use std::io::Read;

use crate::diag::{Diagnostics, WarningKind};

/// The most bytes all of a trace's bundles may inflate to, together: `cap` (the limit on
/// gzip input, `--max-decompressed`), lowered to the memory available.
pub fn limit(cap: u64) -> u64 {
    match spall_util::MemoryLimit::Available.resolve() {
        Some((m, _)) => cap.min(m),
        None => cap,
    }
}

/// One bundle, inflated (empty when it could not be).
pub struct Bundle {
    /// The offset of its packet in the file.
    pub at: u64,
    /// Its compressed size, for progress.
    pub packed: usize,
    pub bytes: Vec<u8>,
}

/// Inflates every bundle, in order, one [`Bundle`] each; a broken one is counted and left
/// empty, and once `limit` bytes are out the rest are skipped, counted.
pub fn inflate(list: &[(&[u8], u64)], limit: u64, d: &mut Diagnostics) -> Vec<Bundle> {
    let mut left = limit;
    let mut out = Vec::with_capacity(list.len());
    for &(z, at) in list {
        let mut bytes = Vec::new();
        if left > 0 {
            // zlib as the tracing service writes it; gzip too, as trace_processor reads both.
            let cap = left.saturating_add(1);
            let read = if z.starts_with(&[0x1f, 0x8b]) {
                flate2::read::GzDecoder::new(z)
                    .take(cap)
                    .read_to_end(&mut bytes)
            } else {
                flate2::read::ZlibDecoder::new(z)
                    .take(cap)
                    .read_to_end(&mut bytes)
            };
            match read {
                Ok(n) if n as u64 > left => {
                    bytes = Vec::new();
                    left = 0;
                    d.warn(WarningKind::ProtoMalformed, at, || {
                        format!("compressed packets that inflate past the limit of {limit} bytes for all of a trace's; this bundle and those after it skipped")
                    });
                }
                Ok(n) => left -= n as u64,
                Err(e) => {
                    bytes = Vec::new();
                    d.warn(WarningKind::ProtoMalformed, at, || {
                        format!("compressed packets whose zlib stream is broken ({e}); the bundle skipped")
                    });
                }
            }
        } else {
            d.warn(WarningKind::ProtoMalformed, at, || {
                format!("compressed packets past the limit of {limit} inflated bytes; skipped")
            });
        }
        out.push(Bundle {
            at,
            packed: z.len(),
            bytes,
        });
    }
    out
}
