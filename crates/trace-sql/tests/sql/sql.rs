//! SQL over traces, checked against the model: row counts and sums against `Trace::stats`,
//! pushed-down constraints against the same query with pushdown defeated, the tree functions
//! against the model's navigation, and args against the events' JSON.

use std::sync::Arc;

use serde_json::Value;
use spall_format::synth::{Rng, Synth};
use trace_model::{flags, StatsFilter, Trace};
use trace_sql::TraceDb;

/// A trace of `tests/fixtures`, loaded.
fn fixture_trace(rel: &str) -> Trace {
    trace_model::load(spall_test_support::fixture(rel)).unwrap()
}

fn synth() -> Trace {
    let mut bytes = Vec::new();
    Synth {
        spans: 30_000,
        ..Synth::default()
    }
    .write_spall(&mut bytes)
    .unwrap();
    trace_model::load_bytes(&bytes).unwrap()
}

fn one(db: &TraceDb, sql: &str) -> Value {
    let r = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows[0][0].clone()
}

#[test]
fn counts_and_sums_match_the_model() {
    for t in [
        synth(),
        fixture_trace("real/chrome116_devtools_export.json"),
    ] {
        let stats = t.stats(&StatsFilter::default());
        let spans = t.span_count();
        let t = Arc::new(t);
        let db = TraceDb::new(t.clone()).unwrap();
        assert_eq!(
            one(&db, "SELECT COUNT(*) FROM slice WHERE kind = 'span'"),
            spans
        );
        assert_eq!(
            one(&db, "SELECT COUNT(*) FROM thread_track"),
            t.threads().len() as u64
        );
        // Every process has its main thread, as in trace_processor, and only one.
        assert_eq!(
            one(&db, "SELECT COUNT(*) FROM process p WHERE (SELECT COUNT(*) FROM thread WHERE upid = p.upid AND tid = p.pid) != 1"),
            0
        );
        let r = db
            .query("SELECT name, COUNT(*), SUM(dur), SUM(self_dur) FROM slice WHERE kind = 'span' AND dur >= 0 GROUP BY name")
            .unwrap();
        assert_eq!(r.rows.len(), stats.len());
        for row in &r.rows {
            let s = stats
                .iter()
                .find(|s| t.str(s.name) == row[0].as_str().unwrap())
                .unwrap();
            assert_eq!(row[1], s.count, "{row:?}");
            assert_eq!(row[2], s.total_ns, "{row:?}");
            assert_eq!(row[3], s.self_ns, "{row:?}");
        }
    }
}

#[test]
fn pushed_down_constraints_return_what_a_full_scan_does() {
    let t = Arc::new(synth());
    let db = TraceDb::new(t.clone()).unwrap();
    let (t0, t1) = (t.start_ns(), t.end_ns());
    let mut rng = Rng(7);
    let name = one(&db, "SELECT name FROM slice WHERE depth = 2 LIMIT 1");
    let name = name.as_str().unwrap();
    for _ in 0..20 {
        let a = t0 + rng.below((t1 - t0) as u64) as i64;
        let b = a + rng.below(((t1 - a) / 4).max(1) as u64) as i64;
        let utid = rng.below(t.threads().len() as u64);
        let depth = rng.below(4);
        for (pushed, scanned) in [
            (
                format!("track_id = {utid} AND ts BETWEEN {a} AND {b}"),
                format!("+track_id = {utid} AND +ts BETWEEN {a} AND {b}"),
            ),
            (
                format!("spall_utid = {utid} AND depth = {depth}"),
                format!("+spall_utid = {utid} AND +depth = {depth}"),
            ),
            (
                format!("depth = {depth} AND ts > {a} AND ts < {b}"),
                format!("+depth = {depth} AND +ts > {a} AND +ts < {b}"),
            ),
            (
                format!("name = '{name}' AND ts >= {a}"),
                format!("+name = '{name}' AND +ts >= {a}"),
            ),
            (format!("id = {}", a % 1000), format!("+id = {}", a % 1000)),
        ] {
            let q = |w: &str| {
                db.query(&format!(
                    "SELECT id, ts, dur, name FROM slice WHERE {w} ORDER BY id"
                ))
                .unwrap()
                .rows
            };
            assert_eq!(q(&pushed), q(&scanned), "{pushed}");
        }
    }
    // And the plan says the constraints went into the table.
    let plan = db
        .query("EXPLAIN QUERY PLAN SELECT * FROM slice WHERE track_id = 1 AND ts BETWEEN 5 AND 9")
        .unwrap();
    let detail = plan.rows[0].last().unwrap().as_str().unwrap().to_string();
    assert!(
        detail.contains("3=") && detail.contains("1g") && detail.contains("1l"),
        "{detail}"
    );
}

