//! `spall-cli flame` against independent computations: the generator's own truth on
//! randomly nested traces (JSON, `.spall` v1 and v3), and a Python script
//! (`folded_reference.py`) on real traces. Every stack's self time must match to the
//! nanosecond.

use crate::common::{fixture, python, run_ok};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use spall_format::synth::{Step, Synth};

fn cli(args: &[&str]) -> String {
    String::from_utf8(run_ok(args).stdout).expect("UTF-8")
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-flame-tests-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// What the folded output must be, from the generator's spans alone: per stack, the sum
/// of (duration minus the direct children's durations).
fn truth(synth: &Synth, per_thread: bool) -> Vec<String> {
    let names: Vec<String> = synth
        .name_table()
        .into_iter()
        .map(|n| n.replace(';', ":").replace(['\n', '\r'], " "))
        .collect();
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    // Open spans: (path, child time).
    let mut stack: Vec<(String, i64)> = Vec::new();
    synth.walk(|step, s| match step {
        Step::Open => {
            let name = &names[s.name as usize];
            let path = match stack.last() {
                Some((p, _)) => format!("{p};{name}"),
                None if per_thread => format!("pid {};tid {};{name}", s.pid, s.tid),
                None => name.clone(),
            };
            stack.push((path, 0));
        }
        Step::Close => {
            let (path, child) = stack.pop().unwrap();
            let dur = (s.end_ns - s.start_ns) as i64;
            *out.entry(path).or_default() += dur - child;
            if let Some(parent) = stack.last_mut() {
                parent.1 += dur;
            }
        }
    });
    let mut lines: Vec<String> = out
        .into_iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    lines.sort();
    lines
}

#[test]
fn folded_stacks_equal_the_generators_truth_in_every_format() {
    for seed in [3, 17] {
        let synth = Synth {
            seed,
            processes: 2,
            threads: 3,
            spans: 20_000,
            max_depth: 12,
            names: 40,
            exotic_names: true,
        };
        let (json, v3, v1) = (
            tmp(&format!("s{seed}.json")),
            tmp(&format!("s{seed}.spall")),
            tmp(&format!("s{seed}-v1.spall")),
        );
        synth
            .write_json(std::fs::File::create(&json).unwrap(), true)
            .unwrap();
        synth
            .write_spall(std::fs::File::create(&v3).unwrap())
            .unwrap();
        synth
            .write_spall_v1(std::fs::File::create(&v1).unwrap())
            .unwrap();
        let merged = truth(&synth, false);
        let per_thread = truth(&synth, true);
        assert!(merged.len() > 1000, "random nesting gives many stacks");
        for file in [&json, &v3, &v1] {
            let f = file.to_str().unwrap();
            let got = sorted_lines(&cli(&["flame", f]));
            assert!(got == merged, "{f}: merged stacks differ");
            // The .spall writer names threads (`worker-N (tid N)`); JSON leaves them unnamed.
            let got: Vec<String> = sorted_lines(&cli(&["flame", f, "--per-thread"]))
                .into_iter()
                .map(|l| unname_thread(&l))
                .collect();
            assert!(got == per_thread, "{f}: per-thread stacks differ");
        }
    }
}

/// `pid 1;worker-7 (tid 7);...` as `pid 1;tid 7;...`.
fn unname_thread(line: &str) -> String {
    let mut frames: Vec<&str> = line.splitn(3, ';').collect();
    let tid;
    if let Some(open) = frames[1].rfind("(tid ") {
        tid = frames[1][open + 1..frames[1].len() - 1].to_string();
        frames[1] = &tid;
    }
    frames.join(";")
}

/// `python3`, or a skip that says so (a failure when CI asks for it).
fn reference(py: &str, trace: &str, per_thread: bool) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/folded_reference.py");
    let mut c = Command::new(py);
    c.arg(script).arg(trace);
    if per_thread {
        c.arg("--per-thread");
    }
    let o = c.output().expect("python3 runs");
    assert!(
        o.status.success(),
        "{trace}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    sorted_lines(&String::from_utf8(o.stdout).unwrap())
}

/// Real traces whose spans nest (no repairs: the reference does not repeat spall's).
const NESTED: &[&str] = &[
    "real/bazel_profile_with_queuing.json.gz",
    "real/catapult_big_trace.json",
    "real/catapult_traceviewify.json",
    "real/chrome116_devtools_export.json",
    "real/demo_lthi_excerpt.json",
    "real/pytorch_kineto_trace_diff_test.json.gz",
    "real/clang/blender-mac-clang14_obj_export_file_writer.json",
    "real/clang/self-win-clang-19.1_BuildEvents.json",
];

#[test]
fn folded_stacks_equal_a_python_reference_on_real_traces() {
    let Some(py) = python() else { return };
    for rel in NESTED {
        let f = fixture(rel);
        let want = reference(py, &f, false);
        assert!(!want.is_empty(), "{rel}: the reference found no stacks");
        assert_eq!(sorted_lines(&cli(&["flame", &f])), want, "{rel}");
    }
    // A real .spall file: the reference reads it as JSON (converted by spall-cli, which
    // only re-encodes events), the flame graph is built from the .spall itself.
    let spall = fixture("spall/odingengine_v3.spall");
    let json = tmp("odingengine.json");
    cli(&["convert", &spall, json.to_str().unwrap()]);
    let want = reference(py, json.to_str().unwrap(), false);
    assert!(want.len() >= 5, "{want:?}");
    assert_eq!(sorted_lines(&cli(&["flame", &spall])), want);
}

#[test]
fn json_and_svg_formats() {
    let f = fixture("real/demo_lthi_excerpt.json");
    let v: serde_json::Value =
        serde_json::from_str(&cli(&["flame", &f, "--format", "json"])).expect("one JSON document");
    // The tree's totals: each node's total is its self time plus its children's totals
    // (the trace nests), and the root's is the sum of the folded self times.
    fn check(n: &serde_json::Value) -> i64 {
        let kids: i64 = n["children"].as_array().unwrap().iter().map(check).sum();
        let (total, own) = (
            n["total_ns"].as_i64().unwrap(),
            n["self_ns"].as_i64().unwrap(),
        );
        assert_eq!(total, own + kids, "{}", n["name"]);
        total
    }
    let folded_sum: i64 = cli(&["flame", &f])
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap())
        .sum();
    assert_eq!(v["name"], "all");
    assert_eq!(check(&v), folded_sum);

    let svg = cli(&["flame", &f, "--format", "svg", "--title", "demo"]);
    assert!(
        svg.starts_with("<?xml") && svg.contains("<svg"),
        "an SVG document"
    );
    assert!(svg.contains("demo") && svg.contains("ChannelReader::DispatchInputData"));

    // --filter keeps the stacks through a matching frame; --range clips.
    let only = cli(&[
        "flame",
        &f,
        "--filter",
        "^ChannelReader::DispatchInputData$",
    ]);
    assert!(!only.is_empty());
    assert!(only.lines().all(|l| l
        .split(';')
        .any(|fr| fr.starts_with("ChannelReader::DispatchInputData"))));
    let clipped = cli(&["flame", &f, "--range", "0..1ms"]);
    let sum = |s: &str| -> i64 {
        s.lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap())
            .sum()
    };
    assert!(sum(&clipped) < folded_sum);
}

