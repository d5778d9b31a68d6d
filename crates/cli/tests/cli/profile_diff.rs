//! `diff` and `check` between sampling profiles: per function and per stack, in the
//! profile's unit and as shares of the whole, on a collapsed-stacks pair with numbers known
//! by hand and on a real `perf record` profile against itself with half of one function's
//! samples taken out (its numbers read independently from the `perf script` text).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::common::{fixture, run, spall_json, write};

fn folded(name: &str) -> String {
    fixture(&format!("profiles/{name}.folded"))
}

/// `diff ... --format json` (which exits 1 on a regression), parsed.
fn diff_json(args: &[&str]) -> Value {
    let mut all = vec!["diff"];
    all.extend(args);
    all.extend(["--format", "json", "--fail-on", "never"]);
    spall_json(&all)
}

/// Per function name: (status, delta) of a diff's JSON.
fn statuses(v: &Value) -> BTreeMap<String, (String, f64)> {
    (v["functions"].as_array().unwrap().iter())
        .map(|f| {
            let name = f["name"].as_str().unwrap().to_string();
            let status = f["status"].as_str().unwrap().to_string();
            (name, (status, f["delta"].as_f64().unwrap()))
        })
        .collect()
}

fn st(s: &str, d: f64) -> (String, f64) {
    (s.to_string(), d)
}

#[test]
fn collapsed_profiles_diff_by_weight_and_by_share() {
    let (b, n) = (folded("base"), folded("new"));
    // BASE: lex 300, parse 100, render 500, gone 100 (1000 samples); NEW: lex 600, parse
    // 100, render 500, added 300 (1500). By weight lex doubled; by share it grew from 30%
    // to 40%, while render's and parse's fell by a third: all beyond sampling noise.
    let v = diff_json(&[&b, &n]);
    assert_eq!(
        (v["unit"].as_str(), v["kind"].as_str()),
        (Some("count"), Some("samples"))
    );
    assert_eq!(
        (v["base_weight"].as_i64(), v["new_weight"].as_i64()),
        (Some(1000), Some(1500))
    );
    let want: BTreeMap<String, (String, f64)> = [
        ("lex", st("regressed", 300.0)),
        ("added", st("added", 300.0)),
        ("gone", st("removed", -100.0)),
        ("render", st("unchanged", 0.0)),
        ("parse", st("unchanged", 0.0)),
        ("main", st("unchanged", 0.0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(statuses(&v), want);
    let lex = &v["functions"][0];
    assert_eq!(lex["name"], "lex");
    assert_eq!(lex["base"]["self_share"].as_f64(), Some(30.0));
    assert_eq!(lex["new"]["self_share"].as_f64(), Some(40.0));

    let v = diff_json(&[&b, &n, "--metric", "self-share"]);
    let s = statuses(&v);
    assert_eq!(s["lex"], st("regressed", 10.0));
    assert_eq!(s["render"].0, "improved");
    assert!((s["render"].1 + 16.6667).abs() < 1e-3, "{s:?}");
    assert_eq!(s["parse"].0, "improved");
    // Total weight: main holds every sample, so its share stays 100%.
    let v = diff_json(&[&b, &n, "--metric", "total-share"]);
    assert_eq!(statuses(&v)["main"], st("unchanged", 0.0));

    // Per stack, the CSV: `parse` alone (its own self weight) apart from `parse;lex`.
    let o = run(&["diff", &b, &n, "--by", "stack", "--format", "csv"]);
    assert_eq!(o.status.code(), Some(1), "a regression exits 1");
    let csv = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("name,status,base_samples,new_samples,base_total,new_total,"));
    let row = |stack: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(&format!("{stack},")))
            .unwrap()
    };
    // lex's 300 samples against 600 are far beyond noise (z = 10, p ~ 1e-23).
    let lex = row("main;parse;lex");
    let want = "main;parse;lex,regressed,1,1,300,600,300,600,30.0000,40.0000,30.0000,40.0000,300,2.000000,";
    assert!(lex.starts_with(want) && lex.contains("e-2"), "{csv}");
    let parse = "main;parse,unchanged,2,2,400,700,100,100,40.0000,46.6666,10.0000,6.6666,0,1.000000,1.000e0";
    assert_eq!(row("main;parse"), parse, "{csv}");
    // The same stacks as the differential folded output, which `flame` weighs.
    let o = run(&["diff", &b, &n, "--by", "stack", "--format", "folded"]);
    let f = String::from_utf8(o.stdout).unwrap();
    assert!(f.lines().any(|l| l == "main;parse;lex 300 600"), "{f}");

    let o = run(&[
        "diff",
        &b,
        &n,
        "--format",
        "markdown",
        "--metric",
        "self-share",
    ]);
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(md.contains("| `lex` | 30.00% | 40.00% | +10.00% |"), "{md}");
    assert!(
        md.contains("samples (base → new)") && !md.contains("Mann-Whitney"),
        "{md}"
    );
}

