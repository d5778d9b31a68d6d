//! Self time is one rule (`child_time` in `clip.rs`) counted by three loops: a span's
//! own (`Thread::self_ns`, the details panel and SQL's `self_dur`), the statistics', and
//! the flame graph's. On the edge-case and real traces, broken nesting included, the
//! statistics agree with the spans' own self times per name, and the flame graph's
//! frames with the statistics per call stack wherever no span outlives its parent (the
//! one place the flame graph cuts a frame to its parent on purpose).

use std::collections::HashMap;

use trace_model::{load, FlameOptions, FlameSort, FrameLabel, GroupBy, StatsFilter, StrId, Trace};

fn traces() -> Vec<(String, Trace)> {
    let mut out = Vec::new();
    for dir in ["edge", "real"] {
        let mut paths: Vec<_> = std::fs::read_dir(spall_test_support::fixture(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for p in paths {
            if let Ok(t) = load(&p) {
                out.push((p.display().to_string(), t));
            }
        }
    }
    assert!(out.len() > 30, "fixtures found: {}", out.len());
    out
}

/// Per name, the sum of its spans' own self times.
fn spans_self(t: &Trace) -> HashMap<StrId, i64> {
    let mut by_name: HashMap<StrId, i64> = HashMap::new();
    for th in t.threads() {
        for (d, lane) in th.lanes.iter().enumerate() {
            for i in 0..lane.len() {
                *by_name.entry(lane.name[i]).or_default() += th.self_ns(d, i);
            }
        }
    }
    by_name
}

/// Whether some span ends after the span it nests in.
fn outlives_a_parent(t: &Trace) -> bool {
    t.threads().iter().any(|th| {
        th.lanes.windows(2).any(|w| {
            (0..w[0].len()).any(|i| {
                let (s, e) = (w[0].start[i], w[0].end(i));
                w[1].starting_in(s, e).any(|j| w[1].end(j) > e)
            })
        })
    })
}

#[test]
fn statistics_spans_and_flame_graph_count_self_time_alike() {
    let mut compared_flame = 0;
    for (path, t) in traces() {
        let own = spans_self(&t);
        let stats = t.stats(&StatsFilter::default());
        for s in &stats {
            assert_eq!(
                own.get(&s.name),
                Some(&s.self_ns),
                "{path}: {}",
                t.str(s.name)
            );
        }
        assert_eq!(own.len(), stats.len(), "{path}");
        if outlives_a_parent(&t) {
            continue;
        }
        compared_flame += 1;
        let opts = FlameOptions::default();
        let tree = t.flame(&opts, FlameSort::Heaviest);
        let mut flame: HashMap<Vec<StrId>, i64> = HashMap::new();
        for n in 1..tree.len() as u32 {
            let names: Vec<StrId> = (tree.path(n).into_iter())
                .filter_map(|k| match tree.label[k as usize] {
                    FrameLabel::Name(s) => Some(s),
                    _ => None,
                })
                .collect();
            *flame.entry(names).or_default() += tree.self_ns[n as usize];
        }
        for g in t.groups(&StatsFilter::default(), GroupBy::Stack) {
            let got = flame.get(&g.stack).copied().unwrap_or(0);
            assert_eq!(got, g.stats.self_ns, "{path}: {:?}", g.stack);
        }
    }
    assert!(
        compared_flame > 20,
        "flame graphs compared: {compared_flame}"
    );
}
