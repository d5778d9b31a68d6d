//! spall-cli end to end: every subcommand and exit code, on real fixtures.

use crate::common::{fixture, piped, run, SPALL_CLI};

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn ok_json(args: &[&str]) -> Value {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A failure: exit code 2, a one-line-ish message on stderr, never a panic or backtrace.
fn assert_clean_failure(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[test]
fn info_json_is_the_documented_contract() {
    let v = ok_json(&["info", &fixture("spall/crux_v1.spall"), "--format", "json"]);
    assert_eq!(v["format"], "spall-v1");
    assert_eq!(v["spans"], 21449);
    assert_eq!(v["threads"], 1);
    assert_eq!(v["processes"], 1);
    assert_eq!(v["instants"], 0);
    assert_eq!(v["counter_samples"], 0);
    assert_eq!(v["flows"], 0);
    assert_eq!(v["diagnostics"]["unclosed_begin"], 3);
    assert_eq!(
        v["duration_ns"].as_i64().unwrap(),
        v["end_ns"].as_i64().unwrap() - v["start_ns"].as_i64().unwrap()
    );
    for k in [
        "spans",
        "instants",
        "counter_samples",
        "flows",
        "flow_links",
        "async_slices",
        "cpu_samples",
        "processes",
        "threads",
        "start_ns",
        "end_ns",
        "duration_ns",
        "max_depth",
        "load_ms",
        "index_ms",
        "index_bytes",
    ] {
        assert!(
            v[k].is_i64() || v[k].is_u64(),
            "{k} must be an integer: {}",
            v[k]
        );
    }
    let v = ok_json(&[
        "info",
        &fixture("spall/odingengine_v3.spall"),
        "--format",
        "json",
    ]);
    assert_eq!(v["format"], "spall-v3");
    assert_eq!(v["spans"], 91542);
    assert_eq!(v["max_depth"], 1);
    let v = ok_json(&[
        "info",
        &fixture("real/catapult_simple_trace.json"),
        "--format",
        "json",
    ]);
    assert_eq!(v["format"], "json");
    assert_eq!(v["counter_samples"], 5);
    // Its three `P` events are CPU samples, no longer unmodelled.
    assert_eq!(v["cpu_samples"], 3);
    assert!(v["diagnostics"]["unmodelled_phase_P"].is_null());
}

#[test]
fn info_table_is_readable() {
    let o = run(&["info", &fixture("real/bazel_profile_with_queuing.json.gz")]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("json, gzip"), "{out}");
    assert!(out.contains("spans            12778"), "{out}");
}

#[test]
fn stats_json_values() {
    // edge/simple.json: alpha [0,14] > beta [1,13] > gamma [2,7] + epsilon [7,7].
    let v = ok_json(&[
        "stats",
        &fixture("edge/simple.json"),
        "--format",
        "json",
        "--sort",
        "name",
    ]);
    let f = v["functions"].as_array().unwrap();
    let names: Vec<&str> = f.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["alpha", "beta", "epsilon", "gamma"]);
    assert_eq!(f[0]["total_ns"], 14000);
    assert_eq!(f[0]["self_ns"], 2000);
    assert_eq!(f[1]["self_ns"], 7000);
    for k in [
        "count", "total_ns", "self_ns", "min_ns", "max_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns",
    ] {
        assert!(f[0][k].is_i64() || f[0][k].is_u64(), "{k}");
    }
}

#[test]
fn stats_sort_top_filter_thread_range() {
    let file = fixture("real/clang/blender-mac-clang14_obj_export_file_writer.json");
    let v = ok_json(&[
        "stats", &file, "--format", "json", "--sort", "count", "--top", "3",
    ]);
    let f = v["functions"].as_array().unwrap();
    assert_eq!(f.len(), 3);
    assert!(f[0]["count"].as_u64() >= f[1]["count"].as_u64());
    let v = ok_json(&["stats", &file, "--format", "json", "--filter", "^Parse"]);
    assert!(v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["name"].as_str().unwrap().starts_with("Parse")));
    let whole = ok_json(&[
        "stats", &file, "--format", "json", "--sort", "total", "--top", "1",
    ]);
    let part = ok_json(&[
        "stats", &file, "--format", "json", "--sort", "total", "--top", "1", "--range", "0..1ms",
    ]);
    assert!(part["functions"][0]["total_ns"].as_i64() <= Some(1_000_000));
    assert!(whole["functions"][0]["total_ns"].as_i64() > Some(1_000_000));
    // An unknown thread lists the real ones; the first of them narrows the stats.
    let first = {
        let o = run(&["stats", &file, "--thread", "1:999999"]);
        assert_clean_failure(&o, "no such thread");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        err.split("the trace has ")
            .nth(1)
            .unwrap()
            .split([',', ' '])
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    let all = ok_json(&["stats", &file, "--format", "json"]);
    let one = ok_json(&["stats", &file, "--format", "json", "--thread", &first]);
    let total = |v: &Value| -> i64 {
        v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["total_ns"].as_i64().unwrap())
            .sum()
    };
    assert!(total(&one) > 0 && total(&one) < total(&all));
}

