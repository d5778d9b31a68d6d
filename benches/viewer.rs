//! The viewer's frame on the CPU (building the render-gl scene) for a 10M-span trace, at
//! five zoom levels, 1600×900 (the whole window; a side panel would only make it smaller).
//!
//! ```sh
//! cargo bench -p spall-viewer --bench viewer
//! ```
//!
//! Baseline in the same run: the same frame for a 1,000-span trace, the fixed cost of a
//! frame (ruler, minimap, headers).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use render_gl::{Fonts, Scene};
use spall_format::synth::Synth;
use spall_viewer::frame::FrameBuilder;
use spall_viewer::state::ViewState;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::Loaded;

fn loaded(spans: u64) -> Loaded {
    let s = Synth {
        seed: 11,
        processes: 4,
        threads: 16,
        spans,
        max_depth: 32,
        names: 5000,
        exotic_names: false,
    };
    let mut b = Vec::new();
    s.write_spall(&mut b).unwrap();
    Loaded::new(trace_model::load_bytes(&b).unwrap(), "bench".into())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    g.sample_size(30);
    let mut fonts = Fonts::new();
    let mut scene = Scene::new();
    let mut fb = FrameBuilder::default();
    for (label, spans) in [("1k", 1_000u64), ("10M", 10_000_000)] {
        let l = loaded(spans);
        let t = &l.trace;
        let mid = t.start_ns() + t.duration_ns() / 2;
        let zooms = [
            ("full", t.start_ns(), t.end_ns()),
            ("1_3", mid, mid + t.duration_ns() / 3),
            ("1_10", mid, mid + t.duration_ns() / 10),
            ("1_100", mid, mid + t.duration_ns() / 100),
            ("1_100000", mid, mid + (t.duration_ns() / 100_000).max(1)),
        ];
        for (zoom, a, b) in zooms {
            let mut s = ViewState::new(&l, 1600.0, 900.0, Theme::new(ThemeKind::Light));
            s.viewport.show(a, b);
            fb.build(&mut scene, &mut fonts, &l, &s);
            eprintln!("{label} {zoom}: {} instances", scene.instance_count());
            g.bench_function(format!("{label}_spans_{zoom}"), |bch| {
                bch.iter(|| {
                    fb.build(&mut scene, &mut fonts, &l, black_box(&s));
                    black_box(scene.instance_count())
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
