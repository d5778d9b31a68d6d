//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use spall_format::{decode, Collect, RawEvent, Summary};

pub use spall_test_support::fixture_bytes as read_fixture;

pub fn decode_all(bytes: &[u8]) -> (Vec<RawEvent<'static>>, Summary) {
    let mut c = Collect::default();
    let s = decode(bytes, &mut c).expect("decodes");
    (c.0, s)
}

/// Events per phase, as "X" -> count.
pub fn phase_counts(events: &[RawEvent<'_>]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for e in events {
        *m.entry(e.ph.to_string()).or_insert(0) += 1;
    }
    m
}

pub fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Warning counts by kind name.
pub fn warnings(s: &Summary) -> BTreeMap<String, u64> {
    s.diagnostics
        .counts()
        .map(|(k, v)| (k.as_str().to_string(), v))
        .collect()
}
