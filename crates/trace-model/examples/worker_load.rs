//! The web page's two loads, natively: the worker's stream (`LoadStream`, the file pushed in
//! 8 MB pieces as `File.slice` reads it) and the page's own steps (`LoadSteps` over the
//! whole file), beside `load_bytes`. Run with `RAYON_NUM_THREADS=1`: the page has one thread.
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo run --release -p trace-model --example worker_load -- FILE [RUNS]
//! ```
//!
//! Prints each load's best time of RUNS (default 3), and the stream's split between pushing
//! (decoding as the pieces arrive) and finishing (merging the chunks, nesting). With
//! `stream` after RUNS, only the stream is run (for `perf record`).

use std::time::Instant;

use trace_model::{load_bytes, DecodeOptions, LoadSteps, LoadStream, Trace};

const PIECE: usize = 8 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: worker_load FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(2).map_or(3, |s| s.parse().expect("RUNS"));
    let bytes = std::fs::read(path).expect("read the file");
    if args.get(3).is_some_and(|a| a == "stream") {
        for _ in 0..runs {
            let t = Instant::now();
            let (trace, pushed) = stream(&bytes);
            let s = t.elapsed().as_secs_f64();
            println!(
                "{s:.3} s (pushing {pushed:.3} s), {} spans",
                trace.span_count()
            );
        }
        return;
    }
    let mb = bytes.len() as f64 / 1e6;
    let mut best = [f64::MAX; 4];
    let mut spans = [0; 3];
    for _ in 0..runs {
        let t = Instant::now();
        spans[0] = load_bytes(&bytes).expect("load").span_count();
        best[0] = best[0].min(t.elapsed().as_secs_f64());

        let t = Instant::now();
        // The page copies the file into its memory before the first step.
        let mut steps = LoadSteps::new(bytes.clone(), &DecodeOptions::default());
        while !steps.step().expect("step") {}
        spans[1] = steps.finish().expect("finish").span_count();
        best[1] = best[1].min(t.elapsed().as_secs_f64());

        let t = Instant::now();
        let (trace, pushed) = stream(&bytes);
        spans[2] = trace.span_count();
        best[2] = best[2].min(t.elapsed().as_secs_f64());
        best[3] = best[3].min(pushed);
    }
    let line = |what: &str, s: f64| println!("{what:<34} {s:>7.3} s  {:>6.0} MB/s", mb / s);
    line("load_bytes", best[0]);
    line("LoadSteps (the page's thread)", best[1]);
    line("LoadStream, 8 MB pieces (worker)", best[2]);
    println!(
        "  of which pushing {:.3} s, finishing {:.3} s",
        best[3],
        best[2] - best[3]
    );
    assert!(spans[0] == spans[1] && spans[1] == spans[2], "{spans:?}");
    println!("{} spans, {mb:.0} MB", spans[0]);
}

/// The worker's load: the trace and the seconds spent pushing.
fn stream(bytes: &[u8]) -> (Trace, f64) {
    let t = Instant::now();
    let mut load = LoadStream::new(bytes).expect("a streamed format");
    for p in bytes.chunks(PIECE) {
        load.push(p).expect("push");
    }
    let pushed = t.elapsed().as_secs_f64();
    (load.finish().expect("finish").expect("in order"), pushed)
}
