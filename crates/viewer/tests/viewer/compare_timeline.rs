//! Compare mode's timeline, rendered headless on generated pairs of traces: BASE's
//! tracks under NEW's, aligned at their starts or at a span in each, the divider, search
//! and markers in both panes, a statistics row's name found in both, and docs/CI.md's
//! screenshot lines.

use std::sync::Arc;

use render_gl::Color;
use spall_viewer::screenshot::{prepare_compare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::Mode;
use spall_viewer::view::state::ViewState;
use spall_viewer::Loaded;

use crate::compare_pair::*;

#[test]
fn the_divider_drags_and_both_panes_follow() {
    use spall_viewer::view::timeline::DIVIDER_H;
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    let top = s.timeline.tracks_top();
    let mid = top + s.timeline.tracks_height();
    assert!(s.on_divider(mid + 2.0) && !s.on_divider(mid - 2.0));
    // Dragged up to a quarter of the tracks area: NEW's pane shrinks, BASE's starts there.
    let avail = s.timeline.height - top - DIVIDER_H;
    s.drag_divider(top + avail / 4.0 + DIVIDER_H / 2.0);
    let divider = top + s.timeline.tracks_height();
    assert!((divider - (top + avail / 4.0)).abs() <= 1.0, "{divider}");
    let c = s.compare.as_deref().unwrap();
    assert!((c.view.tracks_top() - (divider + DIVIDER_H)).abs() <= 1.0);
    assert!(s.in_base(divider + DIVIDER_H + 1.0) && !s.in_base(divider - 1.0));
    // Drawn there: the divider's band in the ruler's colour, BASE's first frame under it.
    let px = render(&l, &s).unwrap();
    assert!(near(
        pixel(&px, W as f32 - 3.0, divider + 8.0),
        s.timeline.theme.ruler
    ));
    let c = s.compare.as_deref().unwrap();
    let bf = c
        .view
        .span_box(&c.loaded, first(&c.loaded, "frame"))
        .unwrap();
    assert!(
        bf.1 > divider + DIVIDER_H - 1.0 && bf.1 < divider + 80.0,
        "{bf:?} {divider} {top}"
    );
    // Past the ends, each pane keeps a tenth.
    s.drag_divider(0.0);
    assert!((s.timeline.tracks_height() - (avail * 0.1).floor()).abs() <= 1.0);
    s.drag_divider(s.timeline.height);
    assert!((s.timeline.tracks_height() - (avail * 0.9).floor()).abs() <= 1.0);
}

#[test]
fn a_search_and_a_marker_reach_bases_pane() {
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    // Typed: a substring, in each trace's own names.
    s.search(&l, "gone");
    let c = s.compare.as_deref().unwrap();
    assert!(s.timeline.matches.spans.is_empty());
    assert_eq!(c.view.matches.spans.len(), 20, "BASE's gone_fn");
    // A statistics row's name: exactly that name in BASE, or nothing there.
    let slow = l.trace.strings().lookup("slow_fn").unwrap();
    s.highlight_name(&l, slow);
    let c = s.compare.as_deref().unwrap();
    assert_eq!(c.view.matches.spans.len(), 20);
    let new_fn = l.trace.strings().lookup("new_fn").unwrap();
    s.highlight_name(&l, new_fn);
    let c = s.compare.as_deref().unwrap();
    assert!(c.view.matches.is_active() && c.view.matches.spans.is_empty());
    // Drawn: BASE's match marked under its box, a span that does not match dimmed.
    s.search(&l, "gone");
    let mid = s.timeline.viewport.visible().0
        + (s.timeline.viewport.visible().1 - s.timeline.viewport.visible().0) / 3;
    spall_viewer::timeline::markers::add(&mut s.timeline, &l, mid).unwrap();
    let px = render(&l, &s).unwrap();
    let c = s.compare.as_deref().unwrap();
    let gone = (c.view)
        .span_box(&c.loaded, first(&c.loaded, "gone_fn"))
        .unwrap();
    let mark = pixel(&px, gone.0 + 1.0, gone.1 + gone.3 - 1.0);
    assert!(near(mark, s.timeline.theme.match_marker), "{mark:?}");
    let plain = prepare_compare(&l, &timeline_shot(), Some(c.loaded.clone())).unwrap();
    let plain_px = render(&l, &plain).unwrap();
    let frame = c
        .view
        .span_box(&c.loaded, first(&c.loaded, "frame"))
        .unwrap();
    let (dim, full) = (
        pixel(&px, frame.0 + 2.0, frame.1 + 1.0),
        pixel(&plain_px, frame.0 + 2.0, frame.1 + 1.0),
    );
    assert_ne!(dim, full, "BASE's frame dimmed by the search");
    // The marker's line runs on through BASE's pane, at NEW's time on the shared axis.
    let x = (s.timeline.viewport.x(mid) as f32).round();
    let y = c.view.tracks_top() + 40.0;
    let line = pixel(&px, x, y);
    assert!(
        line.0[0] > 180 && line.0[1] < 150,
        "marker at {x},{y}: {line:?}"
    );
}

#[test]
fn a_marker_placed_in_bases_pane_is_bases() {
    use spall_viewer::timeline::markers::{add_at, BASE_FLAG};
    use spall_viewer::view::state::Side;
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b.clone())).unwrap();
    let divider = s.timeline.tracks_top() + s.timeline.tracks_height();
    // N with the pointer on BASE's gone_fn: a marker of BASE's, at that span's start on
    // BASE's clock (5 s later than NEW's).
    let gone = b.trace.span(first(&b, "gone_fn")).start;
    let bx = s.compare.as_deref().unwrap().view.viewport.x(gone) as f32;
    let base_y = s.timeline.height - 5.0;
    assert_eq!(add_at(&mut s, &l, bx, base_y), Some((Side::Base, 0)));
    assert!(s.timeline.markers.is_empty(), "NEW's list untouched");
    let c = s.compare.as_deref().unwrap();
    let at = b.trace.start_ns() + c.view.markers[0].at_ns;
    assert!((at - gone).abs() <= 200, "{at} vs gone_fn at {gone}");
    // N over NEW's pane, elsewhere: NEW's, as before.
    let nx = (W / 2) as f32 + 80.0;
    assert_eq!(add_at(&mut s, &l, nx, divider - 5.0), Some((Side::New, 0)));
    assert_eq!(s.compare.as_deref().unwrap().view.markers.len(), 1);
    let bluish_line = |c: Color| {
        let [r, g, b, _] = c.0.map(i32::from);
        b > r + 60 && g > r + 60
    };
    let pinkish_line = |c: Color| {
        let [r, g, b, _] = c.0.map(i32::from);
        r > 180 && g < 150 && b > g
    };
    let px = render(&l, &s).unwrap();
    let bx = bx.round();
    // BASE's line runs through BASE's pane only, flagged on the divider; NEW's line
    // still runs through both panes.
    assert!(
        bluish_line(pixel(&px, bx, base_y)),
        "{:?}",
        pixel(&px, bx, base_y)
    );
    let above = pixel(&px, bx, divider - 5.0);
    assert!(
        !bluish_line(above),
        "BASE's marker in NEW's pane: {above:?}"
    );
    assert!(near(pixel(&px, bx + 3.0, divider + 2.0), BASE_FLAG));
    let nx = nx.round();
    assert!(pinkish_line(pixel(&px, nx, divider - 5.0)));
    assert!(
        pinkish_line(pixel(&px, nx, base_y)),
        "{:?}",
        pixel(&px, nx, base_y)
    );
    assert!(!bluish_line(pixel(&px, nx, base_y)));
    // BASE drawn 300 µs later: its marker moves with its tracks, still at gone_fn.
    let c = s.compare.as_deref_mut().unwrap();
    c.offset -= 300_000;
    s.sync_compare();
    let c = s.compare.as_deref().unwrap();
    let moved = (c.view.viewport.x(gone) as f32).round();
    assert!((moved - bx).abs() > 20.0, "{moved} {bx}");
    let px = render(&l, &s).unwrap();
    assert!(bluish_line(pixel(&px, moved, base_y)));
    assert!(!bluish_line(pixel(&px, bx, base_y)));
    assert!(near(pixel(&px, moved + 3.0, divider + 2.0), BASE_FLAG));
    // Another NEW opened with the same BASE keeps BASE's markers; another BASE has none.
    let mut again = prepare_compare(&l, &timeline_shot(), Some(b.clone())).unwrap();
    again.keep_base_markers(&s);
    assert_eq!(again.compare.as_deref().unwrap().view.markers.len(), 1);
    let other = Arc::new(loaded(&trace(&[("x", 1.0)]), "other"));
    let mut fresh = prepare_compare(&l, &timeline_shot(), Some(other)).unwrap();
    fresh.keep_base_markers(&s);
    assert!(fresh.compare.as_deref().unwrap().view.markers.is_empty());
}

