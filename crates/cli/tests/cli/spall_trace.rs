//! A program instrumented with `spall-trace` (threads, nested spans, a panic inside a span,
//! a pool thread still running when the session ends) loads in `spall-cli` with exactly
//! the spans it recorded, and durations consistent with `Instant` measured around them.
//!
//! The session is process-wide: no other test of this binary records.

use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::SPALL_CLI;

fn cli(args: &[&str]) -> Value {
    let out = Command::new(SPALL_CLI)
        .args(args)
        .output()
        .expect("spall-cli runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn instrumented_program_loads_with_exact_spans() {
    let dir = std::env::temp_dir().join(format!("spall-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("t.spall");
    // Small buffers, so threads write several buffers each.
    let guard = spall_trace::Builder::new(&path)
        .buffer_size(4096)
        .process_name("under test")
        .start()
        .unwrap();
    spall_trace::name_thread("main thread");

    let workers: Vec<_> = (0..2)
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("worker {i}"))
                .spawn(move || {
                    for n in 0..50 {
                        let _f = spall_trace::span_with("frame", format_args!("n={n} of {i}"));
                        let _u = spall_trace::span("update");
                        let _l = spall_trace::span("leaf");
                        spall_trace::instant("tick");
                    }
                })
                .unwrap()
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }

    // A panic inside nested spans closes both.
    let panicked = std::thread::spawn(|| {
        let _o = spall_trace::span("outer");
        let _d = spall_trace::span("doomed");
        std::panic::resume_unwind(Box::new("expected by the test"));
    })
    .join();
    assert!(panicked.is_err());

    // A pool thread that is still alive (and idle) when the session ends.
    let (go, wait) = mpsc::channel::<()>();
    let (done, recorded) = mpsc::channel::<()>();
    let pool = std::thread::Builder::new()
        .name("pool".into())
        .spawn(move || {
            for _ in 0..5 {
                let _t = spall_trace::span("pool task");
            }
            done.send(()).unwrap();
            wait.recv().unwrap();
        })
        .unwrap();
    recorded.recv().unwrap();

    let before = Instant::now();
    let inner;
    {
        let _s = spall_trace::span("timed");
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        inner = t.elapsed();
    }
    let outer = before.elapsed();

    let report = guard.finish().unwrap();
    go.send(()).unwrap();
    pool.join().unwrap();
    assert_eq!(report.threads, 5);
    assert!(report.buffers > 5, "{report:?}");

    let p = path.to_str().unwrap();
    let info = cli(&["info", "--format", "json", p]);
    assert_eq!(info["diagnostics"], serde_json::json!({}), "{info}");
    assert_eq!(info["spans"], 100 * 3 + 2 + 5 + 1, "{info}");
    assert_eq!(info["instants"], 100);
    assert_eq!(info["max_depth"], 3);
    assert_eq!(info["threads"], 5);
    assert_eq!(info["processes"], 1);

    let stats = cli(&["stats", "--format", "json", p]);
    let by_name = |name: &str| {
        stats["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing from {stats}"))
            .clone()
    };
    for (name, count) in [
        ("frame", 100),
        ("update", 100),
        ("leaf", 100),
        ("outer", 1),
        ("doomed", 1),
        ("pool task", 5),
        ("timed", 1),
    ] {
        assert_eq!(by_name(name)["count"], count, "{name}");
    }
    // The span's duration lies between what `Instant` measured inside and around it
    // (with 0.5% for the counter's calibration).
    let timed = by_name("timed")["total_ns"].as_f64().unwrap();
    let (lo, hi) = (inner.as_nanos() as f64, outer.as_nanos() as f64);
    assert!(
        timed >= lo * 0.995 && timed <= hi * 1.005,
        "timed {timed} ns, Instant inside {lo} ns, around {hi} ns"
    );

    let threads = cli(&[
        "query",
        "--format",
        "json",
        p,
        // The trace's own threads (`thread` also holds the process's main thread, as
        // trace_processor's does).
        "select name from thread where utid in (select utid from thread_track) order by name",
    ]);
    let names: Vec<&str> = threads["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["", "main thread", "pool", "worker 0", "worker 1"]);
    let process = cli(&["query", "--format", "json", p, "select name from process"]);
    assert_eq!(process["rows"][0][0], "under test", "{process}");
    std::fs::remove_dir_all(&dir).unwrap();
}
