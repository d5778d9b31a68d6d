//! The rules of docs/MODEL.md, one test each, on small hand-written traces.

use std::collections::BTreeMap;

use crate::common;

use spall_format::DiagnosticKind;
use trace_model::{flags, load_bytes, StatsFilter, Trace};

/// Thread 0's lanes as (name, start µs-as-ns, dur, flags) per depth.
fn lanes(t: &Trace, thread: usize) -> Vec<Vec<(String, i64, i64, u8)>> {
    t.threads()[thread]
        .lanes
        .iter()
        .map(|l| {
            (0..l.len())
                .map(|i| {
                    (
                        t.str(l.name[i]).to_string(),
                        l.start[i],
                        l.dur[i],
                        l.flags[i],
                    )
                })
                .collect()
        })
        .collect()
}

fn diags(t: &Trace) -> BTreeMap<String, u64> {
    t.diagnostics()
        .counts()
        .map(|(k, n)| (k.name().into_owned(), n))
        .collect()
}

fn load(json: &str) -> Trace {
    load_bytes(json.as_bytes()).expect("loads")
}

const BE: u8 = flags::FROM_BEGIN_END;

#[test]
fn begin_end_and_complete_nest_by_containment() {
    let t = load(
        r#"[{"ph":"B","name":"a","ts":0,"pid":1,"tid":1},
            {"ph":"X","name":"b","ts":1,"dur":2,"pid":1,"tid":1},
            {"ph":"X","name":"c","ts":1.5,"dur":0.5,"pid":1,"tid":1},
            {"ph":"X","name":"d","ts":4,"dur":1,"pid":1,"tid":1},
            {"ph":"E","ts":10,"pid":1,"tid":1}]"#,
    );
    assert_eq!(
        lanes(&t, 0),
        vec![
            vec![("a".into(), 0, 10_000, BE)],
            vec![("b".into(), 1000, 2000, 0), ("d".into(), 4000, 1000, 0)],
            vec![("c".into(), 1500, 500, 0)],
        ]
    );
    assert!(diags(&t).is_empty());
    // self = dur - direct children
    let s = t.stats(&StatsFilter::default());
    let get = |n: &str| s.iter().find(|x| t.str(x.name) == n).unwrap().clone();
    assert_eq!(get("a").self_ns, 10_000 - 3000);
    assert_eq!(get("b").self_ns, 1500);
}

#[test]
fn out_of_order_events_are_sorted_per_thread_before_matching() {
    let t = load(
        r#"[{"ph":"E","ts":5,"pid":1,"tid":1},
            {"ph":"B","name":"inner","ts":2,"pid":1,"tid":1},
            {"ph":"B","name":"outer","ts":1,"pid":1,"tid":1},
            {"ph":"E","ts":9,"pid":1,"tid":1}]"#,
    );
    assert_eq!(
        lanes(&t, 0),
        vec![
            vec![("outer".into(), 1000, 8000, BE)],
            vec![("inner".into(), 2000, 3000, BE)]
        ]
    );
    assert!(diags(&t).is_empty());
}

/// As trace_processor: `E a` ends `a` below `b`, which then ends with it once a later
/// event comes (`misplaced_end_event`); `E b` finds no open `b`, nor `E x` an `x`.
#[test]
fn end_closes_the_innermost_begin_of_its_name_as_trace_processor_does() {
    let t = load(
        r#"[{"ph":"B","name":"a","ts":0,"pid":1,"tid":1},
            {"ph":"B","name":"b","ts":1,"pid":1,"tid":1},
            {"ph":"E","name":"a","ts":2,"pid":1,"tid":1},
            {"ph":"E","name":"b","ts":3,"pid":1,"tid":1},
            {"ph":"E","name":"x","ts":4,"pid":1,"tid":1}]"#,
    );
    assert_eq!(
        lanes(&t, 0),
        vec![
            vec![("a".into(), 0, 2000, BE)],
            vec![("b".into(), 1000, 1000, BE | flags::ENDED_WITH_PARENT)]
        ]
    );
    assert_eq!(
        diags(&t),
        BTreeMap::from([
            ("end_without_begin".into(), 2),
            ("misplaced_end_event".into(), 1)
        ])
    );
}

