//! The side panel laid out by egui with no window, at the window's default size: every
//! column of the statistics table must be on screen, inside the panel, and the names
//! must get most of the room.

use spall_viewer::app::PANEL_POINTS;
use spall_viewer::panels::side::{Panel, SortColumn};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::state::ViewState;

/// The table's header rectangles and the panel's, laid out as in the default window.
fn lay_out(panel: &mut Panel) -> (Vec<egui::Rect>, egui::Rect) {
    let l = spall_viewer::load(None, &Default::default(), |_, _| {}).expect("the demo loads");
    lay_out_with(panel, &l, None)
}

/// [`lay_out`] for the trace `l`, compared with `base` when given.
fn lay_out_with(
    panel: &mut Panel,
    l: &spall_viewer::Loaded,
    base: Option<std::sync::Arc<trace_model::Trace>>,
) -> (Vec<egui::Rect>, egui::Rect) {
    l.whole_stats();
    let (w, h) = (1400.0, 850.0); // the window's default size, in points
    let mut s = ViewState::new(l, w - PANEL_POINTS, h, Theme::new(ThemeKind::Light));
    s.flame.set_base(base);
    let ctx = egui::Context::default();
    let mut panel_rect = egui::Rect::NOTHING;
    // Auto-sized columns settle over a few passes, as in the window.
    for _ in 0..4 {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(w, h),
            )),
            ..Default::default()
        };
        let mut out = ctx.run_ui(input, |ui| {
            let r = egui::Panel::right("side")
                .default_size(PANEL_POINTS)
                .show(ui, |ui| {
                    panel.ui(ui, Some(l), Some(&mut s), "demo");
                });
            panel_rect = r.response.rect;
        });
        // No painter here: the font atlas updates are dropped on purpose.
        out.textures_delta.clear();
    }
    (panel.header_rects.clone(), panel_rect)
}

/// Every column inside the panel and wide enough to read.
fn assert_inside(rects: &[egui::Rect], panel_rect: egui::Rect) {
    let spans: Vec<_> = rects.iter().map(|r| (r.left(), r.right())).collect();
    for (i, r) in rects.iter().enumerate() {
        assert!(
            r.left() >= panel_rect.left() && r.right() <= panel_rect.right() + 0.5,
            "column {i} at {spans:?} leaves the panel {panel_rect:?}"
        );
        assert!(r.width() >= 30.0, "column {i} is too narrow to read: {r:?}");
    }
}

#[test]
fn names_get_the_room_by_default() {
    let (rects, panel_rect) = lay_out(&mut Panel::default());
    assert_eq!(rects.len(), 4, "name, count, total, self");
    assert_inside(&rects, panel_rect);
    // Most of the table is the name: it used to get about 90 points of 520.
    let table = rects[3].right() - rects[0].left();
    assert!(
        rects[0].width() >= 0.55 * table,
        "name {:?} of a {table} wide table",
        rects[0]
    );
}

#[test]
fn every_statistics_column_is_visible_at_the_default_size() {
    let mut panel = Panel::default();
    panel.stats_extra = (SortColumn::ALL.iter())
        .map(|c| c.0)
        .filter(|c| !c.always_shown())
        .collect();
    let (rects, panel_rect) = lay_out(&mut panel);
    assert_eq!(
        rects.len(),
        8,
        "name, count, total, self, mean, p50, p90, max"
    );
    assert_inside(&rects, panel_rect);
    // The name column gets the room the figures leave.
    assert!(rects[0].width() >= 100.0, "{rects:?}");
}

/// Compare mode: base and Δ self columns, inside the panel, the rows sorted by how much
/// self time each name gained (not by NEW's self time, which orders them otherwise).
#[test]
fn compare_mode_adds_base_and_delta_sorted_by_regression() {
    // 20 frames of 1 ms calling grows then shrinks.
    let trace = |grows: f64, shrinks: f64| {
        let ev: Vec<String> = (0..20)
            .flat_map(|i| {
                let t = i as f64 * 2000.0;
                [
                    format!(r#"{{"ph":"X","name":"frame","ts":{t},"dur":1000,"pid":1,"tid":1}}"#),
                    format!(
                        r#"{{"ph":"X","name":"grows","ts":{t},"dur":{grows},"pid":1,"tid":1}}"#
                    ),
                    format!(
                        r#"{{"ph":"X","name":"shrinks","ts":{},"dur":{shrinks},"pid":1,"tid":1}}"#,
                        t + 500.0
                    ),
                ]
            })
            .collect();
        trace_model::load_bytes(format!("[{}]", ev.join(",")).as_bytes()).unwrap()
    };
    // Self time from BASE to NEW: grows 200 -> 350 µs, frame 400 -> 450, shrinks 400 -> 200.
    let new = spall_viewer::Loaded::new(trace(350.0, 200.0), "new".into());
    let base = std::sync::Arc::new(trace(200.0, 400.0));
    let names = |p: &Panel| -> Vec<String> {
        (p.stats_rows().iter())
            .map(|r| new.trace.str(r.name).to_string())
            .collect()
    };
    let mut plain = Panel::default();
    lay_out_with(&mut plain, &new, None);
    assert_eq!(names(&plain), ["frame", "grows", "shrinks"], "by self time");

    let mut panel = Panel::default();
    let (rects, panel_rect) = lay_out_with(&mut panel, &new, Some(base));
    assert_eq!(rects.len(), 6, "name, count, total, self, base, Δ self");
    assert_inside(&rects, panel_rect);
    assert_eq!(
        names(&panel),
        ["grows", "frame", "shrinks"],
        "by regression"
    );
}

/// Compare mode: a name only BASE has gets a row after NEW's (BASE's self time, NEW's 0),
/// and the filter applies to it as to the others.
#[test]
fn compare_mode_lists_names_only_in_base() {
    let trace = |names: &[&str]| {
        let ev: Vec<String> = (0..10)
            .flat_map(|i| {
                let t = i as f64 * 2000.0;
                let mut v = vec![format!(
                    r#"{{"ph":"X","name":"frame","ts":{t},"dur":1000,"pid":1,"tid":1}}"#
                )];
                for (k, n) in names.iter().enumerate() {
                    let ts = t + 100.0 + k as f64 * 300.0;
                    v.push(format!(
                        r#"{{"ph":"X","name":"{n}","ts":{ts},"dur":200,"pid":1,"tid":1}}"#
                    ));
                }
                v
            })
            .collect();
        trace_model::load_bytes(format!("[{}]", ev.join(",")).as_bytes()).unwrap()
    };
    let new = spall_viewer::Loaded::new(trace(&["kept"]), "new".into());
    let base = std::sync::Arc::new(trace(&["kept", "gone", "gone_too"]));
    let mut plain = Panel::default();
    lay_out_with(&mut plain, &new, None);
    assert!(plain.base_only_rows().is_empty());

    let mut panel = Panel::default();
    let (rects, panel_rect) = lay_out_with(&mut panel, &new, Some(base));
    assert_inside(&rects, panel_rect);
    // 10 calls of 200 µs each.
    assert_eq!(
        panel.base_only_rows(),
        [
            ("gone".to_string(), 2_000_000),
            ("gone_too".to_string(), 2_000_000)
        ]
    );
    let names: Vec<&str> = (panel.stats_rows().iter())
        .map(|r| new.trace.str(r.name))
        .collect();
    assert!(!names.contains(&"gone"), "{names:?}");
}
