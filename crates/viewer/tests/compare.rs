//! Compare mode, rendered headless on generated pairs of traces. The flame graph: the
//! frame that got slower is red, the faster one blue, the added one red and marked, and
//! frames whose change is within what `spall-cli diff` calls noise neutral grey. The
//! timeline: BASE's tracks under NEW's, aligned at their starts or at a span in each, and
//! a statistics row's name found in both.

use std::sync::Arc;

use render_gl::Color;
use spall_viewer::screenshot::{prepare, prepare_compare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::{Mode, Which, HEADER_PX};
use spall_viewer::view::state::{FlowMode, ViewState};
use spall_viewer::Loaded;

const W: u32 = 1200;
const H: u32 = 300;

/// 20 frames, each calling `calls` (name, µs) in order, on one thread.
fn trace(calls: &[(&str, f64)]) -> Vec<u8> {
    trace_by(|_| calls.to_vec())
}

/// 20 frames, frame `i` calling `calls(i)` (name, µs) in order, on one thread.
fn trace_by<'a>(calls: impl Fn(usize) -> Vec<(&'a str, f64)>) -> Vec<u8> {
    trace_from(0.0, calls)
}

/// [`trace_by`], its first frame at `t0` µs.
fn trace_from<'a>(t0: f64, calls: impl Fn(usize) -> Vec<(&'a str, f64)>) -> Vec<u8> {
    let mut ev = Vec::new();
    let mut ts = t0;
    for i in 0..20 {
        let start = ts;
        ts += 2.0;
        for (name, us) in calls(i) {
            ev.push(format!(
                r#"{{"ph":"X","name":"{name}","ts":{ts:.3},"dur":{us:.3},"pid":1,"tid":1}}"#
            ));
            ts += us + 1.0;
        }
        ts += 2.0;
        ev.push(format!(
            r#"{{"ph":"X","name":"frame","ts":{start:.3},"dur":{:.3},"pid":1,"tid":1}}"#,
            ts - start
        ));
        ts += 10.0;
    }
    format!("[{}]", ev.join(",\n")).into_bytes()
}

/// BASE and NEW: slow_fn +30%, fast_fn -30%, gone_fn removed, new_fn added; steady_b
/// +1.25% (under the 5% threshold), tiny_fn +50% but 2 µs in all (under the minimum
/// change, 0.1% of BASE's ~9 ms).
fn pair() -> (Loaded, Arc<Loaded>) {
    let base = trace(&[
        ("slow_fn", 100.0),
        ("fast_fn", 100.0),
        ("gone_fn", 50.0),
        ("steady_a", 80.0),
        ("steady_b", 80.0),
        ("tiny_fn", 0.2),
    ]);
    let new = trace(&[
        ("slow_fn", 130.0),
        ("fast_fn", 70.0),
        ("new_fn", 40.0),
        ("steady_a", 80.0),
        ("steady_b", 81.0),
        ("tiny_fn", 0.3),
    ]);
    (loaded(&new, "new"), Arc::new(loaded(&base, "base")))
}

fn loaded(json: &[u8], name: &str) -> Loaded {
    Loaded::new(trace_model::load_bytes(json).unwrap(), name.into())
}

fn shot() -> Shot {
    Shot {
        width: W,
        height: H,
        view: None,
        select: None,
        flows: FlowMode::Selected,
        theme: Theme::new(ThemeKind::Light),
        scale: 1.0,
        mode: Mode::Flame,
        thread: None,
        sandwich: None,
        flame_up: false,
    }
}

/// The colour just inside the top middle of the frame `name` (above its label's glyphs).
fn colour_of(l: &Loaded, s: &ViewState, px: &[u8], name: &str) -> Color {
    let node = s
        .flame
        .find(l, name)
        .unwrap_or_else(|| panic!("{name} drawn"));
    let f = &s.flame;
    let (_, r) = f
        .regions(HEADER_PX * s.scale, s.width, s.height, s.scale)
        .into_iter()
        .find(|(w, _)| *w == Which::Main)
        .unwrap();
    let (x, y, w, _) = f.main.as_ref().unwrap().node_box(&r, node).unwrap();
    let (x, y) = ((x + w / 2.0) as u32, (y + 1.0) as u32);
    let i = ((y * W + x) * 4) as usize;
    Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
}

