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
