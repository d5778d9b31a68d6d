//! Sampling profiles written by real profilers, against an independent reading of the same
//! file: Go's `runtime/pprof` profiles against `go tool pprof -raw` (Go's own reader, its
//! output committed beside them).

use crate::common::{fixture, run_ok};

use std::collections::{BTreeMap, BTreeSet};

fn cli(args: &[&str]) -> String {
    String::from_utf8(run_ok(args).stdout).expect("UTF-8")
}

/// Per function: (self weight, total weight, samples), as `stats --format json` gives them.
type Weights = BTreeMap<String, (i64, i64, u64)>;

/// `spall-cli [global...] stats PATH --format json`, per function.
fn stats(global: &[&str], path: &str) -> Weights {
    let mut args = global.to_vec();
    args.extend(["stats", path, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&cli(&args)).unwrap();
    (v["functions"].as_array().unwrap().iter())
        .map(|f| {
            let n = |k: &str| f[k].as_i64().unwrap();
            let name = f["name"].as_str().unwrap().to_string();
            (name, (n("self"), n("total"), n("samples") as u64))
        })
        .collect()
}

/// `go tool pprof -raw`'s text: per sample its values and location ids (innermost first),
/// and per location its functions (innermost, inlined, first).
struct Raw {
    types: Vec<String>,
    samples: Vec<(Vec<i64>, Vec<u64>)>,
    locations: BTreeMap<u64, Vec<String>>,
}

fn read_raw(text: &str) -> Raw {
    let mut raw = Raw {
        types: Vec::new(),
        samples: Vec::new(),
        locations: BTreeMap::new(),
    };
    let mut section = "";
    let mut last_loc = 0;
    for line in text.lines() {
        match line {
            "Samples:" | "Locations" | "Mappings" => {
                section = line;
                continue;
            }
            _ => {}
        }
        let t = line.trim();
        match section {
            "Samples:" if raw.types.is_empty() => {
                raw.types = t.split_whitespace().map(str::to_string).collect();
            }
            // A sample's line (`values: locations`); its labels' lines hold `:[`.
            "Samples:" if !t.contains(":[") => {
                let (values, locs) = t.split_once(':').unwrap();
                let values = values.split_whitespace().map(|v| v.parse().unwrap());
                let locs = locs.split_whitespace().map(|l| l.parse().unwrap());
                raw.samples.push((values.collect(), locs.collect()));
            }
            // `id: 0xaddr M=1 function file:line s=0`, then a line per inlined caller.
            "Locations" => {
                let words: Vec<&str> = t.split_whitespace().collect();
                if let Some(id) = words[0].strip_suffix(':') {
                    last_loc = id.parse().unwrap();
                    let name = words.get(3).map_or(words[1], |w| *w);
                    raw.locations.entry(last_loc).or_default().push(name.into());
                } else {
                    let name = words[0].to_string();
                    raw.locations.get_mut(&last_loc).unwrap().push(name);
                }
            }
            _ => {}
        }
    }
    raw
}

/// Per function, from `go tool pprof -raw`, of the samples whose value `index` is not 0
/// (pprof's reports leave those out): self, total (once per sample) and samples.
fn raw_weights(raw: &Raw, index: usize) -> Weights {
    let mut out = Weights::new();
    for (values, locs) in &raw.samples {
        let w = values[index];
        if w == 0 {
            continue;
        }
        let stack: Vec<&String> = locs.iter().flat_map(|l| &raw.locations[l]).collect();
        let mut seen = BTreeSet::new();
        for f in &stack {
            if seen.insert(*f) {
                let e = out.entry(f.to_string()).or_default();
                e.1 += w;
                e.2 += 1;
            }
        }
        out.entry(stack[0].to_string()).or_default().0 += w;
    }
    out
}

#[test]
fn go_pprof_profiles_weigh_as_go_tool_pprof_reads_them() {
    // (profile, --sample-kind, which value; None: the default, the last sample type).
    let cases: [(&str, Option<&str>, usize); 5] = [
        ("go_cpu", None, 1),
        ("go_cpu", Some("samples"), 0),
        ("go_heap", None, 3),
        ("go_heap", Some("alloc_space"), 1),
        ("go_heap", Some("alloc_objects/count"), 0),
    ];
    for (name, kind, index) in cases {
        let path = fixture(&format!("real/profiles/{name}.pb.gz"));
        let text = std::fs::read_to_string(fixture(&format!("real/profiles/{name}.raw.txt")));
        let raw = read_raw(&text.unwrap());
        let want = raw_weights(&raw, index);
        assert!(want.len() > 5, "{name}: {} functions", want.len());
        let global: Vec<&str> = kind.map(|k| vec!["--sample-kind", k]).unwrap_or_default();
        let got = stats(&global, &path);
        assert_eq!(got, want, "{name} {}", raw.types[index]);
    }
}

#[test]
fn go_pprof_inlined_calls_are_frames() {
    let path = fixture("real/profiles/go_cpu.pb.gz");
    let folded = cli(&["flame", &path]);
    // mix is inlined into sumSquares: one location, two frames.
    assert!(
        folded
            .lines()
            .any(|l| l.contains("main.sumSquares;main.mix ")),
        "{folded}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&cli(&["info", &path, "--format", "json"])).unwrap();
    assert_eq!(v["format"], "pprof");
}

/// What `crates/cli/tests/SCRIPT` prints for `path`.
fn python_reading(py: &str, script: &str, path: &str) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let o = std::process::Command::new(py)
        .arg(&script)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn real_firefox_profile_counts_as_a_python_reading() {
    let Some(py) = crate::common::python() else {
        return;
    };
    let path = fixture("real/profiles/firefox_page.json.gz");
    let want: Weights = (python_reading(py, "gecko_reference.py", &path).lines())
        .map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| v[i].parse::<i64>().unwrap();
            (v[0].to_string(), (n(1), n(2), n(3) as u64))
        })
        .collect();
    assert!(want.len() > 100, "{} functions", want.len());
    assert!(want.contains_key("fib"), "the page's JavaScript");
    assert_eq!(stats(&[], &path), want);
    // The page's own process is nested under the parent's, its times moved onto the
    // parent's clock: its samples start after the parent's first.
    let v: serde_json::Value =
        serde_json::from_str(&cli(&["info", &path, "--format", "json"])).unwrap();
    assert_eq!(v["format"], "gecko");
    assert_eq!(v["threads"], 2, "{v}");
}

