//! Decodes a file N times with a counting sink and prints the best throughput (for profiling:
//! `perf record ./target/release/examples/decode-bench FILE 10`).
use spall_format::{decode, RawEvent};
fn main() {
    let path = std::env::args().nth(1).expect("file");
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(5);
    let bytes = std::fs::read(&path).unwrap();
    let mut best = f64::MAX;
    for _ in 0..n {
        let t = std::time::Instant::now();
        let mut c = 0u64;
        let mut names = 0usize;
        decode(&bytes, &mut |e: &RawEvent<'_>| {
            c += 1;
            names += e.name.len();
        })
        .unwrap();
        let s = t.elapsed().as_secs_f64();
        best = best.min(s);
        std::hint::black_box((c, names));
    }
    println!(
        "{path}: {:.1} MB, best {:.1} ms, {:.0} MB/s",
        bytes.len() as f64 / 1e6,
        best * 1e3,
        bytes.len() as f64 / 1e6 / best
    );
}