fn reddish(c: Color) -> bool {
    let [r, g, b, _] = c.0.map(i32::from);
    r > g + 60 && r > b + 60
}

fn bluish(c: Color) -> bool {
    let [r, g, b, _] = c.0.map(i32::from);
    b > r + 60 && b > g + 40
}

fn grey(c: Color) -> bool {
    let [r, g, b, _] = c.0.map(i32::from);
    r.max(g).max(b) - r.min(g).min(b) <= 8
}

#[test]
fn frames_are_coloured_by_their_change() {
    let (l, base) = pair();
    let s = prepare_compare(&l, &shot(), Some(base)).unwrap();
    let px = render(&l, &s).unwrap();
    let c = |n| colour_of(&l, &s, &px, n);
    assert!(reddish(c("slow_fn")), "slow_fn {:?}", c("slow_fn"));
    assert!(bluish(c("fast_fn")), "fast_fn {:?}", c("fast_fn"));
    assert!(reddish(c("new_fn")), "new_fn {:?}", c("new_fn"));
    for same in ["frame", "steady_a", "steady_b", "tiny_fn"] {
        assert!(grey(c(same)), "{same} {:?}", c(same));
    }
    assert_eq!(c("steady_a"), c("steady_b"), "noise draws as unchanged");
    // The added frame is marked, and the tooltip says what changed.
    let node = |n| s.flame.find(&l, n).unwrap();
    let hit = |n| spall_viewer::view::flame::FlameHit {
        pane: Which::Main,
        node: node(n),
    };
    let tip = spall_viewer::flame::describe(&l, &s, hit("new_fn")).join("\n");
    assert!(tip.contains("added"), "{tip}");
    let tip = spall_viewer::flame::describe(&l, &s, hit("slow_fn")).join("\n");
    assert!(tip.contains("+30.0%") && tip.contains("slower"), "{tip}");
    // 20 calls each side: 100 µs a call became 130 µs.
    assert!(tip.contains("per call: 100"), "{tip}");
    assert!(
        tip.contains("→ 130") && tip.contains("calls 20 → 20"),
        "{tip}"
    );
    // Removed work is not in NEW's graph.
    assert!(s.flame.find(&l, "gone_fn").is_none());

    // Without BASE the same graph has its usual colours.
    let plain = prepare(&l, &shot()).unwrap();
    let px = render(&l, &plain).unwrap();
    assert!(plain.flame.changes.is_empty());
    assert_ne!(colour_of(&l, &plain, &px, "slow_fn"), c("slow_fn"));
}

/// The tooltip of the frame `name` in compare mode.
fn tip(l: &Loaded, s: &ViewState, name: &str) -> String {
    let hit = spall_viewer::view::flame::FlameHit {
        pane: Which::Main,
        node: s.flame.find(l, name).unwrap(),
    };
    spall_viewer::flame::describe(l, s, hit).join("\n")
}

/// BASE and NEW. noisy_fn: widely spread per-call times; in NEW its longest call is
/// 700 µs longer, +16% in all, but every other call is as before: the Mann-Whitney test
/// sees no shift. clean_fn: every call 20% longer. With `added`, NEW's first frame also
/// calls new_fn.
fn noisy_pair(added: bool) -> (Vec<u8>, Vec<u8>) {
    let noisy = |i: usize| 20.0 + ((i * 53) % 97) as f64 * 4.0;
    let longest = (0..20).map(noisy).fold(0.0, f64::max);
    let base = trace_by(|i| vec![("noisy_fn", noisy(i)), ("clean_fn", 100.0 + (i % 3) as f64)]);
    let new = trace_by(|i| {
        let n = noisy(i);
        let n = if n == longest { n + 700.0 } else { n };
        let mut v = vec![("noisy_fn", n), ("clean_fn", 120.0 + (i % 3) as f64)];
        if added && i == 0 {
            v.push(("new_fn", 5.0));
        }
        v
    });
    (base, new)
}

