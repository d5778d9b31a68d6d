//! The flame graph of a 10M-span trace with about 630k distinct stacks (more than the 100k the target names): merging the spans
//! (what `spall-cli flame` and the viewer's G key cost) and one frame of the view at
//! 1600×900 (whole graph, and zoomed into the heaviest top-level frame).
//!
//! ```sh
//! cargo bench -p spall-viewer --bench flame
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use render_gl::{Fonts, Scene};
use spall_format::synth::Synth;
use spall_viewer::scene::SceneBuilder;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::{FlameHit, Mode, Which};
use spall_viewer::view::state::ViewState;
use spall_viewer::Loaded;
use trace_model::{FlameOptions, FlameSort};

fn bench(c: &mut Criterion) {
    let mut bytes = Vec::new();
    Synth {
        seed: 11,
        processes: 4,
        threads: 16,
        spans: 10_000_000,
        max_depth: 8,
        names: 9,
        exotic_names: false,
    }
    .write_spall(&mut bytes)
    .unwrap();
    let l = Loaded::new(trace_model::load_bytes(&bytes).unwrap(), "bench".into());
    drop(bytes);
    let opts = FlameOptions::default();
    let tree = l.trace.flame(&opts, FlameSort::Heaviest);
    eprintln!(
        "{} spans, {} distinct stacks",
        l.trace.span_count(),
        tree.len()
    );
    let mut g = c.benchmark_group("flame");
    g.sample_size(10);
    g.bench_function("merge_10M_spans", |b| {
        b.iter(|| black_box(l.trace.flame(&opts, FlameSort::Heaviest)).len())
    });
    let mut s = ViewState::new(&l, 1600.0, 900.0, Theme::new(ThemeKind::Light));
    s.mode = Mode::Flame;
    s.ensure_flame(&l);
    let (mut scene, mut fonts, mut fb) = (Scene::new(), Fonts::new(), SceneBuilder::default());
    g.bench_function("frame_whole", |b| {
        b.iter(|| {
            fb.build(&mut scene, &mut fonts, &l, &s);
            scene.instance_count()
        })
    });
    let top = s
        .flame
        .main
        .as_ref()
        .unwrap()
        .tree
        .children(0)
        .next()
        .unwrap();
    s.flame_click(
        &l,
        FlameHit {
            pane: Which::Main,
            node: top,
        },
    );
    g.bench_function("frame_zoomed", |b| {
        b.iter(|| {
            fb.build(&mut scene, &mut fonts, &l, &s);
            scene.instance_count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
