//! Golden tests on real traces from `tests/fixtures` (copied from the shared corpus).
//!
//! Every expected count here was computed independently of this crate, by the Python
//! one-liners quoted beside them, run on the same files.

use crate::common::*;
use spall_format::{Args, Format, Phase, RawId, WarningKind};

// python3 -c "import json,collections,sys,gzip; f=sys.argv[1]; o=gzip.open if f.endswith('.gz') else open;
//   d=json.load(o(f,'rt')); e=d['traceEvents'] if isinstance(d,dict) else d;
//   print(len(e), sorted(collections.Counter(x.get('ph','?')[:1] for x in e).items()))" FILE
const GOLDEN: &[(&str, &[(&str, u64)])] = &[
    (
        "real/catapult_async_begin_end.json",
        &[("B", 3), ("E", 3), ("F", 10), ("S", 11), ("T", 7), ("b", 1)],
    ),
    ("real/catapult_big_trace.json", &[("B", 933), ("E", 933)]),
    (
        "real/catapult_flow.json",
        &[("B", 1625), ("E", 1622), ("M", 18), ("f", 886), ("s", 866)],
    ),
    (
        "real/catapult_flow_simple.json",
        &[("X", 5), ("f", 2), ("s", 2), ("t", 1)],
    ),
    ("real/catapult_instant_events.json", &[("i", 5)]),
    ("real/catapult_nanoseconds.json", &[("B", 8), ("E", 8)]),
    (
        "real/catapult_nestable_async.json",
        &[("b", 9), ("e", 9), ("n", 2)],
    ),
    (
        "real/catapult_simple_trace.json",
        &[
            ("B", 8),
            ("C", 5),
            ("E", 8),
            ("I", 6),
            ("M", 3),
            ("P", 3),
            ("X", 4),
        ],
    ),
    (
        "real/catapult_tall_trace.json",
        &[("B", 18), ("E", 18), ("M", 3)],
    ),
    ("real/catapult_traceviewify.json", &[("B", 656), ("E", 656)]),
    (
        "real/chrome116_devtools_export.json",
        &[
            ("I", 97),
            ("M", 28),
            ("N", 1),
            ("O", 2),
            ("P", 17),
            ("R", 13),
            ("X", 2456),
            ("b", 234),
            ("e", 234),
            ("f", 13),
            ("s", 13),
        ],
    ),
    (
        "real/bazel_profile_with_queuing.json.gz",
        &[("C", 3369), ("M", 188), ("X", 12778), ("i", 7)],
    ),
    (
        "real/pytorch_kineto_trace_diff_test.json.gz",
        &[("M", 42), ("X", 68324), ("f", 26815), ("i", 2), ("s", 9984)],
    ),
    (
        "real/clang/blender-mac-clang14_obj_export_file_writer.json",
        &[("M", 2), ("X", 824)],
    ),
    (
        "real/clang/self-win-clang-19.1_BuildEvents.json",
        &[("M", 2), ("X", 1048), ("b", 183), ("e", 183)],
    ),
    ("edge/bex-interaction.json", &[("B", 6), ("E", 6), ("X", 6)]),
    (
        "edge/end-event-with-empty-stack.json",
        &[("B", 1), ("E", 2)],
    ),
    ("edge/multiprocess.json", &[("M", 9), ("X", 8)]),
    ("edge/simple-object.json", &[("B", 2), ("E", 2), ("X", 1)]),
    ("edge/simple-with-samples.json", &[("M", 2)]),
    ("edge/too-many-end-events.json", &[("B", 2), ("E", 4)]),
    (
        "edge/zero-duration-events.json",
        &[("B", 3), ("E", 3), ("X", 1)],
    ),
];

#[test]
fn golden_phase_counts_match_python() {
    for (file, expected) in GOLDEN {
        let (events, summary) = decode_all(&read_fixture(file));
        assert_eq!(phase_counts(&events), counts(expected), "{file}");
        assert_eq!(summary.format, Format::Json, "{file}");
        assert!(
            summary.diagnostics.is_empty(),
            "{file}: {:?}",
            summary.diagnostics
        );
        assert_eq!(summary.gzip, file.ends_with(".gz"), "{file}");
    }
}

