//! The side panel laid out by egui with no window, at the window's default size: every
//! column of the statistics table must be on screen, inside the panel.

use spall_viewer::app::PANEL_POINTS;
use spall_viewer::panels::side::Panel;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::state::ViewState;

#[test]
fn every_statistics_column_is_visible_at_the_default_size() {
    let l = spall_viewer::load(None, &Default::default(), |_, _| {}).expect("the demo loads");
    l.whole_stats();
    let (w, h) = (1400.0, 850.0); // the window's default size, in points
    let mut s = ViewState::new(&l, w - PANEL_POINTS, h, Theme::new(ThemeKind::Light));
    let mut panel = Panel::default();
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
                    panel.ui(ui, Some(&l), Some(&mut s), "demo");
                });
            panel_rect = r.response.rect;
        });
        // No painter here: the font atlas updates are dropped on purpose.
        out.textures_delta.clear();
    }
    let names: Vec<_> = panel
        .header_rects
        .iter()
        .map(|r| (r.left(), r.right()))
        .collect();
    assert_eq!(
        panel.header_rects.len(),
        8,
        "name, count, total, self, mean, p50, p90, max"
    );
    for (i, r) in panel.header_rects.iter().enumerate() {
        assert!(
            r.left() >= panel_rect.left() && r.right() <= panel_rect.right() + 0.5,
            "column {i} at {names:?} leaves the panel {panel_rect:?}"
        );
        assert!(r.width() >= 30.0, "column {i} is too narrow to read: {r:?}");
    }
    // The name column gets the room the figures leave.
    assert!(panel.header_rects[0].width() >= 100.0, "{names:?}");
}
