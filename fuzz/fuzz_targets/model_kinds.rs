//! Every kind the model groups or binds, from hostile input: async slices (rows, parents,
//! depths), flow links (both ends real spans), CPU samples (frames), counters (sorted).
#![no_main]
use libfuzzer_sys::fuzz_target;
use trace_model::{SpanRef, Trace, NO_FRAME, NO_PARENT};

fn real(t: &Trace, r: SpanRef) -> bool {
    (t.threads().get(r.thread as usize))
        .and_then(|th| th.lanes.get(r.depth as usize))
        .is_some_and(|l| (r.index as usize) < l.len())
}

fuzz_target!(|data: &[u8]| {
    let Ok(t) = trace_model::load_bytes(data) else {
        return;
    };
    let slices = t.async_slices();
    for s in slices {
        assert!(s.start <= s.end, "async slices do not end before they start");
        if s.parent != NO_PARENT {
            let p = &slices[s.parent as usize];
            assert_eq!(p.depth + 1, s.depth, "a child is one below its parent");
        }
    }
    for link in t.flow_links() {
        assert!(real(&t, link.from) && real(&t, link.to), "flows bind real spans");
        assert!((link.flow as usize) < t.flows().len());
    }
    let frames = t.frames();
    for s in t.samples() {
        assert!(s.ts.windows(2).all(|w| w[0] <= w[1]), "samples by time");
        for &f in &s.frame {
            assert!(f == NO_FRAME || (f as usize) < frames.len());
        }
    }
    for f in frames {
        assert!(f.parent == NO_FRAME || (f.parent as usize) < frames.len());
    }
});