#[test]
fn info_weighs_a_profiles_memory_per_event_not_per_span() {
    // A profile has no spans: a figure per span would divide by zero or by one.
    let text = cli(&["info", &fixture("real/profiles/spin.perf")]);
    let line = text.lines().find(|l| l.starts_with("memory")).unwrap();
    assert!(line.contains("bytes per event"), "{line}");
    let per: f64 = line
        .split('(')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        per > 4.0 && per < 400.0,
        "a sample costs tens of bytes: {line}"
    );
}

/// The Gecko markers of a real Firefox profile (instants, intervals, starts paired with
/// ends, starts never ended) against an independent reading: every marker as the reader
/// writes it (`convert`), and in `slice` all but those trace_processor's nesting drops,
/// which `validate` counts.
#[test]
fn real_firefox_markers_read_as_a_python_reading() {
    let Some(py) = crate::common::python() else {
        return;
    };
    let path = fixture("real/profiles/firefox_markers.json.gz");
    let want: Vec<String> = python_reading(py, "gecko_markers_reference.py", &path)
        .lines()
        .map(String::from)
        .collect();
    assert!(want.len() > 8000, "{} markers", want.len());

    let dir = spall_test_support::scratch_dir("gecko-markers");
    let out = dir.join("markers.json");
    run_ok(&["convert", &path, out.to_str().unwrap()]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut got: Vec<String> = (v["traceEvents"].as_array().unwrap().iter())
        .filter(|e| e["ph"] == "X" || e["ph"] == "i")
        .map(|e| {
            let ns = |k: &str| (e[k].as_f64().unwrap_or(0.0) * 1e3).round() as i64;
            format!(
                "{}\t{}\t{}",
                e["name"].as_str().unwrap(),
                ns("ts"),
                ns("dur")
            )
        })
        .collect();
    got.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        let b: BTreeSet<&String> = b.iter().collect();
        a.iter()
            .filter(|x| !b.contains(x))
            .take(10)
            .cloned()
            .collect()
    };
    assert_eq!(got.len(), want.len());
    assert!(
        got == want_sorted,
        "read but not in the reference: {:?}\nin the reference but not read: {:?}",
        only(&got, &want_sorted),
        only(&want_sorted, &got)
    );

    // `slice` drops a span that starts inside another and ends after it, as
    // trace_processor does; the model keeps it and counts it.
    let rows = cli(&[
        "query",
        &path,
        "SELECT COUNT(*) FROM slice",
        "--format",
        "csv",
    ]);
    let in_slice: usize = rows.lines().nth(1).unwrap().parse().unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&cli(&["validate", &path, "--format", "json"])).unwrap();
    let overlaps = v["diagnostics"]["partial_overlap"].as_u64().unwrap_or(0) as usize;
    assert!(overlaps > 0, "{v}");
    assert_eq!(in_slice + overlaps, want.len());
}

/// `convert` says what its output cannot hold: a profile's samples and a system trace's
/// scheduler records, which neither Chrome JSON events nor `.spall` carry, are counted.
#[test]
fn convert_counts_the_samples_and_scheduling_it_leaves_out() {
    let dir = spall_test_support::scratch_dir("convert-left-out");
    let said = |input: &str, out: &str| {
        let out = dir.join(out);
        let o = run_ok(&["convert", &fixture(input), out.to_str().unwrap()]);
        String::from_utf8(o.stderr).unwrap()
    };
    // spin.perf: 174 samples, no event of any other kind.
    let text = said("real/profiles/spin.perf", "spin.json");
    assert!(
        text.contains("wrote") && text.contains(": 0 events of the 174"),
        "{text}"
    );
    assert!(
        text.contains("174 samples of a sampling profile (dropped"),
        "{text}"
    );
    let text = said("real/profiles/spin.perf", "spin.spall");
    assert!(
        text.contains("174 samples of a sampling profile (dropped"),
        "{text}"
    );
    // A Perfetto system trace: its compact_sched records.
    let text = said("systrace/compact.pftrace.gz", "compact.json");
    assert!(text.contains("19 scheduler records"), "{text}");
    let text = said("systrace/compact.pftrace.gz", "compact.spall");
    assert!(text.contains("6 CPU slices, 9 thread states"), "{text}");
    // A Chrome JSON trace's system trace text goes out verbatim: nothing left out.
    let text = said("systrace/chrome-system.json", "system.json");
    assert!(!text.contains("scheduler records"), "{text}");
}
