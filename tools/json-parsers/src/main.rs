//! One thread, the file in memory, best of 3: spall-format's decoder (every event out, args
//! kept as raw text), UTF-8 validation alone, and three general parsers building their
//! whole representation of the document.

use std::time::Instant;

struct Count(u64);

impl spall_format::EventSink for Count {
    fn event(&mut self, _: &spall_format::RawEvent<'_>) {
        self.0 += 1;
    }
}

/// The fastest of `n` runs of `f`, which returns the seconds it measured.
fn best(n: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..n).map(|_| f()).fold(f64::MAX, f64::min)
}

fn timed<T>(f: impl FnOnce() -> T) -> f64 {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed().as_secs_f64()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: json-parsers TRACE.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let gb = bytes.len() as f64 / 1e9;
    let report =
        |what: &str, s: f64| println!("{what:<44} {:>7.0} ms {:>6.2} GB/s", s * 1e3, gb / s);
    report(
        "spall-format decode",
        best(3, || {
            timed(|| {
                let mut c = Count(0);
                spall_format::decode(&bytes, &mut c).expect("a trace");
                c.0
            })
        }),
    );
    report(
        "UTF-8 validation alone",
        best(3, || timed(|| std::str::from_utf8(&bytes).is_ok())),
    );
    report(
        "simd-json to_tape (its input copied first)",
        best(3, || {
            let mut b = bytes.clone();
            timed(|| simd_json::to_tape(&mut b).map(|t| t.0.len()).expect("JSON"))
        }),
    );
    report(
        "sonic-rs from_slice::<Value>",
        best(3, || {
            timed(|| sonic_rs::from_slice::<sonic_rs::Value>(&bytes).expect("JSON"))
        }),
    );
    report(
        "serde_json from_slice::<Value>",
        best(2, || {
            timed(|| serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON"))
        }),
    );
}
