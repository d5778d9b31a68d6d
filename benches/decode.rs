//! Decode throughput of `spall-format` alone, single-threaded, on generated traces.
//!
//! ```sh
//! cargo bench -p spall-format --bench decode
//! ```
//!
//! Inputs are generated in memory by `spall_format::synth` (same seed, same bytes): a JSON
//! file and a `.spall` v3 file of at least 100 MB each. The sink only counts events, so the
//! figure is the decoder's own cost.
//!
//! Baselines, measured in the same run on the same bytes:
//! - `read_ceiling`: summing every byte as u64 words, the memory-read ceiling for one core;
//! - `serde_json_value`: `serde_json::from_slice::<Value>`, what a user would write first.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use spall_format::synth::Synth;
use spall_format::{decode, RawEvent};

fn inputs() -> (Vec<u8>, Vec<u8>) {
    let json = Synth {
        spans: 900_000,
        ..Synth::default()
    };
    let mut j = Vec::new();
    json.write_json(&mut j, true).unwrap();
    let spall = Synth {
        spans: 2_600_000,
        ..Synth::default()
    };
    let mut s = Vec::new();
    spall.write_spall(&mut s).unwrap();
    (j, s)
}

fn bench(c: &mut Criterion) {
    let (json, spall) = inputs();
    let mut g = c.benchmark_group("decode");
    g.sample_size(10);
    for (name, bytes) in [("spall_v3", &spall), ("json", &json)] {
        eprintln!("{name}: {:.1} MB", bytes.len() as f64 / 1e6);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0u64;
                let mut names = 0usize;
                decode(black_box(bytes), &mut |e: &RawEvent<'_>| {
                    n += 1;
                    names += e.name.len();
                })
                .unwrap();
                black_box((n, names))
            })
        });
    }
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("read_ceiling", |b| {
        b.iter(|| {
            let sum = black_box(&json[..])
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .fold(0u64, u64::wrapping_add);
            black_box(sum)
        })
    });
    g.bench_function("serde_json_value", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_slice(black_box(&json)).unwrap();
            black_box(v["traceEvents"].as_array().map(Vec::len))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
