//! Perfetto protobuf decoding: any bytes after one valid packet (so the input is always
//! detected as protobuf, whatever the fuzzer does to the rest), decoded with a counting
//! sink, whole and as a stream in pieces cut where the first byte says. Must never panic,
//! hang or allocate without bound; a stream that does not give up gives the whole
//! decode's events and warnings.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_format::TraceStream;

#[path = "stream_check.rs"]
mod stream_check;
use stream_check::Count;

fuzz_target!(|data: &[u8]| {
    // A TracePacket holding only trusted_packet_sequence_id = 1.
    let mut bytes = vec![0x0a, 0x02, 0x50, 0x01];
    bytes.extend_from_slice(data);
    let mut whole = Count::default();
    let summary = spall_format::decode(&bytes, &mut whole);
    let piece = 1 + data.first().map_or(0, |&b| b as usize);
    let Some(mut s) = TraceStream::with_target(&bytes, 64, Count::default) else {
        return;
    };
    for p in bytes.chunks(piece) {
        s.push(p).expect("a protobuf stream's push never fails");
    }
    if let Ok(Some((got, sinks))) = s.finish() {
        let summary = summary.expect("the whole decode of a stream that finished");
        stream_check::same(&got, sinks, &whole, &summary);
    }
});