#[test]
fn enter_steps_through_both_panes_matches_in_time_order() {
    use spall_viewer::view::state::Side;
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b.clone())).unwrap();
    let news = l.trace.occurrences(|n| n == "slow_fn");
    let bases = b.trace.occurrences(|n| n == "slow_fn");
    s.search(&l, "slow");
    // From a view that ends where NEW starts: NEW's first, BASE's first (at the same time
    // on the shared axis, NEW's go first), then alternating (BASE's frames are longer).
    let t0 = l.trace.start_ns();
    s.timeline.viewport.show(t0 - 10_000, t0);
    let centred = |bx: (f32, f32, f32, f32)| {
        let mid = bx.0 + bx.2 / 2.0;
        assert!((mid - W as f32 / 2.0).abs() < 2.0, "centred at {mid}");
    };
    for k in 0..4 {
        assert_eq!(s.step_match(&l, true), Some(k));
        let c = s.compare.as_deref().unwrap();
        if k % 2 == 0 {
            assert_eq!(s.timeline.selected_span(), Some(news[k / 2]), "step {k}");
            centred(s.timeline.span_box(&l, news[k / 2]).unwrap());
        } else {
            assert_eq!(c.view.selected_span(), Some(bases[k / 2]), "step {k}");
            centred(c.view.span_box(&b, bases[k / 2]).unwrap());
            assert_eq!(
                s.timeline.selected_span(),
                Some(news[k / 2]),
                "NEW's selection stays"
            );
        }
    }
    assert_eq!(s.match_position(&l), (40, Some((3, Side::Base))));
    // Shift+Enter: back to NEW's second; from the first, round to BASE's last.
    assert_eq!(s.step_match(&l, false), Some(2));
    assert_eq!(s.match_position(&l), (40, Some((2, Side::New))));
    s.step_match(&l, false);
    s.step_match(&l, false);
    assert_eq!(s.step_match(&l, false), Some(39));
    let c = s.compare.as_deref().unwrap();
    assert_eq!(c.view.selected_span(), Some(bases[19]));
    centred(c.view.span_box(&b, bases[19]).unwrap());
    // BASE drawn 100 µs earlier: its first match now comes first.
    s.compare.as_deref_mut().unwrap().offset += 100_000;
    s.search(&l, "slow");
    s.timeline.viewport.show(t0 - 200_000, t0 - 190_000);
    assert_eq!(s.step_match(&l, true), Some(0));
    assert_eq!(s.match_position(&l), (40, Some((0, Side::Base))));
    assert_eq!(s.step_match(&l, true), Some(1));
    assert_eq!(s.match_position(&l), (40, Some((1, Side::New))));
    // Matches only BASE has: Enter goes through them, each centred in BASE's pane.
    s.search(&l, "gone");
    assert_eq!(s.match_position(&l), (20, None));
    s.step_match(&l, true);
    s.step_match(&l, true);
    let c = s.compare.as_deref().unwrap();
    let gone = b.trace.occurrences(|n| n == "gone_fn");
    let at = c.view.selected_span().unwrap();
    assert!(gone.contains(&at));
    let bx = c.view.span_box(&b, at).unwrap();
    centred(bx);
    assert!(s.in_base(bx.1 + 1.0), "in BASE's pane");
}

