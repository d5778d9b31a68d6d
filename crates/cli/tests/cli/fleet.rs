//! The dataset `spall-cli export` writes, queried by the engines docs/FLEET.md names:
//! DuckDB (Python package) and Apache Spark (pyspark, `local[2]`, one JVM). Over corpus
//! traces, per trace and name, the count, SUM(dur) and SUM(self_dur) equal `spall-cli
//! stats`; over a series of generated runs with a known regression, docs/FLEET.md's p90
//! question gives the same answer in both engines and finds the regression.
//!
//! Spark is skipped (saying so) when pyspark or Java is missing, unless
//! `SPALL_REQUIRE_SPARK` is set (`.ci/run` installs both and sets it); DuckDB likewise with
//! `SPALL_REQUIRE_DUCKDB`.

use crate::common::{doc, fixture, python, spall_json};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Runs of the generated series; from this one on, `decode_frame` is 1.5x slower.
const RUNS: usize = 16;
const REGRESSED_FROM: usize = 10;

/// One run of the series: 300 frames, each a `decode_frame` then a `draw`, durations
/// varying from frame to frame (a fixed pseudo-random sequence per run).
fn write_run(dir: &Path, run: usize) -> PathBuf {
    let mut x: u64 = 0x9e37_79b9 + run as u64;
    let mut rand = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let slow = if run >= REGRESSED_FROM { 3 } else { 2 };
    let mut events = Vec::new();
    let mut ts = 0;
    for _ in 0..300 {
        let decode = (1000 + rand(600)) * slow / 2;
        let draw = 500 + rand(300);
        let frame = decode + draw + 50;
        events.push(format!(
            r#"{{"name":"frame","ph":"X","ts":{ts},"dur":{frame},"pid":1,"tid":1}}"#
        ));
        events.push(format!(
            r#"{{"name":"decode_frame","ph":"X","ts":{},"dur":{decode},"pid":1,"tid":1}}"#,
            ts + 10
        ));
        events.push(format!(
            r#"{{"name":"draw","ph":"X","ts":{},"dur":{draw},"pid":1,"tid":1}}"#,
            ts + 20 + decode
        ));
        ts += frame + 100;
    }
    let p = dir.join(format!("run-{run:02}.json"));
    std::fs::write(&p, format!("[{}]", events.join(",\n"))).unwrap();
    p
}

/// docs/FLEET.md's p90 question: the ```sql block after the line `<!-- test: p90 -->`.
fn p90_sql() -> String {
    let doc = doc("FLEET.md");
    let rest = doc
        .split_once("<!-- test: p90 -->")
        .expect("docs/FLEET.md marks its p90 query")
        .1;
    let block = rest.split_once("```sql\n").unwrap().1;
    block.split_once("```").unwrap().0.to_string()
}

/// Whether `engine` can run here; `None` after saying why not, a failure under `require`.
fn available(engine: &str, import: &str, require: &str) -> Option<()> {
    let py = python()?;
    let ok = Command::new(py)
        .args(["-c", &format!("import {import}")])
        .output()
        .is_ok_and(|o| o.status.success());
    let java = engine != "spark"
        || Command::new("java")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success());
    spall_test_support::available(
        ok && java,
        require,
        &format!("{engine} cannot run (pip install {import}; Spark needs Java 17)"),
    )
    .then_some(())
}

fn ask(engine: &str, data: &Path, p90: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fleet_engines.py");
    let o = Command::new("python3")
        .arg(&script)
        .args([engine, data.to_str().unwrap(), p90])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    eprintln!("{engine}: {}", v["seconds"]);
    v
}

/// `spall-cli stats` per (trace, name): [count, total, self].
fn stats(traces: &[String]) -> BTreeMap<(String, String), [i64; 3]> {
    let mut out = BTreeMap::new();
    for t in traces {
        let s = spall_json(&["stats", t, "--format", "json"]);
        for f in s["functions"].as_array().unwrap() {
            let key = (t.clone(), f["name"].as_str().unwrap().to_string());
            let v = [&f["count"], &f["total_ns"], &f["self_ns"]].map(|v| v.as_i64().unwrap());
            out.insert(key, v);
        }
    }
    out
}

fn engine_stats(v: &Value) -> BTreeMap<(String, String), [i64; 3]> {
    let rows = v["stats"].as_array().unwrap();
    rows.iter()
        .map(|r| {
            let key = (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into());
            (key, [2, 3, 4].map(|i| r[i].as_i64().unwrap()))
        })
        .collect()
}

/// [(trace, p90)] in trace order.
fn engine_p90(v: &Value) -> Vec<(String, f64)> {
    let rows = v["p90"].as_array().unwrap();
    rows.iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_f64().unwrap()))
        .collect()
}

#[test]
fn spark_and_duckdb_answer_as_stats_and_find_the_regression() {
    let duck = available("duckdb", "duckdb", "SPALL_REQUIRE_DUCKDB");
    let spark = available("spark", "pyspark", "SPALL_REQUIRE_SPARK");
    if duck.is_none() && spark.is_none() {
        return;
    }
    let out = std::env::temp_dir().join(format!("spall-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let corpus = [
        fixture("real/demo_lthi_excerpt.json"),
        fixture("spall/odingengine_v3.spall"),
        fixture("real/chrome116_devtools_export.json"),
        fixture("real/catapult_traceviewify.json"),
        fixture("real/clang/blender-mac-clang14_obj_export_file_writer.json"),
    ];
    let runs: Vec<String> = (0..RUNS)
        .map(|r| write_run(&out, r).display().to_string())
        .collect();
    let data = out.join("data");
    let mut args = vec!["export", "--jobs", "2"];
    args.extend(corpus.iter().map(String::as_str));
    args.extend(runs.iter().map(String::as_str));
    args.push(data.to_str().unwrap());
    spall_json(&args);
    let mut want = stats(&corpus);
    want.extend(stats(&runs[..2]));
    let p90 = p90_sql();
    let mut answers = Vec::new();
    for (engine, ok) in [("duckdb", duck), ("spark", spark)] {
        if ok.is_none() {
            continue;
        }
        let v = ask(engine, &data, &p90);
        let got = engine_stats(&v);
        for (key, w) in &want {
            assert_eq!(
                got.get(key),
                Some(w),
                "{engine}: {key:?}: count, total, self"
            );
        }
        assert_eq!(got.len(), want.len() + (RUNS - 2) * 3, "{engine}: groups");
        let p = engine_p90(&v);
        assert_eq!(p.len(), RUNS, "{engine}: one p90 per run");
        let before = p[..REGRESSED_FROM].iter().map(|r| r.1).fold(0.0, f64::max);
        for (i, (trace, v)) in p.iter().enumerate() {
            assert_eq!(trace, &runs[i], "{engine}: runs in order");
            let regressed = *v > before * 1.3;
            assert_eq!(regressed, i >= REGRESSED_FROM, "{engine}: run {i}: p90 {v}");
        }
        answers.push((engine, p));
    }
    // The same question, the same answer, engine to engine.
    if let [(a, pa), (b, pb)] = &answers[..] {
        for ((ta, va), (tb, vb)) in pa.iter().zip(pb) {
            assert_eq!(ta, tb);
            assert!((va - vb).abs() < 1e-6, "{ta}: {a} {va} vs {b} {vb}");
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}
