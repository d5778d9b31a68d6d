//! Stats on a generated trace (random nesting, many threads, names with quotes and
//! non-ASCII text) match an expectation computed independently from the generator's own
//! spans, and are identical whether the trace is written as JSON (X and B/E mixed),
//! `.spall` v1, `.spall` v3 or Perfetto protobuf.

use std::collections::HashMap;

use spall_format::synth::{Step, Synth};
use trace_model::{load_bytes, percentile, NameStats, StatsFilter, Trace};

fn synth() -> Synth {
    Synth {
        seed: 42,
        processes: 3,
        threads: 5,
        spans: 60_000,
        max_depth: 40,
        names: 300,
        exotic_names: true,
    }
}

/// (name, count, total, self, min, max, mean, p50, p90, p99), from the generator's spans.
type Row = (String, u64, i64, i64, i64, i64, i64, i64, i64, i64);

fn expected(s: &Synth) -> Vec<Row> {
    let names = s.name_table();
    let mut durs: HashMap<u32, Vec<i64>> = HashMap::new();
    let mut selfs: HashMap<u32, i64> = HashMap::new();
    // Per open span: the sum of its closed children's durations.
    let mut child_sum: Vec<i64> = Vec::new();
    s.walk(|step, sp| match step {
        Step::Open => child_sum.push(0),
        Step::Close => {
            let dur = (sp.end_ns - sp.start_ns) as i64;
            let children = child_sum.pop().unwrap();
            if let Some(parent) = child_sum.last_mut() {
                *parent += dur;
            }
            durs.entry(sp.name).or_default().push(dur);
            *selfs.entry(sp.name).or_default() += dur - children;
        }
    });
    let mut rows: Vec<Row> = durs
        .into_iter()
        .map(|(n, mut d)| {
            d.sort_unstable();
            let total: i64 = d.iter().sum();
            let c = d.len() as i64;
            (
                names[n as usize].clone(),
                c as u64,
                total,
                selfs[&n],
                d[0],
                d[d.len() - 1],
                (total + c / 2) / c,
                percentile(&d, 50),
                percentile(&d, 90),
                percentile(&d, 99),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn rows(t: &Trace) -> Vec<Row> {
    let mut r: Vec<Row> = t
        .stats(&StatsFilter::default())
        .iter()
        .map(|x: &NameStats| {
            (
                t.str(x.name).to_string(),
                x.count,
                x.total_ns,
                x.self_ns,
                x.min_ns,
                x.max_ns,
                x.mean_ns,
                x.p50_ns,
                x.p90_ns,
                x.p99_ns,
            )
        })
        .collect();
    r.sort();
    r
}

#[test]
fn stats_match_the_generator_in_every_format() {
    let s = synth();
    let want = expected(&s);
    assert!(want.iter().any(|r| r.0.contains('"')) && want.iter().any(|r| r.0.contains('日')));

    let mut json = Vec::new();
    s.write_json(&mut json, true).unwrap();
    let mut v1 = Vec::new();
    s.write_spall_v1(&mut v1).unwrap();
    let mut v3 = Vec::new();
    s.write_spall(&mut v3).unwrap();
    let mut proto = Vec::new();
    s.write_proto(&mut proto).unwrap();

    for (what, bytes) in [
        ("json", &json),
        ("spall v1", &v1),
        ("spall v3", &v3),
        ("protobuf", &proto),
    ] {
        let t = load_bytes(bytes).unwrap();
        assert!(
            t.decode_summary().diagnostics.is_empty(),
            "{what}: {:?}",
            t.decode_summary().diagnostics
        );
        assert!(t.diagnostics().is_empty(), "{what}: {:?}", t.diagnostics());
        assert_eq!(t.threads().len(), 15, "{what}");
        assert_eq!(t.span_count(), 60_000, "{what}");
        assert_eq!(rows(&t), want, "{what}");
    }
}