/// inferno's `collapse-perf` of a `perf script` file: per stack (its first frame, the
/// comm, left out: spall makes the comm the thread's name) the sum of the periods.
fn inferno_folded(path: &str) -> BTreeMap<String, i64> {
    use inferno::collapse::Collapse;
    let mut out = Vec::new();
    let text = std::fs::read(path).unwrap();
    inferno::collapse::perf::Folder::default()
        .collapse(&text[..], &mut out)
        .unwrap();
    let mut stacks = BTreeMap::new();
    for line in String::from_utf8(out).unwrap().lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let stack = stack.split_once(';').map_or("", |s| s.1);
        *stacks.entry(stack.to_string()).or_insert(0) += n.parse::<i64>().unwrap();
    }
    stacks
}

/// Folded lines as a map from stack to weight.
fn folded_map(text: &str) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *m.entry(stack.to_string()).or_insert(0) += n.parse::<i64>().unwrap();
    }
    m
}

/// Per function, its self weight (samples it is the leaf of) and total weight (samples
/// whose stack holds it, once each), from folded stacks.
fn weights_by_function(folded: &BTreeMap<String, i64>) -> BTreeMap<String, (i64, i64)> {
    let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (stack, &w) in folded {
        let frames: Vec<&str> = stack.split(';').collect();
        let mut seen = std::collections::BTreeSet::new();
        for f in &frames {
            if seen.insert(*f) {
                out.entry(f.to_string()).or_default().1 += w;
            }
        }
        out.entry(frames[frames.len() - 1].to_string())
            .or_default()
            .0 += w;
    }
    out
}

/// `spall-cli stats --format json` of a profile: per function (self, total, samples).
fn sample_stats(path: &str) -> BTreeMap<String, (i64, i64, u64)> {
    let v: serde_json::Value =
        serde_json::from_str(&cli(&["stats", path, "--format", "json"])).unwrap();
    (v["functions"].as_array().unwrap().iter())
        .map(|f| {
            let n = |k: &str| f[k].as_i64().unwrap();
            (
                f["name"].as_str().unwrap().to_string(),
                (n("self"), n("total"), n("samples") as u64),
            )
        })
        .collect()
}

#[test]
fn real_perf_profiles_weigh_as_inferno_collapses_them() {
    for name in ["profiles/spin.perf", "profiles/spin_fields.perf"] {
        let path = fixture(&format!("real/{name}"));
        let want = inferno_folded(&path);
        assert!(
            want.len() > 10,
            "{name}: inferno read {} stacks",
            want.len()
        );
        let got = folded_map(&cli(&["flame", &path]));
        assert_eq!(got, want, "{name}");
        let by_fn = weights_by_function(&want);
        let stats = sample_stats(&path);
        assert_eq!(stats.len(), by_fn.len(), "{name}");
        for (f, &(self_w, total)) in &by_fn {
            let s = stats[f];
            assert_eq!((s.0, s.1), (self_w, total), "{name}: {f}");
        }
    }
}

#[test]
fn real_node_cpuprofile_self_time_equals_a_python_reading() {
    let Some(py) = python() else { return };
    let path = fixture("real/profiles/work.cpuprofile");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpuprofile_reference.py");
    let o = Command::new(py).arg(&script).arg(&path).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Per function, its self time, where it has any.
    let want: BTreeMap<String, i64> = (String::from_utf8(o.stdout).unwrap().lines())
        .map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            (v[0].to_string(), v[1].parse().unwrap())
        })
        .filter(|x| x.1 > 0)
        .collect();
    assert!(want.len() > 10);
    let got: BTreeMap<String, i64> = (sample_stats(&path).into_iter())
        .map(|(n, s)| (n, s.0))
        .filter(|x| x.1 > 0)
        .collect();
    assert_eq!(got, want);
}
