//! Decoding and model building: the model's invariants must hold for whatever loads.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = trace_model::load_bytes(data) else {
        return;
    };
    for th in t.threads() {
        for lane in &th.lanes {
            for i in 1..lane.len() {
                assert!(lane.end(i - 1) <= lane.start[i], "lanes never overlap");
            }
        }
    }
});