/// The pair's calls (gone_fn only in BASE, new_fn only in NEW), BASE recorded from 5 s
/// on its clock and NEW from 0.
fn shifted_pair() -> (Loaded, Arc<Loaded>) {
    let base = trace_from(5e6, |_| {
        vec![("slow_fn", 100.0), ("fast_fn", 100.0), ("gone_fn", 50.0)]
    });
    let new = trace_from(0.0, |_| {
        vec![("slow_fn", 130.0), ("fast_fn", 70.0), ("new_fn", 40.0)]
    });
    (loaded(&new, "new"), Arc::new(loaded(&base, "base")))
}

fn timeline_shot() -> Shot {
    Shot {
        height: 500,
        mode: Mode::Timeline,
        ..shot()
    }
}

fn near(a: Color, b: Color) -> bool {
    a.0.iter().zip(b.0).all(|(&x, y)| x.abs_diff(y) <= 3)
}

/// The first span named `name` in `l`.
fn first(l: &Loaded, name: &str) -> trace_model::SpanRef {
    spall_viewer::view::base_pane::first_named(&l.trace, name, None).unwrap()
}

#[test]
fn the_timeline_draws_bases_tracks_under_news_aligned_at_their_starts() {
    use spall_viewer::timeline::draw::fill_for;
    let (l, b) = shifted_pair();
    let s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    let px = render(&l, &s).unwrap();
    let c = s.compare.as_deref().expect("compare mode's BASE pane");
    // The divider between the panes, in the ruler's colour, and BASE's pane under it.
    let divider = s.timeline.tracks_top() + s.timeline.tracks_height();
    assert!(
        divider > s.timeline.tracks_top() + 100.0 && divider < 400.0,
        "{divider}"
    );
    assert!(near(
        pixel(&px, W as f32 - 3.0, divider + 8.0),
        s.timeline.theme.ruler
    ));
    assert!(c.view.tracks_top() > divider);
    // A span only BASE has is drawn in BASE's pane, in its colour; one only NEW has, in
    // NEW's pane.
    let gone = c
        .view
        .span_box(&c.loaded, first(&c.loaded, "gone_fn"))
        .unwrap();
    assert!(
        gone.1 > divider,
        "BASE's span at y {} under {divider}",
        gone.1
    );
    let want = fill_for(
        &c.loaded,
        &c.view,
        c.loaded.trace.span(first(&c.loaded, "gone_fn")).name,
    );
    let got = pixel(&px, gone.0 + 1.0, gone.1 + 1.0);
    assert!(near(got, want), "gone_fn drawn {got:?}, wants {want:?}");
    let added = s.timeline.span_box(&l, first(&l, "new_fn")).unwrap();
    assert!(added.1 > s.timeline.tracks_top() && added.1 + added.3 < divider);
    let want = fill_for(&l, &s.timeline, l.trace.span(first(&l, "new_fn")).name);
    assert!(near(pixel(&px, added.0 + 1.0, added.1 + 1.0), want));
    // BASE started 5 s later on its clock, yet its first frame is drawn where NEW's is.
    let nf = s.timeline.span_box(&l, first(&l, "frame")).unwrap();
    let bf = c
        .view
        .span_box(&c.loaded, first(&c.loaded, "frame"))
        .unwrap();
    assert!(
        (nf.0 - bf.0).abs() < 1.0,
        "NEW's first frame at {}, BASE's at {}",
        nf.0,
        bf.0
    );
    let frame = fill_for(
        &c.loaded,
        &c.view,
        c.loaded.trace.span(first(&c.loaded, "frame")).name,
    );
    assert!(near(pixel(&px, bf.0 + 2.0, bf.1 + 1.0), frame));
    // Both traces' frames fill the width: the last of BASE's (it is longer) is on screen.
    let last = c.loaded.trace.occurrences(|n| n == "frame").pop().unwrap();
    let lb = c.view.span_box(&c.loaded, last).unwrap();
    assert!(lb.0 + lb.2 <= W as f32 && lb.0 > W as f32 / 2.0, "{lb:?}");
}

