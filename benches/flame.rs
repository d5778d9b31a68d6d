//! The flame graph of a 10M-span trace with about 630k distinct stacks (more than the 100k the target names): merging the spans
//! (what `spall-cli flame` and the viewer's G key cost) and one frame of the view at
//! 1600×900 (whole graph, and zoomed into the heaviest top-level frame).
//!
//! ```sh
//! cargo bench -p spall-viewer --bench flame
//! ```
//!
//! Then `flame_compare/*`: what compare mode adds to a rebuild of the graph, against the
//! plain rebuild (`merge`, NEW's graph alone): BASE's graph with NEW's scope and each
//! frame's change (`changes`), and the layout widened for the stacks only BASE has
//! (`room`, one more pass over NEW's graph); and one frame of the whole graph, plain and
//! compared. On a generated pair (two 2M-span traces of other seeds) and on two real
//! clang `-ftime-trace` traces.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use render_gl::{Fonts, Scene};
use spall_format::synth::Synth;
use spall_viewer::scene::SceneBuilder;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::{compare_tree, FlameHit, Mode, Which};
use spall_viewer::view::removed_stacks::Room;
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

fn synth_pair_member(seed: u64) -> Loaded {
    let mut bytes = Vec::new();
    Synth {
        seed,
        processes: 4,
        threads: 16,
        spans: 2_000_000,
        max_depth: 8,
        names: 9,
        exotic_names: false,
    }
    .write_spall(&mut bytes)
    .unwrap();
    Loaded::new(trace_model::load_bytes(&bytes).unwrap(), "bench".into())
}

/// A Clang build trace of `tests/fixtures/real/clang`, loaded.
fn clang_trace(name: &str) -> Loaded {
    let bytes = spall_test_support::fixture_bytes(&format!("real/clang/{name}"));
    Loaded::new(trace_model::load_bytes(&bytes).unwrap(), name.into())
}

/// Compare mode's rebuild and frame against the plain ones, per pair (NEW, BASE).
fn compare(c: &mut Criterion) {
    let pairs = [
        ("synth_2M", synth_pair_member(21), synth_pair_member(22)),
        (
            "clang",
            clang_trace("self-win-clang-19.1_BuildEvents.json"),
            clang_trace("blender-mac-clang14_obj_export_file_writer.json"),
        ),
    ];
    let mut g = c.benchmark_group("flame_compare");
    g.sample_size(10);
    let (mut scene, mut fonts, mut fb) = (Scene::new(), Fonts::new(), SceneBuilder::default());
    for (label, l, base) in pairs {
        let base = std::sync::Arc::new(base);
        let want = (FlameOptions::default(), FlameSort::Heaviest);
        let tree = l.trace.flame(&want.0, want.1);
        let compared = compare_tree(&l.trace, Some(&base.trace), &want, &tree);
        let base_tree = compared.base_tree.clone().unwrap();
        let room = Room::new(&tree, &compared.changes, base_tree.clone());
        let removed: usize = compared.changes.iter().map(|c| c.removed.len()).sum();
        eprintln!(
            "{label}: NEW {} spans, {} stacks; BASE {} stacks; {removed} removed stacks{}",
            l.trace.span_count(),
            tree.len(),
            base_tree.len(),
            if room.is_some() { "" } else { " (no room)" }
        );
        g.bench_function(format!("{label}_merge"), |b| {
            b.iter(|| black_box(l.trace.flame(&want.0, want.1)).len())
        });
        g.bench_function(format!("{label}_changes"), |b| {
            b.iter(|| {
                black_box(compare_tree(&l.trace, Some(&base.trace), &want, &tree))
                    .changes
                    .len()
            })
        });
        g.bench_function(format!("{label}_room"), |b| {
            b.iter(|| black_box(Room::new(&tree, &compared.changes, base_tree.clone())).is_some())
        });
        for with_base in [false, true] {
            let mut s = ViewState::new(&l, 1600.0, 900.0, Theme::new(ThemeKind::Light));
            s.mode = Mode::Flame;
            if with_base {
                s.set_base(&l, Some(base.clone()));
            }
            s.ensure_flame(&l);
            fb.build(&mut scene, &mut fonts, &l, &s);
            let name = format!(
                "{label}_frame_{}",
                if with_base { "compare" } else { "plain" }
            );
            eprintln!("{name}: {} instances", scene.instance_count());
            g.bench_function(name, |b| {
                b.iter(|| {
                    fb.build(&mut scene, &mut fonts, &l, black_box(&s));
                    scene.instance_count()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, compare);
criterion_main!(benches);
