//! What fresh memory costs on this machine: writes one byte per 4 KiB page of a new block,
//! so the time is the kernel's (a fault and a zeroing per page), and prints MB/s. A load
//! writes its model and index into fresh memory once; this is the floor of that part.
//!
//! `fresh-memory [MB] [RUNS]` (default 512 MB, 5 runs): each run in a new block, freed after.
fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map(|s| s.parse().expect("a whole number"))
            .unwrap_or(default)
    };
    let (mb, runs) = (arg(1, 512), arg(2, 5));
    let size = mb << 20;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let mut block: Vec<u8> = Vec::with_capacity(size);
        let p = block.spare_capacity_mut();
        for i in (0..size).step_by(4096) {
            p[i].write(1);
        }
        let secs = t.elapsed().as_secs_f64();
        std::hint::black_box(&block);
        println!(
            "{mb} MB in {:.1} ms: {:.0} MB/s, {:.2} us per 4 KiB page",
            secs * 1e3,
            mb as f64 / secs,
            secs * 1e6 / (size / 4096) as f64
        );
    }
}