#[test]
fn a_statistics_row_jumps_to_the_function_in_both_timelines() {
    let (l, b) = shifted_pair();
    let mut s = ViewState::new(&l, W as f32, 500.0, Theme::new(ThemeKind::Light));
    s.set_base(&l, Some(b.clone()));
    let name_of = |l: &Loaded, r| l.trace.str(l.trace.span(r).name).to_string();
    assert!(s.jump_to_name(&l, "fast_fn"));
    let r = s.timeline.selected_span().expect("NEW's fast_fn selected");
    assert_eq!(r, first(&l, "fast_fn"));
    let c = s.compare.as_deref().unwrap();
    let br = c.view.selected_span().expect("BASE's fast_fn selected");
    assert_eq!(br, first(&b, "fast_fn"));
    // Lined up on the shared axis, and on screen.
    let (nb, bb) = (
        s.timeline.span_box(&l, r).unwrap(),
        c.view.span_box(&b, br).unwrap(),
    );
    assert!((nb.0 - bb.0).abs() < 1.0, "{nb:?} {bb:?}");
    assert!(nb.0 >= 0.0 && nb.0 + nb.2 <= W as f32, "{nb:?}");
    assert!(
        c.label(&l.trace).contains("aligned at fast_fn"),
        "{}",
        c.label(&l.trace)
    );
    // With a range selected, the first call in it (BASE's range shifted with it).
    let tenth = l.trace.occurrences(|n| n == "frame")[10];
    let f = l.trace.span(tenth);
    s.range = Some((f.start, f.end()));
    assert!(s.jump_to_name(&l, "slow_fn"));
    let r = s.timeline.selected_span().unwrap();
    assert_eq!(name_of(&l, r), "slow_fn");
    assert!(
        l.trace.span(r).start >= f.start,
        "the first slow_fn in the range"
    );
    let c = s.compare.as_deref().unwrap();
    let br = c.view.selected_span().unwrap();
    assert_eq!(name_of(&b, br), "slow_fn");
    assert!(b.trace.span(br).start > b.trace.span(first(&b, "slow_fn")).start);
    s.range = None;
    // A name only BASE has: nothing in NEW, BASE's first call brought on screen.
    assert!(s.jump_to_name(&l, "gone_fn"));
    assert_eq!(s.timeline.selected_span(), None);
    let c = s.compare.as_deref().unwrap();
    let br = c.view.selected_span().unwrap();
    assert_eq!(name_of(&b, br), "gone_fn");
    let bb = c.view.span_box(&b, br).unwrap();
    assert!(bb.0 >= 0.0 && bb.0 <= W as f32, "{bb:?}");
    assert!(!s.jump_to_name(&l, "no_such_fn"));
}

