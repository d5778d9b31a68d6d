//! The viewer's frame on the CPU (building the render-gl scene) for a 10M-span trace, at
//! five zoom levels, 1600×900 (the whole window; a side panel would only make it smaller).
//!
//! ```sh
//! cargo bench -p spall-viewer --bench viewer
//! ```
//!
//! Baseline in the same run: the same frame for a 1,000-span trace, the fixed cost of a
//! frame (ruler, minimap, headers). Then `all_*`: the 10M spans plus 1M counter samples
//! (4 groups of 2 series), 1M instants, 100k async operations and 100k flows (all drawn).
//! Then `compare_*`: compare mode's timeline, BASE's 10M spans (another seed) under NEW's,
//! beside `single_*`, NEW alone, in the same run.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use render_gl::{Fonts, Scene};
use spall_format::synth::Synth;
use spall_format::{Args, EventSink, Phase, RawEvent, RawId};
use spall_viewer::scene::SceneBuilder;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::state::ViewState;
use spall_viewer::view::timeline::FlowMode;
use spall_viewer::Loaded;

fn synth(spans: u64) -> Synth {
    synth_seeded(spans, 11)
}

fn synth_seeded(spans: u64, seed: u64) -> Synth {
    Synth {
        seed,
        processes: 4,
        threads: 16,
        spans,
        max_depth: 32,
        names: 5000,
        exotic_names: false,
    }
}

fn loaded(spans: u64) -> Loaded {
    let mut b = Vec::new();
    synth(spans).write_spall(&mut b).unwrap();
    Loaded::new(trace_model::load_bytes(&b).unwrap(), "bench".into())
}

/// The spans of `loaded(spans)` plus every other kind of event, spread over its time.
fn loaded_everything(spans: u64) -> Loaded {
    let mut bytes = Vec::new();
    synth(spans).write_spall(&mut bytes).unwrap();
    let (t0, t1) = {
        let t = trace_model::load_bytes(&bytes).unwrap();
        (t.start_ns(), t.end_ns())
    };
    let mut b = trace_model::TraceBuilder::new();
    let summary = spall_format::decode(&bytes, &mut b).unwrap();
    drop(bytes);
    let at = |i: u64, n: u64| t0 + ((t1 - t0) as u128 * i as u128 / n as u128) as i64;
    let thread = |i: u64| {
        let p = (i % 4) as i64 + 1;
        (p, 1000 * p + ((i / 4) % 16) as i64)
    };
    let mut ev =
        |ph: u8, name: &str, ts: i64, (pid, tid): (i64, i64), id: Option<String>, args: &str| {
            let e = RawEvent {
                ph: Phase(ph),
                name: name.into(),
                cat: "bench".into(),
                ts,
                pid: RawId::Num(pid),
                tid: RawId::Num(tid),
                id: id.map(Into::into),
                bp: (ph == b'f').then_some(b'e'),
                args: if args.is_empty() {
                    Args::None
                } else {
                    Args::Json(args.into())
                },
                ..RawEvent::default()
            };
            b.event(&e);
        };
    for i in 0..500_000u64 {
        let v = (i * 7919 % 1000) as f64;
        let args = format!("{{\"used\":{v},\"free\":{}}}", 1000.0 - v);
        ev(b'C', "memory", at(i, 500_000), thread(i), None, &args);
    }
    for i in 0..1_000_000u64 {
        ev(b'i', "mark", at(i, 1_000_000), thread(i * 13), None, "");
    }
    for i in 0..100_000u64 {
        // Each operation lasts three gaps: about three rows per track.
        let id = Some(format!("{i}"));
        let p = thread(i);
        ev(b'b', "request", at(i, 100_000), p, id.clone(), "");
        ev(b'e', "request", at(i + 3, 100_000), p, id, "");
    }
    for i in 0..100_000u64 {
        let id = Some(format!("f{i}"));
        ev(b's', "post", at(i, 100_000), thread(i), id.clone(), "");
        ev(b'f', "post", at(i + 1, 100_000), thread(i + 5), id, "");
    }
    Loaded::new(b.finish(summary), "bench".into())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    g.sample_size(30);
    let mut fonts = Fonts::new();
    let mut scene = Scene::new();
    let mut fb = SceneBuilder::default();
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
            s.timeline.viewport.show(a, b);
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
    let l = loaded_everything(10_000_000);
    eprintln!(
        "all: {} spans, {} counter samples, {} instants, {} async slices, {} flow links",
        l.trace.span_count(),
        l.trace.counter_samples(),
        l.trace.instants().len(),
        l.trace.async_slices().len(),
        l.trace.flow_links().len()
    );
    for (zoom, a, b) in three_zooms(&l.trace) {
        let mut s = ViewState::new(&l, 1600.0, 900.0, Theme::new(ThemeKind::Light));
        s.timeline.viewport.show(a, b);
        s.timeline.flows = FlowMode::All;
        fb.build(&mut scene, &mut fonts, &l, &s);
        eprintln!("all {zoom}: {} instances", scene.instance_count());
        g.bench_function(format!("all_kinds_{zoom}"), |bch| {
            bch.iter(|| {
                fb.build(&mut scene, &mut fonts, &l, black_box(&s));
                black_box(scene.instance_count())
            })
        });
    }
    g.finish();
}

/// The whole trace, 1/100 and 1/100,000 of it (from the middle): (label, start, end).
fn three_zooms(t: &trace_model::Trace) -> [(&'static str, i64, i64); 3] {
    let mid = t.start_ns() + t.duration_ns() / 2;
    [
        ("full", t.start_ns(), t.end_ns()),
        ("1_100", mid, mid + t.duration_ns() / 100),
        ("1_100000", mid, mid + (t.duration_ns() / 100_000).max(1)),
    ]
}

/// Compare mode's stacked timeline against the single one, for two 10M-span traces.
fn compare(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    g.sample_size(30);
    let (mut fonts, mut scene, mut fb) = (Fonts::new(), Scene::new(), SceneBuilder::default());
    let l = loaded(10_000_000);
    let mut b = Vec::new();
    synth_seeded(10_000_000, 12).write_spall(&mut b).unwrap();
    let base = Loaded::new(trace_model::load_bytes(&b).unwrap(), "base".into());
    drop(b);
    let base = std::sync::Arc::new(base);
    for (zoom, a, b) in three_zooms(&l.trace) {
        for stacked in [false, true] {
            let mut s = ViewState::new(&l, 1600.0, 900.0, Theme::new(ThemeKind::Light));
            if stacked {
                s.set_base(&l, Some(base.clone()));
            }
            s.timeline.viewport.show(a, b);
            s.sync_compare();
            fb.build(&mut scene, &mut fonts, &l, &s);
            let name = format!("{}_{zoom}", if stacked { "compare" } else { "single" });
            eprintln!("{name}: {} instances", scene.instance_count());
            g.bench_function(name, |bch| {
                bch.iter(|| {
                    fb.build(&mut scene, &mut fonts, &l, black_box(&s));
                    black_box(scene.instance_count())
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, compare);
criterion_main!(benches);