#[test]
fn parents_ancestors_and_descendants_follow_the_model() {
    let t = Arc::new(fixture_trace("edge/simple.json"));
    let db = TraceDb::new(t.clone()).unwrap();
    let rows = db
        .query("SELECT id, depth, parent_id, name FROM slice ORDER BY id")
        .unwrap()
        .rows;
    for r in &rows {
        let depth = r[1].as_i64().unwrap();
        assert_eq!(r[2].is_null(), depth == 0, "{r:?}");
        if let Some(p) = r[2].as_i64() {
            let parent = rows.iter().find(|x| x[0] == p).unwrap();
            assert_eq!(parent[1].as_i64().unwrap() + 1, depth);
        }
    }
    let deepest = db
        .query("SELECT id, depth FROM slice ORDER BY depth DESC LIMIT 1")
        .unwrap()
        .rows[0]
        .clone();
    let (id, depth) = (deepest[0].as_i64().unwrap(), deepest[1].as_i64().unwrap());
    let anc = db
        .query(&format!("SELECT depth FROM ancestor_slice({id})"))
        .unwrap()
        .rows;
    let depths: Vec<i64> = anc.iter().map(|r| r[0].as_i64().unwrap()).collect();
    assert_eq!(depths, (0..depth).collect::<Vec<_>>());
    let root = one(
        &db,
        &format!("SELECT id FROM ancestor_slice({id}) WHERE depth = 0"),
    );
    let desc = one(
        &db,
        &format!("SELECT COUNT(*) FROM descendant_slice({root}) WHERE id = {id}"),
    );
    assert_eq!(desc, 1);
    // Every descendant lies inside the root.
    let outside = one(
        &db,
        &format!(
            "SELECT COUNT(*) FROM descendant_slice({root}) d, slice r \
             WHERE r.id = {root} AND (d.ts < r.ts OR d.ts > r.ts + r.dur)"
        ),
    );
    assert_eq!(outside, 0);
}

#[test]
fn args_unfinished_and_the_thread_slice_view() {
    let json = br#"[
      {"name":"load","ph":"X","ts":0,"dur":5,"pid":1,"tid":2,
       "args":{"url":"a.js","size":1024,"ratio":0.5,"ok":true,"list":[1,2],"nested":{"k":"v"}}},
      {"name":"open","ph":"B","ts":1,"pid":1,"tid":2},
      {"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"main"}}
    ]"#;
    let t = Arc::new(trace_model::load_bytes(json).unwrap());
    let db = TraceDb::new(t.clone()).unwrap();
    let r = db
        .query(
            "SELECT key, flat_key, value_type, int_value, string_value, real_value
             FROM slice JOIN args USING (arg_set_id) WHERE slice.name = 'load' ORDER BY key",
        )
        .unwrap()
        .rows;
    let keys: Vec<&str> = r.iter().map(|x| x[0].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "args.list[0]",
            "args.list[1]",
            "args.nested.k",
            "args.ok",
            "args.ratio",
            "args.size",
            "args.url"
        ]
    );
    assert_eq!(r[0][1], "args.list");
    assert_eq!(
        (r[5][2].as_str(), r[5][3].as_i64()),
        (Some("int"), Some(1024))
    );
    assert_eq!(r[6][4], "a.js");
    assert_eq!(r[4][5], 0.5);
    // Unfinished: dur -1 and the flag, as Perfetto marks them.
    let u = db
        .query("SELECT dur, unfinished FROM slice WHERE name = 'open'")
        .unwrap()
        .rows;
    assert_eq!(u[0], [Value::from(-1), Value::from(1)]);
    let lane = &t.threads()[0].lanes[1];
    assert!(lane.flags[0] & flags::UNFINISHED != 0);
    let v = db
        .query("SELECT thread_name, tid, pid, name FROM thread_slice ORDER BY ts")
        .unwrap()
        .rows;
    assert_eq!(v[0][0], "main");
    assert_eq!((v[0][1].as_i64(), v[0][2].as_i64()), (Some(2), Some(1)));
}

