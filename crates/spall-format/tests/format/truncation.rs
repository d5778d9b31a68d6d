//! Truncating a file at every byte offset gives a clean error or a prefix of the full decode,
//! never a panic.

use crate::common::*;
use spall_format::{decode, Collect, RawEvent};

fn check_every_prefix(bytes: &[u8]) -> usize {
    let (full, _) = decode_all(bytes);
    let strip = |e: &RawEvent<'static>| RawEvent {
        offset: 0,
        ..e.clone()
    };
    let mut ok = 0;
    for n in 0..bytes.len() {
        let mut c = Collect::default();
        match decode(&bytes[..n], &mut c) {
            Ok(s) => {
                ok += 1;
                assert!(c.0.len() <= full.len(), "cut at {n}");
                assert_eq!(s.events as usize, c.0.len());
                for (a, b) in c.0.iter().zip(&full) {
                    assert_eq!(strip(a), strip(b), "cut at {n}");
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    ok
}

#[test]
fn json_truncated_at_every_offset() {
    for f in [
        "edge/simple.json",
        "real/catapult_simple_trace.json",
        "edge/simple-object.json",
    ] {
        let ok = check_every_prefix(&read_fixture(f));
        assert!(ok > 0, "{f}");
    }
}

#[test]
fn spall_v3_truncated_at_every_offset() {
    let mut w = spall_format::SpallWriter::new(Vec::new(), 41.5).unwrap();
    w.name_process(1, 1, "proc").unwrap();
    for i in 0..40u64 {
        let tid = (i % 3) as u32;
        w.begin(1, tid, i * 10, "span", if i % 4 == 0 { "args" } else { "" })
            .unwrap();
        w.end(1, tid, i * 10 + 5).unwrap();
    }
    let bytes = w.finish().unwrap();
    assert!(check_every_prefix(&bytes) > bytes.len() - 40);
}

#[test]
fn spall_v1_truncated_at_every_offset() {
    let bytes = read_fixture("spall/crux_v1.spall");
    // The first 1500 bytes: dozens of real v1 records.
    let ok = check_every_prefix(&bytes[..1500]);
    assert!(ok > 1400);
}
