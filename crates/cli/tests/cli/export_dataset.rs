//! `spall-cli export` as a dataset: the Parquet schema is docs/FLEET.md's, a trace that
//! fails to load is skipped while the others are exported (exit 1), exporting again
//! replaces a trace's files, and an export killed half way leaves only whole files where
//! engines look.

use crate::common::{doc, fixture, SPALL_CLI};

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn export(args: &[&str]) -> Output {
    Command::new(SPALL_CLI)
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file name under `dir`, relative to it.
fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for t in std::fs::read_dir(dir).unwrap() {
        let t = t.unwrap().path();
        for f in std::fs::read_dir(&t).unwrap() {
            let f = f.unwrap().path();
            out.insert(f.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out
}

/// Reads a whole Parquet file: its rows, and its columns as `(name, type)` in FLEET.md's
/// words.
fn read(path: &Path) -> (usize, Vec<(String, String)>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cols = b
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let ty = match f.data_type() {
                arrow_schema::DataType::Int64 => "int64",
                arrow_schema::DataType::Float64 => "double",
                arrow_schema::DataType::Utf8 => "string",
                t => panic!("{}: unexpected type {t}", f.name()),
            };
            (f.name().clone(), ty.to_string())
        })
        .collect();
    let mut rows = 0;
    for batch in b.build().unwrap() {
        rows += batch.unwrap().num_rows();
    }
    (rows, cols)
}

/// docs/FLEET.md's tables: after a heading "### `TABLE`", rows "| `column` | type | ... |".
fn fleet_schema() -> Vec<(String, Vec<(String, String)>)> {
    let doc = doc("FLEET.md");
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in doc.lines() {
        if let Some(t) = line.strip_prefix("### `") {
            out.push((t.trim_end_matches('`').to_string(), Vec::new()));
        } else if let (Some(l), Some((_, cols))) = (line.strip_prefix("| `"), out.last_mut()) {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            cols.push((
                cells[0].trim_end_matches('`').to_string(),
                cells[1].to_string(),
            ));
        }
    }
    out
}

#[test]
fn parquet_schema_is_the_one_fleet_md_documents() {
    let out = scratch("fleet-schema");
    let o = export(&[
        &fixture("real/catapult_flow.json"),
        &fixture("real/chromium148_startup.pftrace.gz"),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = fleet_schema();
    let documented: Vec<&str> = doc.iter().map(|(t, _)| t.as_str()).collect();
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut sorted_doc: Vec<String> = documented.iter().map(|s| s.to_string()).collect();
    sorted_doc.sort();
    assert_eq!(written, sorted_doc, "tables written vs documented");
    for (table, cols) in &doc {
        for f in std::fs::read_dir(out.join(table)).unwrap() {
            let (_, got) = read(&f.unwrap().path());
            assert_eq!(
                &got, cols,
                "{table}: columns and types differ from docs/FLEET.md"
            );
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn failing_trace_is_skipped_and_reexport_replaces_files() {
    let out = scratch("export-bad");
    let bad = out.join("not-a-trace.json");
    std::fs::write(&bad, "this is not a trace").unwrap();
    let data = out.join("data");
    let (good1, good2) = (
        fixture("real/catapult_flow.json"),
        fixture("edge/simple.json"),
    );
    let missing = out.join("missing.json");
    let o = export(&[
        &good1,
        bad.to_str().unwrap(),
        missing.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not-a-trace.json: skipped"), "{err}");
    assert!(err.contains("missing.json: skipped"), "{err}");
    assert!(err.contains("exported 1 of 3 traces"), "{err}");
    // The good trace: one whole file in every table's directory, nothing else.
    let first = files(&data);
    let tables = trace_sql::arrow::tables().len();
    assert_eq!(first.len(), tables, "{first:?}");
    for f in &first {
        assert!(f.ends_with(".parquet"), "{f}");
        read(&data.join(f));
    }
    // Again: the same files, replaced; then another trace adds one file per table.
    let o = export(&[&good1, data.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(files(&data), first);
    let o = export(&[&good2, data.to_str().unwrap()]);
    assert!(o.status.success());
    let both = files(&data);
    assert_eq!(both.len(), 2 * tables);
    assert!(both.is_superset(&first));
    std::fs::remove_dir_all(&out).unwrap();
}

/// An export killed at any moment leaves the files it had renamed, each whole, and at most
/// hidden temporary files, which `*.parquet` globs and Spark (names starting with `.`) skip.
#[test]
fn killed_export_leaves_whole_files_only() {
    let out = scratch("export-kill");
    let big = out.join("big.spall");
    let mut bytes = Vec::new();
    spall_format::synth::Synth {
        spans: 600_000,
        ..Default::default()
    }
    .write_spall(&mut bytes)
    .unwrap();
    std::fs::write(&big, bytes).unwrap();
    let data = out.join("data");
    let small = fixture("spall/odingengine_v3.spall");
    for delay_ms in [150, 400, 900] {
        let mut child = Command::new(SPALL_CLI)
            .args([
                "export",
                &small,
                big.to_str().unwrap(),
                data.to_str().unwrap(),
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        if !data.exists() {
            continue;
        }
        for f in files(&data) {
            let name = f.rsplit('/').next().unwrap();
            if name.ends_with(".parquet") && !name.starts_with('.') {
                read(&data.join(&f));
            } else {
                assert!(name.starts_with('.') && name.ends_with(".partial"), "{f}");
            }
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// The text columns' row group statistics (written from the dictionary's entries, not the
/// rows) are the minimum, maximum and NULL count of the values read back.
#[test]
fn text_statistics_match_the_values() {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    let out = scratch("export-stats");
    let o = export(&[
        &fixture("real/catapult_flow.json"),
        &fixture("spall/crux_v1.spall"),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut checked = 0;
    for f in std::fs::read_dir(out.join("slice")).unwrap() {
        let path = f.unwrap().path();
        let b = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let meta = b.metadata().clone();
        assert_eq!(meta.num_row_groups(), 1, "{}", path.display());
        let schema = b.schema().clone();
        let batches: Vec<_> = b.build().unwrap().map(|b| b.unwrap()).collect();
        for name in ["name", "category", "kind", "trace", "trace_fnv64"] {
            let i = schema.index_of(name).unwrap();
            let (mut min, mut max, mut nulls) = (None::<String>, None::<String>, 0u64);
            for b in &batches {
                let a = b.column(i).as_string::<i32>();
                nulls += a.null_count() as u64;
                for v in a.iter().flatten() {
                    min = Some(min.map_or(v.to_string(), |m| m.min(v.to_string())));
                    max = Some(max.map_or(v.to_string(), |m| m.max(v.to_string())));
                }
            }
            let c = meta.row_group(0).column(i);
            let s = c.statistics().expect("statistics");
            let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8(b.to_vec()).unwrap());
            assert_eq!(text(s.min_bytes_opt()), min, "{name} min");
            assert_eq!(text(s.max_bytes_opt()), max, "{name} max");
            assert_eq!(s.null_count_opt(), Some(nulls), "{name} NULLs");
            checked += 1;
        }
    }
    assert_eq!(checked, 10);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_profiles_samples_are_exported() {
    let out = scratch("export-profile");
    let o = export(&[
        &fixture("real/profiles/spin_fields.perf"),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = |table: &str| -> usize {
        let dir = std::fs::read_dir(out.join(table)).unwrap();
        dir.map(|f| read(&f.unwrap().path()).0).sum()
    };
    // 174 records in the file, with 63 distinct stack prefixes.
    assert_eq!(rows("perf_sample"), 174);
    assert_eq!(rows("cpu_profile_stack_sample"), 0);
    assert_eq!(rows("stack_profile_callsite"), 63);
    std::fs::remove_dir_all(&out).unwrap();
}