#[test]
fn unclosed_begins_end_at_the_trace_end_flagged_unfinished() {
    let t = load(
        r#"[{"ph":"B","name":"open","ts":1,"pid":1,"tid":1},
            {"ph":"X","name":"x","ts":2,"dur":3,"pid":1,"tid":1},
            {"ph":"i","name":"late","ts":20,"pid":1,"tid":2}]"#,
    );
    assert_eq!(t.end_ns(), 20_000);
    assert_eq!(
        lanes(&t, 0)[0],
        vec![("open".into(), 1000, 19_000, BE | flags::UNFINISHED)]
    );
    assert_eq!(diags(&t), BTreeMap::from([("unclosed_begin".into(), 1)]));
}

#[test]
fn partial_overlaps_are_kept_whole_and_lanes_never_overlap() {
    let t = load(
        r#"[{"ph":"X","name":"parent","ts":0,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"straddles","ts":5,"dur":10,"pid":1,"tid":1},
            {"ph":"X","name":"inside","ts":12,"dur":1,"pid":1,"tid":1},
            {"ph":"X","name":"next","ts":11,"dur":1,"pid":1,"tid":1}]"#,
    );
    let l = lanes(&t, 0);
    assert_eq!(l[0], vec![("parent".into(), 0, 10_000, 0)]);
    assert_eq!(
        l[1],
        vec![("straddles".into(), 5000, 10_000, flags::PARTIAL_OVERLAP)]
    );
    assert_eq!(
        l[2],
        vec![
            ("next".into(), 11_000, 1000, 0),
            ("inside".into(), 12_000, 1000, 0)
        ]
    );
    assert_eq!(diags(&t), BTreeMap::from([("partial_overlap".into(), 1)]));
    for th in t.threads() {
        for lane in &th.lanes {
            for i in 1..lane.len() {
                assert!(lane.end(i - 1) <= lane.start[i]);
            }
        }
    }
}

#[test]
fn repeated_zero_length_events_are_never_deduplicated() {
    let t = load(
        r#"[{"ph":"X","name":"z","ts":5,"dur":0,"pid":1,"tid":1},
            {"ph":"X","name":"z","ts":5,"dur":0,"pid":1,"tid":1},
            {"ph":"B","name":"z","ts":5,"pid":1,"tid":1},
            {"ph":"E","ts":5,"pid":1,"tid":1}]"#,
    );
    assert_eq!(t.span_count(), 3);
    assert_eq!(t.max_depth(), 1);
}

#[test]
fn hundred_thousand_levels_do_not_overflow_the_stack() {
    let n = 100_000;
    let mut s = String::from("[");
    for i in 0..n {
        s.push_str(&format!(
            "{{\"ph\":\"B\",\"name\":\"f{}\",\"ts\":{i},\"pid\":1,\"tid\":1}},",
            i % 7
        ));
    }
    for i in 0..n {
        s.push_str(&format!(
            "{{\"ph\":\"E\",\"ts\":{},\"pid\":1,\"tid\":1}},",
            2 * n - i
        ));
    }
    s.push_str("{\"ph\":\"i\",\"ts\":0,\"pid\":1,\"tid\":1}]");
    let t = common::on_small_stack(move || load_bytes(s.as_bytes()).unwrap());
    assert_eq!(t.max_depth(), n);
    assert_eq!(t.span_count(), n as u64);
    // Each level's self time is 2 µs (1 µs on each side of its child), the innermost 2 µs too.
    let s = t.stats(&StatsFilter::default());
    let total_self: i64 = s.iter().map(|x| x.self_ns).sum();
    assert_eq!(total_self, t.threads()[0].lanes[0].dur[0]);
}

