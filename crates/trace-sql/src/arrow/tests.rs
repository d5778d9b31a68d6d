//! The Arrow batches against the SQL tables they claim to be: same columns, same rows.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use serde_json::Value as Json;
use trace_model::Trace;

use super::{Tables, TABLES};
use crate::TraceDb;

/// A trace of `tests/fixtures`, loaded.
fn fixture_trace(rel: &str) -> Trace {
    trace_model::load(spall_test_support::fixture(rel)).unwrap()
}

fn synth() -> Trace {
    let mut bytes = Vec::new();
    spall_format::synth::Synth {
        spans: 20_000,
        ..Default::default()
    }
    .write_spall(&mut bytes)
    .unwrap();
    trace_model::load_bytes(&bytes).unwrap()
}

/// Row `i` of `b` as JSON values, as `TraceDb::query` gives them.
fn row(b: &RecordBatch, i: usize) -> Vec<Json> {
    b.columns()
        .iter()
        .map(|c| {
            if c.is_null(i) {
                return Json::Null;
            }
            match c.data_type() {
                DataType::Int64 => {
                    Json::from(c.as_any().downcast_ref::<Int64Array>().unwrap().value(i))
                }
                DataType::Float64 => {
                    Json::from(c.as_any().downcast_ref::<Float64Array>().unwrap().value(i))
                }
                DataType::Dictionary(..) => {
                    let d = c.as_dictionary::<UInt32Type>();
                    let k = d.keys().value(i) as usize;
                    Json::from(d.values().as_string::<i32>().value(k))
                }
                _ => Json::from(c.as_any().downcast_ref::<StringArray>().unwrap().value(i)),
            }
        })
        .collect()
}

fn sorted(mut rows: Vec<Vec<Json>>) -> Vec<Vec<Json>> {
    rows.sort_by_key(|r| serde_json::to_string(r).unwrap());
    rows
}

/// Every table's batches hold the SQL table's columns (`slice`: `spall_slice`'s) and
/// exactly its rows, in batches of any size, with text as text or (`slice`'s interned
/// columns) as dictionaries.
fn same_as_sql(name: &str, t: Trace) {
    let t = Arc::new(t);
    let db = TraceDb::new(t.clone()).unwrap();
    let tables = Tables::new(t);
    for table in TABLES {
        let from = if table == "slice" {
            "spall_slice"
        } else {
            table
        };
        let schema = tables.schema(table).unwrap();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        // `SELECT *`'s columns first, then the hidden ones (a sample's weight).
        let star = db.query(&format!("SELECT * FROM {from} LIMIT 0")).unwrap();
        assert_eq!(names[..star.columns.len()], star.columns, "{name}: {table}");
        let sql = db
            .query(&format!("SELECT {} FROM {from}", names.join(", ")))
            .unwrap();
        assert_eq!(names, sql.columns, "{name}: {table}");
        // A textual tid or pid is NULL in the integer column.
        let want: Vec<Vec<Json>> = sql
            .rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .zip(schema.fields())
                    .map(|(v, f)| match (v, f.data_type()) {
                        (Json::String(_), DataType::Int64) => Json::Null,
                        (v, _) => v,
                    })
                    .collect()
            })
            .collect();
        for (rows, dict) in [(333, false), (1 << 16, false), (4000, true)] {
            let mut got = Vec::new();
            let batches = match dict {
                true => tables.dictionary_batches(table, rows),
                false => tables.batches(table, rows),
            };
            for b in batches.unwrap() {
                let b = b.unwrap();
                assert!(b.num_rows() <= rows, "{name}: {table}");
                let dictionaries = (b.schema().fields().iter())
                    .filter(|f| matches!(f.data_type(), DataType::Dictionary(..)))
                    .count();
                let want = if dict && table == "slice" { 3 } else { 0 };
                assert_eq!(dictionaries, want, "{name}: {table}");
                got.extend((0..b.num_rows()).map(|i| row(&b, i)));
            }
            assert_eq!(
                got.len(),
                want.len(),
                "{name}: {table} in batches of {rows}"
            );
            assert!(
                sorted(got) == sorted(want.clone()),
                "{name}: {table} differs from SQL (dictionaries: {dict})"
            );
        }
    }
}

#[test]
fn batches_equal_the_sql_tables_on_real_traces() {
    for f in [
        "real/catapult_flow.json",
        "real/catapult_nestable_async.json",
        "real/catapult_instant_events.json",
        "real/chrome116_devtools_export.json",
        "real/bazel_profile_with_queuing.json.gz",
    ] {
        same_as_sql(f, fixture_trace(f));
    }
}

/// The rest apart from the JSON traces above, so that the two run on both cores.
#[test]
fn batches_equal_the_sql_tables_on_protobuf_spall_and_edge_traces() {
    for f in [
        "real/chromium148_startup.pftrace.gz",
        "spall/crux_v1.spall",
        "edge/out-of-order.json",
        "edge/too-many-end-events.json",
        "edge/zero-duration-events.json",
    ] {
        same_as_sql(f, fixture_trace(f));
    }
    same_as_sql("synth", synth());
}

/// Spans come thread by thread in time order, outer first at equal times: what lets an
/// engine skip row groups by `utid` and `ts`.
#[test]
fn spans_are_sorted_by_thread_then_time() {
    let t = Arc::new(fixture_trace("spall/odingengine_v3.spall"));
    let tables = Tables::new(t);
    let mut last: Option<(i64, i64, i64)> = None;
    let mut spans = 0;
    for b in tables.batches("slice", 10_000).unwrap() {
        let b = b.unwrap();
        let col = |n: &str| {
            let i = b.schema().index_of(n).unwrap();
            b.column(i).clone()
        };
        let (utid, ts, depth, kind) = (col("utid"), col("ts"), col("depth"), col("kind"));
        let int = |a: &Arc<dyn Array>, i| a.as_any().downcast_ref::<Int64Array>().unwrap().value(i);
        let kind = kind.as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            if kind.value(i) != "span" {
                continue;
            }
            spans += 1;
            let key = (int(&utid, i), int(&ts, i), int(&depth, i));
            if let Some(prev) = last {
                assert!(prev <= key, "{prev:?} then {key:?}");
            }
            last = Some(key);
        }
    }
    assert!(spans > 50_000, "{spans}");
}
