//! Compare mode's flame graph, rendered headless on generated pairs of traces: the
//! frame that got slower is red, the faster one blue, the added one red and marked, and
//! frames whose change is within what `spall-cli diff` calls noise neutral grey; BASE's
//! removed stacks; the sandwich and the statistics table. The timeline: `compare_timeline.rs`.

use std::sync::Arc;

use render_gl::Color;
use spall_viewer::screenshot::{prepare, prepare_compare, render, Shot};
use spall_viewer::view::flame::{Which, HEADER_PX};
use spall_viewer::view::state::ViewState;
use spall_viewer::Loaded;

use crate::compare_pair::*;

/// The colour just inside the top middle of the frame `name` (above its label's glyphs).
fn colour_of(l: &Loaded, s: &ViewState, px: &[u8], name: &str) -> Color {
    let node = s
        .flame
        .find(l, name)
        .unwrap_or_else(|| panic!("{name} drawn"));
    let f = &s.flame;
    let (_, r) = f
        .regions(
            HEADER_PX * s.timeline.scale,
            s.timeline.width,
            s.timeline.height,
            s.timeline.scale,
        )
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
        .regions(
            HEADER_PX * s.timeline.scale,
            s.timeline.width,
            s.timeline.height,
            s.timeline.scale,
        )
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
            let k = s.flame.hit_removed(
                (s.timeline.width, s.timeline.height),
                s.timeline.scale,
                x,
                y,
            )?;
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
    use trace_model::changes::Status;
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
        .regions(
            HEADER_PX * s.timeline.scale,
            s.timeline.width,
            s.timeline.height,
            s.timeline.scale,
        )
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
    use std::collections::HashMap;
    use trace_model::changes::{judge_names, Status};
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

/// Two `perf record` profiles of one program: NEW is the real recording with every other
/// sample in `heavy` left out. Compared by sample weight, heavy's `leaf` got faster; the
/// worker thread's `fib`, sampled alike in both, is unchanged.
#[test]
fn two_profiles_compare_by_their_samples_weights() {
    let text = std::fs::read_to_string(spall_test_support::fixture("real/profiles/spin.perf"));
    let text = text.unwrap();
    let mut k = 0;
    let new: Vec<&str> = (text.split("\n\n"))
        .filter(|r| {
            let heavy = r.contains(" heavy+");
            k += usize::from(heavy);
            !heavy || k % 2 == 1
        })
        .collect();
    let l = loaded(new.join("\n\n").as_bytes(), "new");
    let base = Arc::new(loaded(text.as_bytes(), "base"));
    let s = prepare_compare(&l, &shot(), Some(base)).unwrap();
    let px = render(&l, &s).unwrap();
    let c = |n| colour_of(&l, &s, &px, n);
    assert!(bluish(c("leaf")), "heavy's leaf {:?}", c("leaf"));
    assert!(grey(c("fib")), "fib {:?}", c("fib"));
    assert!(
        tip(&l, &s, "leaf").contains("faster"),
        "{}",
        tip(&l, &s, "leaf")
    );
}