#[test]
fn range_statistics_clip_spans_to_the_range() {
    let t = load(
        r#"[{"ph":"X","name":"a","ts":0,"dur":100,"pid":1,"tid":1},
            {"ph":"X","name":"b","ts":10,"dur":20,"pid":1,"tid":1},
            {"ph":"X","name":"b","ts":60,"dur":20,"pid":1,"tid":1},
            {"ph":"X","name":"c","ts":200,"dur":5,"pid":1,"tid":1}]"#,
    );
    let s = t.stats(&StatsFilter {
        range: Some((20_000, 70_000)),
        ..Default::default()
    });
    let got: Vec<(String, u64, i64, i64)> = s
        .iter()
        .map(|x| (t.str(x.name).to_string(), x.count, x.total_ns, x.self_ns))
        .collect();
    // a clipped to [20, 70): 50 µs, minus the clipped children 10 + 10.
    assert_eq!(
        got,
        vec![
            ("a".into(), 1, 50_000, 30_000),
            ("b".into(), 2, 20_000, 20_000)
        ]
    );
}

#[test]
fn stats_filters_by_thread_and_name() {
    let t = load(
        r#"[{"ph":"X","name":"render","ts":0,"dur":1,"pid":1,"tid":1},
            {"ph":"X","name":"update","ts":0,"dur":2,"pid":1,"tid":2},
            {"ph":"X","name":"render_ui","ts":3,"dur":4,"pid":1,"tid":2}]"#,
    );
    let s = t.stats(&StatsFilter {
        threads: Some(vec![1]),
        name: Some(trace_model::NameFilter::Regex(
            regex::Regex::new("^render").unwrap(),
        )),
        ..Default::default()
    });
    assert_eq!(s.len(), 1);
    assert_eq!(t.str(s[0].name), "render_ui");
}

#[test]
fn metadata_names_and_orders_processes_and_threads() {
    let t = load(
        r#"[{"ph":"M","name":"process_name","pid":2,"args":{"name":"GPU"}},
            {"ph":"M","name":"process_sort_index","pid":2,"args":{"sort_index":-1}},
            {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"main"}},
            {"ph":"M","name":"thread_sort_index","pid":1,"tid":9,"args":{"sort_index":-5}},
            {"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":7},
            {"ph":"X","name":"b","ts":0,"dur":1,"pid":1,"tid":9},
            {"ph":"X","name":"c","ts":0,"dur":1,"pid":2,"tid":1},
            {"ph":"M","name":"process_labels","pid":1,"args":{"labels":"x, y"}},
            {"ph":"M","name":"process_name","pid":3,"args":{}}]"#,
    );
    let names: Vec<String> = t
        .processes()
        .iter()
        .map(|p| p.name.map(|n| t.str(n)).unwrap_or("-").to_string())
        .collect();
    assert_eq!(names, ["GPU", "-", "-"]);
    let threads: Vec<String> = t
        .threads()
        .iter()
        .map(|th| format!("{}:{}", t.ext_id(th.pid), t.thread_label_of(th)))
        .collect();
    assert_eq!(threads, ["2:thread 1", "1:thread 9", "1:main"]);
    assert_eq!(t.processes()[1].labels.len(), 2);
    assert_eq!(diags(&t), BTreeMap::from([("bad_metadata".into(), 1)]));
}

trait Label {
    fn thread_label_of(&self, th: &trace_model::Thread) -> String;
}
impl Label for Trace {
    fn thread_label_of(&self, th: &trace_model::Thread) -> String {
        match th.name {
            Some(n) => self.str(n).to_string(),
            None => format!("thread {}", self.ext_id(th.tid)),
        }
    }
}

#[test]
fn string_pids_stay_distinct_processes() {
    let t = load(
        r#"[{"ph":"X","name":"a","ts":0,"dur":1,"pid":"Spans","tid":"x"},
            {"ph":"X","name":"a","ts":0,"dur":1,"pid":"","tid":"x"},
            {"ph":"X","name":"a","ts":0,"dur":1,"pid":0,"tid":"x"}]"#,
    );
    assert_eq!(t.processes().len(), 3);
    assert_eq!(t.threads().len(), 3);
}

