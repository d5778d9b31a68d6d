//! The whole-trace statistics cross from the worker to the page as bytes: a real trace's
//! come back whole, and bytes that do not fit the trace are refused, never a panic.

use spall_web_transfer::{pack_stats, read_stats};

fn trace() -> trace_model::Trace {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real/clang/self-win-clang-19.1_BuildEvents.json"
    );
    trace_model::load(path).unwrap()
}

#[test]
fn a_real_traces_statistics_come_back_whole() {
    let t = trace();
    let stats = t.stats(&trace_model::StatsFilter::default());
    assert!(stats.len() > 10, "{} names", stats.len());
    let bytes = pack_stats(&stats);
    assert_eq!(read_stats(&bytes, &t), Some(stats));
}

#[test]
fn statistics_that_do_not_fit_the_trace_are_refused() {
    let t = trace();
    let mut stats = t.stats(&trace_model::StatsFilter::default());
    let bytes = pack_stats(&stats);
    // Cut anywhere, or with a byte more: refused.
    for n in [0, 1, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(read_stats(&bytes[..n], &t), None, "cut at {n}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(read_stats(&longer, &t), None);
    // A name the trace does not have.
    stats[0].name = trace_model::StrId(t.strings().len() as u32);
    assert_eq!(read_stats(&pack_stats(&stats), &t), None);
}