// python3 -c "import json,sys; from decimal import Decimal, ROUND_HALF_EVEN
//   d=json.load(open(sys.argv[1]), parse_float=Decimal); e=d['traceEvents'] if isinstance(d,dict) else d
//   r=lambda v:(Decimal(v)*1000).to_integral_value(ROUND_HALF_EVEN)
//   print(sum(r(x['ts']) for x in e if 'ts' in x), sum(r(x['dur']) for x in e if 'dur' in x))" FILE
#[test]
fn timestamps_convert_exactly_from_decimal_text() {
    for (file, ts_sum, dur_sum) in [
        (
            "real/chrome116_devtools_export.json",
            29735401986823000i128,
            348473000i128,
        ),
        (
            "real/clang/self-win-clang-19.1_BuildEvents.json",
            1492630294000,
            15035238000,
        ),
        ("real/catapult_flow.json", 7481710525133018000, 0),
        ("real/catapult_nanoseconds.json", 34302, 0),
    ] {
        let (events, _) = decode_all(&read_fixture(file));
        let ts: i128 = events.iter().map(|e| e.ts as i128).sum();
        let dur: i128 = events.iter().filter_map(|e| e.dur).map(i128::from).sum();
        assert_eq!((ts, dur), (ts_sum, dur_sum), "{file}");
    }
}

#[test]
fn catapult_nanoseconds_keeps_sub_microsecond_times() {
    let (events, summary) = decode_all(&read_fixture("real/catapult_nanoseconds.json"));
    let ns: Vec<i64> = events.iter().map(|e| e.ts).collect();
    assert_eq!(&ns[8..12], &[3000, 3011, 3011, 3013]);
    // displayTimeUnit is kept for display and does not scale timestamps.
    assert_eq!(
        summary.json.unwrap().display_time_unit.as_deref(),
        Some("ns")
    );
}

#[test]
fn pytorch_string_pids_stay_distinct_and_arrays_before_trace_events_are_skipped() {
    let (events, summary) =
        decode_all(&read_fixture("real/pytorch_kineto_trace_diff_test.json.gz"));
    // grep -o '"pid": *"[^"]*"' | sort | uniq -c   ->   1 "", 2 "Spans", 1 "Traces"
    let str_pids: Vec<&RawId<'_>> = events
        .iter()
        .map(|e| &e.pid)
        .filter(|p| matches!(p, RawId::Str(_)))
        .collect();
    assert_eq!(str_pids.len(), 4);
    assert!(str_pids.contains(&&RawId::Str("".into())));
    assert!(str_pids.contains(&&RawId::Str("Spans".into())));
    let info = summary.json.unwrap();
    let keys: Vec<&str> = info.other_keys.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        &keys[..3],
        &["schemaVersion", "deviceProperties", "distributedInfo"]
    );
    // Flow ends bind to the enclosing slice.
    assert!(events
        .iter()
        .any(|e| e.ph == Phase::FLOW_END && e.bp == Some(b'e')));
}

#[test]
fn args_stay_raw_until_asked() {
    let (events, _) = decode_all(&read_fixture(
        "real/clang/blender-mac-clang14_obj_export_file_writer.json",
    ));
    let with_args = events.iter().find(|e| !e.args.is_empty()).unwrap();
    let Args::Json(raw) = &with_args.args else {
        panic!("JSON args expected")
    };
    assert!(raw.starts_with('{'));
    assert!(with_args.args.to_json().unwrap().is_object());
}

#[test]
fn chrome_devtools_id2_is_decoded() {
    let (events, _) = decode_all(&read_fixture("real/chrome116_devtools_export.json"));
    assert!(events.iter().any(|e| e.id2.is_some()));
}

// Partial files: python's json refuses them, so these counts are by reading the files.
#[test]
fn partial_files_keep_every_complete_event() {
    for (file, n, expected) in [
        // 6 complete events, ends with `...}` and no `]`.
        (
            "edge/simple-partial.json",
            6u64,
            &[("json_unterminated", 1u64)][..],
        ),
        // ends with `},` and no `]`.
        (
            "edge/simple-partial-trailing-comma.json",
            6,
            &[("json_unterminated", 1)][..],
        ),
        (
            "edge/simple-partial-whitespace.json",
            6,
            &[("json_unterminated", 1)][..],
        ),
    ] {
        let (events, summary) = decode_all(&read_fixture(file));
        assert_eq!(events.len() as u64, n, "{file}");
        assert_eq!(warnings(&summary), counts(expected), "{file}");
    }
}

