//! `.spall` decoding: any bytes after a valid magic (the fuzzer mutates version, unit and
//! records), decoded with a counting sink. Must never panic or hang. The same bytes
//! streamed in pieces (`SpallStream`, versions 1 and 3) give the whole decode's events and
//! warnings.
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
    let mut bytes = 0x0BAD_F00Du64.to_le_bytes().to_vec();
    bytes.extend_from_slice(data);
    let mut whole = Count::default();
    let summary = spall_format::decode(&bytes, &mut whole);
    let piece = 1 + data.last().map_or(0, |&b| b as usize);
    let Some(mut s) = TraceStream::with_target(&bytes, 64, Count::default) else {
        return;
    };
    for p in bytes.chunks(piece) {
        if s.push(p).is_err() {
            assert!(summary.is_err(), "a stream refused what the whole decode read");
            return;
        }
    }
    match s.finish() {
        Ok(Some((got, sinks))) => {
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
        Ok(None) => panic!("a .spall stream gave up"),
        Err(_) => assert!(summary.is_err(), "a stream failed where the whole decode read"),
    }
});
