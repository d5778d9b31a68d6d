//! Building trace-index on a 10M-span trace, beside loading it.
//!
//! ```sh
//! cargo bench -p trace-index --bench index
//! ```
//!
//! Baseline in the same run: loading the trace (decode + model), which the index build is
//! compared with (the viewer builds the index after the load, before its first full frame).
//! The frames users see, which query the index, are measured by `benches/viewer.rs`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use spall_format::synth::Synth;
use trace_index::TraceIndex;
use trace_model::load_bytes;

fn input() -> Vec<u8> {
    let s = Synth {
        seed: 5,
        processes: 4,
        threads: 16,
        spans: 10_000_000,
        max_depth: 32,
        names: 5000,
        exotic_names: false,
    };
    let mut b = Vec::new();
    s.write_spall(&mut b).unwrap();
    b
}

fn bench(c: &mut Criterion) {
    let bytes = input();
    let trace = load_bytes(&bytes).unwrap();
    let index = TraceIndex::build(&trace);
    eprintln!(
        "{} spans, {} threads, index {:.2} bytes/span",
        trace.span_count(),
        trace.threads().len(),
        index.heap_bytes() as f64 / trace.span_count() as f64,
    );
    let mut g = c.benchmark_group("index");
    g.sample_size(10);
    g.bench_function("load_baseline", |b| {
        b.iter(|| black_box(load_bytes(black_box(&bytes)).unwrap().span_count()))
    });
    g.bench_function("build", |b| {
        b.iter(|| black_box(TraceIndex::build(black_box(&trace))))
    });
    // A single core for the build, to compare with the single-threaded load.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    g.bench_function("build_1_thread", |b| {
        b.iter(|| one.install(|| black_box(TraceIndex::build(black_box(&trace)))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
