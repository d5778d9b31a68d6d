//! Everything `spall-cli info` and `stats` do after reading the file: load, statistics,
//! the index, and a level-of-detail query of every lane.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = trace_model::load_bytes(data) else {
        return;
    };
    let _ = (
        t.span_count(),
        t.max_depth(),
        t.counter_samples(),
        t.duration_ns(),
    );
    let _ = t.stats(&trace_model::StatsFilter::default());
    let index = trace_index::TraceIndex::build(&t);
    let detail = trace_index::Detail::new((t.duration_ns().max(1) as f64 / 512.0).max(0.01));
    for (ti, th) in t.threads().iter().enumerate() {
        for d in 0..th.lanes.len() {
            let _ = index.query(&t, ti, d, t.start_ns(), t.end_ns(), detail);
        }
    }
});
