//! Perfetto protobuf decoding: any bytes after one valid packet (so the input is always
//! detected as protobuf, whatever the fuzzer does to the rest), decoded with a counting
//! sink. Must never panic, hang or allocate without bound.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A TracePacket holding only trusted_packet_sequence_id = 1.
    let mut bytes = vec![0x0a, 0x02, 0x50, 0x01];
    bytes.extend_from_slice(data);
    let mut n = 0u64;
    let _ = spall_format::decode(&bytes, &mut |e: &spall_format::RawEvent<'_>| {
        n += e.name.len() as u64 + e.args.raw().map_or(0, str::len) as u64 + 1;
    });
});
