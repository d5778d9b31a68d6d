//! Sampling profiles (`perf script`, collapsed stacks, `.cpuprofile`, speedscope, pprof,
//! Gecko): each reader on any bytes, through the model, whose sample invariants must hold;
//! a text profile, `.cpuprofile`, speedscope file, Gecko or pprof profile streamed in
//! pieces gives the whole decode's samples and warnings (or its error).
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
    stream(data);
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

/// Samples counted, and their frames.
#[derive(Default, Debug, PartialEq)]
struct Samples(u64, u64);

impl spall_format::EventSink for Samples {
    fn event(&mut self, _: &spall_format::RawEvent<'_>) {}
    fn sample(&mut self, s: &spall_format::RawSample<'_>) {
        self.0 += 1;
        self.1 += s.stack.len() as u64;
    }
}

/// A text profile's, `.cpuprofile`'s, speedscope file's, Gecko or pprof profile's stream,
/// in pieces and runs of any size, against the whole decode.
fn stream(data: &[u8]) {
    let Some(f) = spall_format::ProfileStream::<Samples>::accepts(data) else {
        return;
    };
    let piece = 1 + data.last().map_or(0, |&b| b as usize);
    let mut s = spall_format::ProfileStream::with_target(f, 64, Samples::default);
    for p in data.chunks(piece) {
        s.push(p).expect("a profile's stream takes any bytes");
    }
    // pprof's stream fails where the whole decode does.
    let Ok(done) = s.finish() else {
        assert_eq!(f, spall_format::ProfileFormat::Pprof, "only pprof's stream fails");
        assert!(spall_format::decode(data, &mut Samples::default()).is_err());
        return;
    };
    // A JSON profile its streamed reader gives up on is decoded again, whole.
    let Some((got, sinks)) = done else {
        use spall_format::ProfileFormat::{CpuProfile, Gecko, Speedscope};
        assert!(matches!(f, CpuProfile | Speedscope | Gecko), "{f:?} gave up");
        return;
    };
    let mut whole = Samples::default();
    let summary = spall_format::decode(data, &mut whole).expect("the whole decode");
    let all = sinks.iter().fold(Samples::default(), |a, c| Samples(a.0 + c.0, a.1 + c.1));
    assert_eq!(all, whole);
    assert_eq!(got.events, summary.events);
    let counts = |s: &spall_format::Summary| s.diagnostics.counts().collect::<Vec<_>>();
    assert_eq!(counts(&got), counts(&summary));
}
