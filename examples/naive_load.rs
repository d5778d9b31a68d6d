//! The naive JSON loader, as a baseline for whole-process load times: the file read into
//! memory, parsed into a `serde_json::Value`, and its events walked into a list of spans.
//!
//! ```text
//! cargo build --release -p spall-format --example naive-load
//! /usr/bin/time -f "%e s %M KB" target/release/examples/naive-load trace.json
//! ```

use serde_json::Value;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: naive-load TRACE.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let events = match &v {
        Value::Array(a) => a.as_slice(),
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice),
        _ => &[],
    };
    // (name, pid, tid, start, duration) of complete events, as a viewer's first pass would.
    let mut spans: Vec<(String, i64, i64, f64, f64)> = Vec::new();
    for e in events {
        if e.get("ph").and_then(Value::as_str) == Some("X") {
            spans.push((
                e.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                e.get("pid").and_then(Value::as_i64).unwrap_or(0),
                e.get("tid").and_then(Value::as_i64).unwrap_or(0),
                e.get("ts").and_then(Value::as_f64).unwrap_or(0.0),
                e.get("dur").and_then(Value::as_f64).unwrap_or(0.0),
            ));
        }
    }
    println!(
        "{}: {} events, {} complete spans",
        path,
        events.len(),
        spans.len()
    );
}