#[test]
fn a_named_track_holds_its_operations_whatever_their_names() {
    // Perfetto's named async tracks, as the protobuf decoder hands them over: operations of
    // one id under an `M` `track_name`. Without the name each would be its own track.
    let t = load(
        r#"[{"ph":"M","name":"track_name","pid":1,"tid":1,"id":"20","args":{"name":"Requests"}},
            {"ph":"b","name":"fetch A","id":"20","ts":1,"pid":1,"tid":1},
            {"ph":"e","name":"fetch A","id":"20","ts":3,"pid":1,"tid":1},
            {"ph":"b","name":"fetch B","id":"20","ts":4,"pid":1,"tid":1},
            {"ph":"e","name":"fetch B","id":"20","ts":5,"pid":1,"tid":1},
            {"ph":"b","name":"other","id":"21","ts":1,"pid":1,"tid":1},
            {"ph":"e","name":"other","id":"21","ts":2,"pid":1,"tid":1}]"#,
    );
    let tracks: Vec<(&str, usize)> = (t.async_tracks().iter())
        .map(|a| (t.str(a.name), a.rows.iter().map(Vec::len).sum()))
        .collect();
    assert_eq!(tracks, [("Requests", 2), ("other", 1)]);
    assert!(t.diagnostics().is_empty(), "{:?}", t.warning_counts());
}

#[test]
fn a_thread_scoped_counter_is_its_threads_own() {
    // Same name and key on two threads and on the process: three series, not one.
    let t = load(
        r#"[{"ph":"C","name":"cpu","ts":1,"pid":1,"tid":1,"s":"t","args":{"value":1}},
            {"ph":"C","name":"cpu","ts":2,"pid":1,"tid":2,"s":"t","args":{"value":2}},
            {"ph":"C","name":"cpu","ts":3,"pid":1,"tid":1,"s":"t","args":{"value":3}},
            {"ph":"C","name":"cpu","ts":4,"pid":1,"tid":2,"args":{"value":4}}]"#,
    );
    let tid =
        |c: &trace_model::CounterSeries| c.thread.map(|th| t.ext_id(t.threads()[th as usize].tid));
    let got: Vec<_> = (t.counters().iter())
        .map(|c| (tid(c), c.values.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("1".to_string()), vec![1.0, 3.0]),
            (Some("2".to_string()), vec![2.0]),
            (None, vec![4.0])
        ]
    );
}

#[test]
fn every_phase_is_kept_or_counted() {
    let t = load(
        r#"[{"ph":"i","name":"i","ts":1,"pid":1,"tid":1,"s":"g"},
            {"ph":"I","name":"I","ts":2,"pid":1,"tid":1},
            {"ph":"R","name":"mark","ts":3,"pid":1,"tid":1},
            {"ph":"C","name":"mem","ts":4,"pid":1,"args":{"heap":10,"stack":"2.5","bad":"x"}},
            {"ph":"C","name":"mem","ts":5,"pid":1,"args":{"heap":12,"stack":"inf"}},
            {"ph":"s","name":"f","id":7,"ts":1,"pid":1,"tid":1},
            {"ph":"f","name":"f","id":7,"ts":2,"pid":1,"tid":2,"bp":"e"},
            {"ph":"b","name":"req","id":"0x1","ts":1,"pid":1,"tid":1},
            {"ph":"e","name":"req","id":"0x1","ts":9,"pid":1,"tid":1},
            {"ph":"P","name":"sample","ts":1,"pid":1,"tid":1},
            {"ph":"O","name":"obj","ts":1,"pid":1,"tid":1,"id":"0x2"},
            {"name":"no phase","ts":1}]"#,
    );
    assert_eq!(t.instants().len(), 3);
    assert_eq!(t.counters().len(), 2);
    assert_eq!(t.counter_samples(), 3);
    let heap = t
        .counters()
        .iter()
        .find(|c| t.str(c.key) == "heap")
        .unwrap();
    assert_eq!(
        (heap.ts.clone(), heap.values.clone()),
        (vec![4000, 5000], vec![10.0, 12.0])
    );
    assert_eq!(t.flows().len(), 1);
    assert_eq!(t.flows()[0].points.len(), 2);
    assert!(t.flows()[0].points[1].bind_enclosing);
    assert_eq!(t.async_events().len(), 2);
    assert_eq!(t.async_slices().len(), 1);
    assert_eq!(t.samples().len(), 1);
    assert_eq!(
        diags(&t),
        BTreeMap::from([
            // "x", and "inf" (no graph or statistic can use it).
            ("counter_not_numeric".into(), 2),
            ("event_without_phase".into(), 1),
            // No spans for the flow to bind to.
            ("flow_unbound".into(), 2),
            ("unmodelled_phase_O".into(), 1),
        ])
    );
}

