//! The issue's hostile sizes in full: 10M unclosed B events and 1M-deep nesting. Too slow
//! for a debug build, so they are `#[ignore]`d here and run optimized by `scripts/test.sh`
//! as below (a `--release` build of its own does as well):
//!
//! ```sh
//! CARGO_PROFILE_DEV_OPT_LEVEL=2 cargo test --workspace --test hostile_full -- --ignored --test-threads=1
//! ```
//!
//! Each checks that nothing is lost (every event is a span, every unclosed B is counted),
//! that nothing recursed (a 256 KiB stack), and that memory stays within a stated multiple
//! of the input (docs/TESTING.md).

mod common;

use common::on_small_stack;
use spall_format::DiagnosticKind;
use trace_model::{load_bytes, Trace};

/// A `.spall` v3 file: for each thread, its events (`Some(name)`: Begin; `None`: End) at
/// consecutive ticks, in buffers of about 1 MiB.
fn spall(threads: u32, events: impl Fn(u32) -> Vec<Option<u8>>) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0x0BAD_F00Du64.to_le_bytes());
    b.extend_from_slice(&3u64.to_le_bytes());
    b.extend_from_slice(&1f64.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    for tid in 0..threads {
        let evs = events(tid);
        let mut ts = 0u64;
        for chunk in evs.chunks(80_000) {
            let mut buf = Vec::with_capacity(chunk.len() * 12);
            for e in chunk {
                ts += 1;
                match e {
                    Some(name) => {
                        buf.push(3);
                        buf.extend_from_slice(&ts.to_le_bytes());
                        buf.extend_from_slice(&[1, 0, *name]);
                    }
                    None => {
                        buf.push(4);
                        buf.extend_from_slice(&ts.to_le_bytes());
                    }
                }
            }
            b.extend_from_slice(&(buf.len() as u32).to_le_bytes());
            b.extend_from_slice(&tid.to_le_bytes());
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&0u64.to_le_bytes());
            b.extend_from_slice(&buf);
        }
    }
    b
}

/// The process's peak resident memory (Linux `VmHWM`), in bytes; `None` elsewhere.
fn peak_rss() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Memory stays within 40 times the input: the documented bound for one-span lanes, the
/// worst case (each lane holds its own arrays). Run with `--test-threads=1`.
fn check_memory(t: &Trace, input: usize) {
    let bytes = t.heap_bytes();
    let peak = peak_rss().unwrap_or(0);
    eprintln!(
        "input {input} B, model {bytes} B, peak RSS {peak} B ({:.1}x input)",
        peak as f64 / input as f64
    );
    assert!(bytes < 40 * input, "model {bytes} B for {input} B of input");
    assert!(
        peak < 40 * input,
        "peak RSS {peak} B for {input} B of input"
    );
}

fn warned(t: &Trace, kind: &str) -> u64 {
    t.diagnostics()
        .counts()
        .filter(|(k, _)| k.name() == kind)
        .map(|(_, n)| n)
        .sum()
}

#[test]
#[ignore = "full size: run optimized (scripts/test.sh does)"]
fn ten_million_unclosed_begins() {
    // 100 threads, each 100,000 B events deep and never closed.
    let b = spall(100, |_| vec![Some(b'b'); 100_000]);
    let input = b.len();
    let t = on_small_stack(move || load_bytes(&b).unwrap());
    assert_eq!(t.span_count(), 10_000_000);
    assert_eq!(warned(&t, "unclosed_begin"), 10_000_000);
    // All close at the trace's end; each thread's last B is zero-length there, inside the
    // Bs never ended (trace_processor's stack holds them open): 100,000 levels.
    assert_eq!(t.max_depth(), 100_000);
    check_memory(&t, input);
}

#[test]
#[ignore = "full size: run optimized (scripts/test.sh does)"]
fn one_million_deep() {
    let n = 1_000_000;
    let b = spall(1, |_| {
        let mut v = vec![Some(b'd'); n];
        v.extend(std::iter::repeat_n(None, n));
        v
    });
    let input = b.len();
    let t = on_small_stack(move || load_bytes(&b).unwrap());
    assert_eq!(t.span_count(), n as u64);
    assert_eq!(t.max_depth(), n);
    assert_eq!(t.diagnostics().total(), 0);
    // The outermost span holds everything; the innermost is 1 tick long.
    let lanes = &t.threads()[0].lanes;
    assert_eq!(lanes[0].dur[0], 2 * n as i64 - 1);
    assert_eq!(lanes[n - 1].dur[0], 1);
    check_memory(&t, input);
}
