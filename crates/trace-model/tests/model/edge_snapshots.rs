//! The edge-case files from speedscope's test suite (tests/fixtures/edge) load with the
//! documented behaviour, pinned as text snapshots in tests/snapshots/edge/.
//!
//! After a deliberate change of behaviour, regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p trace-model --test model edge_snapshots` and review the diff.

use std::fmt::Write;
use std::path::PathBuf;

use spall_format::DiagnosticKind;
use trace_model::{flags, load, Trace};

fn snapshot(t: &Trace) -> String {
    let mut s = String::new();
    let d = &t.decode_summary();
    let _ = writeln!(
        s,
        "format {}, events {}, spans {}, max depth {}, time [{}, {}] ns",
        d.format,
        d.events,
        t.span_count(),
        t.max_depth(),
        t.start_ns(),
        t.end_ns()
    );
    for (k, n) in d.diagnostics.counts() {
        let _ = writeln!(s, "decode warning {k}: {n}");
    }
    for (k, n) in t.diagnostics().counts() {
        let _ = writeln!(s, "model warning {}: {n}", k.name());
    }
    for (ti, th) in t.threads().iter().enumerate() {
        let _ = writeln!(
            s,
            "thread {}:{} {:?}",
            t.ext_id(th.pid),
            t.ext_id(th.tid),
            t.thread_label(ti as u32)
        );
        // Depth-first order: by start, parents before children.
        let mut order: Vec<(i64, usize, usize)> = Vec::new();
        for (depth, lane) in th.lanes.iter().enumerate() {
            order.extend((0..lane.len()).map(|i| (lane.start[i], depth, i)));
        }
        order.sort();
        for (_, depth, i) in order {
            let lane = &th.lanes[depth];
            let f = lane.flags[i];
            let mut tags = String::new();
            for (bit, tag) in [
                (flags::UNFINISHED, " unfinished"),
                (flags::PARTIAL_OVERLAP, " partial-overlap"),
                (flags::FROM_BEGIN_END, " B/E"),
            ] {
                if f & bit != 0 {
                    tags.push_str(tag);
                }
            }
            let _ = writeln!(
                s,
                "  {}{:?} start {} dur {} self {}{tags}",
                "  ".repeat(depth),
                t.str(lane.name[i]),
                lane.start[i],
                lane.dur[i],
                th.self_ns(depth, i)
            );
        }
    }
    s
}

#[test]
fn edge_cases_match_their_snapshots() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let edge = spall_test_support::fixture("edge");
    let snaps = root.join("tests/snapshots/edge");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&edge)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 30);
    let mut failures = Vec::new();
    for f in &files {
        let t = load(f).unwrap_or_else(|e| panic!("{e}"));
        let got = snapshot(&t);
        let snap = snaps.join(f.file_name().unwrap()).with_extension("txt");
        if update {
            std::fs::create_dir_all(&snaps).unwrap();
            std::fs::write(&snap, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&snap).unwrap_or_else(|_| {
            panic!("{} is missing: run with UPDATE_SNAPSHOTS=1", snap.display())
        });
        if got != want {
            failures.push(format!("{}:\n--- want\n{want}--- got\n{got}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
