//! `.spall` decoding: any bytes after a valid magic (the fuzzer mutates version, unit and
//! records), decoded with a counting sink. Must never panic or hang. The same bytes
//! streamed in pieces (`SpallStream`, versions 1 and 3) give the whole decode's events and
//! warnings.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_format::TraceStream;

#[path = "stream_check.rs"]
mod stream_check;
use stream_check::Count;

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
            assert!(
                summary.is_err(),
                "a stream refused what the whole decode read"
            );
            return;
        }
    }
    match s.finish() {
        Ok(Some((got, sinks))) => {
            let summary = summary.expect("the whole decode of a stream that finished");
            stream_check::same(&got, sinks, &whole, &summary);
        }
        Ok(None) => panic!("a .spall stream gave up"),
        Err(_) => assert!(
            summary.is_err(),
            "a stream failed where the whole decode read"
        ),
    }
});
