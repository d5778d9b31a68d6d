//! The memory guard: a load whose estimate exceeds the limit fails before the model is
//! allocated, and the estimate is close to what a load really takes. Heap use is measured
//! by a counting global allocator (this test binary only).

#![allow(unsafe_code)] // A GlobalAlloc wrapper is unsafe by signature.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use spall_format::synth::Synth;
use spall_test_support::{field, varint};
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

/// A `perf script` file: the real profile's records `copies` times, each copy a second
/// later.
fn perf_file(name: &str, copies: u32) -> PathBuf {
    let text = std::fs::read_to_string(spall_test_support::fixture("real/profiles/spin.perf"));
    let text = text.unwrap();
    let mut out = String::with_capacity(text.len() * copies as usize);
    for k in 0..copies {
        for line in text.lines() {
            let header = !line.is_empty() && !line.starts_with([' ', '\t']);
            match line.split_whitespace().find(|w| w.ends_with(':')) {
                Some(w) if header && w.trim_end_matches(':').parse::<f64>().is_ok() => {
                    let secs: f64 = w.trim_end_matches(':').parse().unwrap();
                    out += &line.replacen(w, &format!("{:.6}:", secs + f64::from(k)), 1);
                }
                _ => out += line,
            }
            out.push('\n');
        }
    }
    let p = std::env::temp_dir().join(format!("spall-memory-{name}-{}.perf", std::process::id()));
    std::fs::write(&p, out).unwrap();
    p
}

/// A profile's samples count: its estimate covers the model's samples and the viewer's
/// stacks over time, not just a fixed base.
#[test]
fn a_profiles_estimate_counts_its_samples() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = perf_file("est-perf", 400);
    let input = spall_format::Input::open(&p, &DecodeOptions::default()).unwrap();
    let est = trace_model::estimate_memory(&input);
    drop(input);
    let opts = limited(u64::MAX);
    let (t, peak) = peak_during(|| trace_model::load_with(&p, &opts, |_, _| {}).unwrap());
    let samples: usize = t.samples().iter().map(|s| s.ts.len()).sum();
    assert_eq!(samples, 174 * 400);
    let ratio = est.other_events as f64 / samples as f64;
    assert!(
        (0.8..1.25).contains(&ratio),
        "{} samples estimated",
        est.other_events
    );
    // The viewer's stacks over time, which the estimate covers too (their index adds a
    // little more).
    let lanes: usize = (t.samples().iter())
        .flat_map(|s| s.stack_lanes(t.frames()))
        .map(|l| l.heap_bytes())
        .sum();
    // Beyond the fixed base (16 MiB, the model's and the viewer's fixed costs).
    let est_samples = est.bytes - (16 << 20);
    eprintln!(
        "perf: estimate {est_samples} bytes beyond the base; load peak {peak}, stack lanes {lanes}"
    );
    let r = est_samples as f64 / (peak + lanes) as f64;
    assert!(
        (1.0..2.5).contains(&r),
        "estimate {est_samples} against {peak} + {lanes}"
    );
    std::fs::remove_file(&p).unwrap();
}

/// A tracefs text trace of `rounds` rounds on four CPUs: each round one task wakes the
/// other, then the CPU switches to it (a waking and a switch, as a busy system logs them).
fn systrace_file(name: &str, rounds: u32) -> PathBuf {
    use std::fmt::Write;
    let mut out = String::from("# tracer: nop\n#\n");
    for i in 0..rounds {
        let cpu = i % 4;
        let (a, b) = (1000 + cpu * 2 + i / 4 % 2, 1000 + cpu * 2 + (i / 4 + 1) % 2);
        let us = u64::from(i) * 10;
        let (s, f) = (us / 1_000_000, us % 1_000_000);
        writeln!(
            out,
            "task-{a} [{cpu:03}] d..2 {s}.{f:06}: sched_waking: comm=task-{b} pid={b} prio=120 target_cpu={cpu:03}\n\
             task-{a} [{cpu:03}] d..2 {s}.{:06}: sched_switch: prev_comm=task-{a} prev_pid={a} prev_prio=120 prev_state=S ==> next_comm=task-{b} next_pid={b} next_prio=120",
            f + 5
        )
        .unwrap();
    }
    let p = std::env::temp_dir().join(format!("spall-memory-{name}-{}.trace", std::process::id()));
    std::fs::write(&p, out).unwrap();
    p
}

