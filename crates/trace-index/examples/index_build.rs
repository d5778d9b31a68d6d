//! The index's build alone, on a trace file, for profiles and before/after timings
//! (`RAYON_NUM_THREADS=1` for the web page's one thread):
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo run --release -p trace-index --example index_build -- FILE [RUNS]
//! ```
//!
//! Prints each build's time, the index's heap bytes and (the first time) a hash of the
//! whole index, which must not change where the code gives the same index; then the
//! time of each build of the per-kind lookups (`EventIndex`: a profile's stacks over time).

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: index_build FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(2).map_or(5, |s| s.parse().expect("RUNS"));
    let trace = trace_model::load(path).expect("load the trace");
    for run in 0..runs {
        let t = Instant::now();
        let index = trace_index::TraceIndex::build(&trace);
        let s = t.elapsed().as_secs_f64();
        // The whole index, as the page receives it, hashed (FNV-1a) once: two builds of
        // the code that give the same index print the same hash.
        let hash = (run == 0).then(|| {
            let h = (index.to_transfer().iter()).fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
            });
            format!(", hash {h:016x}")
        });
        println!(
            "{:.1} ms, {} spans, index {} bytes{}",
            s * 1e3,
            trace.span_count(),
            index.heap_bytes(),
            hash.unwrap_or_default()
        );
    }
    for _ in 0..runs {
        let t = Instant::now();
        let kinds = trace_index::EventIndex::new(&trace);
        let s = t.elapsed().as_secs_f64();
        let boxes: usize = (kinds.sample_stacks.iter().flat_map(|s| &s.lanes))
            .map(|l| l.len())
            .sum();
        println!(
            "{:.1} ms, the per-kind lookups ({boxes} stack boxes)",
            s * 1e3
        );
    }
}
