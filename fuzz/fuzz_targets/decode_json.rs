//! Chrome JSON decoding of arbitrary text, with a sink that touches every field.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Skip inputs the detector would send to other decoders; the JSON path is the target.
    if data.starts_with(&[0x1f, 0x8b]) || data.starts_with(&0x0BAD_F00Du64.to_le_bytes()[..4]) {
        return;
    }
    let mut n = 0u64;
    let _ = spall_format::decode(data, &mut |e: &spall_format::RawEvent<'_>| {
        n += e.name.len() as u64 + e.cat.len() as u64 + e.ts as u64;
        if let Some(a) = e.args.raw() {
            n += a.len() as u64;
        }
    });
});
