//! Every JSON leniency listed in docs/FORMAT.md, each with the warning it must count.

use crate::common::*;
use spall_format::{Phase, RawId};

fn names(json: &str) -> (Vec<String>, std::collections::BTreeMap<String, u64>) {
    let (events, summary) = decode_all(json.as_bytes());
    (
        events.iter().map(|e| e.name.to_string()).collect(),
        warnings(&summary),
    )
}

#[test]
fn trailing_comma_is_accepted_and_counted() {
    let (n, w) = names(r#"[{"name":"a","ph":"i"},{"name":"b","ph":"i"},]"#);
    assert_eq!(n, ["a", "b"]);
    assert_eq!(w, counts(&[("json_extra_comma", 1)]));
}

#[test]
fn missing_commas_between_events_are_accepted() {
    let (n, w) = names("[{\"name\":\"a\"}\n{\"name\":\"b\"} {\"name\":\"c\"}]");
    assert_eq!(n, ["a", "b", "c"]);
    assert_eq!(w, counts(&[("json_missing_comma", 2)]));
}

#[test]
fn missing_closing_bracket_keeps_every_event() {
    let (n, w) = names("[{\"name\":\"a\"},{\"name\":\"b\"}\n");
    assert_eq!(n, ["a", "b"]);
    assert_eq!(w, counts(&[("json_unterminated", 1)]));
    let (n, w) = names("{\"traceEvents\":[{\"name\":\"a\"}]");
    assert_eq!(n, ["a"]);
    assert_eq!(w, counts(&[("json_unterminated", 1)]));
}

#[test]
fn partial_last_event_is_dropped_and_counted() {
    let (n, w) = names(r#"[{"name":"a"},{"name":"b","ts":12"#);
    assert_eq!(n, ["a"]);
    assert_eq!(
        w,
        counts(&[("json_truncated_event", 1), ("json_unterminated", 1)])
    );
}

#[test]
fn trace_events_at_any_position_and_other_keys_never_misread() {
    let json = r##"{
        "metadata": {"traceEvents": [{"name": "not an event"}]},
        "stackFrames": {"1": {"name": "frame"}},
        "samples": [{"name": "sample", "ph": "P"}],
        "displayTimeUnit": "ms",
        "traceEvents": [{"name": "real", "ph": "X", "ts": 1, "dur": 2}],
        "systemTraceEvents": "# tracer: nop\n",
        "otherData": {"version": "1"}
    }"##;
    let (events, summary) = decode_all(json.as_bytes());
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].name, "real");
    let info = summary.json.unwrap();
    assert!(info.object_form);
    assert_eq!(info.display_time_unit.as_deref(), Some("ms"));
    let keys: Vec<_> = info.other_keys.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        keys,
        [
            "metadata",
            "stackFrames",
            "samples",
            "displayTimeUnit",
            "systemTraceEvents",
            "otherData"
        ]
    );
    // Kept ranges point at the values.
    let other = &info.other_keys[5];
    assert_eq!(
        &json[other.value.start as usize..other.value.end as usize],
        r#"{"version": "1"}"#
    );
    assert!(summary.diagnostics.is_empty());
}

#[test]
fn object_without_trace_events_is_counted() {
    let (n, w) = names(r#"{"samples": [], "stackFrames": {}}"#);
    assert!(n.is_empty());
    assert_eq!(w, counts(&[("no_trace_events", 1)]));
}

#[test]
fn non_objects_and_malformed_events_are_skipped_not_fatal() {
    let (n, w) = names(r#"[1, "x", {"name":"a"}, {"name" "b"}, [ ], {"name":"c"}]"#);
    assert_eq!(n, ["a", "c"]);
    assert_eq!(
        w,
        counts(&[("json_malformed_event", 1), ("json_not_an_object", 3)])
    );
}

#[test]
fn quoted_numbers_and_string_ids() {
    let (events, summary) = decode_all(
        br#"[{"ph":"X","ts":"5.1","dur":"0.5","pid":"renderer","tid":"7"},
             {"ph":"X","ts":1,"pid":"gpu","tid":"7"},
             {"ph":"X","ts":1,"pid":"","tid":7}]"#,
    );
    assert!(summary.diagnostics.is_empty());
    assert_eq!((events[0].ts, events[0].dur), (5100, Some(500)));
    assert_eq!(events[0].pid, RawId::Str("renderer".into()));
    assert_eq!(events[0].tid, RawId::Num(7));
    assert_ne!(events[0].pid, events[1].pid);
    assert_eq!(events[2].pid, RawId::Str("".into()));
    assert_ne!(events[2].pid, RawId::Num(0));
}

#[test]
fn ph_uses_its_first_character_and_a_missing_ph_is_kept() {
    let (events, _) = decode_all(br#"[{"ph":"Xyz"},{"name":"no phase"}]"#);
    assert_eq!(events[0].ph, Phase::COMPLETE);
    assert_eq!(events[1].ph, Phase::MISSING);
}

#[test]
fn invalid_utf8_is_repaired_per_event_and_counted() {
    let mut bytes = br#"[{"name":"ok"},{"name":"bad "#.to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(br#"","ph":"i"},{"name":"after"}]"#);
    let (events, summary) = decode_all(&bytes);
    let names: Vec<_> = events.iter().map(|e| e.name.to_string()).collect();
    assert_eq!(names, ["ok", "bad \u{FFFD}\u{FFFD}", "after"]);
    assert_eq!(warnings(&summary), counts(&[("invalid_utf8", 1)]));
}

#[test]
fn escapes_and_non_ascii_names() {
    let (events, summary) =
        decode_all(r#"[{"name":"\"quoted\" \u00e9t\u00e9 日本 \ud83d\ude00 a\\b"}]"#.as_bytes());
    assert!(summary.diagnostics.is_empty());
    assert_eq!(events[0].name, "\"quoted\" été 日本 😀 a\\b");
}

#[test]
fn byte_order_mark_and_trailing_garbage() {
    let (n, w) = names("\u{feff}[{\"name\":\"a\"}]");
    assert_eq!((n, w.len()), (vec!["a".to_string()], 0));
    let (n, w) = names("[{\"name\":\"a\"}] junk");
    assert_eq!(n, ["a"]);
    assert_eq!(w, counts(&[("trailing_data", 1)]));
}

#[test]
fn gzip_is_detected_by_content_even_nested() {
    use std::io::Write;
    let gz = |b: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    };
    let json = br#"[{"name":"zipped","ph":"i"}]"#;
    let (events, summary) = decode_all(&gz(&gz(json)));
    assert!(summary.gzip);
    assert_eq!(events[0].name, "zipped");
    // A truncated gzip stream keeps what it decompressed.
    let mut big = b"[".to_vec();
    for i in 0..20000 {
        big.extend_from_slice(format!("{{\"name\":\"e{i}\",\"ph\":\"i\"}},").as_bytes());
    }
    let z = gz(&big);
    let (events, summary) = decode_all(&z[..z.len() / 2]);
    assert!(!events.is_empty() && events.len() < 20000);
    assert_eq!(
        summary
            .diagnostics
            .count(spall_format::WarningKind::GzipTruncated),
        1
    );
}
