//! The stream against the whole-file decode: the same events (in any order), the same
//! warnings, in pieces that split varints, packets and runs anywhere.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::event::{EventSink, RawEvent};
use crate::synth_proto::varint;
use crate::{Summary, TraceStream};
use spall_test_support::fixture_bytes;

/// Events folded into a checksum that ignores their order.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sum {
    n: u64,
    add: u64,
    xor: u64,
}

impl EventSink for Sum {
    fn event(&mut self, ev: &RawEvent<'_>) {
        let mut h = DefaultHasher::new();
        format!("{ev:?}").hash(&mut h);
        let h = h.finish();
        self.n += 1;
        self.add = self.add.wrapping_add(h);
        self.xor ^= h.rotate_left(17).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Sum {
    fn merge(self, o: Sum) -> Sum {
        Sum {
            n: self.n + o.n,
            add: self.add.wrapping_add(o.add),
            xor: self.xor ^ o.xor,
        }
    }
}

/// What a decode gave, to compare: the summary's counts and the events' checksum.
pub(crate) fn outcome(s: &Summary, sum: Sum) -> String {
    let warnings: Vec<_> = s.diagnostics.counts().collect();
    format!(
        "format {:?} gzip {} bytes {}/{} events {} {sum:?} warnings {warnings:?}",
        s.format, s.gzip, s.input_bytes, s.decoded_bytes, s.events
    )
}

pub(crate) fn whole(b: &[u8]) -> String {
    let mut sum = Sum::default();
    match crate::decode(b, &mut sum) {
        Ok(s) => outcome(&s, sum),
        Err(e) => format!("error {e}"),
    }
}

/// `Err` with why the stream gave up, when it did.
pub(crate) fn streamed(b: &[u8], piece: usize, target: usize) -> Result<String, String> {
    let mut s = TraceStream::with_target(b, target, Sum::default).ok_or("not streamed")?;
    for p in b.chunks(piece) {
        s.push(p).map_err(|e| format!("error {e}"))?;
    }
    let why = s.gave_up();
    match s.finish() {
        Ok(Some((summary, sinks))) => {
            let sum = sinks.into_iter().fold(Sum::default(), Sum::merge);
            Ok(outcome(&summary, sum))
        }
        Ok(None) => Err(format!("decode again: {}", why.unwrap_or("gzip or cut"))),
        Err(e) => Ok(format!("error {e}")),
    }
}

#[test]
fn fixtures_stream_to_the_whole_decode() {
    for name in [
        "proto/tracks.pftrace",
        "proto/clocks.pftrace",
        "proto/interning.pftrace",
        "proto/locations.pftrace",
        "real/chromium148_startup.pftrace.gz",
    ] {
        let file = fixture_bytes(name);
        let want = whole(&file);
        assert!(want.contains("format Proto"), "{name}: {want}");
        // Pieces of 1 and 7 bytes split every varint and packet; runs of 1000 bytes make
        // many sinks; 4 MB, one piece and one run.
        for (piece, target) in [(1, 1_000), (7, 1 << 20), (4_096, 1_000), (4 << 20, 4 << 20)] {
            if piece == 1 && file.len() > 200_000 {
                continue;
            }
            let got = streamed(&file, piece, target);
            assert_eq!(got.as_ref(), Ok(&want), "{name} in pieces of {piece}");
        }
    }
}

#[test]
fn compressed_packets_the_whole_decode_reads_otherwise_give_up() {
    // Its second bundle defines a track after events on it; its third is no zlib stream.
    let file = fixture_bytes("proto/compressed.pftrace");
    assert_eq!(
        streamed(&file, 4_096, 1 << 20),
        Err("decode again: a track descriptor after events on its track".into())
    );
    let broken = bundled(
        &framed(&fixture_bytes("proto/tracks.pftrace")),
        3,
        Some(b"\x78\x9cnot zlib"),
    );
    assert!(
        whole(&broken).contains("ProtoMalformed"),
        "{}",
        whole(&broken)
    );
    assert_eq!(
        streamed(&broken, 4_096, 1 << 20),
        Err("decode again: compressed packets a whole decode warns about".into())
    );
}

/// Each packet of a trace, with its framing.
fn framed(b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut d = crate::diag::Diagnostics::default();
    super::packets(b, 0, &mut d, |p, at, frame, _| {
        out.push(b[frame as usize..at as usize + p.len()].to_vec());
    })
    .unwrap();
    assert!(d.is_empty(), "{:?}", d.examples());
    out
}

/// The packets in bundles of `compressed_packets` (zlib), `per` a bundle, as the tracing
/// service writes them when asked to compress, every third bundle's packets left plain;
/// then, when given, a last bundle of those bytes as they are.
fn bundled(packets: &[Vec<u8>], per: usize, last: Option<&[u8]>) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let bundle = |z: &[u8], out: &mut Vec<u8>| {
        let mut field = vec![0x92, 0x03];
        varint(z.len() as u64, &mut field);
        field.extend_from_slice(z);
        out.push(0x0a);
        varint(field.len() as u64, out);
        out.extend_from_slice(&field);
    };
    for (i, group) in packets.chunks(per).enumerate() {
        if i % 3 == 2 {
            group.iter().for_each(|p| out.extend_from_slice(p));
            continue;
        }
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        group.iter().for_each(|p| z.write_all(p).unwrap());
        bundle(&z.finish().unwrap(), &mut out);
    }
    if let Some(raw) = last {
        bundle(raw, &mut out);
    }
    out
}

/// Events folded as [`Sum`] folds them, their offsets left out.
#[derive(Default)]
struct Placeless(Sum);

impl EventSink for Placeless {
    fn event(&mut self, ev: &RawEvent<'_>) {
        let mut ev = ev.clone();
        ev.offset = 0;
        self.0.event(&ev);
    }
}

/// The whole decode's events and warnings, not where they lie (a bundle's packets lie
/// elsewhere than the same packets plain).
fn whole_placeless(b: &[u8]) -> String {
    let mut sum = Placeless::default();
    let s = crate::decode(b, &mut sum).unwrap();
    let outcome = outcome(&s, sum.0);
    outcome[outcome.find(" events ").unwrap()..].to_string()
}

#[test]
fn compressed_packets_stream_to_the_whole_decode() {
    for name in [
        "real/chromium148_startup.pftrace.gz",
        "proto/interning.pftrace",
    ] {
        let mut file = fixture_bytes(name);
        if file.starts_with(&[0x1f, 0x8b]) {
            let mut d = crate::diag::Diagnostics::default();
            file = crate::gunzip(&file, u64::MAX, &mut d).unwrap();
        }
        let plain = whole_placeless(&file);
        for per in [1, 40] {
            let b = bundled(&framed(&file), per, None);
            let want = whole(&b);
            // The bundles' packets are the plain file's: the same events and warnings.
            assert_eq!(whole_placeless(&b), plain, "{name}, {per} a bundle");
            for (piece, target) in [(7, 1 << 20), (4_096, 1_000), (4 << 20, 4 << 20)] {
                let got = streamed(&b, piece, target);
                assert_eq!(
                    got.as_ref(),
                    Ok(&want),
                    "{name}, {per} a bundle, pieces of {piece}"
                );
            }
        }
    }
}

#[test]
fn late_facts_make_the_stream_give_up() {
    // A TrackEvent instant on track 7 (seq 1), then track 7's descriptor.
    let event = [0x48, 3, 0x58, 7, 0xba, 0x01, 2, b'h', b'i'];
    let mut packet = vec![0x40, 0xe8, 0x07, 0x50, 1, 0x5a, event.len() as u8];
    packet.extend_from_slice(&event);
    let desc = [0xe2, 0x03, 4, 0x08, 7, 0x12, 0x00];
    let mut file = Vec::new();
    for p in [&packet[..], &desc[..]] {
        file.push(0x0a);
        file.push(p.len() as u8);
        file.extend_from_slice(p);
    }
    assert!(whole(&file).contains("events"), "{}", whole(&file));
    assert_eq!(
        streamed(&file, 3, 1 << 20),
        Err("decode again: a track descriptor after events on its track".into())
    );
    // The descriptor first: the same events as the whole decode.
    let n = 2 + packet.len();
    let mut first = file[n..].to_vec();
    first.extend_from_slice(&file[..n]);
    assert_eq!(streamed(&first, 3, 1 << 20), Ok(whole(&first)));
    // Cut inside the last packet: the whole decode's warning is its own.
    let cut = &first[..first.len() - 2];
    assert_eq!(
        streamed(cut, 5, 1 << 20),
        Err("decode again: gzip or cut".into())
    );
}

/// Every file of a folder (the fuzz corpus, say: `PROTO_STREAM_DIR=fuzz/corpus/decode_proto`)
/// streamed in 7-byte pieces: the whole decode's result, or given up; never a panic.
#[test]
#[ignore = "a sweep over a folder named by PROTO_STREAM_DIR"]
fn folder_streams_to_the_whole_decode() {
    let dir = std::env::var("PROTO_STREAM_DIR").expect("PROTO_STREAM_DIR");
    let (mut same, mut again) = (0, 0);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let mut b = vec![0x0a, 0x02, 0x50, 0x01];
        b.extend(std::fs::read(&p).unwrap());
        for piece in [7, 4_096] {
            match streamed(&b, piece, 1_000) {
                Ok(got) => {
                    assert_eq!(got, whole(&b), "{}", p.display());
                    same += 1;
                }
                Err(_) => again += 1,
            }
        }
    }
    eprintln!("{same} streamed as the whole decode, {again} given up");
}

/// A large file (`PROTO_STREAM_FILE=bench-data/chrome300.pftrace`, in release) streamed in
/// 4 MB and 4 kB pieces: the whole decode's result.
#[test]
#[ignore = "a file named by PROTO_STREAM_FILE"]
fn file_streams_to_the_whole_decode() {
    let path = std::env::var("PROTO_STREAM_FILE").expect("PROTO_STREAM_FILE");
    let b = std::fs::read(&path).unwrap();
    let want = whole(&b);
    for piece in [4 << 20, 4_096] {
        let got = streamed(&b, piece, crate::CHUNK_BYTES);
        assert_eq!(got.as_ref(), Ok(&want), "{path} in pieces of {piece}");
    }
    eprintln!("{path}: {want}");
}
