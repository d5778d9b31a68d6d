//! The memory guard: a load whose estimate exceeds the limit fails before the model is
//! allocated, and the estimate is close to what a load really takes. Heap use is measured
//! by a counting global allocator (this test binary only).

#![allow(unsafe_code)] // A GlobalAlloc wrapper is unsafe by signature.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use spall_format::synth::Synth;
use trace_model::{DecodeOptions, ErrorKind, MemoryLimit};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The tests measure one process-wide heap: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Peak heap growth while `f` runs.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let v = f();
    (v, PEAK.load(Ordering::Relaxed) - base)
}

fn trace_file(name: &str, spans: u64, json: bool) -> PathBuf {
    let p = std::env::temp_dir().join(format!("spall-memguard-{}-{name}", std::process::id()));
    let s = Synth {
        spans,
        ..Synth::default()
    };
    let f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    if json {
        s.write_json(f, true).unwrap();
    } else {
        s.write_spall(f).unwrap();
    }
    p
}

fn limited(bytes: u64) -> DecodeOptions {
    DecodeOptions {
        max_memory: MemoryLimit::Bytes(bytes),
        ..Default::default()
    }
}

#[test]
fn over_the_limit_fails_fast_without_building_the_model() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for json in [false, true] {
        let p = trace_file(&format!("big-{json}"), 400_000, json);
        let (r, peak) = peak_during(|| trace_model::load_with(&p, &limited(8 << 20), |_, _| {}));
        let e = r.expect_err("the load should have been refused");
        let ErrorKind::NotEnoughMemory { needed, limit, .. } = &e.kind else {
            panic!("{e}");
        };
        assert_eq!(*limit, 8 << 20);
        assert!(needed.unwrap() > 8 << 20);
        let msg = e.to_string();
        for part in ["not enough memory", "k spans", "8.0 MB", "--max-memory"] {
            assert!(msg.contains(part), "{part:?} missing from: {msg}");
        }
        assert!(msg.starts_with(&p.display().to_string()), "{msg}");
        // A model of 400k spans takes over 11 MB (29 bytes each) before its index: the
        // refused load allocated a small fraction of that.
        assert!(peak < 2 << 20, "the refused load allocated {peak} bytes");
        std::fs::remove_file(&p).unwrap();
    }
}

#[test]
fn the_estimate_is_near_the_real_peak() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for json in [false, true] {
        let p = trace_file(&format!("est-{json}"), 400_000, json);
        let input = spall_format::Input::open(&p, &DecodeOptions::default()).unwrap();
        let est = trace_model::estimate_memory(&input);
        drop(input);
        let opts = limited(u64::MAX);
        let (t, peak) = peak_during(|| trace_model::load_with(&p, &opts, |_, _| {}).unwrap());
        assert_eq!(t.span_count(), 400_000);
        // Counted from a sample, scaled to the whole file.
        let ratio = est.spans as f64 / 400_000.0;
        assert!(
            (0.8..1.25).contains(&ratio),
            "{} spans estimated",
            est.spans
        );
        // Above the real peak (the guard errs on the side of a clear message), but not so far
        // above that it refuses loads that would fit.
        let r = est.bytes as f64 / peak as f64;
        eprintln!(
            "json {json}: estimate {} bytes, peak heap {peak} bytes",
            est.bytes
        );
        assert!(
            (1.0..3.0).contains(&r),
            "json {json}: estimate {} against a peak of {peak}",
            est.bytes
        );
        std::fs::remove_file(&p).unwrap();
    }
}

#[test]
fn a_load_under_the_limit_is_not_refused() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = trace_file("small", 2_000, true);
    let t = trace_model::load_with(&p, &limited(64 << 20), |_, _| {}).unwrap();
    assert_eq!(t.span_count(), 2_000);
    std::fs::remove_file(&p).unwrap();
}