/// One `perf script` sample: its period and its frames' names, leaf first.
fn perf_samples(text: &str) -> Vec<(i64, Vec<String>)> {
    (text.split("\n\n").filter(|r| !r.trim().is_empty()))
        .map(|r| {
            let mut lines = r.lines();
            let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
            let at = head
                .iter()
                .position(|t| t.starts_with("cpu-clock"))
                .unwrap();
            let frames = lines
                .map(|l| {
                    let sym = l.split_whitespace().nth(1).unwrap();
                    sym.split("+0x").next().unwrap().to_string()
                })
                .collect();
            (head[at - 1].parse().unwrap(), frames)
        })
        .collect()
}

/// Per function: (samples, total, self), read from the samples.
fn weigh(samples: &[(i64, Vec<String>)], f: &str) -> (i64, i64, i64) {
    let holds: Vec<_> = samples
        .iter()
        .filter(|s| s.1.iter().any(|x| x == f))
        .collect();
    let own = samples.iter().filter(|s| s.1[0] == f);
    (
        holds.len() as i64,
        holds.iter().map(|s| s.0).sum(),
        own.map(|s| s.0).sum(),
    )
}

#[test]
fn a_real_perf_profile_against_itself_with_half_of_heavy_left_out() {
    let path = fixture("real/profiles/spin.perf");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut k = 0;
    let kept: Vec<&str> = (text.split("\n\n"))
        .filter(|r| {
            let heavy = r.contains(" heavy+");
            k += usize::from(heavy);
            !heavy || k % 2 == 1
        })
        .collect();
    let kept = kept.join("\n\n");
    let dir = spall_test_support::scratch_dir("profile_diff");
    let new = dir.join("spin_half_heavy.perf").display().to_string();
    std::fs::write(&new, &kept).unwrap();
    let (sb, sn) = (perf_samples(&text), perf_samples(&kept));

    let v = diff_json(&[&path, &new]);
    assert_eq!(v["unit"], "nanoseconds");
    let all = |s: &[(i64, Vec<String>)]| s.iter().map(|x| x.0).sum::<i64>();
    assert_eq!(v["base_weight"].as_i64(), Some(all(&sb)));
    assert_eq!(v["new_weight"].as_i64(), Some(all(&sn)));
    let rows: BTreeMap<&str, &Value> = (v["functions"].as_array().unwrap().iter())
        .map(|f| (f["name"].as_str().unwrap(), f))
        .collect();
    let seen = |side: &Value| {
        let n = |k: &str| side[k].as_i64().unwrap();
        (n("samples"), n("total"), n("self"))
    };
    for f in ["leaf", "heavy", "light", "fib", "main"] {
        assert_eq!(seen(&rows[f]["base"]), weigh(&sb, f), "{f} in BASE");
        assert_eq!(seen(&rows[f]["new"]), weigh(&sn, f), "{f} in NEW");
    }
    let status = |f: &str| rows[f]["status"].as_str().unwrap();
    assert_eq!(
        [status("leaf"), status("fib"), status("light")],
        ["improved", "unchanged", "unchanged"]
    );
    // fib and light kept their weight, so their shares of the smaller whole grew by half:
    // light's 38 samples make that beyond sampling noise, fib's 17 do not.
    let v = diff_json(&[&path, &new, "--metric", "total-share"]);
    let p = |f: &str| {
        let r = (v["functions"].as_array().unwrap().iter()).find(|r| r["name"] == f);
        let r = r.unwrap();
        (
            r["status"].as_str().unwrap().to_string(),
            r["p_value"].as_f64().unwrap(),
        )
    };
    let (light, fib) = (p("light"), p("fib"));
    assert!(light.0 == "regressed" && light.1 < 0.05, "{light:?}");
    assert!(fib.0 == "unchanged" && fib.1 > 0.05, "{fib:?}");
    assert_eq!(p("heavy").0, "improved");
    // The same file on both sides: nothing changed.
    let v = diff_json(&[&path, &fixture("real/profiles/spin_fields.perf")]);
    let states: BTreeSet<&str> = (v["functions"].as_array().unwrap().iter())
        .map(|f| f["status"].as_str().unwrap())
        .collect();
    assert_eq!(states, BTreeSet::from(["unchanged"]));
}

#[test]
fn profiles_of_different_units_or_kinds_do_not_compare() {
    let cpu = fixture("real/profiles/go_cpu.pb.gz");
    let heap = fixture("real/profiles/go_heap.pb.gz");
    let o = run(&["diff", &cpu, &heap]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("different units") && err.contains("bytes"),
        "{err}"
    );
    let spans = fixture("real/catapult_simple_trace.json");
    let o = run(&["diff", &cpu, &spans]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code() == Some(2) && err.contains("sampling profile"),
        "{err}"
    );
    let o = run(&["diff", &cpu, &cpu, "--metric", "p90"]);
    assert_eq!(o.status.code(), Some(2));
    // The kind --sample-kind picks is the one compared, in its unit.
    let v = diff_json(&["--sample-kind", "alloc_space", &heap, &heap]);
    assert_eq!(
        (v["kind"].as_str(), v["unit"].as_str()),
        (Some("alloc_space"), Some("bytes"))
    );
}

