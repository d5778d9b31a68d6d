//! The cost of one span (begin + end) with `spall-trace` recording, beside an empty loop
//! and beside `tracing` with `tracing-chrome` and with `SpallLayer`, in the same run.
//!
//! Output goes to `/dev/null` (or `io::sink`) so the file system is not measured and a
//! run of hundreds of millions of spans needs no disk.
//!
//! ```text
//! cargo bench -p spall-trace --bench span
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use tracing_subscriber::layer::SubscriberExt;

const NULL: &str = "/dev/null";

fn spans(c: &mut Criterion) {
    let mut g = c.benchmark_group("span");
    g.bench_function("empty loop", |b| b.iter(|| ()));
    #[cfg(target_arch = "x86_64")]
    g.bench_function("two time-stamp counter reads (the floor)", |b| {
        b.iter(|| (black_box(rdtsc()), black_box(rdtsc())))
    });
    g.bench_function("spall-trace, no session", |b| {
        b.iter(|| drop(spall_trace::span(black_box("work"))))
    });
    for (label, clock) in [
        ("spall-trace, recording (tsc)", spall_trace::Clock::Auto),
        (
            "spall-trace, recording (Instant)",
            spall_trace::Clock::Instant,
        ),
    ] {
        let guard = spall_trace::Builder::new(NULL)
            .clock(clock)
            .start()
            .unwrap();
        g.bench_function(label, |b| {
            b.iter(|| drop(spall_trace::span(black_box("work"))))
        });
        guard.finish().unwrap();
    }
    {
        let guard = spall_trace::init(NULL).unwrap();
        g.bench_function("spall-trace, recording, with args", |b| {
            let mut n = 0u64;
            b.iter(|| {
                n += 1;
                drop(spall_trace::span_with(
                    black_box("work"),
                    format_args!("n={n}"),
                ))
            })
        });
        let subscriber = tracing_subscriber::registry().with(spall_trace::SpallLayer::new());
        tracing::subscriber::with_default(subscriber, || {
            g.bench_function("tracing + SpallLayer", |b| {
                b.iter(|| drop(tracing::info_span!("work").entered()))
            });
        });
        guard.finish().unwrap();
    }
    {
        let (chrome, flush) = tracing_chrome::ChromeLayerBuilder::new()
            .writer(std::io::sink())
            .build();
        let subscriber = tracing_subscriber::registry().with(chrome);
        tracing::subscriber::with_default(subscriber, || {
            g.bench_function("tracing + tracing-chrome", |b| {
                b.iter(|| drop(tracing::info_span!("work").entered()))
            });
        });
        drop(flush);
    }
    g.finish();
}

/// What a span must at least cost: its Begin and its End each read the clock.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86-64 CPU and touches no memory.
    unsafe { core::arch::x86_64::_rdtsc() }
}

criterion_group!(benches, spans);
criterion_main!(benches);