#[test]
fn stats_csv_and_table() {
    let o = run(&[
        "stats",
        &fixture("edge/simple.json"),
        "--format",
        "csv",
        "--sort",
        "name",
    ]);
    let out = String::from_utf8(o.stdout).unwrap();
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("name,count,total_ns,self_ns,min_ns,max_ns,mean_ns,p50_ns,p90_ns,p99_ns")
    );
    assert_eq!(
        lines.next(),
        Some("alpha,1,14000,2000,14000,14000,14000,14000,14000,14000")
    );
    let o = run(&["stats", &fixture("edge/simple.json")]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.lines().next().unwrap().contains("self"));
    assert!(out.contains("14.000 us"));
}

#[test]
fn same_trace_in_three_formats_gives_identical_stats() {
    use spall_format::synth::Synth;
    let s = Synth {
        seed: 9,
        spans: 20_000,
        exotic_names: true,
        ..Synth::default()
    };
    let (j, v1, v3) = (tmp("same.json"), tmp("same_v1.spall"), tmp("same_v3.spall"));
    s.write_json(std::fs::File::create(&j).unwrap(), true)
        .unwrap();
    s.write_spall_v1(std::fs::File::create(&v1).unwrap())
        .unwrap();
    s.write_spall(std::fs::File::create(&v3).unwrap()).unwrap();
    let out = |p: &PathBuf| {
        let o = run(&["stats", p.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0));
        o.stdout
    };
    let a = out(&j);
    assert_eq!(a, out(&v1));
    assert_eq!(a, out(&v3));
    let v: Value = serde_json::from_slice(&a).unwrap();
    assert!(v["functions"].as_array().unwrap().len() > 100);
}

#[test]
fn validate_exit_codes() {
    let clean = fixture("real/catapult_traceviewify.json");
    let o = run(&["validate", &clean]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("clean"));
    assert_eq!(
        run(&["validate", "--strict", &clean]).status.code(),
        Some(0)
    );
    let dirty = fixture("edge/too-many-end-events.json");
    let o = run(&["validate", &dirty]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("end_without_begin"));
    assert_eq!(
        run(&["validate", "--strict", &dirty]).status.code(),
        Some(1)
    );
    let v = ok_json(&["validate", &dirty, "--format", "json"]);
    assert_eq!(v["clean"], false);
    assert_eq!(v["diagnostics"]["end_without_begin"], 2);
    assert!(v["examples"][0]["offset"].is_u64());
}

