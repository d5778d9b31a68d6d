//! Decoding and model building: the model's invariants must hold for whatever loads
//! (a system trace's scheduling data too: each CPU's slices in time order, every thread
//! index valid).
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
    if let Some(s) = t.sched() {
        let threads = t.threads().len() as u32;
        for &cpu in &s.cpus {
            let slices = s.cpu_slices(cpu);
            assert!(slices.windows(2).all(|w| w[0].ts <= w[1].ts), "a CPU's slices in order");
        }
        assert!(s.slices.iter().all(|x| x.thread < threads));
        for th in 0..threads {
            for st in s.thread_states(th) {
                assert_eq!(st.thread, th);
                assert!(st.waker().is_none_or(|w| w < threads));
            }
        }
    }
});
