//! Generated pairs of traces for the compare-mode tests (`compare_flame.rs`,
//! `compare_timeline.rs`); each includes this file, and uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use render_gl::Color;
use spall_viewer::screenshot::Shot;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::Mode;
use spall_viewer::view::timeline::FlowMode;
use spall_viewer::Loaded;

pub const W: u32 = 1200;
pub const H: u32 = 300;

/// 20 frames, each calling `calls` (name, µs) in order, on one thread.
pub fn trace(calls: &[(&str, f64)]) -> Vec<u8> {
    trace_by(|_| calls.to_vec())
}

/// 20 frames, frame `i` calling `calls(i)` (name, µs) in order, on one thread.
pub fn trace_by<'a>(calls: impl Fn(usize) -> Vec<(&'a str, f64)>) -> Vec<u8> {
    trace_from(0.0, calls)
}

/// [`trace_by`], its first frame at `t0` µs.
pub fn trace_from<'a>(t0: f64, calls: impl Fn(usize) -> Vec<(&'a str, f64)>) -> Vec<u8> {
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
pub fn pair() -> (Loaded, Arc<Loaded>) {
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

pub fn loaded(json: &[u8], name: &str) -> Loaded {
    Loaded::new(trace_model::load_bytes(json).unwrap(), name.into())
}

pub fn shot() -> Shot {
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

/// The pixel at (`x`, `y`) of a `W`-wide RGBA image.
pub fn pixel(px: &[u8], x: f32, y: f32) -> Color {
    let i = ((y as u32 * W + x as u32) * 4) as usize;
    Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
}
