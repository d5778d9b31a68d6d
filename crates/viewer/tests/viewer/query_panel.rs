//! The side panel's SQL section, with no window: a query runs through the panel, its result
//! is drawn by egui, and a row of slices leads to that slice in the timeline.

use spall_viewer::panels::query::{row_target, InlineRunner, QueryPanel, Show};

fn frame(ctx: &egui::Context, f: impl FnMut(&mut egui::Ui)) {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(600.0, 800.0),
        )),
        ..Default::default()
    };
    let mut f = f;
    let mut out = ctx.run_ui(input, |ui| {
        egui::CentralPanel::default().show(ui, |ui| f(ui));
    });
    out.textures_delta.clear();
}

#[test]
fn a_query_runs_and_its_rows_point_at_slices() {
    let l = spall_viewer::load(None, &Default::default(), |_, _| {}).expect("the demo loads");
    let mut q = QueryPanel::default();
    q.runner = Some(Box::new(InlineRunner::new(&l).unwrap()));
    q.text = "SELECT id, ts, dur, name FROM slice ORDER BY dur DESC LIMIT 5".into();
    q.run();
    let ctx = egui::Context::default();
    for _ in 0..2 {
        frame(&ctx, |ui| {
            assert_eq!(q.ui(ui, &l), None);
        });
    }
    let Some(Ok(r)) = &q.result else {
        panic!("{:?}", q.result.as_ref().map(|r| r.as_ref().err()));
    };
    assert_eq!(r.rows.len(), 5);
    assert_eq!(q.history.len(), 1);
    // The longest slice's row leads to the longest slice.
    let Some(Show::Slice(s)) = row_target(&l, &r.columns, &r.rows[0]) else {
        panic!("no slice for {:?}", r.rows[0]);
    };
    let longest = (l.trace.threads().iter().flat_map(|t| t.lanes.iter()))
        .flat_map(|lane| lane.dur.iter().copied())
        .max()
        .unwrap();
    assert_eq!(l.trace.span(s).dur, longest);
    assert_eq!(
        r.rows[0][3].as_str(),
        Some(l.trace.str(l.trace.span(s).name))
    );
    // Rows without a slice id but with a time show that time.
    let cols = ["ts".to_string()];
    assert_eq!(
        row_target(&l, &cols, &[serde_json::json!(5000)]),
        Some(Show::Range(5000, 5001))
    );
}

/// On a trace whose slices are renumbered (negative tids merged into their main thread,
/// spans trace_processor drops), every span row still leads to the span it names.
#[test]
fn span_rows_lead_to_their_spans_where_ids_are_renested() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/real/pytorch_kineto_trace_diff_test.json.gz");
    let l = spall_viewer::load(Some(&path), &Default::default(), |_, _| {}).unwrap();
    let db = trace_sql::TraceDb::new(l.trace.clone()).unwrap();
    let r = db
        .query("SELECT id, ts, dur, name FROM slice WHERE kind = 'span' ORDER BY id")
        .unwrap();
    assert!(r.rows.len() > 1000, "{}", r.rows.len());
    for row in &r.rows {
        let Some(Show::Slice(s)) = row_target(&l, &r.columns, row) else {
            panic!("no slice for {row:?}");
        };
        let span = l.trace.span(s);
        assert_eq!(row[1].as_i64(), Some(span.start), "{row:?}");
        assert_eq!(row[3].as_str(), Some(l.trace.str(span.name)), "{row:?}");
    }
}

#[test]
fn sql_errors_show_where_and_a_row_limit_is_said() {
    let l = spall_viewer::load(None, &Default::default(), |_, _| {}).expect("the demo loads");
    let mut q = QueryPanel::default();
    q.runner = Some(Box::new(InlineRunner::new(&l).unwrap()));
    q.text = "SELECT 1;\nSELECT nme FROM slice".into();
    q.run();
    q.poll();
    let Some(Err(e)) = &q.result else {
        panic!("expected an error");
    };
    assert!(e.contains("line 2, column 8") && e.contains("nme"), "{e}");
    q.text =
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n".into();
    q.run();
    q.poll();
    let Some(Ok(r)) = &q.result else {
        panic!("{:?}", q.result);
    };
    assert_eq!(r.rows.len(), spall_viewer::panels::query::MAX_ROWS);
    assert!(r.truncated);
}

/// A result copies as RFC 4180 CSV (and TSV): awkward text quoted, NULL empty, numbers as
/// SQLite gave them.
#[test]
fn results_copy_as_csv_and_tsv() {
    let l = spall_viewer::load(None, &Default::default(), |_, _| {}).expect("the demo loads");
    let db = trace_sql::TraceDb::new(l.trace.clone()).unwrap();
    let r = db
        .query("SELECT 'a, \"b\"' AS t, NULL AS n, 1.5 AS f, 'line\nbreak' AS l, 7 AS i")
        .unwrap();
    let csv = spall_viewer::panels::query::result_text(&r, ',');
    assert_eq!(
        csv,
        "t,n,f,l,i\r\n\"a, \"\"b\"\"\",,1.5,\"line\nbreak\",7\r\n"
    );
    let tsv = spall_viewer::panels::query::result_text(&r, '\t');
    // In TSV a comma needs no quotes, a quote still does.
    assert_eq!(
        tsv,
        "t\tn\tf\tl\ti\r\n\"a, \"\"b\"\"\"\t\t1.5\t\"line\nbreak\"\t7\r\n"
    );
}