#[test]
fn spall_v1_crux() {
    // python3: walk the records with struct.unpack_from('<BBIIdBB') / ('<BIId'): B 21449, E 21446.
    let (events, summary) = decode_all(&read_fixture("spall/crux_v1.spall"));
    assert_eq!(summary.format, Format::SpallV1);
    assert_eq!(phase_counts(&events), counts(&[("B", 21449), ("E", 21446)]));
    assert!(summary.diagnostics.is_empty(), "{:?}", summary.diagnostics);
    let first = &events[0];
    assert_eq!(first.name, "slice_expr_error_hi");
    assert_eq!(
        (&first.pid, &first.tid),
        (&RawId::Num(0), &RawId::Num(0x1afb))
    );
    // python3: from fractions import Fraction as F; t,u = struct.unpack_from('<d',d,42)[0], 0.0003130870683878576
    //          round(F(t)*F(u)*1000)
    let unit = f64::from_le_bytes(
        read_fixture("spall/crux_v1.spall")[16..24]
            .try_into()
            .unwrap(),
    );
    let t = f64::from_le_bytes(
        read_fixture("spall/crux_v1.spall")[42..50]
            .try_into()
            .unwrap(),
    );
    assert_eq!(unit, 0.0003130870683878576);
    assert_eq!(first.ts, exact_product_ns(t, unit * 1.0, 1000));
    assert!(events.windows(2).all(|w| w[0].offset < w[1].offset));
}

/// Exact round(t × u × k) by big-integer arithmetic on the f64 bit patterns (independent of
/// the crate's TickScale).
fn exact_product_ns(t: f64, u: f64, k: u128) -> i64 {
    fn parts(x: f64) -> (u128, i32) {
        let b = x.to_bits();
        let e = ((b >> 52) & 0x7ff) as i32;
        let m = (b & ((1 << 52) - 1)) | (1 << 52);
        (m as u128, e - 1075)
    }
    let (tm, te) = parts(t);
    let (um, ue) = parts(u);
    let prod = tm * um * k;
    let sh = -(te + ue);
    assert!(sh > 0);
    let q = prod >> sh;
    let r = prod & ((1u128 << sh) - 1);
    let half = 1u128 << (sh - 1);
    (if r > half || (r == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }) as i64
}

#[test]
fn spall_v3_odingengine() {
    let (events, summary) = decode_all(&read_fixture("spall/odingengine_v3.spall"));
    assert_eq!(summary.format, Format::SpallV3);
    // python3: 3 buffers; {3: 91542, 4: 91542} (see the v3 walk in docs/FORMAT.md)
    assert_eq!(phase_counts(&events), counts(&[("B", 91542), ("E", 91542)]));
    assert!(summary.diagnostics.is_empty(), "{:?}", summary.diagnostics);
    assert_eq!(events[0].name, "Frame");
    assert_eq!(events[0].pid, RawId::Num(0));
    assert_eq!(events[0].tid, RawId::Num(0x7895c9));
    // ticks 0x0f563bc0c826 (bytes 26 c8 c0 3b 56 0f 00 00 at offset 54) at 41.666… ns per tick (the header's f64 1000/24).
    let unit = 41.66666666666667f64;
    let ticks: u64 = 0x0f56_3bc0_c826;
    assert_eq!(events[0].ts, exact_product_ns(ticks as f64, unit, 1));
}

/// Skipped, with a note, when `../shared/corpus` (beside the repository) is missing; with
/// `SPALL_REQUIRE_CORPUS=1` (set by `.ci/run`) a missing corpus is a failure.
#[test]
fn every_shared_corpus_file_decodes() {
    let Some(root) = spall_test_support::corpus("every_shared_corpus_file_decodes") else {
        return;
    };
    let mut n = 0;
    for dir in ["edge", "real", "real/clang", "spall"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() || path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            let mut count = 0u64;
            let s =
                spall_format::decode_file(&path, &mut |_: &spall_format::RawEvent<'_>| count += 1)
                    .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.events, count);
            assert!(count > 0, "{}", path.display());
            // Only the partial edge files may warn, and only that they are unterminated.
            for (k, _) in s.diagnostics.counts() {
                assert_eq!(
                    k,
                    WarningKind::JsonUnterminated,
                    "{}: {:?}",
                    path.display(),
                    s.diagnostics
                );
            }
            n += 1;
        }
    }
    assert!(n >= 48, "{n} files");
}
