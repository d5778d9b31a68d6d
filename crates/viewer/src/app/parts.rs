//! The window's shared pieces (native and web alike): the screen shown before a trace
//! loads, reading the frame back, and the flame graph view's keys.

#![allow(unsafe_code)] // GL calls are unsafe by signature; the context is ours.

use std::sync::atomic::Ordering;

use render_gl::{Fonts, Renderer, Scene, ShaderVersion, VAlign};
use winit::keyboard::{Key, NamedKey};

use crate::app::Loading;
use crate::loaded::Loaded;
use crate::theme::Theme;
use crate::view::flame::Which;
use crate::view::state::ViewState;
use trace_model::FlameSort;

/// A key in the flame graph view; returns whether anything changed.
pub(crate) fn flame_key(
    l: &Loaded,
    s: &mut ViewState,
    key: &Key,
    theme: &mut Option<Theme>,
) -> bool {
    let f = &mut s.flame;
    match key {
        Key::Character(c) => match c.to_ascii_lowercase().as_str() {
            "i" => f.icicle = !f.icicle,
            "o" => {
                f.sort = match f.sort {
                    FlameSort::Heaviest => FlameSort::Name,
                    FlameSort::Name => FlameSort::Heaviest,
                }
            }
            "v" => {
                if f.sandwich.is_some() {
                    f.sandwich = None;
                } else if let Some(label) = f.selected_label() {
                    f.open_sandwich(l, label);
                }
            }
            "t" => *theme = Some(s.theme.toggled()),
            _ => return false,
        },
        Key::Named(NamedKey::Backspace) => {
            let which = f.selected.map_or(Which::Main, |h| h.pane);
            return f.zoom_out(which);
        }
        Key::Named(NamedKey::Escape) => {
            if f.sandwich.take().is_none() {
                f.selected = None;
                f.occurrences.clear();
                if let Some(p) = &mut f.main {
                    p.zoom = 0;
                }
            }
        }
        _ => return false,
    }
    true
}

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

/// The timeline's renderer and the side panel's egui, on a GL context that is current.
pub(crate) fn drawing(
    el: &winit::event_loop::ActiveEventLoop,
    gl: &std::sync::Arc<glow::Context>,
    window: &winit::window::Window,
    version: ShaderVersion,
) -> Result<(Renderer, egui_glow::EguiGlow), crate::ViewerError> {
    // SAFETY: the caller's context is current, and stays with the renderer.
    let renderer = unsafe { Renderer::new(gl.clone(), version) }?;
    let scale = Some(window.scale_factor() as f32);
    let egui = egui_glow::EguiGlow::new(el, gl.clone(), None, scale, true);
    Ok((renderer, egui))
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

/// The memory this process uses (resident set), where the platform says.
pub(crate) fn memory_in_use() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages * 4096)
    }
    #[cfg(target_arch = "wasm32")]
    {
        Some(core::arch::wasm32::memory_size(0) as u64 * 65536)
    }
    #[cfg(not(any(target_os = "linux", target_arch = "wasm32")))]
    {
        None
    }
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
