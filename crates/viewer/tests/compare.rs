//! Compare mode's flame graph, rendered headless on a generated pair of traces: the frame
//! that got slower is red, the faster one blue, the added one red and marked, and frames
//! whose change is within what `spall-cli diff` calls noise neutral grey.

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
    let mut ev = Vec::new();
    let mut ts = 0.0;
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
fn pair() -> (Loaded, Arc<trace_model::Trace>) {
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
    (
        Loaded::new(trace_model::load_bytes(&new).unwrap(), "new".into()),
        Arc::new(trace_model::load_bytes(&base).unwrap()),
    )
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

#[test]
fn a_noisy_change_draws_unchanged_and_a_clean_shift_red() {
    // noisy_fn: widely spread per-call times; in NEW its longest call is 700 µs longer,
    // +16% in all, but every other call is as before: the Mann-Whitney test sees no shift.
    // clean_fn: every call 20% longer.
    let noisy = |i: usize| 20.0 + ((i * 53) % 97) as f64 * 4.0;
    let longest = (0..20).map(noisy).fold(0.0, f64::max);
    let base = trace_by(|i| vec![("noisy_fn", noisy(i)), ("clean_fn", 100.0 + (i % 3) as f64)]);
    let new = trace_by(|i| {
        let n = noisy(i);
        let n = if n == longest { n + 700.0 } else { n };
        vec![("noisy_fn", n), ("clean_fn", 120.0 + (i % 3) as f64)]
    });
    let l = Loaded::new(trace_model::load_bytes(&new).unwrap(), "new".into());
    let base = Arc::new(trace_model::load_bytes(&base).unwrap());
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

#[test]
fn removed_stacks_are_marked_on_the_frame_they_left() {
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
    // The notch at the frame's right end is blue; frames without removed work have none.
    let (_, r) = s
        .flame
        .regions(HEADER_PX * s.scale, s.width, s.height, s.scale)
        .into_iter()
        .find(|(w, _)| *w == Which::Main)
        .unwrap();
    let right_end = |node| {
        let (x, y, w, _) = s.flame.main.as_ref().unwrap().node_box(&r, node).unwrap();
        let (x, y) = ((x + w - 2.0) as u32, (y + 1.0) as u32);
        let i = ((y * W + x) * 4) as usize;
        Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
    };
    assert!(bluish(right_end(frame)), "{:?}", right_end(frame));
    let steady = s.flame.find(&l, "steady_a").unwrap();
    assert!(grey(right_end(steady)), "{:?}", right_end(steady));
    assert!(s.flame.changes[steady as usize].removed.is_empty());
}
