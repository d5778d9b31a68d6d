//! The load pipeline stage by stage, and end to end, on every core and on one.
//!
//! ```sh
//! cargo bench -p trace-index --bench load
//! ```
//!
//! Inputs are generated in memory by `spall_format::synth`: a `.spall` v3 file of about
//! 128 MB (2.6M spans) and a JSON file of about 120 MB (900k spans, B/E and X events with
//! arguments). Stages:
//! - `decode`: chunks decoded in parallel into sinks that only count (spall-format alone);
//! - `model`: decode and build the `Trace` (chunk builders, merge, B/E matching, nesting);
//! - `model_1_thread`: the same in a one-thread pool;
//! - `index`: `TraceIndex::build` on the loaded trace;
//! - `end_to_end`: model and index, what the viewer needs before its first full frame.
//!
//! Baselines in the same run: `read_ceiling` (sum the bytes as u64 words on one core) and,
//! for JSON, `serde_json_naive` (`from_slice::<Value>` and a walk of the events into a list
//! of spans: what a user would write first).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use spall_format::synth::Synth;
use spall_format::{decode_parallel, DecodeOptions, EventSink, RawEvent};
use trace_index::TraceIndex;
use trace_model::load_bytes;

#[derive(Default)]
struct Count(u64, usize);

impl EventSink for Count {
    fn event(&mut self, e: &RawEvent<'_>) {
        self.0 += 1;
        self.1 += e.name.len();
    }
}

fn inputs() -> [(&'static str, Vec<u8>); 2] {
    let mut s = Vec::new();
    Synth {
        spans: 2_600_000,
        ..Synth::default()
    }
    .write_spall(&mut s)
    .unwrap();
    let mut j = Vec::new();
    Synth {
        spans: 900_000,
        ..Synth::default()
    }
    .write_json(&mut j, true)
    .unwrap();
    [("spall", s), ("json", j)]
}

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(f)
}

/// What a user would write first: parse the whole document, then walk the events.
fn naive_serde(bytes: &[u8]) -> usize {
    let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    let events = v.get("traceEvents").unwrap_or(&v).as_array().unwrap();
    let mut spans = Vec::new();
    for e in events {
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        let name = e["name"].as_str().unwrap_or("").to_string();
        spans.push((ts, dur, name, e["ph"].as_str().unwrap_or("").to_string()));
    }
    spans.len()
}

fn bench(c: &mut Criterion) {
    let opts = DecodeOptions::default();
    for (name, bytes) in inputs() {
        eprintln!("{name}: {:.1} MB", bytes.len() as f64 / 1e6);
        let mut g = c.benchmark_group(format!("load_{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function("read_ceiling", |b| {
            b.iter(|| {
                let sum = black_box(&bytes[..]).chunks_exact(8).fold(0u64, |a, w| {
                    a.wrapping_add(u64::from_le_bytes(w.try_into().unwrap()))
                });
                black_box(sum)
            })
        });
        g.bench_function("decode", |b| {
            b.iter(|| {
                let (s, sinks) =
                    decode_parallel(black_box(&bytes), &opts, Count::default, &|_, _| {}).unwrap();
                black_box((s.events, sinks.iter().map(|c| c.1).sum::<usize>()))
            })
        });
        g.bench_function("model", |b| {
            b.iter(|| black_box(load_bytes(black_box(&bytes)).unwrap().span_count()))
        });
        g.bench_function("model_1_thread", |b| {
            b.iter(|| one_thread(|| black_box(load_bytes(black_box(&bytes)).unwrap().span_count())))
        });
        let trace = load_bytes(&bytes).unwrap();
        g.bench_function("index", |b| {
            b.iter(|| black_box(TraceIndex::build(black_box(&trace)).heap_bytes()))
        });
        drop(trace);
        g.bench_function("end_to_end", |b| {
            b.iter(|| {
                let t = load_bytes(black_box(&bytes)).unwrap();
                black_box(TraceIndex::build(&t).heap_bytes())
            })
        });
        if name == "json" {
            g.bench_function("serde_json_naive", |b| {
                b.iter(|| black_box(naive_serde(black_box(&bytes))))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
