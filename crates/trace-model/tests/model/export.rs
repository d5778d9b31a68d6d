//! `Trace::write_spall` round trips through the `.spall` decoder.

use trace_model::{load, load_bytes};

#[test]
fn a_real_trace_round_trips_through_spall() {
    let path = spall_test_support::fixture("real/clang/self-win-clang-19.1_BuildEvents.json");
    let t = load(path).unwrap();
    let (bytes, x) = t.write_spall(Vec::new()).unwrap();
    assert_eq!(x.spans, t.span_count());
    let back = load_bytes(&bytes).unwrap();
    assert_eq!(back.span_count(), t.span_count());
    assert_eq!(back.threads().len(), t.threads().len());
    for (a, b) in t.threads().iter().zip(back.threads()) {
        assert_eq!(a.lanes.len(), b.lanes.len());
        for (la, lb) in a.lanes.iter().zip(&b.lanes) {
            assert_eq!(
                la.start,
                lb.start.iter().map(|s| s - x.shift_ns).collect::<Vec<_>>()
            );
            let names = |t: &trace_model::Trace, l: &trace_model::Lane| -> Vec<String> {
                l.name.iter().map(|&n| t.str(n).to_string()).collect()
            };
            assert_eq!(names(&t, la), names(&back, lb));
        }
    }
}