#[test]
fn check_gates_on_a_functions_weight_and_share_of_a_profile() {
    let dir = spall_test_support::scratch_dir("profile_check");
    // NEW: lex 600 of 1500. `main|lex` counted as one function: main holds every sample,
    // so their weight once, not main's and lex's added.
    let budget = write(
        &dir,
        "b.toml",
        "[[budget]]\nname = \"lex\"\nself_share = \"35%\"\nself = 1000\n\n\
         [[budget]]\nmatch = \"^(main|lex)$\"\ntotal = 1500\ncount = 4\ntotal_share = \"100%\"\n",
    );
    let o = run(&[
        "check",
        &folded("new"),
        "--budget",
        &budget,
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<(String, String, f64)> = (v["checks"].as_array().unwrap().iter())
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_string();
            (s("metric"), s("status"), c["measured"].as_f64().unwrap())
        })
        .collect();
    let want = [
        ("self", "kept", 600.0),
        ("self_share", "broken", 40.0),
        ("count", "kept", 4.0),
        ("total", "kept", 1500.0),
        ("total_share", "kept", 100.0),
    ];
    let want: Vec<(String, String, f64)> = (want.iter())
        .map(|(m, s, x)| (m.to_string(), s.to_string(), *x))
        .collect();
    assert_eq!(got, want);
    // Against BASE (lex 300 of 1000): its share grew by a third, more than 10%.
    let o = run(&[
        "check",
        &folded("new"),
        "--budget",
        &budget,
        "--baseline",
        &folded("base"),
        "--max-regression",
        "10%",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = (v["checks"].as_array().unwrap().iter())
        .find(|c| c["metric"] == "self_share" && c["against"] == "baseline")
        .unwrap();
    assert_eq!(
        (c["limit"].as_f64(), c["status"].as_str()),
        (Some(33.0), Some("broken"))
    );

    // Limits the profile cannot be checked against are errors, not silent passes.
    let perf = fixture("real/profiles/spin.perf");
    for (text, says) in [
        ("p90 = \"1ms\"", "per-call"),
        ("self = \"4MB\"", "not bytes"),
    ] {
        let b = write(
            &dir,
            "bad.toml",
            &format!("[[budget]]\nname = \"leaf\"\n{text}\n"),
        );
        let o = run(&["check", &perf, "--budget", &b]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(2) && err.contains(says),
            "{text}: {err}"
        );
    }
    let ok = write(
        &dir,
        "ok.toml",
        "[[budget]]\nname = \"leaf\"\nself = \"80ms\"\ntotal_share = \"90%\"\n",
    );
    let o = run(&["check", &perf, "--budget", &ok, "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// `--min-delta` in the profile's unit: a number of samples for collapsed stacks, a size
/// (or a number of bytes) for a profile of bytes; a duration of either is refused.
#[test]
fn min_delta_is_taken_in_the_profiles_unit() {
    let (b, n) = (folded("base"), folded("new"));
    // lex grew by 300 samples: a change from a delta of 300, not of 301.
    let lex = |d: &str| statuses(&diff_json(&[&b, &n, "--min-delta", d]))["lex"].clone();
    assert_eq!(lex("300"), st("regressed", 300.0));
    assert_eq!(lex("301"), st("unchanged", 300.0));
    for wrong in ["2ms", "1KB"] {
        let o = run(&["diff", &b, &n, "--min-delta", wrong]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(2) && err.contains("counts"),
            "{wrong}: {err}"
        );
    }
    // Two speedscope profiles of bytes, 10 bytes a sample: `alloc` grew from 500 samples
    // to 800 (by 3,000 bytes), `keep` stayed at 500.
    let dir = spall_test_support::scratch_dir("profile_min_delta");
    let bytes = |name: &str, allocs: usize| {
        let mut samples = vec!["[0,1]"; allocs];
        samples.extend(["[0,2]"; 500]);
        let text = format!(
            r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{{"name":"main"}},{{"name":"alloc"}},{{"name":"keep"}}]}},"profiles":[{{"type":"sampled","name":"heap","unit":"bytes","startValue":0,"endValue":1,"samples":[{}],"weights":[{}]}}]}}"#,
            samples.join(","),
            vec!["10"; samples.len()].join(",")
        );
        write(&dir, name, &text)
    };
    let (hb, hn) = (bytes("b.json", 500), bytes("n.json", 800));
    let alloc = |d: &str| {
        statuses(&diff_json(&[&hb, &hn, "--min-delta", d]))["alloc"]
            .0
            .clone()
    };
    assert_eq!(alloc("2KiB"), "regressed");
    assert_eq!(alloc("3000"), "regressed");
    assert_eq!(alloc("3KiB"), "unchanged");
    let o = run(&["diff", &hb, &hn, "--min-delta", "1ms"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(2) && err.contains("bytes"), "{err}");
    // A trace's delta is a duration, as before (a plain number: nanoseconds).
    let spans = fixture("real/catapult_simple_trace.json");
    let o = run(&["diff", &spans, &spans, "--min-delta", "4KB"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        run(&["diff", &spans, &spans, "--min-delta", "2ms"])
            .status
            .code(),
        Some(0)
    );
}
