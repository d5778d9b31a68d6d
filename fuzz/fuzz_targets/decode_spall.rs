//! `.spall` decoding: any bytes after a valid magic (the fuzzer mutates version, unit and
//! records), decoded with a counting sink. Must never panic or hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = 0x0BAD_F00Du64.to_le_bytes().to_vec();
    bytes.extend_from_slice(data);
    let mut n = 0u64;
    let _ = spall_format::decode(&bytes, &mut |e: &spall_format::RawEvent<'_>| {
        n += e.name.len() as u64 + 1;
    });
});
