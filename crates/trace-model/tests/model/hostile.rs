//! Hostile input through the decoder and the model: nothing panics, hangs, or loses count.

use spall_format::synth::Synth;
use spall_format::DiagnosticKind;
use spall_test_support::fixture_bytes;
use trace_model::load_bytes;

use crate::common::on_small_stack;

/// Flips 1–4 random bytes, many times over; every result loads or fails cleanly.
fn flip_bytes(original: &[u8], rounds: usize, seed: u64) {
    let mut rng = spall_format::synth::Rng(seed);
    for round in 0..rounds {
        let mut b = original.to_vec();
        for _ in 0..1 + rng.next_u64() % 4 {
            let i = (rng.next_u64() as usize) % b.len();
            b[i] ^= 1 << (rng.next_u64() % 8);
        }
        match load_bytes(&b) {
            Ok(t) => {
                // Whatever loaded is consistent: lanes sorted and never overlapping.
                for th in t.threads() {
                    for lane in &th.lanes {
                        for i in 1..lane.len() {
                            assert!(lane.end(i - 1) <= lane.start[i], "round {round}: overlap");
                        }
                    }
                }
                assert!(t.decode_summary().events <= b.len() as u64);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn random_byte_flips_in_spall_v3() {
    let s = Synth {
        spans: 300,
        threads: 3,
        processes: 1,
        ..Synth::default()
    };
    let mut b = Vec::new();
    s.write_spall(&mut b).unwrap();
    flip_bytes(&b, 3000, 1);
}

#[test]
fn random_byte_flips_in_spall_v1() {
    flip_bytes(&fixture_bytes("spall/crux_v1.spall")[..4000], 3000, 2);
}

#[test]
fn random_byte_flips_in_json() {
    flip_bytes(&fixture_bytes("real/catapult_simple_trace.json"), 3000, 3);
    flip_bytes(&fixture_bytes("edge/simple-object.json"), 2000, 4);
}

#[test]
fn a_100_mb_name_loads() {
    let mut b = br#"[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":""#.to_vec();
    b.resize(b.len() + (100 << 20), b'x');
    b.extend_from_slice(br#""}]"#);
    let t = load_bytes(&b).unwrap();
    assert_eq!(t.span_count(), 1);
    assert_eq!(t.str(t.threads()[0].lanes[0].name[0]).len(), 100 << 20);
}

#[test]
fn args_nested_100k_levels_deep() {
    let depth = 100_000;
    let mut b = br#"[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"deep","args":{"a":"#.to_vec();
    b.extend(std::iter::repeat_n(b'[', depth));
    b.extend(std::iter::repeat_n(b']', depth));
    b.extend_from_slice(br#"}}]"#);
    let t = on_small_stack(move || load_bytes(&b).unwrap());
    assert_eq!(t.span_count(), 1);
}

#[test]
fn many_unclosed_begins_nest_without_overflow_and_are_counted() {
    let n = 200_000;
    let mut b = Vec::with_capacity(n * 50);
    b.push(b'[');
    for i in 0..n {
        b.extend_from_slice(
            format!("{{\"ph\":\"B\",\"name\":\"b\",\"ts\":{i},\"pid\":1,\"tid\":1}},").as_bytes(),
        );
    }
    b.extend_from_slice(b"{\"ph\":\"i\",\"ts\":0,\"pid\":1,\"tid\":1}]");
    let t = on_small_stack(move || load_bytes(&b).unwrap());
    assert_eq!(t.span_count(), n as u64);
    // All close at the trace's end (the last B's time), so the last B is zero-length at
    // its parent's end, but inside it: an unfinished span holds what starts at its cut
    // end (docs/MODEL.md).
    assert_eq!(t.max_depth(), n);
    let unclosed: u64 = t
        .diagnostics()
        .counts()
        .filter(|(k, _)| k.name() == "unclosed_begin")
        .map(|(_, c)| c)
        .sum();
    assert_eq!(unclosed, n as u64);
}

#[test]
fn hostile_timestamps_and_ids() {
    let t = load_bytes(
        br#"[{"ph":"X","name":"neg","ts":-5,"dur":1,"pid":-1,"tid":-1},
             {"ph":"X","name":"huge","ts":9223372036854775,"dur":0,"pid":4294967296,"tid":1},
             {"ph":"X","name":"nan","ts":"NaN","dur":1,"pid":1,"tid":1},
             {"ph":"X","name":"inf","ts":1e400,"dur":1,"pid":1,"tid":1},
             {"ph":"X","name":"backwards","ts":100,"dur":1,"pid":1,"tid":1},
             {"ph":"X","name":"back2","ts":50,"dur":1,"pid":1,"tid":1}]"#,
    )
    .unwrap();
    assert_eq!(t.span_count(), 6);
    assert_eq!(
        t.decode_summary()
            .diagnostics
            .count(spall_format::WarningKind::BadNumber),
        2
    );
    assert_eq!(t.start_ns(), -5000);
}
