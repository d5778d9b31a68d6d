//! Navigation on a real nested trace: parent, children, occurrences, and the index's size.

use spall_format::synth::Synth;
use trace_index::{
    children, occurrences, occurrences_of, parent, query_lane, Detail, LaneIndex, TraceIndex,
};
use trace_model::{load_bytes, SpanRef, Trace};

/// The generated trace and three real ones (tests/fixtures/README.md has their provenance).
fn traces() -> Vec<(String, Trace)> {
    let fixtures = "../../tests/fixtures/real";
    let mut traces = vec![("generated".to_string(), trace())];
    for f in [
        "bazel_profile_with_queuing.json.gz",
        "chrome116_devtools_export.json",
        "pytorch_kineto_trace_diff_test.json.gz",
    ] {
        let bytes = std::fs::read(format!("{fixtures}/{f}")).unwrap();
        traces.push((f.to_string(), load_bytes(&bytes).unwrap()));
    }
    traces
}

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
    for (ti, th) in t.threads.iter().enumerate() {
        for (d, lane) in th.lanes.iter().enumerate() {
            for i in (0..lane.len()).step_by(7) {
                let r = SpanRef {
                    thread: ti as u32,
                    depth: d as u32,
                    index: i as u32,
                };
                match parent(&t, r) {
                    None => assert_eq!(d, 0),
                    Some(p) => {
                        let ps = t.span(p);
                        assert!(
                            ps.start <= lane.start[i] && lane.start[i] < ps.end().max(ps.start + 1)
                        );
                        assert!(
                            children(&t, p).contains(&i),
                            "{r:?} not among its parent's children"
                        );
                    }
                }
                for c in children(&t, r) {
                    let child = SpanRef {
                        thread: r.thread,
                        depth: r.depth + 1,
                        index: c as u32,
                    };
                    assert_eq!(parent(&t, child), Some(r));
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
    let name = t.threads[0].lanes[0].name[0];
    let occ = occurrences_of(&t, name);
    let brute: usize = t
        .threads
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
    let all = occurrences(&t, |s| s.contains("::"));
    assert_eq!(all.len() as u64, t.span_count());
    assert!(occurrences(&t, |s| s.contains("no such name")).is_empty());
}

#[test]
fn the_index_adds_at_most_8_bytes_per_span() {
    let t = trace();
    let idx = TraceIndex::build(&t);
    let per_span = idx.heap_bytes() as f64 / t.span_count() as f64;
    assert!(per_span <= 8.0, "{per_span} bytes per span");
}

/// The budgeted index of whole traces (a generated one and real files) answers every lane
/// at several zooms exactly as walking the spans does (the generated trace through its stored
/// levels).
#[test]
fn the_trace_index_answers_like_the_walk_on_real_traces() {
    for (name, t) in &traces() {
        let idx = TraceIndex::build(t);
        let (s, e) = (t.start_ns, t.end_ns);
        let mid = s + (e - s) / 2;
        let mut from_levels = 0;
        let views = [
            (s, e),
            (mid, mid + (e - s) / 10),
            (mid, mid + (e - s) / 100),
        ];
        // Visible gaps of 1 and 3 pixels: the level picked depends on both thresholds.
        for ((t0, t1), gap_px) in views.into_iter().flat_map(|v| [(v, 1.0), (v, 3.0)]) {
            let mut detail = Detail::new((t1 - t0).max(1) as f64 / 1920.0);
            detail.gap_px = gap_px;
            for (ti, th) in t.threads.iter().enumerate() {
                for (d, lane) in th.lanes.iter().enumerate() {
                    let li = &idx.threads[ti][d];
                    let picked = li.pick(detail.min_dur(), detail.min_gap());
                    from_levels += picked.is_some() as usize;
                    let mut got = Vec::new();
                    idx.query_into(t, ti, d, t0, t1, detail, &mut got);
                    let mut walked = Vec::new();
                    let walk_only = LaneIndex::with_levels(lane, &[]);
                    query_lane(lane, &walk_only, t0, t1, detail, &mut walked);
                    assert_eq!(got, walked, "{name}: thread {ti} depth {d}");
                }
            }
        }
        eprintln!("{name}: {from_levels} lane queries from stored levels");
        // Real traces with short lanes may keep no levels; the generated one must use them.
        assert!(
            name != "generated" || from_levels > 0,
            "no lane used a stored level"
        );
    }
}

/// A parent (0-10 µs), a child that outlives it (5-20 µs: a partial overlap, one level
/// deeper) and a grandchild inside the child (16-18 µs).
const PARTIAL: &str = r#"[
{"ph":"X","name":"parent","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"child","ts":5,"dur":15,"pid":1,"tid":1},
{"ph":"X","name":"grandchild","ts":16,"dur":2,"pid":1,"tid":1}]"#;

#[test]
fn nested_lanes_are_contained_and_a_partial_overlap_is_not() {
    let t = trace();
    let idx = TraceIndex::build(&t);
    for (ti, lanes) in idx.threads.iter().enumerate() {
        for (d, lane) in lanes.iter().enumerate() {
            // The generated trace nests strictly; lane 0 has nothing above it.
            assert_eq!(lane.contained(), d > 0, "thread {ti} depth {d}");
        }
    }
    let t = load_bytes(PARTIAL.as_bytes()).unwrap();
    let idx = TraceIndex::build(&t);
    let contained: Vec<bool> = idx.threads[0].iter().map(|l| l.contained()).collect();
    assert_eq!(contained, [false, false, true]);
}

/// `query_thread` gives every lane with items in the range, with `query_into`'s items: the
/// lanes it skips below an empty one are empty.
#[test]
fn a_thread_query_skips_only_empty_lanes() {
    let mut traces = traces();
    traces.push(("partial".into(), load_bytes(PARTIAL.as_bytes()).unwrap()));
    for (name, t) in &traces {
        let idx = TraceIndex::build(t);
        let (s, e) = (t.start_ns, t.end_ns);
        let mid = s + (e - s) / 2;
        let len = e - s;
        let mut views: Vec<(i64, i64)> = [1, 10, 100, 10_000, 1_000_000]
            .iter()
            .map(|&div| (mid, mid + len / div))
            .collect();
        // The whole trace, its last quarter (in the partial trace, after the parent ended:
        // only the child and grandchild show there) and a range past its end.
        views.extend([(s, e), (s + len * 3 / 4, e), (e + 1, e + 100)]);
        for (t0, t1) in views {
            let detail = Detail::new((t1 - t0).max(1) as f64 / 1920.0);
            let mut out = Vec::new();
            for (ti, lanes) in idx.threads.iter().enumerate() {
                for depths in [0..lanes.len(), 1..lanes.len().saturating_sub(1)] {
                    let mut got = Vec::new();
                    idx.query_thread(t, ti, depths.clone(), t0, t1, detail, &mut out, |d, it| {
                        got.push((d, it.to_vec()))
                    });
                    let want: Vec<_> = depths
                        .map(|d| (d, idx.query(t, ti, d, t0, t1, detail)))
                        .filter(|(_, it)| !it.is_empty())
                        .collect();
                    assert_eq!(got, want, "{name}: thread {ti}, [{t0}, {t1}]");
                }
            }
        }
    }
    // The partial overlap is found although the lane above is empty there.
    let t = &traces.last().unwrap().1;
    let idx = TraceIndex::build(t);
    let mut depths = Vec::new();
    let (t0, t1) = (15_000, 20_000);
    let detail = Detail::new(10.0);
    idx.query_thread(t, 0, 0..3, t0, t1, detail, &mut Vec::new(), |d, _| {
        depths.push(d)
    });
    assert_eq!(depths, [1, 2]);
}
