//! A program profiled with `spall-trace`: threads, nested spans, arguments, an instant, a
//! panic inside a span, and `tracing` spans through `SpallLayer`.
//!
//! ```text
//! cargo run --release -p spall-trace --example instrumented -- trace.spall
//! spall trace.spall
//! ```

use tracing_subscriber::layer::SubscriberExt;

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("instrumented.spall".into());
    let guard = spall_trace::Builder::new(&path)
        .process_name("instrumented")
        .start()?;
    let subscriber = tracing_subscriber::registry().with(spall_trace::SpallLayer::new());
    tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");

    let workers: Vec<_> = (0..3)
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("worker {i}"))
                .spawn(move || work(i))
                .expect("spawn")
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    // A panic inside a span still closes the span.
    let _ = std::thread::spawn(|| {
        let _s = spall_trace::span("doomed");
        panic!("this panic is part of the example");
    })
    .join();
    checksum(20);

    let report = guard.finish()?;
    eprintln!(
        "wrote {path}: {} threads, {} bytes",
        report.threads, report.bytes
    );
    Ok(())
}

fn work(i: u64) {
    spall_trace::scope!();
    for frame in 0..100 {
        let _f = spall_trace::span_with("frame", format_args!("n={frame}"));
        {
            let _u = spall_trace::span("update");
            std::hint::black_box(checksum(i * 1000 + frame));
        }
        if frame % 10 == 0 {
            spall_trace::instant("checkpoint");
        }
    }
}

#[tracing::instrument]
fn checksum(n: u64) -> u64 {
    (0..n).fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(b))
}