#[test]
fn ends_at_one_timestamp_are_matched_by_name_as_a_set() {
    // Sampling converters write the E events of one instant in any order; the spans are the
    // same whichever E closes which B. An E whose name no open B has is ignored, as
    // trace_processor ignores it, and its B stays open.
    let t = load(
        r#"[{"ph":"B","name":"a","ts":0,"pid":1,"tid":1},
            {"ph":"B","name":"b","ts":1,"pid":1,"tid":1},
            {"ph":"E","name":"a","ts":5,"pid":1,"tid":1},
            {"ph":"E","name":"b","ts":5,"pid":1,"tid":1}]"#,
    );
    assert_eq!(
        lanes(&t, 0),
        vec![
            vec![("a".into(), 0, 5000, BE)],
            vec![("b".into(), 1000, 4000, BE)]
        ]
    );
    assert!(diags(&t).is_empty());
    let t = load(
        r#"[{"ph":"B","name":"a","ts":0,"pid":1,"tid":1},
            {"ph":"B","name":"b","ts":1,"pid":1,"tid":1},
            {"ph":"E","name":"x","ts":5,"pid":1,"tid":1},
            {"ph":"E","name":"b","ts":5,"pid":1,"tid":1},
            {"ph":"E","name":"y","ts":5,"pid":1,"tid":1}]"#,
    );
    assert_eq!(
        lanes(&t, 0),
        vec![
            vec![("a".into(), 0, 5000, BE | flags::UNFINISHED)],
            vec![("b".into(), 1000, 4000, BE)]
        ]
    );
    assert_eq!(
        diags(&t),
        BTreeMap::from([
            ("end_without_begin".into(), 2),
            ("unclosed_begin".into(), 1)
        ])
    );
}

/// A warning about a span points at the event that opened it, however far into its thread:
/// past the first of the matcher's segments, with the thread's spans in file order, and
/// sorted first (their byte offsets then go back and forth).
#[test]
fn a_span_warning_points_at_the_event_that_opened_it() {
    let x = |name: &str, ts: i64, dur: i64, tid: u32| {
        format!(r#"{{"ph":"X","name":"{name}","ts":{ts},"dur":{dur},"pid":1,"tid":{tid}}}"#)
    };
    let mut ev = Vec::new();
    for i in 0..3_000 {
        // Thread 1 in time order, thread 2 backwards.
        let (t1, t2) = (i * 100, (3_000 - i) * 100);
        ev.push(x("p", t1, 50, 1));
        ev.push(x("c", t1 + 1, 10, 1));
        ev.push(x("p", t2, 50, 2));
        ev.push(x("c", t2 + 1, 10, 2));
        if i == 2_000 {
            // Each starts inside a `c` and outlives it: kept whole, one level deeper.
            ev.push(x("odd1", t1 + 5, 20, 1));
            ev.push(x("odd2", t2 + 5, 20, 2));
        }
    }
    let json = format!("[{}]", ev.join(",\n"));
    let at = |name: &str| {
        json.find(&format!(r#"{{"ph":"X","name":"{name}""#))
            .unwrap() as u64
    };
    let t = load(&json);
    let mut offsets: Vec<u64> = (t.diagnostics().examples().iter())
        .filter(|w| w.kind.name() == "partial_overlap")
        .map(|w| w.offset)
        .collect();
    offsets.sort_unstable();
    assert_eq!(offsets, [at("odd1"), at("odd2")]);
}
