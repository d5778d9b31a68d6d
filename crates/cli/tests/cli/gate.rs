//! `diff` and `check` on generated pairs of traces with known changes: one function made
//! slower, one faster, one removed, one added, the rest unchanged but for ±2% noise.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::pair::{pair, trace, STEADY};
use crate::common::{run, write, SPALL_CLI};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-gate-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn statuses(v: &Value) -> Vec<(String, String)> {
    let mut s: Vec<(String, String)> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    s.sort();
    s
}

fn expected(prefix: &str) -> Vec<(String, String)> {
    let mut e: Vec<(String, String)> = [
        ("slow_fn", "regressed"),
        ("fast_fn", "improved"),
        ("gone_fn", "removed"),
        ("new_fn", "added"),
        ("steady_a", "unchanged"),
        ("steady_b", "unchanged"),
        ("steady_c", "unchanged"),
        ("steady_d", "unchanged"),
    ]
    .iter()
    .map(|(n, s)| (format!("{prefix}{n}"), s.to_string()))
    .collect();
    e.push(("frame".into(), "unchanged".into()));
    e.sort();
    e
}

#[test]
fn every_status_is_right_and_stable_under_noise() {
    let dir = tmp("status");
    for seed in 1..=5 {
        let (base, new) = pair(&dir, seed);
        for metric in ["self", "total", "mean", "p50", "p90", "p99"] {
            let o = run(&["diff", &base, &new, "--format", "json", "--metric", metric]);
            assert_eq!(o.status.code(), Some(1), "a regression exits 1");
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(statuses(&v), expected(""), "seed {seed} metric {metric}");
        }
        // The same trace against itself, and noise alone: nothing changes.
        let (again, _) = pair(&dir, seed + 100);
        let o = run(&["diff", &base, &again, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["summary"]["unchanged"], 8, "seed {seed}: {v}");
    }
}

#[test]
fn json_is_the_documented_contract() {
    let dir = tmp("json");
    let (base, new) = pair(&dir, 1);
    let o = run(&["diff", &base, &new, "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["base"], base.as_str());
    assert_eq!(v["new"], new.as_str());
    assert_eq!(v["metric"], "self");
    let f = v["functions"].as_array().unwrap();
    // Regressions first.
    assert_eq!(f[0]["name"], "slow_fn");
    let slow = &f[0];
    for k in [
        "count", "total_ns", "self_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns",
    ] {
        assert!(slow["base"][k].is_i64(), "{k}: {slow}");
        assert!(slow["new"][k].is_i64(), "{k}: {slow}");
    }
    assert_eq!(slow["base"]["count"], 100);
    let (b, n) = (
        slow["base"]["self_ns"].as_i64().unwrap(),
        slow["new"]["self_ns"].as_i64().unwrap(),
    );
    assert_eq!(slow["delta_ns"].as_i64().unwrap(), n - b);
    let ratio = slow["ratio"].as_f64().unwrap();
    assert!((ratio - 1.3).abs() < 0.02, "{ratio}");
    assert!(slow["p_value"].as_f64().unwrap() < 1e-6);
    let added = f.iter().find(|x| x["name"] == "new_fn").unwrap();
    assert!(added["base"].is_null() && added["ratio"].is_null());
    let removed = f.iter().find(|x| x["name"] == "gone_fn").unwrap();
    assert!(removed["new"].is_null());
}

#[test]
fn stacks_threads_and_exit_codes() {
    let dir = tmp("stacks");
    let (base, new) = pair(&dir, 2);
    let o = run(&["diff", &base, &new, "--format", "json", "--by", "stack"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(statuses(&v), expected("frame;"));
    // The thread is "main" in both, with other pid and tid: matched by name...
    let o = run(&["diff", &base, &new, "--thread", "main", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["diff", &base, &new, "--thread", "1001007:1001007"]);
    assert_eq!(o.status.code(), Some(2), "no such thread");
    let o = run(&["diff", &base, &new, "--thread", "100:1007"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // ...but not by id.
    let o = run(&[
        "diff",
        &base,
        &new,
        "--thread",
        "100:1007",
        "--match-threads",
        "id",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such thread"));
    // --fail-on.
    assert_eq!(
        run(&["diff", &base, &new, "--fail-on", "never"])
            .status
            .code(),
        Some(0)
    );
    let o = run(&["diff", &base, &new, "--filter", "fast", "--fail-on", "any"]);
    assert_eq!(o.status.code(), Some(1), "an improvement is a change");
    let o = run(&["diff", &base, &new, "--filter", "fast"]);
    assert_eq!(o.status.code(), Some(0), "but not a regression");
    // A threshold above the changes makes them noise.
    let o = run(&[
        "diff",
        &base,
        &new,
        "--threshold",
        "50%",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["regressed"], 0);
    // Bad input: exit 2 with a message.
    let o = run(&["diff", &base, "/no/such/file.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("NEW"));
    let o = run(&["diff", &base, &new, "--threshold", "five"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn markdown_lists_regressions_first_and_folds_the_rest() {
    let dir = tmp("md");
    let (base, new) = pair(&dir, 3);
    let out = stdout(&run(&["diff", &base, &new, "--format", "markdown"]));
    assert!(
        out.starts_with(
            "### 🔴 spall diff: 1 regressed, 1 improved, 1 added, 1 removed, 5 unchanged"
        ),
        "{out}"
    );
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} missing:\n{out}"));
    assert!(at("#### Regressions") < at("#### Improvements"));
    assert!(at("#### Improvements") < at("#### Added and removed"));
    assert!(at("`slow_fn`") < at("#### Improvements"));
    assert!(at("<details><summary>5 unchanged") > at("`gone_fn`"));
    let csv = stdout(&run(&["diff", &base, &new, "--format", "csv"]));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("name,status,base_count,new_count"));
    assert_eq!(lines.len(), 10);
    assert!(lines[1].starts_with("slow_fn,regressed,100,100,"));
}

#[test]
fn budgets_kept_broken_missing_and_malformed() {
    let dir = tmp("check");
    let (base, new) = pair(&dir, 4);
    let ok = write(
        &dir,
        "ok.toml",
        r#"
[[budget]]
name = "slow_fn"
p90 = "150us"
count = 100

[[budget]]
match = "^steady_"
thread = "main"
total = "100ms"
"#,
    );
    let o = run(&["check", &new, "--budget", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("3 kept, 0 broken, 0 missing"));
    let tight = write(
        &dir,
        "tight.toml",
        "[[budget]]\nname = \"slow_fn\"\np90 = \"110us\"\n\n[[budget]]\nname = \"never_called\"\nmax = \"1ms\"\n",
    );
    let o = run(&["check", &new, "--budget", &tight, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["kept"].as_u64(),
            v["broken"].as_u64(),
            v["missing"].as_u64()
        ),
        (Some(0), Some(1), Some(1))
    );
    let c = &v["checks"][0];
    assert_eq!(c["status"], "broken");
    assert_eq!(c["limit"], 110_000);
    assert!(c["margin"].as_i64().unwrap() < 0);
    assert_eq!(c["line"], 1);
    // The missing function is a warning on its own, a failure with --strict.
    let only_missing = write(
        &dir,
        "missing.toml",
        "[[budget]]\nname = \"never_called\"\nmax = \"1ms\"\n",
    );
    let o = run(&["check", &new, "--budget", &only_missing]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("never calls"));
    let o = run(&["check", &new, "--budget", &only_missing, "--strict"]);
    assert_eq!(o.status.code(), Some(1));
    // Malformed: exit 2, naming the file, line and key.
    let bad = write(
        &dir,
        "bad.toml",
        "[[budget]]\nname = \"slow_fn\"\np90 = 3\n",
    );
    let o = run(&["check", &new, "--budget", &bad]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml:3:") && err.contains("\"p90\""),
        "{err}"
    );
    // Against a baseline: slow_fn's p90 grew 30%.
    let o = run(&[
        "check",
        &new,
        "--budget",
        &ok,
        "--baseline",
        &base,
        "--max-regression",
        "10%",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let broken: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "broken")
        .collect();
    assert_eq!(broken.len(), 1, "{v}");
    assert_eq!(broken[0]["against"], "baseline");
    assert_eq!(broken[0]["metric"], "p90");
}

#[test]
fn junit_parses_back() {
    use quick_xml::events::Event;
    let dir = tmp("junit");
    let (_, new) = pair(&dir, 5);
    let budget = write(
        &dir,
        "b.toml",
        "[[budget]]\nname = \"slow_fn\"\np90 = \"110us\"\nmax = \"1s\"\n\n[[budget]]\nname = \"a<b>&'c\"\nmax = \"1ms\"\n",
    );
    let o = run(&["check", &new, "--budget", &budget, "--format", "junit"]);
    assert_eq!(o.status.code(), Some(1));
    let xml = stdout(&o);
    let mut r = quick_xml::Reader::from_str(&xml);
    let (mut cases, mut failures, mut skipped) = (Vec::new(), 0, 0);
    let mut suite_failures = None;
    loop {
        match r.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let attr = |k: &str| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == k.as_bytes())
                        .map(|a| {
                            let raw = std::str::from_utf8(&a.value).unwrap();
                            quick_xml::escape::unescape(raw).unwrap().into_owned()
                        })
                };
                match name.as_str() {
                    "testcase" => cases.push(attr("name").unwrap()),
                    "failure" => failures += 1,
                    "skipped" => skipped += 1,
                    "testsuite" => suite_failures = attr("failures"),
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(
        cases,
        ["slow_fn p90", "slow_fn max", "a<b>&'c max"],
        "{xml}"
    );
    assert_eq!((failures, skipped), (1, 1), "{xml}");
    assert_eq!(suite_failures.as_deref(), Some("1"));
}

/// The first fenced block of `lang` after `heading` in docs/CI.md.
fn doc_block(doc: &str, heading: &str, lang: &str) -> String {
    let from = doc
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} in docs/CI.md"));
    let fence = format!("```{lang}\n");
    let start = from + doc[from..].find(&fence).unwrap() + fence.len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_string()
}

#[test]
fn ci_doc_commands_run_as_written() {
    let doc =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/CI.md"))
            .unwrap();
    let dir = tmp("cidoc");
    std::fs::create_dir_all(dir.join("baseline")).unwrap();
    std::fs::write(
        dir.join("perf-budget.toml"),
        doc_block(&doc, "## 2. Write the budget file", "toml"),
    )
    .unwrap();
    // `render` 20% slower than the baseline, still within its budget.
    let mut base = vec![("render", 1000.0, 1)];
    let mut new = vec![("render", 1200.0, 1)];
    base.extend(STEADY);
    new.extend(STEADY);
    trace(&dir, "baseline/trace.json", 100, &base, 11);
    trace(&dir, "trace.json", 200, &new, 12);
    let commands = doc_block(&doc, "## 3. The commands", "sh");
    let mut codes = Vec::new();
    for line in commands.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], "spall-cli", "{line}");
        let (args, out) = match words.iter().position(|&w| w == ">") {
            Some(i) => (&words[1..i], Some(words[i + 1])),
            None => (&words[1..], None),
        };
        let o = Command::new(SPALL_CLI)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        if let Some(f) = out {
            std::fs::write(dir.join(f), &o.stdout).unwrap();
        }
        codes.push(o.status.code());
    }
    // Budgets kept; 20% over the baseline; the comment and the picture never fail; the
    // gate does.
    assert_eq!(codes, [Some(0), Some(1), Some(0), Some(0), Some(1)]);
    let svg = std::fs::read_to_string(dir.join("perf-diff.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("render ("), "{svg}");
    let junit = std::fs::read_to_string(dir.join("budgets.xml")).unwrap();
    assert!(
        junit.contains("<testcase") && !junit.contains("<failure"),
        "{junit}"
    );
    let md = std::fs::read_to_string(dir.join("perf-diff.md")).unwrap();
    assert!(
        md.contains("`render`") && md.contains("1 regressed"),
        "{md}"
    );
}
