//! The Chromium fixtures read by spall and, independently, by the `perfetto` Python
//! package's protobuf classes (`proto_reference.py`): the counts must be exactly equal.

use crate::common::{self, SPALL_CLI};
use std::collections::BTreeMap;
use std::process::Command;

use serde_json::{json, Value};
use trace_model::async_flags;

const CHROMIUM: &str = "real/chromium148_startup.pftrace.gz";

/// Every Chromium protobuf fixture: two versions, four category sets.
const CHROMIUM_ALL: &[&str] = &[
    CHROMIUM,
    "real/chromium148_script_all.pftrace.gz",
    "real/chromium148_script_toplevel.pftrace.gz",
    "real/chromium148_script_timeline.pftrace.gz",
    "real/chromium156_script_all.pftrace.gz",
    "real/chromium156_script_toplevel.pftrace.gz",
    "real/chromium156_script_timeline.pftrace.gz",
];

/// Slices and instants per kind of track, as the reference counts them: a thread's (its
/// spans, and the async slices below its track), a process's, or the trace's.
fn by_kind(t: &trace_model::Trace) -> Value {
    let mut kinds: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut add = |kind, what| *kinds.entry(kind).or_default().entry(what).or_default() += 1;
    for th in t.threads() {
        for lane in &th.lanes {
            (0..lane.len()).for_each(|_| add("thread", "slices"));
        }
    }
    for s in t.async_slices() {
        let kind = match s.flags & async_flags::LOCAL {
            0 if t.processes()[s.process as usize].pid != trace_model::ExtId::Num(0) => "thread",
            0 => "global",
            _ => "process",
        };
        match s.flags & async_flags::INSTANT {
            0 => add(kind, "slices"),
            _ => add(kind, "instants"),
        }
    }
    for i in t.instants() {
        let kind = match i.scope {
            trace_model::InstantScope::Thread => "thread",
            trace_model::InstantScope::Process => "process",
            trace_model::InstantScope::Global => "global",
        };
        add(kind, "instants");
    }
    json!(kinds)
}

/// The reference script's view, from the model.
fn reading(t: &trace_model::Trace) -> Value {
    let mut slices: BTreeMap<String, u64> = BTreeMap::new();
    let mut starts: BTreeMap<String, i64> = BTreeMap::new();
    let mut instants: BTreeMap<String, u64> = BTreeMap::new();
    let mut slice = |name: &str, start: i64| {
        *slices.entry(name.to_string()).or_default() += 1;
        *starts.entry(name.to_string()).or_default() += start;
    };
    for th in t.threads() {
        for lane in &th.lanes {
            for i in 0..lane.len() {
                slice(t.str(lane.name[i]), lane.start[i]);
            }
        }
    }
    for s in t.async_slices() {
        if s.flags & async_flags::INSTANT != 0 {
            *instants.entry(t.str(s.name).to_string()).or_default() += 1;
        } else {
            slice(t.str(s.name), s.start);
        }
    }
    for i in t.instants() {
        *instants.entry(t.str(i.name).to_string()).or_default() += 1;
    }
    let mut counters: BTreeMap<String, usize> = BTreeMap::new();
    for c in t.counters() {
        // The reference names a thread's counter "NAME TID".
        let name = match c.thread {
            Some(th) => format!(
                "{} {}",
                t.str(c.name),
                t.ext_id(t.threads()[th as usize].tid)
            ),
            None => t.str(c.name).to_string(),
        };
        *counters.entry(name).or_default() += c.ts.len();
    }
    let points: usize = t.flows().iter().map(|f| f.points.len()).sum();
    let mut threads: Vec<Value> = t
        .threads()
        .iter()
        .filter_map(|th| {
            let name = t.str(th.name?);
            let id = |x: trace_model::ExtId| match x {
                trace_model::ExtId::Num(n) => n,
                trace_model::ExtId::Str(_) => -1,
            };
            Some(json!([id(th.pid), id(th.tid), name]))
        })
        .collect();
    threads.sort_by_key(|v| v.to_string());
    json!({"slices": slices, "slice_starts": starts, "instants": instants,
           "counters": counters, "flow_ids": t.flows().len(), "flow_points": points,
           "threads": threads, "by_kind": by_kind(t)})
}

/// `python3` with the `perfetto` package, or `None` (a failure under `SPALL_REQUIRE_PYTHON`).
fn python_with_perfetto() -> Option<&'static str> {
    let py = common::python()?;
    let ok = Command::new(py)
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    spall_test_support::available(
        ok,
        "SPALL_REQUIRE_PYTHON",
        "the perfetto Python package is missing (pip install perfetto protobuf)",
    )
    .then_some(py)
}

#[test]
fn chromium_traces_match_the_perfetto_packages_reading() {
    let Some(py) = python_with_perfetto() else {
        return;
    };
    for f in CHROMIUM_ALL {
        matches_the_reference(py, f);
    }
}

