//! Perfetto protobuf decoding: any bytes after one valid packet (so the input is always
//! detected as protobuf, whatever the fuzzer does to the rest), decoded with a counting
//! sink, whole and as a stream in pieces cut where the first byte says. Must never panic,
//! hang or allocate without bound; a stream that does not give up gives the whole
//! decode's events and warnings.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_format::{RawEvent, TraceStream};

/// Events counted, and their names' and arguments' bytes.
#[derive(Default, Debug, PartialEq)]
struct Count(u64, u64);

impl spall_format::EventSink for Count {
    fn event(&mut self, e: &RawEvent<'_>) {
        self.0 += 1;
        self.1 += e.name.len() as u64 + e.args.raw().map_or(0, str::len) as u64;
    }
}

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
        let mut all = Count::default();
        for c in sinks {
            all.0 += c.0;
            all.1 += c.1;
        }
        assert_eq!((all.0, all.1), (whole.0, whole.1));
        assert_eq!(got.events, summary.events);
        let counts = |s: &spall_format::Summary| s.diagnostics.counts().collect::<Vec<_>>();
        assert_eq!(counts(&got), counts(&summary));
    }
});
