//! Pixel tests of the flame graph view, rendered headless: widths proportional to totals,
//! zooming into a frame, the sandwich's callers and callees, and the flame orientation.

use render_gl::Color;
use spall_viewer::screenshot::{prepare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::timeline::draw::fill_for;
use spall_viewer::view::flame::{Mode, Which, HEADER_PX, ROW_PX};
use spall_viewer::view::state::ViewState;
use spall_viewer::view::timeline::FlowMode;
use spall_viewer::Loaded;

const W: u32 = 1000;
const H: u32 = 400;

/// `main` (100 µs) calls `a` (60) and `b` (30); `a` calls `draw` (20); `b` calls `draw`
/// (30, all of b) which calls `leaf` (10). A second thread runs `c` (50) calling `draw`
/// (10).
const TRACE: &[u8] = br#"[
  {"ph":"X","name":"main","ts":0,"dur":100,"pid":1,"tid":1},
  {"ph":"X","name":"a","ts":0,"dur":60,"pid":1,"tid":1},
  {"ph":"X","name":"draw","ts":10,"dur":20,"pid":1,"tid":1},
  {"ph":"X","name":"b","ts":65,"dur":30,"pid":1,"tid":1},
  {"ph":"X","name":"draw","ts":65,"dur":30,"pid":1,"tid":1},
  {"ph":"X","name":"leaf","ts":70,"dur":10,"pid":1,"tid":1},
  {"ph":"X","name":"c","ts":0,"dur":50,"pid":1,"tid":2},
  {"ph":"X","name":"draw","ts":5,"dur":10,"pid":1,"tid":2}
]"#;

fn loaded() -> Loaded {
    Loaded::new(trace_model::load_bytes(TRACE).unwrap(), "test".into())
}

fn shot(l: &Loaded, sandwich: Option<&str>, up: bool, thread: Option<&str>) -> ViewState {
    prepare(
        l,
        &Shot {
            width: W,
            height: H,
            view: None,
            select: None,
            flows: FlowMode::Selected,
            theme: Theme::new(ThemeKind::Light),
            scale: 1.0,
            mode: Mode::Flame,
            thread: thread.map(str::to_string),
            sandwich: sandwich.map(str::to_string),
            flame_up: up,
        },
    )
    .unwrap()
}

struct Img(Vec<u8>);

impl Img {
    fn at(&self, x: u32, y: f32) -> Color {
        let i = ((y as u32 * W + x) * 4) as usize;
        Color([self.0[i], self.0[i + 1], self.0[i + 2], self.0[i + 3]])
    }

    /// How many pixels of row `y` have the colour of spans named `name`.
    fn width_of(&self, l: &Loaded, s: &ViewState, y: f32, name: &str) -> u32 {
        let want = color(l, s, name);
        (0..W).filter(|&x| self.at(x, y) == want).count() as u32
    }
}

fn color(l: &Loaded, s: &ViewState, name: &str) -> Color {
    let id = l.trace.strings().lookup(name).unwrap();
    fill_for(l, &s.timeline, id)
}

/// Just inside the top of the row at `depth`, root on top (above the labels' glyphs).
fn row(depth: u32) -> f32 {
    HEADER_PX + depth as f32 * ROW_PX + 1.0
}

fn close(got: u32, want: u32) {
    assert!(got.abs_diff(want) <= 2, "{got} px, expected about {want}");
}

#[test]
fn widths_are_proportional_to_total_time() {
    let l = loaded();
    let s = shot(&l, None, false, None);
    let img = Img(render(&l, &s).unwrap());
    // All threads merged: the root weighs main (100) + c (50) = 150 µs.
    close(img.width_of(&l, &s, row(1), "main"), W * 100 / 150);
    close(img.width_of(&l, &s, row(1), "c"), W * 50 / 150);
    close(img.width_of(&l, &s, row(2), "a"), W * 60 / 150);
    close(img.width_of(&l, &s, row(2), "b"), W * 30 / 150);
    // draw merges per stack: 20 under a and 30 under b one row down; 10 under c beside b
    // (children pack to the left of their parent).
    close(img.width_of(&l, &s, row(3), "draw"), W * 50 / 150);
    close(img.width_of(&l, &s, row(2), "draw"), W * 10 / 150);
    close(img.width_of(&l, &s, row(4), "leaf"), W * 10 / 150);
    // Heaviest first: main starts at the left edge, c after it.
    assert_eq!(img.at(2, row(1)), color(&l, &s, "main"));
    assert_eq!(img.at(W - 3, row(1)), color(&l, &s, "c"));
}