#[test]
fn convert_spall_to_json_and_back_keeps_the_spans() {
    let src = fixture("spall/odingengine_v3.spall");
    let json = tmp("oding.json");
    let o = run(&["convert", &src, json.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Valid JSON that a strict parser reads, in Chrome trace format.
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 2 * 91542);
    let back = tmp("oding.spall");
    let o = run(&["convert", json.to_str().unwrap(), back.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let stats = |p: &str| run(&["stats", p, "--format", "json"]).stdout;
    assert_eq!(stats(&src), stats(json.to_str().unwrap()));
    assert_eq!(stats(&src), stats(back.to_str().unwrap()));
}

#[test]
fn convert_reports_what_spall_cannot_hold() {
    let gz = tmp("chrome.json.gz");
    let o = run(&[
        "convert",
        &fixture("real/chrome116_devtools_export.json"),
        gz.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let spall = tmp("chrome.spall");
    let o = run(&["convert", gz.to_str().unwrap(), spall.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("109 instants"), "{err}");
    assert!(err.contains("1 process- or global-scoped instant"), "{err}");
    assert!(err.contains("468 async events"), "{err}");
    assert!(err.contains("13 flows"), "{err}");
    let v = ok_json(&["info", spall.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["spans"], 2456);
    assert_eq!(v["instants"], 109, "thread instants survive the conversion");
    assert_eq!(v["format"], "spall-v3");
}

#[test]
fn bad_input_and_usage_exit_2_with_a_message() {
    assert_clean_failure(&run(&["info", "/definitely/not/here.json"]), "cannot read");
    let dir = tmp("");
    assert_clean_failure(&run(&["info", dir.to_str().unwrap()]), "directory");
    let junk = tmp("junk.json");
    std::fs::write(&junk, "this is not a trace").unwrap();
    assert_clean_failure(&run(&["info", junk.to_str().unwrap()]), "not a trace");
    let empty = tmp("empty.json");
    std::fs::write(&empty, "").unwrap();
    assert_clean_failure(&run(&["stats", empty.to_str().unwrap()]), "empty");
    let f = fixture("edge/simple.json");
    assert_clean_failure(&run(&["stats", &f, "--range", "10..20"]), "needs a unit");
    assert_clean_failure(&run(&["stats", &f, "--filter", "("]), "--filter");
    assert_clean_failure(&run(&["stats", &f, "--thread", "7"]), "PID:TID");
    assert_clean_failure(
        &run(&["convert", &f, tmp("out.txt").to_str().unwrap()]),
        "extension",
    );
    let o = run(&["stats", &f, "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn gzip_bombs_stop_at_the_limit_given() {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&vec![b' '; 32 << 20]).unwrap();
    let bomb = tmp("bomb.json.gz");
    std::fs::write(&bomb, e.finish().unwrap()).unwrap();
    let o = run(&["info", bomb.to_str().unwrap(), "--max-decompressed", "4M"]);
    assert_clean_failure(&o, "--max-decompressed");
    // Under the default limit the same file is merely empty JSON: a clean "empty" error.
    assert_clean_failure(&run(&["info", bomb.to_str().unwrap()]), "empty");
    assert_eq!(
        run(&["info", "x", "--max-decompressed", "lots"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn help_has_examples() {
    for cmd in ["info", "stats", "validate", "convert"] {
        let o = run(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("Examples:"),
            "{cmd}"
        );
    }
}

/// Loading decodes in parallel; the statistics must not depend on the number of threads.
#[test]
fn stats_are_identical_with_one_thread_and_many() {
    use spall_format::synth::Synth;
    let synth = Synth {
        spans: 120_000,
        exotic_names: true,
        ..Synth::default()
    };
    let json = tmp("threads.json");
    synth
        .write_json(std::fs::File::create(&json).unwrap(), true)
        .unwrap();
    let spall = tmp("threads.spall");
    Synth {
        spans: 500_000,
        ..synth
    }
    .write_spall(std::fs::File::create(&spall).unwrap())
    .unwrap();
    for f in [&json, &spall] {
        assert!(std::fs::metadata(f).unwrap().len() > 3 * spall_format::CHUNK_BYTES as u64);
        let stats = |threads: &str| {
            let o = Command::new(SPALL_CLI)
                .args(["stats", f.to_str().unwrap(), "--format", "json"])
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        let one = stats("1");
        assert!(one.len() > 10_000, "{}", f.display());
        assert_eq!(one, stats("4"), "{}", f.display());
        assert_eq!(one, stats("2"), "{}", f.display());
    }
    std::fs::remove_file(&json).ok();
    std::fs::remove_file(&spall).ok();
}

#[test]
fn max_memory_refuses_a_load_with_the_estimate_and_the_limit() {
    for f in [
        "real/chrome116_devtools_export.json",
        "spall/odingengine_v3.spall",
    ] {
        let t = fixture(f);
        let o = run(&["stats", &t, "--max-memory", "1M"]);
        assert_clean_failure(&o, "not enough memory");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("1.0 MB, the limit given with --max-memory"),
            "{err}"
        );
        assert!(err.contains("spans"), "{err}");
        // `off` (and a limit that fits) load it.
        assert!(run(&["info", &t, "--max-memory", "off"]).status.success());
        assert!(run(&["info", &t, "--max-memory", "1G"]).status.success());
    }
    let o = run(&["info", &fixture("edge/simple.json"), "--max-memory", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`off`"));
}

#[test]
fn query_prints_tables_json_and_csv_and_reports_sql_errors() {
    let t = fixture("real/chrome116_devtools_export.json");
    let sql = "SELECT name, COUNT(*) AS n FROM slice GROUP BY name ORDER BY n DESC, name LIMIT 3";
    let v = ok_json(&["query", &t, sql, "--format", "json"]);
    assert_eq!(v["columns"], serde_json::json!(["name", "n"]));
    assert_eq!(v["rows"][0], serde_json::json!(["RunTask", 976]));
    let csv = run(&["query", &t, sql, "--format", "csv"]);
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(text.lines().next(), Some("name,n"));
    assert_eq!(text.lines().nth(1), Some("RunTask,976"));
    let table = String::from_utf8_lossy(&run(&["query", &t, sql]).stdout).into_owned();
    assert!(
        table.contains("RunTask") && table.contains("(3 rows)"),
        "{table}"
    );
    // The same count as stats.
    let stats = ok_json(&["stats", &t, "--format", "json", "--filter", "^RunTask$"]);
    assert_eq!(stats["functions"][0]["count"], 976);
    // A script file, several statements.
    let f = tmp("report.sql");
    std::fs::write(
        &f,
        "SELECT COUNT(*) FROM thread;\nSELECT COUNT(*) FROM process;",
    )
    .unwrap();
    let o = run(&["query", &t, "-f", f.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 4);
    // Errors: exit 2, the query and a caret at the position.
    let o = run(&["query", &t, "SELECT 1;\nSELECT nme FROM slice"]);
    assert_clean_failure(&o, "no such column: nme");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 2, column 8"), "{err}");
    assert!(err.contains("SELECT nme FROM slice\n         ^"), "{err}");
}

#[test]
fn a_reader_that_leaves_early_is_not_an_error() {
    // `spall-cli ... | head -1`: the pipe closes while output is still being written.
    let trace = fixture("real/pytorch_kineto_trace_diff_test.json.gz");
    for args in [
        vec!["stats", trace.as_str()],
        vec!["flame", trace.as_str()],
        vec![
            "query",
            "--format",
            "csv",
            trace.as_str(),
            "select * from slice",
        ],
    ] {
        let mut child = Command::new(SPALL_CLI)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn markers_from_the_viewer_settings_then_from_the_shared_sidecar() {
    let dir = tmp("markers");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("config")).unwrap();
    let trace = dir.join("t.json");
    std::fs::copy(fixture("edge/matching-x.json"), &trace).unwrap();
    let key = std::fs::canonicalize(&trace).unwrap();
    // What the viewer writes when a user adds markers (N) and marks a range (M).
    let settings = serde_json::json!({
        "version": 1,
        "recent": [key],
        "views": { key.to_str().unwrap(): {
            "view": [0, 10],
            "markers": [{"at_ns": 1500, "note": "GC, \"again\""}, {"at_ns": 20, "note": ""}],
            "range": [10, 2000]
        }}
    });
    std::fs::write(dir.join("config/settings.json"), settings.to_string()).unwrap();
    let markers = |config: &str, extra: &[&str]| {
        let mut c = Command::new(SPALL_CLI);
        c.env("SPALL_CONFIG_DIR", dir.join(config));
        c.args(["markers", "--format", "json", trace.to_str().unwrap()]);
        let o = c.args(extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let v = markers("config", &["--save"]);
    assert_eq!(
        v["markers"][0],
        serde_json::json!({"at_ns": 20, "note": ""})
    );
    assert_eq!(v["markers"][1]["note"], "GC, \"again\"");
    assert_eq!(v["range"], serde_json::json!([10, 2000]));
    assert!(v["source"].as_str().unwrap().ends_with("settings.json"));
    // A teammate has no settings for the file, but the sidecar saved beside it.
    let sidecar = dir.join("t.json.markers.json");
    assert!(sidecar.exists());
    let w = markers("elsewhere", &[]);
    assert_eq!(w["markers"], v["markers"]);
    assert_eq!(w["range"], v["range"]);
    assert_eq!(w["source"], sidecar.to_str().unwrap());
    // Neither: an empty list, and --save refuses to write an empty file.
    std::fs::remove_file(&sidecar).unwrap();
    assert_eq!(markers("elsewhere", &[])["markers"], serde_json::json!([]));
    let o = Command::new(SPALL_CLI)
        .env("SPALL_CONFIG_DIR", dir.join("elsewhere"))
        .args(["markers", "--save", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no markers to save"));
    assert!(!sidecar.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_trace_from_standard_input() {
    // A gzipped real trace piped in (`curl ... | spall-cli info -`): what the file gives.
    let path = fixture("real/chromium148_startup.pftrace.gz");
    let bytes = std::fs::read(&path).unwrap();
    let want = ok_json(&["info", path.as_str(), "--format", "json"]);
    let o = piped(&["info", "-", "--format", "json"], &bytes);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(got["spans"].as_u64() > Some(10_000), "{got}");
    assert_eq!(got, {
        let mut w = want.clone();
        for k in ["file", "load_ms", "index_ms"] {
            if let (Some(w), Some(g)) = (w.get_mut(k), got.get(k)) {
                *w = g.clone();
            }
        }
        w
    });
    // SQL on a piped trace.
    let o = piped(
        &[
            "query",
            "-",
            "SELECT COUNT(*) AS n FROM slice",
            "--format",
            "csv",
        ],
        &bytes,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("n\n"));
    // Nothing piped in: an error that names standard input.
    let o = piped(&["info", "-"], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("standard input"), "{err}");
    // The trace and its SQL cannot both come from standard input.
    let o = piped(&["query", "-"], &bytes);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the trace comes from standard input"), "{err}");
    // Export hashes each trace's file: it says to save standard input first.
    let out = tmp("export-stdin");
    let o = piped(&["export", "-", out.to_str().unwrap()], &bytes);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("save standard input to a file"), "{err}");
}
