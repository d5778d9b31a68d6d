//! Sampling profiles on real recordings: threads and processes as the profiler named them,
//! and stacks over time, each checked against a plain reading of the file.

use std::collections::BTreeSet;

use spall_test_support::fixture;
use trace_model::{load, ExtId, Trace};

/// The (pid, tid) pairs of a `perf script` file's headers, read plainly: the first field
/// after the command that is `pid/tid` or a bare tid (pid = tid).
fn perf_threads(rel: &str) -> BTreeSet<(i64, i64)> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let id = line.split_whitespace().nth(1).unwrap();
        let (pid, tid) = id.split_once('/').unwrap_or((id, id));
        out.insert((pid.parse().unwrap(), tid.parse().unwrap()));
    }
    out
}

fn model_threads(t: &Trace) -> BTreeSet<(i64, i64)> {
    let num = |x: ExtId| match x {
        ExtId::Num(n) => n,
        ExtId::Str(_) => panic!("a numeric id"),
    };
    (t.threads().iter())
        .map(|th| (num(t.processes()[th.process as usize].pid), num(th.tid)))
        .collect()
}

/// `perf script -F comm,pid,tid,...` prints `comm pid/tid`: the worker thread joins its
/// process. Without the pid (perf's default fields), each tid is a process of its own.
#[test]
fn perf_threads_join_their_process_where_perf_printed_its_pid() {
    let fields = load(fixture("real/profiles/spin_fields.perf")).unwrap();
    let want = perf_threads("real/profiles/spin_fields.perf");
    assert_eq!(want, BTreeSet::from([(611, 611), (611, 615)]));
    assert_eq!(model_threads(&fields), want);
    assert_eq!(fields.processes().len(), 1);
    // Named after its main thread's command, as perf and Perfetto name it.
    let name = fields.processes()[0].name.map(|n| fields.str(n));
    assert_eq!(name, Some("spin"));
    for th in fields.threads() {
        assert_eq!(th.name.map(|n| fields.str(n)), Some("spin"));
    }
    let plain = load(fixture("real/profiles/spin.perf")).unwrap();
    let want = perf_threads("real/profiles/spin.perf");
    assert_eq!(want, BTreeSet::from([(611, 611), (615, 615)]));
    assert_eq!(model_threads(&plain), want);
    assert_eq!(plain.processes().len(), 2);
}

/// Stacks over time on a real perf profile: at every depth the boxes cover each sample
/// that is that deep exactly once, with the frame the sample's stack holds there.
#[test]
fn a_real_profiles_stack_lanes_cover_each_sample_once() {
    for rel in ["real/profiles/spin.perf", "real/profiles/work.cpuprofile"] {
        let t = load(fixture(rel)).unwrap();
        for st in t.samples() {
            let lanes = st.stack_lanes(t.frames());
            for (d, lane) in lanes.iter().enumerate() {
                let mut covered = 0;
                let at = |s: usize| trace_model::frame_at_depth(t.frames(), st.frame[s], d);
                for i in 0..lane.len() {
                    let r = st.samples_in(lane.start[i], lane.end(i));
                    if i > 0 {
                        assert!(lane.start[i] >= lane.end(i - 1), "{rel}: overlap at {d}");
                        // Boxes that touch hold other frames: consecutive samples with one
                        // frame there are one box.
                        if lane.start[i] == lane.end(i - 1) {
                            assert_ne!(at(r.start - 1), at(r.start), "{rel}: split at {d}");
                        }
                    }
                    assert!(!r.is_empty(), "{rel}: an empty box");
                    for s in r {
                        let f = at(s);
                        assert_eq!(f.map(|f| t.frames()[f as usize].name), Some(lane.name[i]));
                        covered += 1;
                    }
                }
                let deep = (0..st.ts.len()).filter(|&s| at(s).is_some()).count();
                assert_eq!(covered, deep, "{rel}: depth {d}");
            }
        }
    }
}

/// The statistics table's rows (the viewer's and the page's panel) of a real `perf
/// record -g`: per function, its samples, total and self weight in the profile's unit,
/// each as a plain reading of the `perf script` text counts them (self: the weight of the
/// samples whose first frame it is; total: of those whose stack holds it, once each).
#[test]
fn a_profiles_table_stats_are_its_functions_weights() {
    let text = std::fs::read_to_string(fixture("real/profiles/spin.perf")).unwrap();
    let mut want: std::collections::BTreeMap<String, (u64, i64, i64)> = Default::default();
    for record in text.split("\n\n").filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines().filter(|l| !l.starts_with('#'));
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        // `comm tid secs: period event:`
        let period: i64 = header[header.len() - 2].parse().unwrap();
        let names: Vec<String> = lines
            .map(|l| {
                let sym = l.trim().split_once(' ').unwrap().1;
                let sym = sym.rsplit_once(" (").map_or(sym, |s| s.0);
                sym.split_once("+0x").map_or(sym, |s| s.0).to_string()
            })
            .collect();
        let mut seen = BTreeSet::new();
        for (i, n) in names.iter().enumerate() {
            let e = want.entry(n.clone()).or_default();
            if seen.insert(n.clone()) {
                e.0 += 1;
                e.1 += period;
            }
            if i == 0 {
                e.2 += period;
            }
        }
    }
    let t = load(fixture("real/profiles/spin.perf")).unwrap();
    let rows = t.table_stats(&Default::default());
    let got: std::collections::BTreeMap<String, (u64, i64, i64)> = (rows.iter())
        .map(|r| (t.str(r.name).to_string(), (r.count, r.total_ns, r.self_ns)))
        .collect();
    assert!(want.len() > 5 && want["leaf"].2 > 0, "{want:?}");
    assert_eq!(got, want);
    // Largest total first.
    assert!(rows.windows(2).all(|w| w[0].total_ns >= w[1].total_ns));
}