#[test]
fn one_thread_and_the_flame_orientation() {
    let l = loaded();
    let s = shot(&l, None, true, Some("1:2"));
    let img = Img(render(&l, &s).unwrap());
    // Root at the bottom: c fills the row above the root, draw a fifth above it.
    let up = |depth: u32| H as f32 - (depth as f32 + 1.0) * ROW_PX + 1.0;
    close(img.width_of(&l, &s, up(1), "c"), W);
    close(img.width_of(&l, &s, up(2), "draw"), W / 5);
}

#[test]
fn clicking_a_frame_zooms_into_it() {
    let l = loaded();
    let mut s = shot(&l, None, false, None);
    let hit = s.flame_hit(200.0, row(2));
    let hit = hit.expect("a frame under the pointer");
    let tree = &s.flame.main.as_ref().unwrap().tree;
    assert_eq!(
        trace_model::label_text(&l.trace, tree.label[hit.node as usize]),
        "a"
    );
    s.flame_click(&l, hit);
    let img = Img(render(&l, &s).unwrap());
    // a fills the width; its ancestor main stays as a (dimmed) bar across it; draw is a
    // third of a.
    close(img.width_of(&l, &s, row(2), "a"), W);
    close(img.width_of(&l, &s, row(3), "draw"), W * 20 / 60);
    assert_ne!(
        img.at(W / 2, row(1)),
        Theme::new(ThemeKind::Light).background
    );
    // The panel lists a's one occurrence.
    assert_eq!(s.flame.occurrences.len(), 1);
    // Zooming back out restores the whole graph.
    assert!(s.flame.zoom_out(Which::Main));
    assert!(s.flame.zoom_out(Which::Main));
    let img = Img(render(&l, &s).unwrap());
    close(img.width_of(&l, &s, row(2), "a"), W * 60 / 150);
}

#[test]
fn sandwich_shows_callers_above_and_callees_below() {
    let l = loaded();
    let s = shot(&l, Some("draw"), false, None);
    let img = Img(render(&l, &s).unwrap());
    let graph_h = H as f32 - HEADER_PX;
    let half = (graph_h / 2.0).floor();
    // Callers: draw at the bottom of the top half, its callers above it, inverted.
    let caller_row = |d: u32| HEADER_PX + half - (d as f32 + 1.0) * ROW_PX + 1.0;
    close(img.width_of(&l, &s, caller_row(0), "draw"), W);
    // draw's 60 µs: 20 from a, 30 from b, 10 from c.
    close(img.width_of(&l, &s, caller_row(1), "a"), W * 20 / 60);
    close(img.width_of(&l, &s, caller_row(1), "b"), W * 30 / 60);
    close(img.width_of(&l, &s, caller_row(1), "c"), W * 10 / 60);
    close(img.width_of(&l, &s, caller_row(2), "main"), W * 50 / 60);
    // Callees: draw at the top of the bottom half, leaf under it.
    let callee_row = |d: u32| HEADER_PX + half + d as f32 * ROW_PX + 2.0;
    close(img.width_of(&l, &s, callee_row(0), "draw"), W);
    close(img.width_of(&l, &s, callee_row(1), "leaf"), W * 10 / 60);
}

#[test]
fn a_flame_frame_of_a_big_graph_draws_few_instances() {
    // Many distinct stacks: frames under a pixel merge, so the scene stays small.
    let mut b = Vec::new();
    spall_format::synth::Synth {
        seed: 5,
        processes: 2,
        threads: 4,
        spans: 200_000,
        max_depth: 16,
        names: 500,
        exotic_names: false,
    }
    .write_spall(&mut b)
    .unwrap();
    let l = Loaded::new(trace_model::load_bytes(&b).unwrap(), "synth".into());
    let s = shot(&l, None, false, None);
    let nodes = s.flame.main.as_ref().unwrap().tree.len();
    let mut scene = render_gl::Scene::new();
    let mut fonts = render_gl::Fonts::new();
    spall_viewer::scene::SceneBuilder::default().build(&mut scene, &mut fonts, &l, &s);
    assert!(nodes > 50_000, "{nodes} stacks");
    let drawn = scene.instance_count();
    assert!(drawn < 20_000, "{drawn} instances for {nodes} stacks");
}