#[test]
fn a_noisy_change_draws_unchanged_and_a_clean_shift_red() {
    let (base, new) = noisy_pair(false);
    let l = loaded(&new, "new");
    let base = Arc::new(loaded(&base, "base"));
    let s = prepare_compare(&l, &shot(), Some(base)).unwrap();
    let px = render(&l, &s).unwrap();
    let c = |n| colour_of(&l, &s, &px, n);
    assert!(grey(c("noisy_fn")), "noisy_fn {:?}", c("noisy_fn"));
    assert!(reddish(c("clean_fn")), "clean_fn {:?}", c("clean_fn"));
    let t = tip(&l, &s, "noisy_fn");
    assert!(
        t.contains("Mann-Whitney p = ") && t.contains("noise"),
        "{t}"
    );
    assert!(t.contains("unchanged") && t.contains("(+1"), "{t}");
    let t = tip(&l, &s, "clean_fn");
    assert!(t.contains("Mann-Whitney p = 0.000 (a shift)"), "{t}");
    assert!(t.contains("slower"), "{t}");
}

/// The main pane's region and the on-screen box of NEW's frame `name`.
fn main_box(l: &Loaded, s: &ViewState, name: &str) -> (f32, f32, f32, f32) {
    let (_, r) = s
        .flame
        .regions(HEADER_PX * s.scale, s.width, s.height, s.scale)
        .into_iter()
        .find(|(w, _)| *w == Which::Main)
        .unwrap();
    let node = s
        .flame
        .find(l, name)
        .unwrap_or_else(|| panic!("{name} drawn"));
    s.flame.main.as_ref().unwrap().node_box(&r, node).unwrap()
}

/// The pixels of the row at `y` on which a frame only BASE has is hit, with BASE's node.
fn removed_at(s: &ViewState, y: f32) -> Vec<(f32, u32)> {
    (0..W)
        .map(|x| x as f32 + 0.5)
        .filter_map(|x| {
            let k = s.flame.hit_removed((s.width, s.height), s.scale, x, y)?;
            Some((x, k))
        })
        .collect()
}

/// The name of BASE's node `k` in its graph.
fn base_name(s: &ViewState, k: u32) -> String {
    let (b, t) = (
        s.flame.base.as_ref().unwrap(),
        s.flame.base_tree.as_ref().unwrap(),
    );
    trace_model::label_text(b, t.label[k as usize]).into_owned()
}

#[test]
fn removed_stacks_are_drawn_from_bases_graph_in_the_frame_they_left() {
    let (l, base) = pair();
    let s = prepare_compare(&l, &shot(), Some(base)).unwrap();
    let px = render(&l, &s).unwrap();
    let frame = s.flame.find(&l, "frame").unwrap();
    let ch = &s.flame.changes[frame as usize];
    let names: Vec<&str> = ch.removed.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["gone_fn"]);
    // 20 calls of 50 µs.
    assert_eq!(ch.removed[0].base_total, 1_000_000);
    let t = tip(&l, &s, "frame");
    assert!(t.contains("removed here (only in BASE): 1"), "{t}");
    assert!(t.contains("− gone_fn · base 1"), "{t}");
    // NEW's frames keep their sizes against each other: 130 µs a call against 80.
    let bx = |n| main_box(&l, &s, n);
    let (slow, steady) = (bx("slow_fn"), bx("steady_a"));
    assert!(
        (slow.2 / steady.2 - 130.0 / 80.0).abs() < 0.01,
        "{slow:?} {steady:?}"
    );
    // gone_fn, in the row of frame's children, after all of them, at BASE's width
    // (50 µs a call against steady_a's 80).
    let y = slow.1 + 3.0;
    let hits = removed_at(&s, y);
    assert!(!hits.is_empty(), "gone_fn drawn");
    assert!(
        hits.iter().all(|h| base_name(&s, h.1) == "gone_fn"),
        "{hits:?}"
    );
    let (x0, x1) = (hits[0].0, hits[hits.len() - 1].0);
    let width = x1 - x0 + 1.0;
    assert!(
        (width / steady.2 - 50.0 / 80.0).abs() < 0.03,
        "{width} {steady:?}"
    );
    for n in [
        "slow_fn", "fast_fn", "new_fn", "steady_a", "steady_b", "tiny_fn",
    ] {
        let b = bx(n);
        assert!(
            b.0 + b.2 <= x0 + 1.0,
            "{n} {b:?} ends before gone_fn at {x0}"
        );
    }
    let (fx, _, fw, _) = bx("frame");
    assert!(x1 < fx + fw, "gone_fn inside frame");
    let mid = (x0 + x1) / 2.0;
    assert!(s.flame_hit(mid, y).is_none(), "no frame of NEW's there");
    // Outlined in blue, filled pale blue (hatched a deeper blue).
    let top = pixel(&px, mid, slow.1);
    assert!(bluish(top), "outline {top:?}");
    for x in [x0 + 4.0, mid, x1 - 4.0] {
        let [r, g, b, _] = pixel(&px, x, y + 1.0).0.map(i32::from);
        assert!(
            b > r + 20 && b > g + 10 && r > 120,
            "fill at {x}: {r} {g} {b}"
        );
    }
    // The tooltip says it is BASE's, with BASE's numbers and stack.
    let tip = spall_viewer::flame::describe_removed(&s, hits[0].1).join("\n");
    for want in [
        "− gone_fn",
        "only in BASE",
        "base: total 1",
        "20 spans",
        "  frame",
    ] {
        assert!(tip.contains(want), "{want} in {tip}");
    }
    // Frames without removed work below them are drawn as they were.
    let steady_n = s.flame.find(&l, "steady_a").unwrap();
    assert!(s.flame.changes[steady_n as usize].removed.is_empty());
    let c = |n| colour_of(&l, &s, &px, n);
    assert!(grey(c("steady_a")) && grey(c("frame")), "{:?}", c("frame"));
}

