//! Inputs found by the fuzzers (fuzz/, docs/TESTING.md), kept as regression tests: each
//! once crashed the decoder.

use crate::common::*;
use spall_format::{decode, RawEvent};

fn decodes_without_panic(rel: &str) -> spall_format::Summary {
    let bytes = read_fixture(rel);
    let mut n = 0u64;
    decode(&bytes, &mut |_: &RawEvent<'_>| n += 1).expect("decodes")
}

#[test]
fn invalid_utf8_with_a_malformed_event() {
    // decode_json, 2026-11-21: an event with invalid UTF-8 *and* a syntax error. The error
    // position inside the repaired copy was used as an index into the original input.
    let s = decodes_without_panic("fuzz/json-lossy-malformed-offset.json");
    assert!(
        s.diagnostics
            .count(spall_format::WarningKind::JsonMalformedEvent)
            >= 1
    );
    assert!(s.diagnostics.count(spall_format::WarningKind::InvalidUtf8) >= 1);
}
