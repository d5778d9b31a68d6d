//! The sample tables on the profile formats trace_processor does not read (`perf script`,
//! `.cpuprofile`), checked against a plain reading of each file; Chrome's V8 profiles are
//! checked against trace_processor itself (`parity.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use spall_test_support::fixture;
use trace_sql::TraceDb;

fn db(rel: &str) -> TraceDb {
    TraceDb::new(Arc::new(trace_model::load(fixture(rel)).unwrap())).unwrap()
}

/// Rows of (text, integer, ...) as a map from the first column to the rest (NULL as -1).
fn by_key(db: &TraceDb, sql: &str) -> BTreeMap<String, Vec<i64>> {
    let r = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    (r.rows.iter())
        .map(|row| {
            let k = match &row[0] {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            (
                k,
                row[1..].iter().map(|v| v.as_i64().unwrap_or(-1)).collect(),
            )
        })
        .collect()
}

/// A `perf script` frame line's function as perf names it: the symbol without its offset,
/// `[unknown]` named after its module.
fn perf_function(line: &str) -> String {
    let rest = line.trim().split_once(' ').unwrap().1;
    let (sym, dso) = match rest.rsplit_once(" (") {
        Some((s, d)) => (s, d.trim_end_matches(')')),
        None => (rest, ""),
    };
    let sym = sym.split("+0x").next().unwrap();
    if sym == "[unknown]" {
        let base = dso.rsplit('/').next().unwrap();
        return format!("[{}]", base.trim_matches(['[', ']']));
    }
    sym.to_string()
}

/// `perf_sample.cpu`: the `[cpu]` perf script prints (a recording with `--sample-cpu`),
/// per thread, as the headers read plainly count them; NULL where it printed none.
#[test]
fn perf_samples_have_the_cpu_perf_printed() {
    let rel = "real/profiles/deep_cpu.perf";
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut want: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for head in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with([' ', '\t']))
    {
        let w: Vec<&str> = head.split_whitespace().collect();
        let cpu: i64 = w[2].trim_matches(['[', ']']).parse().unwrap();
        *want
            .entry(format!("{} {cpu}", w[1]))
            .or_insert(vec![0])
            .first_mut()
            .unwrap() += 1;
    }
    assert!(want.len() >= 3, "{want:?}");
    let sql = "SELECT t.tid || ' ' || s.cpu, COUNT(*) FROM perf_sample s JOIN thread t USING (utid) GROUP BY 1";
    assert_eq!(by_key(&db(rel), sql), want);
    let none = db("real/profiles/spin.perf")
        .query("SELECT COUNT(*), COUNT(cpu) FROM perf_sample")
        .unwrap();
    assert!(
        none.rows[0][0].as_i64() > Some(100) && none.rows[0][1] == 0,
        "{:?}",
        none.rows
    );
}

/// Per (tid, leaf function): its samples, stack depth and whether the leaf is the kernel's,
/// from `perf script` text read plainly.
#[test]
fn perf_samples_have_their_leaf_depth_and_cpu_mode() {
    let rel = "real/profiles/spin_fields.perf";
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut want: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for rec in text.split("\n\n").filter(|r| !r.trim().is_empty()) {
        let mut lines = rec
            .lines()
            .filter(|l| !l.starts_with("  ") || l.starts_with("\t"));
        let head = lines.next().unwrap();
        let tid = head
            .split_whitespace()
            .nth(1)
            .unwrap()
            .split('/')
            .nth(1)
            .unwrap();
        let frames: Vec<&str> = lines.filter(|l| l.starts_with('\t')).collect();
        let leaf = perf_function(frames[0]);
        let kernel = i64::from(frames[0].ends_with("([kernel.kallsyms])"));
        let e = (want.entry(format!("{tid} {leaf}"))).or_insert(vec![0, 0, 0]);
        e[0] += 1;
        e[1] = e[1].max(frames.len() as i64 - 1);
        e[2] += kernel;
    }
    let got = by_key(
        &db(rel),
        "SELECT t.tid || ' ' || f.name, COUNT(*), MAX(c.depth), \
         SUM(s.cpu_mode = 'kernel') FROM perf_sample s JOIN thread t USING (utid) \
         JOIN stack_profile_callsite c ON c.id = s.callsite_id \
         JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY 1",
    );
    assert!(want.len() >= 5, "{want:?}");
    assert_eq!(got, want);
    let d = db(rel);
    let cpu = d
        .query("SELECT COUNT(*) FROM cpu_profile_stack_sample")
        .unwrap();
    assert_eq!(cpu.rows[0][0], 0, "perf's samples are perf_sample's");
    // Each callsite's parent is one level up, and the module is the frame's mapping.
    let bad = d
        .query(
            "SELECT COUNT(*) FROM stack_profile_callsite c JOIN stack_profile_callsite p \
             ON c.parent_id = p.id WHERE c.depth != p.depth + 1",
        )
        .unwrap();
    assert_eq!(bad.rows[0][0], 0);
    // The module is a frame's mapping; where perf printed source lines (`-F +srcline`),
    // the frame's file and line.
    let mapping = "SELECT m.name, MIN(f.line) FROM stack_profile_frame f \
         JOIN stack_profile_mapping m ON m.id = f.mapping WHERE f.name = 'leaf' GROUP BY 1";
    let plain = by_key(&db("real/profiles/spin.perf"), mapping);
    assert_eq!(plain.keys().collect::<Vec<_>>(), ["/tmp/samp/spin"]);
    let lines = d.query(mapping).unwrap();
    assert_eq!(lines.rows[0][0], "spin.c");
    assert!(lines.rows[0][1].as_i64().unwrap() > 0, "{:?}", lines.rows);
}

/// Per leaf function of a `node --cpu-prof` profile: its samples and the sum of their
/// time deltas to the next sample, from the JSON read plainly.
#[test]
fn cpuprofile_samples_have_their_leaf_and_weight() {
    let rel = "real/profiles/work.cpuprofile";
    let v: Value = serde_json::from_slice(&std::fs::read(fixture(rel)).unwrap()).unwrap();
    let mut name = BTreeMap::new();
    for n in v["nodes"].as_array().unwrap() {
        let f = n["callFrame"]["functionName"].as_str().unwrap();
        let f = if f.is_empty() { "(anonymous)" } else { f };
        name.insert(n["id"].as_i64().unwrap(), f.to_string());
    }
    let samples = v["samples"].as_array().unwrap();
    let deltas = v["timeDeltas"].as_array().unwrap();
    let mut want: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (s, _) in samples.iter().zip(deltas) {
        let leaf = &name[&s.as_i64().unwrap()];
        want.entry(leaf.clone()).or_insert(vec![0])[0] += 1;
    }
    let got = by_key(
        &db(rel),
        "SELECT f.name, COUNT(*) FROM cpu_profile_stack_sample s \
         JOIN stack_profile_callsite c ON c.id = s.callsite_id \
         JOIN stack_profile_frame f ON f.id = c.frame_id GROUP BY 1",
    );
    assert!(want.len() > 5, "{want:?}");
    assert_eq!(got, want);
    let d = db(rel);
    let n = d
        .query("SELECT COUNT(*), COUNT(ts) FROM cpu_profile_stack_sample")
        .unwrap();
    assert_eq!(n.rows[0][0], samples.len() as i64);
    assert_eq!(n.rows[0][1], samples.len() as i64);
}
