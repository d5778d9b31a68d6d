//! Writes a large Chrome JSON trace made of real events: the events of one or more real
//! traces (Chromium's, by default the corpus's catapult files), copied again and again
//! under new process ids, until the output reaches the size asked for.
//!
//! Each copy keeps every field (args, categories, flows, async ids, metadata) and its
//! timestamps, so the result looks like a browser with many processes: the same mix of
//! phases, args and nesting as the source, at any size. Ids that tie events together
//! (`id`, `id2`, `bind_id`) are made unique per copy, so flows and async operations stay
//! within their copy.
//!
//! ```text
//! cargo run --release -p spall-format --example gen-realistic -- OUT.json SIZE_MB [SOURCE.json[.gz]...]
//! cargo run --release -p spall-format --example gen-realistic -- bench-data/realistic-250mb.json 250
//! ```

use std::io::{BufWriter, Read, Write};

use serde_json::{Map, Value};

const DEFAULT_SOURCES: &[&str] = &[
    "../shared/corpus/real/catapult_multiple_input_latency.json",
    "../shared/corpus/real/catapult_lthi_cats.json.gz",
    "../shared/corpus/real/catapult_flow.json",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(mb)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: gen-realistic OUT.json SIZE_MB [SOURCE.json[.gz]...]");
        std::process::exit(2);
    };
    let sources: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        DEFAULT_SOURCES.iter().map(|s| s.to_string()).collect()
    };
    // Every source starts where the first does, so the copies overlap in time as a
    // browser's processes do.
    let mut events: Vec<(Value, i64)> = Vec::new();
    let mut base = None;
    for s in &sources {
        let evs = read_events(s);
        let start = evs
            .iter()
            .filter_map(|e| e.get("ts").and_then(Value::as_f64))
            .filter(|&t| t > 0.0)
            .fold(f64::INFINITY, f64::min);
        let start = if start.is_finite() { start as i64 } else { 0 };
        let shift = *base.get_or_insert(start) - start;
        eprintln!("{s}: {} events, shifted by {shift} us", evs.len());
        events.extend(evs.into_iter().map(|e| (e, shift)));
    }
    if events.is_empty() {
        eprintln!("no events in the sources");
        std::process::exit(2);
    }
    let target = mb * 1_000_000;
    let file = std::fs::File::create(out).unwrap_or_else(|e| panic!("{out}: {e}"));
    let mut w = CountingWriter {
        inner: BufWriter::with_capacity(1 << 20, file),
        written: 0,
    };
    w.write_all(b"{\"traceEvents\":[\n").unwrap();
    let mut first = true;
    let mut copies = 0u64;
    let mut total = 0u64;
    while w.written < target {
        for (ev, shift) in &events {
            if !first {
                w.write_all(b",\n").unwrap();
            }
            first = false;
            serde_json::to_writer(&mut w, &copy_of(ev, copies, *shift)).unwrap();
            total += 1;
        }
        copies += 1;
    }
    w.write_all(b"\n],\"displayTimeUnit\":\"ns\"}\n").unwrap();
    w.inner.flush().unwrap();
    eprintln!(
        "wrote {out}: {} bytes, {total} events, {copies} copies of {} events",
        w.written,
        events.len()
    );
}

struct CountingWriter<W: Write> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The events of a trace file: a top-level array, or an object's `traceEvents`.
fn read_events(path: &str) -> Vec<Value> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        out
    } else {
        raw
    };
    match serde_json::from_slice::<Value>(&bytes).unwrap_or_else(|e| panic!("{path}: {e}")) {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Copy `k` of an event: its time moved by `shift` microseconds, pids moved to a range of
/// their own, tying ids made unique.
fn copy_of(ev: &Value, k: u64, shift: i64) -> Value {
    let Value::Object(o) = ev else {
        return ev.clone();
    };
    let mut o: Map<String, Value> = o.clone();
    if shift != 0 {
        if let Some(ts) = o.get("ts").and_then(shifted(shift)) {
            o.insert("ts".into(), ts);
        }
    }
    if k == 0 {
        return Value::Object(o);
    }
    if let Some(pid) = o.get("pid") {
        let moved = match pid {
            Value::Number(n) => match n.as_i64() {
                Some(p) => Value::from(p + (k as i64) * 1_000_000),
                None => pid.clone(),
            },
            Value::String(s) => Value::from(format!("{s}#{k}")),
            other => other.clone(),
        };
        o.insert("pid".into(), moved);
    }
    for key in ["id", "bind_id"] {
        if let Some(id) = o.get_mut(key) {
            *id = unique_id(id, k);
        }
    }
    if let Some(Value::Object(id2)) = o.get_mut("id2") {
        for v in id2.values_mut() {
            *v = unique_id(v, k);
        }
    }
    Value::Object(o)
}

/// A timestamp moved by whole microseconds, exactly: the integer part moves, the decimals
/// stay as written.
fn shifted(shift: i64) -> impl Fn(&Value) -> Option<Value> {
    move |ts| {
        let Value::Number(n) = ts else { return None };
        if let Some(i) = n.as_i64() {
            return Some(Value::from(i + shift));
        }
        let text = n.to_string();
        let (int, frac) = text.split_once('.')?;
        let moved = format!("{}.{frac}", int.parse::<i64>().ok()? + shift);
        serde_json::from_str(&moved).ok()
    }
}

/// An id unique to copy `k`: numbers offset by `k << 40` (exact in a double below 2^53
/// for 8191 copies), strings suffixed.
fn unique_id(id: &Value, k: u64) -> Value {
    match id {
        Value::Number(n) => match n.as_u64() {
            Some(v) if v < 1 << 40 => Value::from(v + (k << 40)),
            _ => Value::from(format!("{n}.{k}")),
        },
        Value::String(s) => Value::from(format!("{s}.{k}")),
        other => other.clone(),
    }
}
