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

/// A system trace as tracefs text: `frames` frames of 16 ms in which the app's main
/// thread (process `pid`) runs about 2 ms on CPU 0, its RenderThread about `render_us` on
/// CPU 1 and a binder thread of system_server 300 µs after it; each slice jittered by up
/// to ±10% (a fixed pseudo-random sequence from `seed`).
fn sched_text(pid: u32, render_us: u64, seed: u64) -> String {
    let mut x = seed;
    let mut jitter = |us: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        us * (90 + (x >> 33) % 21) / 100
    };
    let mut lines = vec!["# tracer: nop".to_string(), "#".into()];
    let mut sw = |us: u64, cpu: u32, prev: (&str, u32, u32), state: &str, next: (&str, u32)| {
        let (secs, micros) = (us / 1_000_000, us % 1_000_000);
        lines.push(format!(
            "{:>16}-{:<5} ({:>5}) [{cpu:03}] d..2 {secs}.{micros:06}: sched_switch: prev_comm={} \
             prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} \
             next_prio=120",
            prev.0, prev.1, prev.2, prev.0, prev.1, next.0, next.1
        ));
    };
    let (main, render, binder) = (
        ("app", pid, pid),
        ("RenderThread", pid + 1, pid),
        ("binder:7_2", 9, 7),
    );
    for f in 0..40u64 {
        let t0 = 1_000_000 + f * 16_000;
        let m = jitter(2000);
        sw(t0, 0, ("swapper/0", 0, 0), "R", ("app", pid));
        sw(t0 + m, 0, main, "S", ("swapper/0", 0));
        let r0 = t0 + 500;
        let r = jitter(render_us);
        sw(r0, 1, ("swapper/1", 0, 0), "R", ("RenderThread", pid + 1));
        sw(r0 + r, 1, render, "S", ("binder:7_2", 9));
        sw(r0 + r + jitter(300), 1, binder, "S", ("swapper/1", 0));
    }
    lines.join("\n") + "\n"
}

#[test]
fn diff_compares_cpu_time_per_thread() {
    let dir = spall_test_support::scratch_dir("cpu-diff");
    // The app's pid differs between the runs: threads match by process and thread name.
    let base = crate::common::write(&dir, "base.trace", &sched_text(100, 2000, 1));
    let new = crate::common::write(&dir, "new.trace", &sched_text(300, 3000, 2));
    let o = crate::common::run(&["diff", &base, &new, "--metric", "cpu", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<(&str, &str)> = (v["threads"].as_array().unwrap().iter())
        .map(|r| (r["name"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rows,
        [
            ("app/RenderThread", "regressed"),
            ("app/app", "unchanged"),
            ("7/binder:7_2", "unchanged"),
        ]
    );
    let render = &v["threads"][0];
    assert_eq!(render["base"]["count"], 40);
    let (b, n) = (
        render["base"]["total_ns"].as_i64().unwrap(),
        render["new"]["total_ns"].as_i64().unwrap(),
    );
    assert!(
        b > 70_000_000 && b < 90_000_000 && n > 110_000_000,
        "{b} {n}"
    );
    assert!(render["p_value"].as_f64().unwrap() < 0.05);
    // The same traces against themselves: nothing changed, exit 0; CSV and Markdown too.
    let same = run(&["diff", &base, &base, "--metric", "cpu", "--format", "csv"]);
    assert!(
        same.lines()
            .nth(1)
            .unwrap()
            .starts_with("app/RenderThread,unchanged,40,40,"),
        "{same}"
    );
    let md = String::from_utf8(
        crate::common::run(&[
            "diff", &base, &new, "--metric", "cpu", "--format", "markdown",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        md.contains("| thread | base | new |") && md.contains("`app/RenderThread`"),
        "{md}"
    );
    // --range clips the slices: the first frame only.
    let v: Value = serde_json::from_str(&run(&[
        "diff", &base, &base, "--metric", "cpu", "--format", "json", "--range", "0..16ms",
        "--filter", "Render",
    ]))
    .unwrap();
    assert_eq!(v["threads"].as_array().unwrap().len(), 1);
    assert_eq!(v["threads"][0]["base"]["count"], 1);
}

#[test]
fn cpu_time_needs_scheduling_data_on_both_sides() {
    let dir = spall_test_support::scratch_dir("cpu-mix");
    let sys = crate::common::write(&dir, "sys.trace", &sched_text(100, 2000, 1));
    let spans = fixture("edge/simple.json");
    for (a, b, says) in [
        (
            &sys,
            &spans,
            "BASE is a system trace and NEW has no scheduling data",
        ),
        (
            &spans,
            &sys,
            "NEW is a system trace and BASE has no scheduling data",
        ),
        (&spans, &spans, "neither BASE nor NEW"),
    ] {
        let o = crate::common::run(&["diff", a, b, "--metric", "cpu"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn check_limits_a_threads_cpu_time() {
    let dir = spall_test_support::scratch_dir("cpu-check");
    let base = crate::common::write(&dir, "base.trace", &sched_text(100, 2000, 1));
    let new = crate::common::write(&dir, "new.trace", &sched_text(300, 3000, 2));
    let budget = crate::common::write(
        &dir,
        "budget.toml",
        "[[budget]]\nthread = \"RenderThread\"\ncpu = \"100ms\"\n\n[[budget]]\ncpu = \"400ms\"\n",
    );
    let v: Value = serde_json::from_str(&run(&[
        "check", &base, "--budget", &budget, "--format", "json",
    ]))
    .unwrap();
    assert_eq!(
        (v["kept"].as_u64(), v["broken"].as_u64()),
        (Some(2), Some(0)),
        "{v}"
    );
    assert_eq!(v["checks"][0]["budget"], "CPU time on RenderThread");
    let o = crate::common::run(&[
        "check",
        &new,
        "--budget",
        &budget,
        "--baseline",
        &base,
        "--max-regression",
        "10%",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let broken: Vec<(&str, &str)> = (v["checks"].as_array().unwrap().iter())
        .filter(|c| c["status"] == "broken")
        .map(|c| {
            (
                c["budget"].as_str().unwrap(),
                c["against"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        broken,
        [
            ("CPU time on RenderThread", "budget"),
            ("CPU time on RenderThread", "baseline"),
            ("CPU time", "baseline"),
        ]
    );
    // A trace of spans has no CPU time to check; cpu with a name is refused.
    let spans = fixture("edge/simple.json");
    let o = crate::common::run(&["check", &spans, "--budget", &budget]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no scheduling data"));
    let bad = crate::common::write(
        &dir,
        "bad.toml",
        "[[budget]]\nname = \"x\"\ncpu = \"1ms\"\n",
    );
    let o = crate::common::run(&["check", &base, "--budget", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not `name` or `match`"));
}
