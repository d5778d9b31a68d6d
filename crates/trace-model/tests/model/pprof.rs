//! Sampling profiles in the model: pprof's sample types as tracks with the default one
//! counted, its labels as the samples' args.

use spall_format::SampleUnit;
use spall_test_support::fixture;
use trace_model::{load, Trace};

/// The counted kind as `name/unit`.
fn counted(t: &Trace) -> String {
    let (k, u) = t.sample_kind().unwrap();
    format!("{}/{}", t.str(k), u.name())
}

#[test]
fn pprof_sample_types_are_tracks_and_the_default_is_counted() {
    let mut t = load(fixture("real/profiles/go_heap.pb.gz")).unwrap();
    let kinds: Vec<String> = (t.sample_kinds().iter())
        .map(|&(k, u)| format!("{}/{}", t.str(k), u.name()))
        .collect();
    // go tool pprof's default, the last sample type, first.
    assert_eq!(
        kinds,
        [
            "inuse_space/bytes",
            "alloc_objects/count",
            "alloc_space/bytes",
            "inuse_objects/count"
        ]
    );
    // Fewer samples are in use than were allocated: counted by the profile's say, not by
    // the most samples.
    let n = |t: &Trace, kind: &str| -> usize {
        (t.samples().iter())
            .filter(|s| t.str(s.kind) == kind)
            .map(|s| s.ts.len())
            .sum()
    };
    assert!(n(&t, "inuse_space") < n(&t, "alloc_space"));
    assert_eq!(counted(&t), "inuse_space/bytes");
    t.set_sample_kind("alloc_space").unwrap();
    assert_eq!(counted(&t), "alloc_space/bytes");
    t.set_sample_kind("alloc_objects/count").unwrap();
    assert_eq!(counted(&t), "alloc_objects/count");
    let e = t.set_sample_kind("alloc_space/count").unwrap_err();
    assert!(e.contains("inuse_space/bytes"), "{e}");
}

#[test]
fn pprof_labels_are_sample_args() {
    let t = load(fixture("real/profiles/go_cpu.pb.gz")).unwrap();
    let cpu = (t.samples().iter())
        .find(|s| t.str(s.kind) == "cpu")
        .unwrap();
    assert_eq!(cpu.unit, SampleUnit::Nanoseconds);
    assert_eq!(cpu.args.len(), cpu.ts.len());
    // The fib goroutine runs under pprof.Do with the label worker=fib; the main one with
    // none.
    let mut labelled = 0;
    for (i, &a) in cpu.args.iter().enumerate() {
        let mut f = cpu.frame[i];
        let mut names = Vec::new();
        while f != trace_model::NO_FRAME {
            names.push(t.str(t.frames()[f as usize].name));
            f = t.frames()[f as usize].parent;
        }
        let args = t.args().json(a);
        if names.contains(&"main.fib") {
            assert_eq!(args, Some(serde_json::json!({"worker": "fib"})));
            labelled += 1;
        } else {
            assert_eq!(args, None, "{names:?}");
        }
    }
    assert!(labelled > 10);
}

/// `demangled.tsv`: per mangled name in the two `perf script --no-demangle` fixtures, its
/// language and what perf (for Rust) or c++filt (for C++, with parameters) shows.
fn expected_demanglings() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture("real/profiles/demangled.tsv")).unwrap();
    (text.lines().filter(|l| !l.starts_with('#')))
        .map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            let want = if v[1] == "rust" { v[2] } else { v[3] };
            (v[0].to_string(), want.to_string())
        })
        .collect()
}

#[test]
fn real_perf_profiles_of_cpp_and_rust_are_demangled() {
    let want = expected_demanglings();
    let mut seen = 0;
    for name in ["demangle_cpp.perf.gz", "demangle_rust.perf.gz"] {
        let t = load(fixture(&format!("real/profiles/{name}"))).unwrap();
        for f in t.frames() {
            let shown = t.str(f.name);
            if f.raw == trace_model::StrId::EMPTY {
                // Left alone: plain C names, and nothing mangled slips through.
                assert!(
                    !shown.starts_with("_Z") && !shown.starts_with("_R"),
                    "{shown}"
                );
                continue;
            }
            let raw = t.str(f.raw);
            let w = want.iter().find(|w| w.0 == raw);
            assert_eq!(w.map(|w| w.1.as_str()), Some(shown), "{name}: {raw}");
            seen += 1;
        }
    }
    // Each mangled name is one frame (or more, under different callers).
    assert!(seen >= want.len(), "{seen} frames for {} names", want.len());
}
