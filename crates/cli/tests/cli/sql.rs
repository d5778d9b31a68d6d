//! `spall-cli query` against what the file says, computed by an independent Python script
//! (`sql_reference.py`): thread and process names from metadata, counter samples and sums,
//! and every argument leaf of the spans.

use crate::common::{fixture, python, SPALL_CLI};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn query(trace: &str, sql: &str) -> Vec<Vec<Value>> {
    let o = Command::new(SPALL_CLI)
        .args(["query", trace, sql, "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    serde_json::from_value(v["rows"].clone()).unwrap()
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn names_counters_and_args_match_the_file() {
    let Some(py) = python() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql_reference.py");
    for rel in [
        "real/demo_lthi_excerpt.json",
        "real/chrome116_devtools_export.json",
    ] {
        let trace = fixture(rel);
        let out = Command::new(py).arg(&script).arg(&trace).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Value = serde_json::from_slice(&out.stdout).unwrap();

        let threads: BTreeMap<String, Value> = query(
            &trace,
            "SELECT pid, tid, name FROM thread WHERE name IS NOT NULL",
        )
        .into_iter()
        .map(|r| (format!("{}:{}", id(&r[0]), id(&r[1])), r[2].clone()))
        .collect();
        let want_threads: BTreeMap<String, Value> =
            serde_json::from_value(want["threads"].clone()).unwrap();
        assert_eq!(threads, want_threads, "{rel}: thread names");

        let processes: BTreeMap<String, Value> = query(
            &trace,
            "SELECT pid, name FROM process WHERE name IS NOT NULL",
        )
        .into_iter()
        .map(|r| (id(&r[0]), r[1].clone()))
        .collect();
        let want_processes: BTreeMap<String, Value> =
            serde_json::from_value(want["processes"].clone()).unwrap();
        assert_eq!(processes, want_processes, "{rel}: process names");

        let counters = query(
            &trace,
            "SELECT p.pid, t.name, t.key, COUNT(*), SUM(c.value) FROM counter c
             JOIN counter_track t ON c.track_id = t.id JOIN process p USING (upid)
             GROUP BY p.pid, t.name, t.key",
        );
        let want_counters = want["counters"].as_object().unwrap();
        assert_eq!(counters.len(), want_counters.len(), "{rel}: counter series");
        for r in &counters {
            // The track is named `NAME KEY`, as trace_processor names it.
            let (name, k) = (id(&r[1]), id(&r[2]));
            let name = name.strip_suffix(&format!(" {k}")).unwrap_or(&name);
            let key = format!("{}|{name}|{k}", id(&r[0]));
            let w = &want_counters[&key];
            assert_eq!(r[3], w[0], "{rel}: {key} samples");
            assert!(
                close(r[4].as_f64().unwrap(), w[1].as_f64().unwrap()),
                "{rel}: {key} sum {} against {}",
                r[4],
                w[1]
            );
        }

        let args: BTreeMap<String, Vec<Value>> = query(
            &trace,
            "SELECT s.name, COUNT(a.key), COALESCE(SUM(a.int_value), 0),
                    COALESCE(SUM(a.real_value), 0.0)
             FROM slice s LEFT JOIN args a USING (arg_set_id) WHERE s.kind = 'span'
             GROUP BY s.name",
        )
        .into_iter()
        .map(|r| (id(&r[0]), r[1..].to_vec()))
        .collect();
        let want_args = want["args"].as_object().unwrap();
        assert!(want_args.len() > 10, "{rel}: too few names to compare");
        for (name, w) in want_args {
            let got = &args[name];
            assert_eq!(got[0], w[0], "{rel}: {name} leaves");
            assert_eq!(got[1].as_i64(), w[1].as_i64(), "{rel}: {name} int sum");
            assert!(
                close(got[2].as_f64().unwrap(), w[2].as_f64().unwrap()),
                "{rel}: {name} real sum"
            );
        }
    }
}