#[test]
fn counters_instants_and_flows() {
    let t = Arc::new(fixture_trace("real/demo_lthi_excerpt.json"));
    let samples = t.counter_samples();
    let db = TraceDb::new(t.clone()).unwrap();
    assert_eq!(one(&db, "SELECT COUNT(*) FROM counter"), samples);
    assert_eq!(
        one(&db, "SELECT COUNT(*) FROM counter_track"),
        t.counters().len() as u64
    );
    assert_eq!(
        one(&db, "SELECT COUNT(*) FROM instant"),
        t.instants().len() as u64
    );
    assert_eq!(
        one(&db, "SELECT COUNT(*) FROM flow"),
        t.flow_links().len() as u64
    );
    // A track's samples through the pushed-down track_id equal its series.
    let c = &t.counters()[0];
    let track = t.threads().len();
    let r = db
        .query(&format!(
            "SELECT COUNT(*), SUM(value) FROM counter WHERE track_id = {track}"
        ))
        .unwrap()
        .rows;
    assert_eq!(r[0][0], c.ts.len() as u64);
    let sum: f64 = c.values.iter().sum();
    assert!((r[0][1].as_f64().unwrap() - sum).abs() < 1e-6 * sum.abs().max(1.0));
    // Flows join back to slices.
    let joined = one(
        &db,
        "SELECT COUNT(*) FROM flow f JOIN slice a ON a.id = f.slice_out JOIN slice b ON b.id = f.slice_in",
    );
    assert_eq!(joined, t.flow_links().len() as u64);
}

#[test]
fn errors_say_where() {
    let t = Arc::new(fixture_trace("edge/simple.json"));
    let db = TraceDb::new(t).unwrap();
    let e = db.query("SELECT 1; SELECT nme FROM slice").unwrap_err();
    assert!(e.message.contains("no such column: nme"), "{e}");
    assert_eq!(e.offset, Some(17));
}

#[test]
fn group_by_name_streams_without_a_sort() {
    let t = Arc::new(synth());
    let db = TraceDb::new(t).unwrap();
    let plan = db
        .query("EXPLAIN QUERY PLAN SELECT name, SUM(dur) FROM slice GROUP BY name")
        .unwrap();
    let details: Vec<String> = plan.rows.iter().map(|r| r[3].to_string()).collect();
    assert!(details.iter().any(|d| d.contains("5G")), "{details:?}");
    assert!(
        !details.iter().any(|d| d.contains("GROUP BY")),
        "a temporary b-tree for GROUP BY: {details:?}"
    );
    // The same answer as the sorting plan (`+name` hides the column from the table).
    let q = |g: &str| {
        db.query(&format!(
            "SELECT name, COUNT(*), SUM(dur), MIN(ts) FROM slice GROUP BY {g} ORDER BY name"
        ))
        .unwrap()
        .rows
    };
    assert_eq!(q("name"), q("+name"));
    // ORDER BY name, either way, is served in order too.
    for dir in ["", " DESC"] {
        let names = |o: &str| -> Vec<Value> {
            db.query(&format!(
                "SELECT name FROM slice WHERE depth = 1 ORDER BY {o}{dir}"
            ))
            .unwrap()
            .rows
            .into_iter()
            .map(|mut r| r.remove(0))
            .collect()
        };
        assert_eq!(names("name"), names("+name"), "ORDER BY name{dir}");
    }
}

/// Query shapes from Perfetto's trace processor documentation (slices with their thread
/// through `thread_track`, counters through `counter_track`, ancestors), unchanged.
#[test]
fn perfetto_documented_queries_run_unchanged() {
    let t = Arc::new(fixture_trace("real/demo_lthi_excerpt.json"));
    let db = TraceDb::new(t.clone()).unwrap();
    let r = db
        .query(
            "SELECT ts, dur, slice.name AS slice_name, thread.name AS thread_name
             FROM slice JOIN thread_track ON slice.track_id = thread_track.id
             JOIN thread USING (utid)",
        )
        .unwrap();
    let thread_instants = (t.instants().iter())
        .filter(|i| i.scope == trace_model::InstantScope::Thread)
        .count();
    assert_eq!(r.rows.len() as u64, t.span_count() + thread_instants as u64);
    assert_eq!(r.columns, ["ts", "dur", "slice_name", "thread_name"]);
    let c = &t.counters()[0];
    // A JSON counter's track is named `NAME KEY`, as trace_processor names it.
    let name = format!("{} {}", t.str(c.name), t.str(c.key));
    let r = db
        .query(&format!(
            "SELECT ts, value FROM counter JOIN counter_track ON counter.track_id = counter_track.id
             WHERE counter_track.name = '{}' ORDER BY ts",
            name.replace('\'', "''")
        ))
        .unwrap();
    let same_name: usize = (t.counters().iter())
        .filter(|s| (s.name, s.key) == (c.name, c.key))
        .map(|s| s.ts.len())
        .sum();
    assert_eq!(r.rows.len(), same_name);
    let r = db
        .query(
            "SELECT COUNT(*) FROM slice s
             WHERE s.depth = 2 AND s.kind = 'span' AND (SELECT COUNT(*) FROM ancestor_slice(s.id)) = 2",
        )
        .unwrap();
    let depth2: usize = t
        .threads()
        .iter()
        .map(|th| th.lanes.get(2).map_or(0, |l| l.len()))
        .sum();
    assert_eq!(r.rows[0][0], depth2 as u64);
}