/// A system trace's scheduler records become slices and thread states larger than the
/// records: the estimate covers them (above the real peak, not far above it).
#[test]
fn a_system_traces_estimate_covers_its_slices_and_states() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = systrace_file("est-sched", 100_000);
    let (slices, est_sched, peak) = sched_estimate_and_peak(&p);
    assert_eq!(slices, 100_000);
    let r = est_sched as f64 / peak as f64;
    assert!(
        (1.0..3.0).contains(&r),
        "estimate {est_sched} against a peak of {peak}"
    );
}

/// A system trace's scheduling slices once loaded, its memory estimate beyond the fixed
/// base (16 MiB, which would hide the records' share), and the heap's peak during its
/// load; the file is removed.
fn sched_estimate_and_peak(p: &std::path::Path) -> (usize, u64, usize) {
    let input = spall_format::Input::open(p, &DecodeOptions::default()).unwrap();
    let est = trace_model::estimate_memory(&input);
    drop(input);
    let opts = limited(u64::MAX);
    let (t, peak) = peak_during(|| trace_model::load_with(p, &opts, |_, _| {}).unwrap());
    let s = t.sched().expect("scheduling data");
    let est_sched = est.bytes - (16 << 20);
    eprintln!(
        "sched: estimate {est_sched} bytes beyond the base, peak heap {peak}, model {}",
        s.heap_bytes()
    );
    std::fs::remove_file(p).unwrap();
    (s.slices.len(), est_sched, peak)
}

/// A Perfetto system trace of `bundles` compact_sched bundles on eight CPUs, each of 1024
/// switches and as many wakings among 64 tasks (the shape of `gen-systrace.py --big`).
fn compact_file(name: &str, bundles: u64) -> PathBuf {
    const N: u64 = 1024;
    let col = |f: &dyn Fn(u64) -> u64| {
        let mut b = Vec::new();
        (0..N).for_each(|i| varint(f(i), &mut b));
        b
    };
    let mut out = Vec::new();
    for k in 0..bundles {
        let start = 1_000_000 + k / 8 * N * 5000;
        let mut cs = Vec::new();
        for t in 0..64 {
            field(5, format!("task-{t}").as_bytes(), &mut cs);
        }
        let ts = col(&|i| if i == 0 { start } else { 5000 });
        let wts = col(&|i| if i == 0 { start + 5 } else { 5000 });
        let cols = [
            (1, ts),
            (2, col(&|i| [1, 0, 2, 0x800][i as usize % 4])),
            (3, col(&|i| 1000 + i % 64)),
            (4, col(&|_| 120)),
            (6, col(&|i| i % 64)),
            (7, wts),
            (8, col(&|i| 1000 + i * 7 % 64)),
            (9, col(&|i| i % 8)),
            (10, col(&|_| 120)),
            (11, col(&|i| i * 7 % 64)),
            (12, col(&|_| 0)),
        ];
        for (num, c) in &cols {
            field(*num, c, &mut cs);
        }
        let mut bundle = vec![0x08];
        varint(k % 8, &mut bundle);
        field(4, &cs, &mut bundle);
        let mut packet = Vec::new();
        field(1, &bundle, &mut packet);
        field(1, &packet, &mut out);
    }
    let p = std::env::temp_dir().join(format!(
        "spall-memory-{name}-{}.pftrace",
        std::process::id()
    ));
    std::fs::write(&p, out).unwrap();
    p
}

/// A compact_sched trace's records are held packed until the replay frees them: its
/// estimate is above the real peak, not far above it (it was 2x the heap's peak, which
/// refused a 1 GB trace needing 8 GB on a machine with 19 GB free).
#[test]
fn a_compact_system_traces_estimate_covers_its_peak() {
    let _one = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = compact_file("est-compact", 96);
    let (slices, est_sched, peak) = sched_estimate_and_peak(&p);
    assert_eq!(slices, 96 * 1024 - 8);
    let r = est_sched as f64 / peak as f64;
    assert!(
        (1.0..1.8).contains(&r),
        "estimate {est_sched} against a peak of {peak}"
    );
}
