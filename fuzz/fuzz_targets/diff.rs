//! `spall-cli diff` on two hostile traces (the input split where its first byte says), by
//! name and by stack, with and without a range; and CPU time per thread.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_cli::diff;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let at = rest.len() * cut as usize / 255;
    let (Ok(base), Ok(new)) = (
        trace_model::load_bytes(&rest[..at]),
        trace_model::load_bytes(&rest[at..]),
    ) else {
        return;
    };
    // A profile beside a trace of spans, or profiles in different units, is the user's
    // error (a message); every other pair must give rows.
    let unit = |t: &trace_model::Trace| t.sample_kind().map(|(_, u)| u);
    let comparable = match (base.is_sampled(), new.is_sampled()) {
        (false, false) => true,
        (true, true) => unit(&base).is_some() && unit(&base) == unit(&new),
        _ => false,
    };
    let args = |metric, by, range| diff::Args {
        base: "base".into(),
        new: "new".into(),
        format: diff::Format::Csv,
        metric,
        by,
        threshold: 5.0,
        min_delta: None,
        alpha: 0.05,
        fail_on: diff::FailOn::Regressed,
        filter: None,
        thread: Vec::new(),
        match_threads: diff::MatchThreads::Name,
        range,
        title: String::new(),
        base_widths: false,
    };
    // CPU time per thread compares two traces with scheduling slices, and only those.
    let sched = |t: &trace_model::Trace| t.sched().is_some_and(|s| !s.slices.is_empty());
    for range in [None, Some("1us..".to_string())] {
        let a = args(diff::Metric::Cpu, diff::By::Name, range);
        match diff::compare_csv(&a, &base, &new) {
            Ok(lines) => assert!(!lines.is_empty(), "the header at least"),
            Err(e) => assert!(!(sched(&base) && sched(&new)), "{}", e.0),
        }
    }
    for by in [diff::By::Name, diff::By::Stack] {
        for range in [None, Some("1us..".to_string())] {
            let a = args(diff::Metric::SelfTime, by, range);
            match diff::compare_csv(&a, &base, &new) {
                Ok(lines) => assert!(!lines.is_empty(), "the header at least"),
                Err(e) => assert!(!comparable, "only traces that do not compare fail: {}", e.0),
            }
        }
    }
});
