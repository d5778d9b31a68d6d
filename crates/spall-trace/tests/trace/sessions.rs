//! Sessions one after another in one process: each file holds only its own session's
//! events, from threads that live through both. The session is process-wide: the test holds
//! `one_session()` throughout.

use std::sync::mpsc;

fn names(path: &std::path::Path) -> Vec<String> {
    let trace = trace_model::load(path).unwrap();
    assert!(trace.diagnostics().is_empty(), "{:?}", trace.diagnostics());
    let mut out: Vec<String> = (trace.threads().iter())
        .flat_map(|t| t.lanes.iter().flat_map(|l| l.name.iter()))
        .map(|&n| trace.str(n).to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn a_second_session_holds_only_its_own_events() {
    let _session = crate::one_session();
    let dir = spall_test_support::scratch_dir("sessions");
    let (one, two) = (dir.join("one.spall"), dir.join("two.spall"));
    // A worker that records on request, alive through both sessions.
    let (ask, asked) = mpsc::channel::<&'static str>();
    let (done, finished) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        for name in asked {
            drop(spall_trace::span(name));
            done.send(()).unwrap();
        }
    });

    let g = spall_trace::init(&one).unwrap();
    drop(spall_trace::span("first"));
    ask.send("worker first").unwrap();
    finished.recv().unwrap();
    g.finish().unwrap();

    // Between sessions nothing is recorded.
    drop(spall_trace::span("between"));
    ask.send("worker between").unwrap();
    finished.recv().unwrap();

    let g = spall_trace::init(&two).unwrap();
    assert!(
        spall_trace::init(dir.join("three.spall")).is_err(),
        "one session at a time"
    );
    drop(spall_trace::span("second"));
    ask.send("worker second").unwrap();
    finished.recv().unwrap();
    g.finish().unwrap();

    drop(ask);
    worker.join().unwrap();
    assert_eq!(names(&one), ["first", "worker first"]);
    assert_eq!(names(&two), ["second", "worker second"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