/// Instants and async slices are slices as trace_processor places them: a thread instant
/// nested in the deepest span open at its time, an `n` a zero-length child, an unfinished
/// async slice `dur = -1`, legacy `S`/`T`/`F` left out; the tree functions reach them.
#[test]
fn instants_and_async_slices_nest_as_trace_processor_does() {
    let t = Arc::new(fixture_trace("sql-parity/every_kind_trace.json"));
    let db = TraceDb::new(t).unwrap();
    let row = |name: &str| {
        db.query(&format!(
            "SELECT s.depth, s.dur, p.name, s.kind FROM slice s LEFT JOIN slice p ON s.parent_id = p.id
             WHERE s.name = '{name}'"
        ))
        .unwrap()
        .rows
    };
    let v = |d: i64, dur: i64, p: Option<&str>, k: &str| {
        vec![vec![
            Value::from(d),
            Value::from(dur),
            p.map_or(Value::Null, Value::from),
            Value::from(k),
        ]]
    };
    assert_eq!(row("mark_in_raster"), v(3, 0, Some("raster"), "instant"));
    assert_eq!(row("mark_default_scope"), v(1, 0, Some("frame"), "instant"));
    assert_eq!(row("global_mark"), v(0, 0, None, "instant"));
    assert_eq!(row("progress"), v(2, 0, Some("dns"), "async"));
    assert_eq!(row("open_async"), v(0, -1, None, "async"));
    assert!(row("legacy").is_empty());
    let path = one(
        &db,
        "SELECT GROUP_CONCAT(a.name, '/') FROM slice s, ancestor_slice(s.id) a
         WHERE s.name = 'mark_in_raster'",
    );
    assert_eq!(path, "frame/paint/raster");
    let under = |name: &str| {
        one(
            &db,
            &format!(
                "SELECT GROUP_CONCAT(d.name, ',') FROM (SELECT id FROM slice WHERE name = '{name}' ORDER BY ts LIMIT 1) s,
                 descendant_slice(s.id) d"
            ),
        )
    };
    assert_eq!(under("paint"), "raster,mark_in_raster");
    assert_eq!(under("load"), "dns,progress");
    // Process and global instants are on tracks of their own: a process's and the trace's.
    let on = one(
        &db,
        "SELECT GROUP_CONCAT(s.name || ':' || t.type, ',' ORDER BY s.ts)
         FROM slice s JOIN track t ON s.track_id = t.id
         WHERE s.name IN ('proc_mark', 'global_mark')",
    );
    assert_eq!(on, "proc_mark:process_track,global_mark:global_track");
}

