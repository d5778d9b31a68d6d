//! `spall-cli export`: Parquet datasets read back by a third-party reader (DuckDB's Python
//! package), with row counts and sums checked against `spall-cli info` and `stats`, and the
//! files of two traces told apart; the schema against docs/FLEET.md; bad traces skipped
//! and re-exports replacing files, with only whole files left in the dataset.

use crate::common::{fixture, spall_json};

use std::process::Command;

use serde_json::Value;

/// DuckDB from Python; `None` (after saying so) when it is missing, which
/// `SPALL_REQUIRE_DUCKDB` (set by `.ci/run`, which installs it) turns into a failure.
fn duckdb(sql: &str) -> Option<Value> {
    let script = format!(
        "import duckdb, json\nprint(json.dumps(duckdb.sql({sql:?}).fetchall(), default=str))"
    );
    let o = Command::new("python3").args(["-c", &script]).output();
    match o {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'duckdb'") => {
            let what = "the duckdb Python package is missing (pip install duckdb)";
            spall_test_support::available(false, "SPALL_REQUIRE_DUCKDB", what);
            None
        }
        Ok(o) => panic!("{sql}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            let what = format!("python3 cannot run: {e}");
            spall_test_support::available(false, "SPALL_REQUIRE_DUCKDB", &what);
            None
        }
    }
}

#[test]
fn datasets_read_back_in_duckdb_match_info_and_stats() {
    let out = std::env::temp_dir().join(format!("spall-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let traces = [
        fixture("real/demo_lthi_excerpt.json"),
        fixture("spall/odingengine_v3.spall"),
    ];
    let o = out.to_str().unwrap();
    spall_json(&["export", "--jobs", "2", &traces[0], &traces[1], o]);
    let Some(_) = duckdb("SELECT 1") else { return };
    let slice = out.join("slice/*.parquet").display().to_string();
    let tracks = out.join("thread_track/*.parquet").display().to_string();
    let threads = out.join("thread/*.parquet").display().to_string();
    for t in &traces {
        let info = spall_json(&["info", t, "--format", "json"]);
        let stats = spall_json(&["stats", t, "--format", "json"]);
        let total: i64 = (stats["functions"].as_array().unwrap().iter())
            .map(|f| f["total_ns"].as_i64().unwrap())
            .sum();
        let self_sum: i64 = (stats["functions"].as_array().unwrap().iter())
            .map(|f| f["self_ns"].as_i64().unwrap())
            .sum();
        let r = duckdb(&format!(
            "SELECT COUNT(*), SUM(dur), SUM(self_dur), COUNT(DISTINCT trace_fnv64), \
             SUM(unfinished) FROM '{slice}' WHERE kind = 'span' AND trace = '{t}'"
        ))
        .unwrap();
        let row = &r[0];
        assert_eq!(row[0], info["spans"], "{t}: slices");
        // (An unfinished slice's dur is -1, as in Perfetto; stats count it to the end.)
        assert_eq!(
            row[4].as_i64(),
            Some(0),
            "{t}: pick traces with no unfinished spans"
        );
        assert_eq!(row[1].as_i64(), Some(total), "{t}: total duration");
        assert_eq!(row[2].as_i64(), Some(self_sum), "{t}: self time");
        assert_eq!(row[3].as_i64(), Some(1), "{t}: one hash");
        // One thread track per thread of the trace; `thread` adds, as trace_processor's
        // does, each process's main thread (tid = pid) where the trace has none.
        let n = duckdb(&format!(
            "SELECT COUNT(*) FROM '{tracks}' WHERE trace = '{t}'"
        ))
        .unwrap();
        assert_eq!(n[0][0], info["threads"], "{t}: thread tracks");
        let n = duckdb(&format!(
            "SELECT COUNT(*) FROM '{threads}' th WHERE trace = '{t}' AND utid IN \
             (SELECT utid FROM '{tracks}' tr WHERE tr.trace = th.trace)"
        ))
        .unwrap();
        assert_eq!(n[0][0], info["threads"], "{t}: threads with a track");
    }
    // One file per trace in each table's directory, told apart by their tags.
    let r = duckdb(&format!(
        "SELECT COUNT(DISTINCT trace), COUNT(DISTINCT trace_fnv64), COUNT(DISTINCT filename) \
         FROM read_parquet('{slice}', filename = true)"
    ))
    .unwrap();
    assert_eq!(r[0], serde_json::json!([2, 2, 2]));
    std::fs::remove_dir_all(&out).unwrap();
}
