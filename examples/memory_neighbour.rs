//! A hostile neighbour for benchmarks: streams through 96 MiB (one load and one store per
//! 64-byte line) until killed, or for the number of seconds given.
//!
//! On a machine with a shared last-level cache and memory bus, this makes another core's
//! memory-bound code slower: it is the slow minute of a shared VM, on demand.
//! `scripts/index-bench-neighbour.sh` pins it to one core and the trace-index frame
//! benchmarks to another.
//!
//! ```sh
//! cargo run --release -p trace-index --example memory-neighbour -- 60
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let secs: Option<u64> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let until = secs.map(|s| Instant::now() + Duration::from_secs(s));
    let mut a: Vec<u64> = (0..(96usize << 20) / 8).map(|i| i as u64).collect();
    let mut sum = 0u64;
    loop {
        for x in a.iter_mut().step_by(8) {
            sum = sum.wrapping_add(*x);
            *x = sum;
        }
        black_box(&mut a);
        if until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
    }
    black_box(sum);
}
