//! What the app shows besides the main area's scene and the side panel: the screen before
//! a trace is loaded, the keys overlay, and the right-click menu.

use std::sync::atomic::Ordering;

use render_gl::{Fonts, Scene, VAlign};

use crate::platform::Loading;
use crate::theme::Theme;

/// The screen shown before a trace is loaded: progress, or an error.
pub(crate) fn message(
    scene: &mut Scene,
    fonts: &mut Fonts,
    th: Theme,
    w: f32,
    h: f32,
    status: &str,
    loading: Option<&Loading>,
) {
    scene.begin(w as u32, h as u32, th.background);
    // A page shows a load's progress in an HTML overlay, updated without a canvas frame.
    if cfg!(target_arch = "wasm32") && loading.is_some() {
        return;
    }
    let cy = h / 2.0;
    scene.text(
        fonts,
        40.0,
        cy - 30.0,
        16.0,
        VAlign::Center,
        th.text,
        status,
    );
    if let Some(l) = loading {
        let (d, t) = (
            l.done.load(Ordering::Relaxed),
            l.total.load(Ordering::Relaxed),
        );
        let frac = if t > 0 { d as f32 / t as f32 } else { 0.0 };
        let bw = (w - 80.0).max(10.0);
        scene.rect(40.0, cy, bw, 10.0, th.ruler);
        scene.rect(40.0, cy, bw * frac, 10.0, th.range_edge);
        let secs = l.started.elapsed().as_secs_f32();
        scene.text(
            fonts,
            40.0,
            cy + 30.0,
            12.0,
            VAlign::Center,
            th.text_dim,
            &format!("{secs:.1} s"),
        );
    } else {
        scene.text(
            fonts,
            40.0,
            cy + 10.0,
            12.0,
            VAlign::Center,
            th.text_dim,
            "Drop a trace on the window, or press Ctrl+O to open one.",
        );
    }
}

/// The `?` overlay: every key and mouse action, with the keys as bound now.
pub(crate) fn help(ctx: &egui::Context, bindings: &crate::persist::keys::Bindings) {
    egui::Window::new("Keys")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            egui::Grid::new("keys").striped(true).show(ui, |ui| {
                for &(action, _, _, what) in crate::persist::keys::ACTIONS {
                    ui.monospace(bindings.label(action));
                    ui.label(what);
                    ui.end_row();
                }
                for &(keys, what) in crate::persist::keys::FIXED {
                    ui.monospace(keys);
                    ui.label(what);
                    ui.end_row();
                }
            });
            ui.label(
                egui::RichText::new(
                    "Keys are rebound in settings.json (\"keys\"); ? or Esc closes this.",
                )
                .small(),
            );
        });
}

/// A choice in the right-click menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MenuChoice {
    CopyName,
    CopyStack,
    Search,
    Zoom,
    Flame,
}

/// The right-click menu at `(x, y)` (pixels) for `pick`; the choice once one is clicked.
pub(crate) fn context_menu(
    ctx: &egui::Context,
    pick: crate::kinds::Pick,
    x: f32,
    y: f32,
) -> Option<(crate::kinds::Pick, MenuChoice)> {
    let ppp = ctx.pixels_per_point();
    let mut choice = None;
    egui::Area::new(egui::Id::unique("spall context menu"))
        .fixed_pos(egui::pos2(x / ppp, y / ppp))
        .order(egui::Order::Foreground)
        .show(ctx, |ui| {
            egui::Frame::menu(ui.style()).show(ui, |ui| {
                let mut item = |ui: &mut egui::Ui, text: &str, hint: &str, c: MenuChoice| {
                    if ui.button(text).on_hover_text(hint).clicked() {
                        choice = Some((pick, c));
                    }
                };
                item(ui, "Copy name", "Ctrl+C", MenuChoice::CopyName);
                item(ui, "Copy call stack", "Ctrl+Shift+C", MenuChoice::CopyStack);
                item(
                    ui,
                    "Search this name",
                    "highlights every slice of this name",
                    MenuChoice::Search,
                );
                item(ui, "Zoom to it", "double-click", MenuChoice::Zoom);
                if matches!(pick, crate::kinds::Pick::Span(_)) {
                    item(
                        ui,
                        "Show in flame graph",
                        "its callers and callees (sandwich)",
                        MenuChoice::Flame,
                    );
                }
            });
        });
    choice
}