#[test]
fn a_removed_stack_brings_its_subtree_from_base() {
    // BASE: frame › work › (inner_slow, inner_same, inner_gone); NEW: frame › inner_same.
    let base = nested(&[
        ("inner_slow", 100.0),
        ("inner_same", 80.0),
        ("inner_gone", 60.0),
    ]);
    let new = trace(&[("inner_same", 80.0)]);
    let (l, b) = (loaded(&new, "new"), Arc::new(loaded(&base, "base")));
    let s = prepare_compare(&l, &shot(), Some(b)).unwrap();
    let px = render(&l, &s).unwrap();
    let same = main_box(&l, &s, "inner_same");
    let row = |d: f32| removed_at(&s, same.1 + 3.0 + d * same.3.ceil());
    let work = row(0.0);
    assert!(
        work.iter().all(|h| base_name(&s, h.1) == "work"),
        "{work:?}"
    );
    // work's callees, one row further, inside work's span, BASE's order (heaviest first).
    let below = row(1.0);
    let mut names: Vec<String> = below.iter().map(|h| base_name(&s, h.1)).collect();
    names.dedup();
    assert_eq!(names, ["inner_slow", "inner_same", "inner_gone"]);
    assert!(below[0].0 >= work[0].0 && below[below.len() - 1].0 <= work[work.len() - 1].0);
    // NEW's inner_same, called from frame itself, is a stack BASE lacks: added.
    let c = colour_of(&l, &s, &px, "inner_same");
    assert!(reddish(c), "{c:?}");
    // work's row, drawn: its outline blue.
    assert!(bluish(pixel(&px, work[work.len() / 2].0, same.1)));
}

