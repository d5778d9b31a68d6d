//! Navigation on a real nested trace: parent, children, occurrences, and the index's size.

use spall_format::synth::Synth;
use trace_index::{children, occurrences, occurrences_of, parent, TraceIndex};
use trace_model::{load_bytes, SpanRef};

fn trace() -> trace_model::Trace {
    let s = Synth {
        seed: 3,
        spans: 50_000,
        threads: 4,
        processes: 2,
        max_depth: 30,
        ..Synth::default()
    };
    let mut b = Vec::new();
    s.write_spall(&mut b).unwrap();
    load_bytes(&b).unwrap()
}

#[test]
fn parent_and_children_agree_with_the_nesting() {
    let t = trace();
    let mut checked = 0;
    for (ti, th) in t.threads.iter().enumerate() {
        for (d, lane) in th.lanes.iter().enumerate() {
            for i in (0..lane.len()).step_by(7) {
                let r = SpanRef {
                    thread: ti as u32,
                    depth: d as u32,
                    index: i as u32,
                };
                match parent(&t, r) {
                    None => assert_eq!(d, 0),
                    Some(p) => {
                        let ps = t.span(p);
                        assert!(
                            ps.start <= lane.start[i] && lane.start[i] < ps.end().max(ps.start + 1)
                        );
                        assert!(
                            children(&t, p).contains(&i),
                            "{r:?} not among its parent's children"
                        );
                    }
                }
                for c in children(&t, r) {
                    let child = SpanRef {
                        thread: r.thread,
                        depth: r.depth + 1,
                        index: c as u32,
                    };
                    assert_eq!(parent(&t, child), Some(r));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 5000);
}

#[test]
fn occurrences_are_every_match_in_time_order() {
    let t = trace();
    let name = t.threads[0].lanes[0].name[0];
    let occ = occurrences_of(&t, name);
    let brute: usize = t
        .threads
        .iter()
        .flat_map(|th| &th.lanes)
        .map(|l| l.name.iter().filter(|&&n| n == name).count())
        .sum();
    assert_eq!(occ.len(), brute);
    assert!(occ
        .windows(2)
        .all(|w| t.span(w[0]).start <= t.span(w[1]).start));
    assert!(occ.iter().all(|&r| t.span(r).name == name));
    // Substring search over every name.
    let all = occurrences(&t, |s| s.contains("::"));
    assert_eq!(all.len() as u64, t.span_count());
    assert!(occurrences(&t, |s| s.contains("no such name")).is_empty());
}

#[test]
fn the_index_adds_at_most_8_bytes_per_span() {
    let t = trace();
    let idx = TraceIndex::build(&t);
    let per_span = idx.heap_bytes() as f64 / t.span_count() as f64;
    assert!(per_span <= 8.0, "{per_span} bytes per span");
}
