//! Live traces: a file still being written loads what is complete, and reloading it after
//! more was appended shows more events while the view (range, scroll, collapsed and hidden
//! tracks, selection, search) stays where the user left it.

use std::io::Write;
use std::path::{Path, PathBuf};

use spall_format::synth::Synth;
use spall_viewer::kinds::Pick;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::layout::{RowKind, Track};
use spall_viewer::view::state::ViewState;
use spall_viewer::Loaded;

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("spall-reload-{}-{name}", std::process::id()))
}

fn load(p: &Path) -> Loaded {
    spall_viewer::load(Some(p), &Default::default(), |_, _| {}).unwrap()
}

fn append(p: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
    f.write_all(bytes).unwrap();
}

/// A JSON event of `name` on thread `tid` (pid 1), `ts` and `dur` in µs, and a comma.
fn ev(name: &str, tid: u32, ts: u32, dur: u32) -> String {
    format!(r#"{{"name":"{name}","ph":"X","ts":{ts},"dur":{dur},"pid":1,"tid":{tid}}},"#)
}

/// Loads, changes the view, appends, reloads, carries the view over; returns both loads
/// and both states.
fn reload_after(
    p: &Path,
    more: &[u8],
    change: impl FnOnce(&Loaded, &mut ViewState),
) -> (Loaded, ViewState, Loaded, ViewState) {
    let l1 = load(p);
    let mut s1 = ViewState::new(&l1, 1200.0, 700.0, Theme::new(ThemeKind::Light));
    change(&l1, &mut s1);
    append(p, more);
    let l2 = load(p);
    let mut s2 = ViewState::new(&l2, 1200.0, 700.0, Theme::new(ThemeKind::Light));
    s2.carry_over(&s1, &l1, &l2);
    (l1, s1, l2, s2)
}

#[test]
fn json_without_its_closing_bracket_reloads_with_more_events() {
    let p = tmp("live.json");
    let mut text = String::from("{\"traceEvents\": [\n");
    for i in 0..50 {
        text += &ev("tick", 1, i * 100, 60);
        text += &ev("work", 2, i * 100 + 10, 30);
    }
    // Cut inside an event, as a writer mid-flush leaves it.
    text += r#"{"name":"tick","ph":"X","ts":50"#;
    std::fs::write(&p, &text).unwrap();
    let mut more = String::from("00,\"dur\":60,\"pid\":1,\"tid\":1},");
    for i in 51..80 {
        more += &ev("tick", 1, i * 100, 60);
        more += &ev("late", 3, i * 100, 20);
    }
    let (l1, s1, l2, s2) = reload_after(&p, more.as_bytes(), |l, s| {
        s.timeline.viewport.show(
            l.trace.start_ns() + 1_000_000,
            l.trace.start_ns() + 2_000_000,
        );
        s.timeline.toggle_collapse(l, RowKind::Thread(0));
        s.search(l, "work");
        let first = s.timeline.matches.spans[3];
        s.timeline.select(l, Some(first));
        // (Selecting shows a hidden thread: hide one after.)
        s.timeline.collapsed.set_hidden(Track::Process(0), true);
    });
    assert_eq!(l1.trace.span_count(), 100);
    assert_eq!(l2.trace.span_count(), 100 + 1 + 29 * 2);
    assert!(
        l1.trace.decode_summary().diagnostics.total() > 0,
        "the live file was warned about"
    );
    // The view stayed.
    assert_eq!(
        s2.timeline.viewport.visible(),
        s1.timeline.viewport.visible()
    );
    assert!(s1.timeline.collapsed.threads[0] && s2.timeline.collapsed.threads[0]);
    assert!(s2.timeline.collapsed.is_hidden(Track::Process(0)));
    assert_eq!(s2.timeline.matches.query, "work");
    assert_eq!(s2.timeline.matches.spans.len(), 50);
    let (Some(Pick::Span(a)), Some(Pick::Span(b))) = (s1.timeline.selected, s2.timeline.selected)
    else {
        panic!("the selection was lost: {:?}", s2.timeline.selected);
    };
    let (x, y) = (l1.trace.span(a), l2.trace.span(b));
    assert_eq!((x.start, x.dur), (y.start, y.dur));
    assert_eq!(l2.trace.strings().get(y.name), "work");
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn growing_spall_reloads_with_more_events() {
    let mut bytes = Vec::new();
    Synth {
        spans: 60_000,
        threads: 3,
        processes: 1,
        ..Synth::default()
    }
    .write_spall(&mut bytes)
    .unwrap();
    let p = tmp("live.spall");
    // A writer part way through: some buffers out, one cut short.
    let cut = bytes.len() / 3 + 17;
    std::fs::write(&p, &bytes[..cut]).unwrap();
    let (l1, s1, l2, s2) = reload_after(&p, &bytes[cut..], |l, s| {
        let t0 = l.trace.start_ns();
        s.timeline.viewport.show(t0 + 1000, t0 + 500_000);
        s.timeline.scroll_y = 120.0;
    });
    let (n1, n2) = (l1.trace.span_count(), l2.trace.span_count());
    assert!(
        n1 > 10_000 && n1 < 30_000,
        "{n1} spans in a third of the file"
    );
    assert_eq!(n2, 60_000);
    assert_eq!(
        s2.timeline.viewport.visible(),
        s1.timeline.viewport.visible()
    );
    assert_eq!(s2.timeline.scroll_y, 120.0);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn new_threads_sorting_first_keep_the_collapsed_ones() {
    let p = tmp("threads.json");
    let mut text = String::from("[");
    text += &ev("a", 5, 0, 10);
    text += &ev("b", 7, 0, 10);
    std::fs::write(&p, &text).unwrap();
    // Thread 1 appears, and sorts before 5 and 7.
    let more = ev("c", 1, 20, 10);
    let (l1, _, l2, s2) = reload_after(&p, more.as_bytes(), |l, s| {
        let seven = (l.trace.threads().iter())
            .position(|t| t.tid == trace_model::ExtId::Num(7))
            .unwrap() as u32;
        s.timeline.toggle_collapse(l, RowKind::Thread(seven));
    });
    assert_eq!(l1.trace.threads().len() + 1, l2.trace.threads().len());
    let collapsed: Vec<_> = (l2
        .trace
        .threads()
        .iter()
        .zip(&s2.timeline.collapsed.threads))
    .filter(|(_, &c)| c)
    .map(|(t, _)| t.tid)
    .collect();
    assert_eq!(collapsed, [trace_model::ExtId::Num(7)]);
    std::fs::remove_file(&p).unwrap();
}
