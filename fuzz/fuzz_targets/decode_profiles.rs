//! Sampling profiles (`perf script`, collapsed stacks, `.cpuprofile`, speedscope, pprof,
//! Gecko): each
//! reader on any bytes, through the model, whose sample invariants must hold.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_format::sampled::{self, ProfileFormat};
use spall_format::Diagnostics;

fuzz_target!(|data: &[u8]| {
    // Every reader on every input, whatever detection says it is.
    for f in [
        ProfileFormat::Perf,
        ProfileFormat::Collapsed,
        ProfileFormat::CpuProfile,
        ProfileFormat::Speedscope,
        ProfileFormat::Pprof,
        ProfileFormat::Gecko,
    ] {
        let mut sink = |_: &spall_format::RawEvent<'_>| {};
        let _ = sampled::decode(data, f, &mut sink, &mut Diagnostics::default());
    }
    let Ok(t) = trace_model::load_bytes(data) else {
        return;
    };
    for s in t.samples() {
        assert_eq!(s.ts.len(), s.weight.len());
        assert_eq!(s.ts.len(), s.frame.len());
        assert!(s.args.is_empty() || s.args.len() == s.ts.len());
        assert!(s.ts.windows(2).all(|w| w[0] <= w[1]), "samples in time order");
        for &f in &s.frame {
            assert!(f == trace_model::NO_FRAME || (f as usize) < t.frames().len());
        }
    }
    for (i, f) in t.frames().iter().enumerate() {
        assert!(f.parent == trace_model::NO_FRAME || (f.parent as usize) < i, "callers first");
    }
    if t.is_sampled() {
        let _ = t.sample_stats(None, None);
        let _ = t.flame(&Default::default(), Default::default());
    }
});
