//! `info` and `stats` on a system trace say what it holds: CPUs, scheduling slices,
//! thread states, and each thread's CPU time (trace_processor's `sched` totals for the
//! same file: tests/fixtures/sql-parity/expected/systrace_events.json).

use serde_json::Value;

use crate::common::{fixture, run_ok};

/// `spall-cli ARGS`'s standard output (it must succeed).
fn run(args: &[&str]) -> String {
    String::from_utf8(run_ok(args).stdout).unwrap()
}

/// The generated system trace with every ftrace event.
fn events() -> String {
    fixture("systrace/events.pftrace.gz")
}

#[test]
fn info_counts_cpus_slices_and_cpu_time() {
    let v: Value = serde_json::from_str(&run(&["info", &events(), "--format", "json"])).unwrap();
    let s = &v["sched"];
    assert_eq!(s["cpus"], serde_json::json!([0, 1]));
    assert_eq!(
        (s["slices"].as_u64(), s["thread_states"].as_u64()),
        (Some(10), Some(17))
    );
    // The binder thread still runs at the end: its last slice counts to the trace's end.
    let busiest = &s["cpu_time"][0];
    assert_eq!(
        (busiest["tid"].as_str(), busiest["cpu_ns"].as_i64()),
        (Some("201"), Some(6100))
    );
    assert_eq!(busiest["slices"], 2);
    let app = &s["cpu_time"][1];
    assert_eq!(
        (app["tid"].as_str(), app["cpu_ns"].as_i64()),
        (Some("100"), Some(5000))
    );
    let table = run(&["info", &events()]);
    assert!(table.contains("2 CPUs, 10 scheduling slices"), "{table}");
    // Not a system trace: no scheduling.
    let json = spall_test_support::fixture("edge/bex-interaction.json");
    let v: Value = serde_json::from_str(&run(&[
        "info",
        &json.display().to_string(),
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(v["sched"], Value::Null);
}

#[test]
fn stats_adds_cpu_time_per_thread() {
    let v: Value = serde_json::from_str(&run(&["stats", &events(), "--format", "json"])).unwrap();
    let rows: Vec<(String, i64)> = (v["cpu_time"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["cpu_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("binder:200_1".to_string(), 6100),
            ("app".into(), 5000),
            ("RenderThread".into(), 1000),
            ("pool-1".into(), 1000),
        ]
    );
    let table = run(&["stats", &events()]);
    assert!(table.contains("CPU time per thread"), "{table}");
}