/// Fixture `f` as spall reads it and as `proto_reference.py` does.
fn matches_the_reference(py: &str, f: &str) {
    let path = common::fixture(f);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/proto_reference.py");
    let out = Command::new(py).arg(script).arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = trace_model::load(&path).unwrap();
    let got = reading(&trace);
    // Not vacuous: the file holds every kind.
    for key in ["slices", "instants", "counters", "threads"] {
        assert!(
            !want[key].as_object().map_or_else(
                || want[key].as_array().unwrap().is_empty(),
                |o| o.is_empty()
            ),
            "{f}: {key}"
        );
    }
    assert!(want["flow_points"].as_u64().unwrap() > 0);
    for key in [
        "slices",
        "slice_starts",
        "instants",
        "counters",
        "flow_ids",
        "flow_points",
        "threads",
        "by_kind",
    ] {
        assert_eq!(got[key], want[key], "{f}: {key}");
    }
    // `info` counts the reference's instants and slices: its instants with the async
    // instants, and its spans with the other async slices.
    let info: Value = serde_json::from_slice(&cli(&["info", "--format", "json", &path])).unwrap();
    let sum = |key: &str| -> u64 {
        want[key]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    let n = |key: &str| info[key].as_u64().unwrap();
    assert_eq!(
        n("instants") + n("async_instants"),
        sum("instants"),
        "{f}: instants"
    );
    assert_eq!(
        n("spans") + n("async_slices") - n("async_instants"),
        sum("slices"),
        "{f}: slices"
    );
}

/// Runs `spall-cli ARGS`, which must succeed; its stdout.
fn cli(args: &[&str]) -> Vec<u8> {
    let out = Command::new(SPALL_CLI).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn cli_commands_read_the_chromium_trace() {
    let path = common::fixture(CHROMIUM);
    let info: Value = serde_json::from_slice(&cli(&["info", "--format", "json", &path])).unwrap();
    assert_eq!(info["format"], "perfetto");
    assert_eq!(info["gzip"], true);
    assert!(info["spans"].as_u64().unwrap() > 10_000);
    // The packets not modelled are counted by kind.
    assert_eq!(info["diagnostics"]["proto_unmodelled_trace_config"], 1);
    // Converted to JSON, the same spans, counters and flows come back.
    let dir = std::env::temp_dir().join(format!("spall-proto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json_out = dir.join("chromium.json").display().to_string();
    cli(&["convert", &path, &json_out]);
    // Its unsigned integers, pointers and writers' threads come out as plain JSON (a
    // number, "0x..." text, a tid), not as the reader's internal tag objects.
    let text = std::fs::read_to_string(&json_out).unwrap();
    assert!(
        !text.contains("\\u0000"),
        "a type tag was written as it is held"
    );
    assert!(
        text.contains("\"passthrough_utid\":"),
        "the writers' threads are kept"
    );
    let back: Value =
        serde_json::from_slice(&cli(&["info", "--format", "json", &json_out])).unwrap();
    // To .spall: the spans kept, what .spall cannot hold listed on stderr.
    let spall_out = dir.join("chromium.spall").display().to_string();
    let conv = Command::new(SPALL_CLI)
        .args(["convert", &path, &spall_out])
        .output()
        .unwrap();
    assert!(conv.status.success());
    let said = String::from_utf8_lossy(&conv.stderr);
    assert!(said.contains("counter"), "{said}");
    let spall: Value =
        serde_json::from_slice(&cli(&["info", "--format", "json", &spall_out])).unwrap();
    assert_eq!(spall["format"], "spall-v3");
    assert_eq!(spall["spans"], info["spans"]);
    // Parquet, a dataset directory per table with one file for the trace in each.
    let parquet = dir.join("parquet");
    cli(&["export", &path, &parquet.display().to_string()]);
    for table in ["slice", "thread", "counter"] {
        let files: Vec<std::path::PathBuf> = std::fs::read_dir(parquet.join(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let whole = |f: &std::path::PathBuf| {
            f.extension().is_some_and(|e| e == "parquet")
                && std::fs::metadata(f).is_ok_and(|m| m.len() > 0)
        };
        assert!(matches!(&files[..], [f] if whole(f)), "{table}: {files:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(back["format"], "json");
    for key in [
        "spans",
        "instants",
        "counter_samples",
        "counter_series",
        "flow_links",
        "async_slices",
    ] {
        assert_eq!(back[key], info[key], "{key}");
    }
    for args in [
        ["stats", path.as_str()].as_slice(),
        &["flame", &path],
        &["query", &path, "SELECT count(*) FROM slice"],
        &["diff", &path, &path],
    ] {
        assert!(!cli(args).is_empty(), "{args:?}");
    }
}
