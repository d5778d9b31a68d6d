//! Parity with Perfetto's trace_processor: the queries and rows it answered on the same
//! files, recorded in `tests/fixtures/sql-parity` (its README says how), asked again here.
//! Rows are compared in order when the query has an `ORDER BY`, as multisets otherwise;
//! reals to 1e-9 relative. Set `PARITY_TRACE` to print each query as it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use trace_sql::TraceDb;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
            }
        },
        _ => a == b,
    }
}

fn key(row: &[Value]) -> String {
    serde_json::to_string(row).unwrap()
}

/// Why `got` is not `want`, or `None` when equal.
fn compare(sql: &str, want: &[Vec<Value>], got: &[Vec<Value>]) -> Option<String> {
    let ordered = sql.to_ascii_uppercase().contains("ORDER BY");
    let (mut w, mut g) = (want.to_vec(), got.to_vec());
    if !ordered {
        w.sort_by_key(|r| key(r));
        g.sort_by_key(|r| key(r));
    }
    if w.len() != g.len() {
        return Some(format!("{} rows, want {}", g.len(), w.len()));
    }
    for (i, (a, b)) in w.iter().zip(&g).enumerate() {
        if a.len() != b.len() || !a.iter().zip(b).all(|(x, y)| same_value(x, y)) {
            return Some(format!("row {i}: got {}, want {}", key(b), key(a)));
        }
    }
    None
}

/// (query, trace) pairs answered as trace_processor answers, of all, with the failures.
fn run(fixture: &Path) -> (usize, usize, Vec<String>) {
    let f: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let trace = f["trace"].as_str().unwrap();
    let t = Arc::new(trace_model::load(root().join(trace)).unwrap());
    let db = TraceDb::new(t).unwrap();
    let name = fixture.file_stem().unwrap().to_string_lossy().into_owned();
    let (mut ok, mut all, mut fails) = (0, 0, Vec::new());
    for q in f["queries"].as_array().unwrap() {
        all += 1;
        let sql = q["sql"].as_str().unwrap();
        let qn = q["name"].as_str().unwrap();
        if std::env::var_os("PARITY_TRACE").is_some() {
            eprintln!("{name}/{qn}");
        }
        let t0 = std::time::Instant::now();
        let got = db.query(sql);
        if t0.elapsed().as_secs_f64() > 1.0 {
            eprintln!("{name}/{qn}: slow, {:.1} s", t0.elapsed().as_secs_f64());
        }
        let why = match (got, q.get("error")) {
            (Err(_), Some(_)) => None,
            (Ok(_), Some(e)) => Some(format!("trace_processor failed ({e}), we did not")),
            (Err(e), None) => Some(format!("error: {e}")),
            (Ok(r), None) => {
                let want: Vec<Vec<Value>> = serde_json::from_value(q["rows"].clone()).unwrap();
                compare(sql, &want, &r.rows)
            }
        };
        match why {
            None => ok += 1,
            Some(why) => fails.push(format!("{name}/{qn}: {why}")),
        }
    }
    (ok, all, fails)
}

/// Answers equal so far; the test fails below it (raise it as the tables catch up, until
/// every answer is equal and the assertion can require all of them).
const EQUAL_AT_LEAST: usize = 342;

#[test]
fn answers_as_trace_processor() {
    let dir = root().join("tests/fixtures/sql-parity/expected");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{} fixtures", files.len());
    let (mut ok, mut all, mut fails) = (0, 0, Vec::new());
    for f in &files {
        let (o, a, fl) = run(f);
        ok += o;
        all += a;
        fails.extend(fl);
    }
    for f in &fails {
        eprintln!("{f}");
    }
    eprintln!("parity: {ok} of {all} answers equal");
    assert!(
        ok >= EQUAL_AT_LEAST,
        "{ok} of {all} answers equal, fewer than {EQUAL_AT_LEAST}"
    );
}