/// A Chromium protobuf trace's descriptors below a thread's track (`AnimationFrame`,
/// `performance.measure`) give that thread second tracks, as trace_processor's do.
#[test]
fn descriptors_below_a_thread_give_it_thread_tracks() {
    let t = Arc::new(fixture_trace("real/chromium148_startup.pftrace.gz"));
    let db = TraceDb::new(t.clone()).unwrap();
    // The model's slices of such descriptors: a global (not `id2.local`) id in a process.
    let below: Vec<_> = t
        .async_slices()
        .iter()
        .filter(|s| s.flags & trace_model::async_flags::LOCAL == 0)
        .filter(|s| t.processes()[s.process as usize].pid != trace_model::ExtId::Num(0))
        .collect();
    assert_eq!(below.len(), 35);
    let threads: std::collections::BTreeSet<i64> = below.iter().map(|s| s.thread as i64).collect();
    let on_threads = db
        .query(
            "SELECT tt.utid, s.spall_utid, tt.id != tt.utid FROM slice s
             JOIN thread_track tt ON s.track_id = tt.id WHERE s.kind = 'async'",
        )
        .unwrap()
        .rows;
    assert_eq!(on_threads.len(), below.len());
    for row in &on_threads {
        assert!(threads.contains(&row[0].as_i64().unwrap()), "{row:?}");
        assert_eq!(row[0], row[1], "{row:?}");
        assert_eq!(
            row[2],
            Value::from(1),
            "{row:?}: not the thread's own track"
        );
    }
    // Siblings of one name share a track when their slices do not overlap: the two
    // `AnimationFrame` descriptors (with the `::Presentation` marks on them) and the 13
    // `performance.measure` ones.
    let tracks = db
        .query(
            "SELECT tt.name, tt.utid, COUNT(*) FROM thread_track tt JOIN slice s ON s.track_id = tt.id
             WHERE s.kind = 'async' GROUP BY tt.id ORDER BY tt.id",
        )
        .unwrap()
        .rows;
    let names: Vec<_> = (tracks.iter())
        .map(|r| (r[0].as_str().unwrap(), r[2].as_i64().unwrap()))
        .collect();
    assert_eq!(names, [("AnimationFrame", 22), ("performance.measure", 13)]);
    // Looked up by id, through `track` as through `thread_track`.
    let id = one(
        &db,
        "SELECT MIN(track_id) FROM slice WHERE kind = 'async' AND name = 'AnimationFrame'",
    );
    let sql = format!(
        "SELECT t.type, tt.utid FROM track t, thread_track tt WHERE t.id = {id} AND tt.id = {id}"
    );
    let r = db.query(&sql).unwrap().rows;
    assert_eq!(
        r,
        vec![vec![Value::from("thread_track"), tracks[0][1].clone()]]
    );
}

/// The generator's own numbers, not the model's: every span it produced, by name.
#[test]
fn group_by_name_equals_the_generators_statistics() {
    use std::collections::BTreeMap;
    let synth = Synth {
        spans: 20_000,
        names: 300,
        ..Synth::default()
    };
    let names = synth.name_table();
    let mut want: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    synth.walk(|step, s| {
        if step == spall_format::synth::Step::Close {
            let e = want.entry(names[s.name as usize].clone()).or_default();
            e.0 += 1;
            e.1 += (s.end_ns - s.start_ns) as i64;
        }
    });
    let mut bytes = Vec::new();
    synth.write_spall(&mut bytes).unwrap();
    let db = TraceDb::new(Arc::new(trace_model::load_bytes(&bytes).unwrap())).unwrap();
    let got: BTreeMap<String, (u64, i64)> = db
        .query("SELECT name, count(*), sum(dur) FROM slice GROUP BY name")
        .unwrap()
        .rows
        .into_iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                (r[1].as_u64().unwrap(), r[2].as_i64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// A JSON string pid or tid stays a string, and names its process or thread unless metadata
/// does, as trace_processor names them (it numbers them its own way).
#[test]
fn string_pids_and_tids_name_their_process_and_thread() {
    let t = trace_model::load_bytes(
        br#"[{"ph":"X","name":"a","ts":0,"dur":1,"pid":"Spans","tid":"Profiler"},
             {"ph":"X","name":"b","ts":0,"dur":1,"pid":"Named","tid":"T"},
             {"ph":"M","name":"process_name","pid":"Named","tid":"T","args":{"name":"proc"}},
             {"ph":"M","name":"thread_name","pid":"Named","tid":"T","args":{"name":"thr"}},
             {"ph":"X","name":"c","ts":0,"dur":1,"pid":1,"tid":2}]"#,
    )
    .unwrap();
    let db = TraceDb::new(Arc::new(t)).unwrap();
    let rows = |sql: &str| db.query(sql).unwrap().rows;
    let threads = rows(
        "SELECT thread.tid, thread.name, process.pid, process.name FROM thread \
         JOIN process USING (upid) WHERE thread.tid = thread.name OR thread.tid = 'T' \
         OR thread.tid = 2 ORDER BY 3, 1",
    );
    let want = serde_json::json!([
        [2, null, 1, null],
        ["T", "thr", "Named", "proc"],
        ["Profiler", "Profiler", "Spans", "Spans"]
    ]);
    assert_eq!(serde_json::to_value(threads).unwrap(), want);
}
