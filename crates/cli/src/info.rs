//! `spall-cli info`.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use spall_util::human_bytes;
use trace_model::{SampleUnit, Trace};

use crate::util::{human_ns, load, Fatal};

pub fn run(path: &Path, as_json: bool) -> Result<ExitCode, Fatal> {
    let (trace, load_secs) = load(path)?;
    spall_util::timing::stage("loaded");
    let (index_secs, index_bytes) = index(&trace);
    spall_util::timing::stage("indexed");
    if as_json {
        println!(
            "{:#}",
            json(path, &trace, load_secs, (index_secs, index_bytes))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let secs = load_secs + index_secs;
    let d = &trace.decode_summary();
    let cpu_samples = cpu_samples(&trace);
    let version = match d.spall {
        Some(h) => format!(
            " (timestamp unit {} {} per tick)",
            h.timestamp_unit,
            if h.version == 1 { "us" } else { "ns" }
        ),
        None => String::new(),
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("file", path.display().to_string()),
        (
            "format",
            format!(
                "{}{}{version}",
                d.format,
                if d.gzip { ", gzip" } else { "" }
            ),
        ),
        ("size", human_bytes(d.input_bytes)),
        ("decoded", decoded(d.decoded_bytes, d.parsed_bytes)),
        ("events", d.events.to_string()),
        ("spans", trace.span_count().to_string()),
        ("instants", trace.instants().len().to_string()),
        (
            "counter samples",
            format!(
                "{} in {} series",
                trace.counter_samples(),
                trace.counters().len()
            ),
        ),
        (
            "flows",
            format!(
                "{} events, {} arrows between spans",
                trace.flows().len(),
                trace.flow_links().len()
            ),
        ),
        (
            "async events",
            format!(
                "{} in {} slices, {} of them instants",
                trace.async_events().len(),
                trace.async_slices().len(),
                async_instants(&trace)
            ),
        ),
        (
            "cpu samples",
            format!(
                "{cpu_samples} on {} tracks, {} frames",
                trace.samples().len(),
                trace.frames().len()
            ),
        ),
        ("processes", trace.processes().len().to_string()),
        ("threads", trace.threads().len().to_string()),
        ("start", format!("{} ns", trace.start_ns())),
        ("end", format!("{} ns", trace.end_ns())),
        ("duration", human_ns(trace.duration_ns())),
        ("max depth", trace.max_depth().to_string()),
        (
            "load time",
            format!("{secs:.3} s (decode and model {load_secs:.3} s, index {index_secs:.3} s)"),
        ),
        (
            "memory",
            format!(
                "{} for the model ({}), {} for the index",
                human_bytes(trace.heap_bytes() as u64),
                per_item(trace.heap_bytes(), trace.span_count(), d.events),
                human_bytes(index_bytes as u64),
            ),
        ),
    ];
    if let Some(s) = crate::sched::summary(&trace) {
        let at = rows
            .iter()
            .position(|r| r.0 == "processes")
            .unwrap_or(rows.len());
        rows.insert(at, ("scheduling", s));
    }
    for (k, v) in rows {
        println!("{k:<16} {v}");
    }
    print_tail(path, &trace);
    Ok(ExitCode::SUCCESS)
}

/// The table's last rows: the busiest threads' CPU time (system traces), the profiles,
/// and the warnings by kind.
fn print_tail(path: &Path, trace: &Trace) {
    let diagnostics = trace.warning_counts();
    let busy = crate::sched::cpu_time(trace);
    for c in busy.iter().take(5) {
        let who = format!("{}:{} {}", c.pid, c.tid, c.name.escape_debug());
        let ns = human_ns(c.ns);
        println!(
            "{:<16} {ns:>10} in {:>6} slices  {who}",
            "cpu time", c.slices
        );
    }
    for p in profiles(trace) {
        println!("{:<16} {}", "profile", p.line());
    }
    let total: u64 = diagnostics.iter().map(|d| d.1).sum();
    println!("{:<16} {total}", "warnings");
    for (k, n) in &diagnostics {
        println!("  {k:<28} {n}");
    }
    if total > 0 {
        println!("(details: spall-cli validate {})", path.display());
    }
}

/// Builds the index, as the viewer does before its first full frame: the seconds it took
/// and its heap bytes.
pub fn index(trace: &Trace) -> (f64, usize) {
    let started = std::time::Instant::now();
    let index = trace_index::TraceIndex::build(trace);
    (started.elapsed().as_secs_f64(), index.heap_bytes())
}

/// The samples of one kind: what a profile holds.
struct Profile {
    kind: String,
    unit: SampleUnit,
    samples: usize,
    weight: i64,
    threads: usize,
    timed: bool,
    /// The kind flame graphs and stats count.
    counted: bool,
}

impl Profile {
    fn line(&self) -> String {
        let weight = match self.unit {
            SampleUnit::Count => format!("{} (count)", self.weight),
            unit => trace_model::weight_text(unit, self.weight),
        };
        format!(
            "{}: {} samples on {} threads, weight {weight}{}{}",
            self.kind,
            self.samples,
            self.threads,
            if self.timed {
                ""
            } else {
                ", untimed (laid out by weight)"
            },
            if self.counted {
                ", counted by flame and stats"
            } else {
                ""
            },
        )
    }

    fn json(&self) -> Value {
        json!({
            "kind": self.kind,
            "unit": self.unit.name(),
            "samples": self.samples,
            "weight": self.weight,
            "threads": self.threads,
            "timed": self.timed,
            "counted": self.counted,
        })
    }
}

/// The sample tracks summed by kind, in kind order.
fn profiles(trace: &Trace) -> Vec<Profile> {
    let counted = trace.sample_kind();
    let mut out: Vec<Profile> = Vec::new();
    for s in trace.samples() {
        let kind = trace.str(s.kind);
        let at = match out.iter().position(|p| p.kind == kind && p.unit == s.unit) {
            Some(i) => i,
            None => {
                out.push(Profile {
                    kind: kind.to_string(),
                    unit: s.unit,
                    samples: 0,
                    weight: 0,
                    threads: 0,
                    timed: true,
                    counted: counted == Some((s.kind, s.unit)),
                });
                out.len() - 1
            }
        };
        let p = &mut out[at];
        p.samples += s.ts.len();
        p.weight = p.weight.saturating_add(s.total_weight());
        p.threads += 1;
        p.timed &= s.timed;
    }
    out.sort_by(|a, b| a.kind.cmp(&b.kind));
    out
}

/// The async slices that are instants (a Perfetto `TYPE_INSTANT` on an async or custom
/// track, a JSON `n`): with `instants`, every instant event of the trace, as Perfetto's
/// own reading of a protobuf trace counts them.
fn async_instants(trace: &Trace) -> usize {
    (trace.async_slices().iter())
        .filter(|s| s.flags & trace_model::async_flags::INSTANT != 0)
        .count()
}

fn cpu_samples(trace: &Trace) -> usize {
    trace.samples().iter().map(|s| s.ts.len()).sum()
}

/// What `info --format json` prints (docs/CLI.md): `load_secs` is the load's time and
/// `index` what [`index`] returned; `load_ms` counts both, as the table's load time does.
pub fn json(path: &Path, trace: &Trace, load_secs: f64, index: (f64, usize)) -> Value {
    let (index_secs, index_bytes) = index;
    let secs = load_secs + index_secs;
    let d = &trace.decode_summary();
    let diag: serde_json::Map<String, Value> = trace
        .warning_counts()
        .iter()
        .map(|(k, n)| (k.clone(), json!(n)))
        .collect();
    json!({
        "file": path.display().to_string(),
        "format": d.format.name(),
        "gzip": d.gzip,
        "bytes": d.input_bytes,
        "decoded_bytes": d.decoded_bytes,
        "parsed_bytes": d.parsed_bytes,
        "events": d.events,
        "spans": trace.span_count(),
        "instants": trace.instants().len(),
        "counter_samples": trace.counter_samples(),
        "counter_series": trace.counters().len(),
        "flows": trace.flows().len(),
        "flow_links": trace.flow_links().len(),
        "async_events": trace.async_events().len(),
        "async_slices": trace.async_slices().len(),
        "async_instants": async_instants(trace),
        "cpu_samples": cpu_samples(trace),
        "profiles": profiles(trace).iter().map(Profile::json).collect::<Vec<_>>(),
        "sched": crate::sched::json(trace),
        "processes": trace.processes().len(),
        "threads": trace.threads().len(),
        "start_ns": trace.start_ns(),
        "end_ns": trace.end_ns(),
        "duration_ns": trace.duration_ns(),
        "max_depth": trace.max_depth(),
        "diagnostics": diag,
        "load_ms": (secs * 1000.0).round() as u64,
        "index_ms": (index_secs * 1000.0).round() as u64,
        "model_bytes": trace.heap_bytes(),
        "index_bytes": index_bytes,
    })
}

/// The bytes decoded (after decompression), and how many more the decoders went through:
/// a chunk parsed twice, or the whole file decoded again.
fn decoded(bytes: u64, parsed: u64) -> String {
    if parsed <= bytes {
        return format!("{}, each byte once", human_bytes(bytes));
    }
    format!(
        "{}, {} parsed ({:.2}x)",
        human_bytes(bytes),
        human_bytes(parsed),
        parsed as f64 / bytes.max(1) as f64
    )
}

/// The model's bytes per span, or per event where a trace has no spans (a profile's samples,
/// a system trace's records): a per-span figure of a trace without spans means nothing.
fn per_item(heap: usize, spans: u64, events: u64) -> String {
    match (spans, events) {
        (0, 0) => "no events".into(),
        (0, e) => format!("{:.1} bytes per event", heap as f64 / e as f64),
        (s, _) => format!("{:.1} bytes per span", heap as f64 / s as f64),
    }
}