#[test]
fn the_divider_drags_and_both_panes_follow() {
    use spall_viewer::view::state::DIVIDER_H;
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    let top = s.tracks_top();
    let mid = top + s.tracks_height();
    assert!(s.on_divider(mid + 2.0) && !s.on_divider(mid - 2.0));
    // Dragged up to a quarter of the tracks area: NEW's pane shrinks, BASE's starts there.
    let avail = s.height - top - DIVIDER_H;
    s.drag_divider(top + avail / 4.0 + DIVIDER_H / 2.0);
    let divider = top + s.tracks_height();
    assert!((divider - (top + avail / 4.0)).abs() <= 1.0, "{divider}");
    let c = s.compare.as_deref().unwrap();
    assert!((c.view.tracks_top() - (divider + DIVIDER_H)).abs() <= 1.0);
    assert!(s.in_base(divider + DIVIDER_H + 1.0) && !s.in_base(divider - 1.0));
    // Drawn there: the divider's band in the ruler's colour, BASE's first frame under it.
    let px = render(&l, &s).unwrap();
    assert!(near(
        pixel(&px, W as f32 - 3.0, divider + 8.0),
        s.theme.ruler
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
    assert!((s.tracks_height() - (avail * 0.1).floor()).abs() <= 1.0);
    s.drag_divider(s.height);
    assert!((s.tracks_height() - (avail * 0.9).floor()).abs() <= 1.0);
}

#[test]
fn a_search_and_a_marker_reach_bases_pane() {
    let (l, b) = shifted_pair();
    let mut s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    // Typed: a substring, in each trace's own names.
    s.search(&l, "gone");
    let c = s.compare.as_deref().unwrap();
    assert!(s.matches.spans.is_empty());
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
    let mid = s.viewport.visible().0 + (s.viewport.visible().1 - s.viewport.visible().0) / 3;
    spall_viewer::timeline::markers::add(&mut s, &l, mid).unwrap();
    let px = render(&l, &s).unwrap();
    let c = s.compare.as_deref().unwrap();
    let gone = (c.view)
        .span_box(&c.loaded, first(&c.loaded, "gone_fn"))
        .unwrap();
    let mark = pixel(&px, gone.0 + 1.0, gone.1 + gone.3 - 1.0);
    assert!(near(mark, s.theme.match_marker), "{mark:?}");
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
    let x = (s.viewport.x(mid) as f32).round();
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
    let divider = s.tracks_top() + s.tracks_height();
    // N with the pointer on BASE's gone_fn: a marker of BASE's, at that span's start on
    // BASE's clock (5 s later than NEW's).
    let gone = b.trace.span(first(&b, "gone_fn")).start;
    let bx = s.compare.as_deref().unwrap().view.viewport.x(gone) as f32;
    let base_y = s.height - 5.0;
    assert_eq!(add_at(&mut s, &l, bx, base_y), Some((Side::Base, 0)));
    assert!(s.markers.is_empty(), "NEW's list untouched");
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
    s.viewport.show(t0 - 10_000, t0);
    let centred = |bx: (f32, f32, f32, f32)| {
        let mid = bx.0 + bx.2 / 2.0;
        assert!((mid - W as f32 / 2.0).abs() < 2.0, "centred at {mid}");
    };
    for k in 0..4 {
        assert_eq!(s.step_match(&l, true), Some(k));
        let c = s.compare.as_deref().unwrap();
        if k % 2 == 0 {
            assert_eq!(s.selected_span(), Some(news[k / 2]), "step {k}");
            centred(s.span_box(&l, news[k / 2]).unwrap());
        } else {
            assert_eq!(c.view.selected_span(), Some(bases[k / 2]), "step {k}");
            centred(c.view.span_box(&b, bases[k / 2]).unwrap());
            assert_eq!(
                s.selected_span(),
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
    s.viewport.show(t0 - 200_000, t0 - 190_000);
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

fn pixel(px: &[u8], x: f32, y: f32) -> Color {
    let i = ((y as u32 * W + x as u32) * 4) as usize;
    Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
}

fn near(a: Color, b: Color) -> bool {
    a.0.iter().zip(b.0).all(|(&x, y)| x.abs_diff(y) <= 3)
}

/// The first span named `name` in `l`.
fn first(l: &Loaded, name: &str) -> trace_model::SpanRef {
    spall_viewer::view::compare::first_named(&l.trace, name, None).unwrap()
}

#[test]
fn the_timeline_draws_bases_tracks_under_news_aligned_at_their_starts() {
    use spall_viewer::timeline::draw::fill_for;
    let (l, b) = shifted_pair();
    let s = prepare_compare(&l, &timeline_shot(), Some(b)).unwrap();
    let px = render(&l, &s).unwrap();
    let c = s.compare.as_deref().expect("compare mode's BASE pane");
    // The divider between the panes, in the ruler's colour, and BASE's pane under it.
    let divider = s.tracks_top() + s.tracks_height();
    assert!(
        divider > s.tracks_top() + 100.0 && divider < 400.0,
        "{divider}"
    );
    assert!(near(
        pixel(&px, W as f32 - 3.0, divider + 8.0),
        s.theme.ruler
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
    let added = s.span_box(&l, first(&l, "new_fn")).unwrap();
    assert!(added.1 > s.tracks_top() && added.1 + added.3 < divider);
    let want = fill_for(&l, &s, l.trace.span(first(&l, "new_fn")).name);
    assert!(near(pixel(&px, added.0 + 1.0, added.1 + 1.0), want));
    // BASE started 5 s later on its clock, yet its first frame is drawn where NEW's is.
    let nf = s.span_box(&l, first(&l, "frame")).unwrap();
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
    let r = s.selected_span().expect("NEW's fast_fn selected");
    assert_eq!(r, first(&l, "fast_fn"));
    let c = s.compare.as_deref().unwrap();
    let br = c.view.selected_span().expect("BASE's fast_fn selected");
    assert_eq!(br, first(&b, "fast_fn"));
    // Lined up on the shared axis, and on screen.
    let (nb, bb) = (s.span_box(&l, r).unwrap(), c.view.span_box(&b, br).unwrap());
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
    let r = s.selected_span().unwrap();
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
    assert_eq!(s.selected_span(), None);
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
    s.select(&l, Some(news[2]));
    let c = s.compare.as_deref().unwrap();
    let (x, y, w, h) = c
        .view
        .span_box(&b, bases[6])
        .unwrap_or((-1.0, -1.0, 0.0, 0.0));
    assert!(s.in_base(y + h / 2.0) && !s.in_base(s.tracks_top() + 1.0));
    s.click_base(x + w / 2.0, y + h / 2.0, false);
    assert_eq!(
        s.compare.as_deref().unwrap().view.selected_span(),
        Some(bases[6])
    );
    assert_eq!(s.selected_span(), Some(news[2]), "NEW's selection stays");
    assert!(s.align_at_selection(&l));
    let c = s.compare.as_deref().unwrap();
    let (nb, bb) = (
        s.span_box(&l, news[2]).unwrap(),
        c.view.span_box(&b, bases[6]).unwrap(),
    );
    assert!((nb.0 - bb.0).abs() < 1.0, "{nb:?} {bb:?}");
    // Hovering BASE's pane describes BASE's span, and NEW's hover is cleared.
    assert!(s.hover_base(bb.0 + 1.0, bb.1 + 1.0));
    let c = s.compare.as_deref().unwrap();
    assert!(c.view.hover.is_some() && s.hover.is_none());
    s.align_at_starts(&l);
    let c = s.compare.as_deref().unwrap();
    let (nf, bf) = (
        s.span_box(&l, first(&l, "frame")).unwrap(),
        c.view.span_box(&b, first(&b, "frame")).unwrap(),
    );
    assert!((nf.0 - bf.0).abs() < 1.0, "{nf:?} {bf:?}");
    // Compare mode off: one timeline again, the tracks area whole.
    s.set_base(&l, None);
    assert!(s.compare.is_none() && !s.in_base(499.0));
    assert_eq!(s.tracks_height(), 500.0 - s.tracks_top());
}

/// 20 frames, each with `work` calling `calls` (name, µs) in order, on one thread.
fn nested(calls: &[(&str, f64)]) -> Vec<u8> {
    let mut ev = Vec::new();
    let mut ts = 0.0;
    for _ in 0..20 {
        let start = ts;
        ts += 2.0;
        for (name, us) in calls {
            ev.push(format!(
                r#"{{"ph":"X","name":"{name}","ts":{ts:.3},"dur":{us:.3},"pid":1,"tid":1}}"#
            ));
            ts += us + 1.0;
        }
        ts += 2.0;
        for (name, a, b) in [("work", start, ts), ("frame", start - 1.0, ts + 1.0)] {
            ev.push(format!(
                r#"{{"ph":"X","name":"{name}","ts":{a:.3},"dur":{:.3},"pid":1,"tid":1}}"#,
                b - a
            ));
        }
        ts += 10.0;
    }
    format!("[{}]", ev.join(",\n")).into_bytes()
}

#[test]
fn the_sandwich_is_coloured_by_the_change_of_its_callees() {
    use spall_viewer::flame::compare::Status;
    let base = nested(&[
        ("inner_slow", 100.0),
        ("inner_same", 80.0),
        ("inner_gone", 60.0),
    ]);
    let new = nested(&[
        ("inner_slow", 150.0),
        ("inner_same", 80.0),
        ("inner_new", 60.0),
    ]);
    let (l, b) = (loaded(&new, "new"), Arc::new(loaded(&base, "base")));
    let sh = Shot {
        sandwich: Some("work".into()),
        height: 500,
        ..shot()
    };
    let s = prepare_compare(&l, &sh, Some(b)).unwrap();
    let px = render(&l, &s).unwrap();
    let sw = s.flame.sandwich.as_ref().expect("the sandwich of work");
    let t = &sw.callees.tree;
    let node = |name: &str| {
        (0..t.len() as u32)
            .find(|&n| trace_model::label_text(&l.trace, t.label[n as usize]) == name)
            .unwrap_or_else(|| panic!("{name} among work's callees"))
    };
    let status = |name| sw.callees_changes[node(name) as usize].status;
    assert_eq!(status("inner_slow"), Status::Slower);
    assert_eq!(status("inner_same"), Status::Unchanged);
    assert_eq!(status("inner_new"), Status::Added);
    let frame = |name| {
        let c = &sw.callers_changes;
        let t = &sw.callers.tree;
        (0..t.len())
            .find(|&n| trace_model::label_text(&l.trace, t.label[n]) == name)
            .map(|n| c[n].status)
    };
    // A caller's frame holds the function's time through it: work's grew.
    assert_eq!(frame("frame"), Some(Status::Slower), "work's caller");
    // BASE's callee NEW lost is listed on the sandwich's root.
    let removed: Vec<&str> = (sw.callees_changes[0].removed.iter())
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(removed, ["inner_gone"]);
    // Drawn: the slower callee red, the unchanged one grey.
    let (_, r) = s
        .flame
        .regions(HEADER_PX * s.scale, s.width, s.height, s.scale)
        .into_iter()
        .find(|(w, _)| *w == Which::Callees)
        .expect("the callees pane");
    let colour = |name| {
        let (x, y, w, _) = sw.callees.node_box(&r, node(name)).unwrap();
        pixel(&px, x + w / 2.0, y + 1.0)
    };
    assert!(reddish(colour("inner_slow")), "{:?}", colour("inner_slow"));
    assert!(grey(colour("inner_same")), "{:?}", colour("inner_same"));
    let hit = spall_viewer::view::flame::FlameHit {
        pane: Which::Callees,
        node: node("inner_slow"),
    };
    let tip = spall_viewer::flame::describe(&l, &s, hit).join("\n");
    assert!(tip.contains("+50.0%") && tip.contains("slower"), "{tip}");
    // Without BASE, the sandwich has its usual colours.
    let plain = prepare(&l, &sh).unwrap();
    assert!(plain.flame.sandwich.unwrap().callees_changes.is_empty());
}

#[test]
fn the_statistics_table_tests_each_names_per_call_self_times() {
    use spall_viewer::flame::compare::{judge_names, Status};
    use std::collections::HashMap;
    let (base, new) = noisy_pair(true);
    let (l, b) = (loaded(&new, "new"), loaded(&base, "base"));
    let base_rows: HashMap<String, (i64, u64)> = (b.whole_stats().iter())
        .map(|r| (b.trace.str(r.name).to_string(), (r.self_ns, r.count)))
        .collect();
    let v = judge_names((&l.trace, l.whole_stats()), (&b.trace, &base_rows));
    let noisy = v["noisy_fn"];
    assert_eq!(noisy.status, Status::Unchanged, "{noisy:?}");
    assert!(
        noisy.p_value.is_some_and(|p| p >= 0.05),
        "tested: {noisy:?}"
    );
    let clean = v["clean_fn"];
    assert_eq!(clean.status, Status::Slower, "{clean:?}");
    assert!(clean.p_value.is_some_and(|p| p < 0.001), "{clean:?}");
    assert_eq!(v["new_fn"].status, Status::Added);
    // frame's self time did not change: no test needed.
    assert_eq!(v["frame"].status, Status::Unchanged);
    assert_eq!(v["frame"].p_value, None);
}

/// The lines docs/CI.md gives a job for the compare screenshots, run as written on a
/// generated pair: each writes a PNG of the size asked.
#[test]
fn ci_doc_screenshot_lines_run_as_written() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/CI.md"),
    )
    .unwrap();
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
