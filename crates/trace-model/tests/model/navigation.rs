//! Navigation without an index on a real nested trace and random lanes: parent, children,
//! occurrences of a name, and the span under a time.

use proptest::prelude::*;
use spall_format::synth::Synth;
use trace_model::{load_bytes, Lane, SpanRef, StrId, Trace};

fn trace() -> Trace {
    let s = Synth {
        seed: 3,
        spans: 50_000,
        threads: 4,
        processes: 2,
        max_depth: 30,
        ..Synth::default()
    };
    let mut b = Vec::new();
    s.write_spall(&mut b).unwrap();
    load_bytes(&b).unwrap()
}

#[test]
fn parent_and_children_agree_with_the_nesting() {
    let t = trace();
    let mut checked = 0;
    for (ti, th) in t.threads().iter().enumerate() {
        for (d, lane) in th.lanes.iter().enumerate() {
            for i in (0..lane.len()).step_by(7) {
                let r = SpanRef {
                    thread: ti as u32,
                    depth: d as u32,
                    index: i as u32,
                };
                match t.parent(r) {
                    None => assert_eq!(d, 0),
                    Some(p) => {
                        let ps = t.span(p);
                        assert!(
                            ps.start <= lane.start[i] && lane.start[i] < ps.end().max(ps.start + 1)
                        );
                        assert!(
                            t.children(p).contains(&i),
                            "{r:?} not among its parent's children"
                        );
                    }
                }
                for c in t.children(r) {
                    let child = SpanRef {
                        thread: r.thread,
                        depth: r.depth + 1,
                        index: c as u32,
                    };
                    assert_eq!(t.parent(child), Some(r));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 5000);
}

#[test]
fn occurrences_are_every_match_in_time_order() {
    let t = trace();
    let name = t.threads()[0].lanes[0].name[0];
    let text = t.str(name).to_string();
    let occ = t.occurrences(|s| s == text);
    let brute: usize = t
        .threads()
        .iter()
        .flat_map(|th| &th.lanes)
        .map(|l| l.name.iter().filter(|&&n| n == name).count())
        .sum();
    assert_eq!(occ.len(), brute);
    assert!(occ
        .windows(2)
        .all(|w| t.span(w[0]).start <= t.span(w[1]).start));
    assert!(occ.iter().all(|&r| t.span(r).name == name));
    // Substring search over every name.
    let all = t.occurrences(|s| s.contains("::"));
    assert_eq!(all.len() as u64, t.span_count());
    assert!(t.occurrences(|s| s.contains("no such name")).is_empty());
}

/// A lane from (gap, dur, name) triples: spans laid end to end with the given gaps.
fn lane(spec: &[(i64, i64, u32)]) -> Lane {
    let mut l = Lane::default();
    let mut t = 0i64;
    for &(gap, dur, name) in spec {
        t += gap;
        l.start.push(t);
        l.dur.push(dur);
        l.name.push(StrId(name));
        l.cat.push(StrId(0));
        l.args.push(Default::default());
        l.flags.push(0);
        t += dur;
    }
    l
}

fn spec() -> impl Strategy<Value = Vec<(i64, i64, u32)>> {
    let scale = || prop_oneof![0i64..3, 0i64..100, 0i64..10_000, 0i64..1_000_000];
    prop::collection::vec((scale(), scale(), 0u32..8), 0..3000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn hit_test_finds_the_span_under_the_time(spec in spec(), f in 0.0f64..1.0, tol in 0i64..50) {
        let lane = lane(&spec);
        if lane.is_empty() { return Ok(()); }
        let total = lane.end(lane.len() - 1);
        let t = (f * total as f64) as i64;
        let got = lane.hit_test(t, tol);
        // Brute force: the nearest span within the tolerance, preferring one containing t.
        let dist = |i: usize| {
            let (s, e) = (lane.start[i], lane.end(i));
            if t < s { s - t } else if t < e || (s == e && t == s) { 0 } else { t - e + 1 }
        };
        let best = (0..lane.len()).map(dist).filter(|&d| d <= tol).min();
        prop_assert_eq!(got.map(|h| h.distance), best);
        if let Some(h) = got {
            prop_assert_eq!(dist(h.index), h.distance);
        }
    }
}

#[test]
fn activity_is_the_share_of_threads_busy_per_column() {
    // Thread 1 busy over the first half, thread 2 over the third quarter; the trace runs
    // from 0 to 4 ms, so 4 columns of 1 ms.
    let t = load_bytes(
        br#"[{"ph":"X","name":"a","ts":0,"dur":2000,"pid":1,"tid":1},
             {"ph":"X","name":"b","ts":2000,"dur":500,"pid":1,"tid":2},
             {"ph":"X","name":"c","ts":3999,"dur":1,"pid":1,"tid":1}]"#,
    )
    .unwrap();
    let a = t.activity(4);
    let want = [0.5, 0.5, 0.25, 0.0005];
    for (got, want) in a.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{a:?}");
    }
    assert_eq!(a.len(), 4);
}