#[test]
fn base_aligns_at_a_span_chosen_in_each_and_back_at_the_starts() {
    let (l, b) = shifted_pair();
    let mut s = ViewState::new(&l, W as f32, 500.0, Theme::new(ThemeKind::Light));
    s.set_base(&l, Some(b.clone()));
    assert!(!s.align_at_selection(&l), "nothing selected in NEW");
    // NEW's 3rd slow_fn with BASE's 7th, picked with a click in BASE's pane.
    let news = l.trace.occurrences(|n| n == "slow_fn");
    let bases = b.trace.occurrences(|n| n == "slow_fn");
    s.timeline.select(&l, Some(news[2]));
    let c = s.compare.as_deref().unwrap();
    let (x, y, w, h) = c
        .view
        .span_box(&b, bases[6])
        .unwrap_or((-1.0, -1.0, 0.0, 0.0));
    assert!(s.in_base(y + h / 2.0) && !s.in_base(s.timeline.tracks_top() + 1.0));
    s.click_base(x + w / 2.0, y + h / 2.0, false);
    assert_eq!(
        s.compare.as_deref().unwrap().view.selected_span(),
        Some(bases[6])
    );
    assert_eq!(
        s.timeline.selected_span(),
        Some(news[2]),
        "NEW's selection stays"
    );
    assert!(s.align_at_selection(&l));
    let c = s.compare.as_deref().unwrap();
    let (nb, bb) = (
        s.timeline.span_box(&l, news[2]).unwrap(),
        c.view.span_box(&b, bases[6]).unwrap(),
    );
    assert!((nb.0 - bb.0).abs() < 1.0, "{nb:?} {bb:?}");
    // Hovering BASE's pane describes BASE's span, and NEW's hover is cleared.
    assert!(s.hover_base(bb.0 + 1.0, bb.1 + 1.0));
    let c = s.compare.as_deref().unwrap();
    assert!(c.view.hover.is_some() && s.timeline.hover.is_none());
    s.align_at_starts(&l);
    let c = s.compare.as_deref().unwrap();
    let (nf, bf) = (
        s.timeline.span_box(&l, first(&l, "frame")).unwrap(),
        c.view.span_box(&b, first(&b, "frame")).unwrap(),
    );
    assert!((nf.0 - bf.0).abs() < 1.0, "{nf:?} {bf:?}");
    // Compare mode off: one timeline again, the tracks area whole.
    s.set_base(&l, None);
    assert!(s.compare.is_none() && !s.in_base(499.0));
    assert_eq!(s.timeline.tracks_height(), 500.0 - s.timeline.tracks_top());
}

/// The lines docs/CI.md gives a job for the compare screenshots, run as written on a
/// generated pair: each writes a PNG of the size asked.
#[test]
fn ci_doc_screenshot_lines_run_as_written() {
    let doc = spall_test_support::doc("CI.md");
    let from = doc.find("## The compare screenshots").expect("the section");
    let start = from + doc[from..].find("```sh\n").unwrap() + 6;
    let block = &doc[start..start + doc[start..].find("```").unwrap()];
    let dir = std::env::temp_dir().join(format!("spall-cidoc-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("baseline")).unwrap();
    let (base, new) = (
        trace_from(5e6, |_| vec![("slow_fn", 100.0), ("gone_fn", 50.0)]),
        trace_from(0.0, |_| vec![("slow_fn", 130.0), ("new_fn", 40.0)]),
    );
    std::fs::write(dir.join("baseline/trace.json"), base).unwrap();
    std::fs::write(dir.join("trace.json"), new).unwrap();
    let mut pngs = 0;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "spall", "{line}");
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
            .args(&words[1..])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = words[words.iter().position(|&w| w == "--screenshot").unwrap() + 1];
        let png = std::fs::read(dir.join(out)).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{out}");
        let be = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
        assert_eq!((be(16), be(20)), (1600, 900), "{out}'s size");
        pngs += 1;
    }
    assert_eq!(pngs, 2, "the timeline and the flame graph");
    let _ = std::fs::remove_dir_all(&dir);
}
