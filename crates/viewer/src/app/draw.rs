//! Drawing a frame: the side panel (egui) first, since its width decides the main area's;
//! then the main area's scene (the timeline or the flame graph, or the message before a
//! trace), rendered; the status line and bar.

use std::sync::atomic::Ordering;

use web_time::Instant;
use winit::window::Theme as WinitTheme;

use super::{App, Drag};
use crate::app::overlays::message;
use crate::panels::side::Actions;
use crate::platform::{self, UserEvent};
use crate::theme::{Theme, ThemeKind};
use crate::view::flame::{compare_tree, Mode};

impl App {
    pub(super) fn timeline_size(&self) -> (f32, f32) {
        let Some(g) = &self.gl else { return (1.0, 1.0) };
        let size = g.window.inner_size();
        (
            (size.width as f32 - self.side.panel_px).max(1.0),
            size.height as f32,
        )
    }

    pub(super) fn theme(&self) -> Theme {
        self.side.theme.unwrap_or_else(|| {
            let dark = self.gl.as_ref().and_then(|g| g.window.theme()) == Some(WinitTheme::Dark);
            Theme::new(if dark {
                ThemeKind::Dark
            } else {
                ThemeKind::Light
            })
        })
    }

    /// The status bar: the time under the cursor, the visible range's duration, the last
    /// frame's CPU time, the process's memory, and the load time.
    pub(super) fn status_bar(&self) -> String {
        use spall_util::format_duration;
        let mut parts = Vec::new();
        if let (Some(l), Some(s)) = (&self.shown.loaded, &self.shown.state) {
            let (x, _) = self.input.cursor;
            if s.mode == Mode::Timeline && x >= 0.0 && x < s.timeline.width {
                let t = s.timeline.viewport.time_at(x as f64) - l.trace.start_ns();
                parts.push(format!("cursor {}", format_duration(t)));
            }
            let (a, b) = s.timeline.viewport.visible();
            parts.push(format!("view {}", format_duration(b - a)));
        }
        parts.push(format!(
            "frame {:.1} ms",
            self.drawing.frame_time.as_secs_f64() * 1e3
        ));
        if let Some(m) = memory_in_use() {
            parts.push(format!("mem {}", spall_util::human_bytes(m)));
        }
        if let Some(t) = self.file.load_time {
            parts.push(format!(
                "loaded in {}",
                format_duration(t.as_nanos() as i64)
            ));
        }
        parts.join(" · ")
    }

    pub(super) fn status(&self) -> String {
        if let Some(l) = &self.file.loading {
            let (d, t) = (
                l.done.load(Ordering::Relaxed),
                l.total.load(Ordering::Relaxed),
            );
            let pct = (d * 100).checked_div(t).unwrap_or(0);
            // A page's overlay shows the percentage; its panel is not redrawn to follow it.
            if cfg!(target_arch = "wasm32") {
                return format!("{} {} …", l.stage, l.source);
            }
            return format!("{} {} … {pct}%", l.stage, l.source);
        }
        if let Some(e) = &self.file.error {
            return format!("error: {e}");
        }
        let source = self
            .shown
            .loaded
            .as_ref()
            .map_or(String::new(), |l| l.source.clone());
        match &self.side.notice {
            Some(n) => format!("{source} · {n}"),
            None => source,
        }
    }

    /// A frame: the side panel (egui) first, since its width decides the main area's; then
    /// the main area's scene, rendered, and the frame shown.
    pub(super) fn draw(&mut self) {
        let drawing = Instant::now();
        let status = self.status();
        let theme = self.theme();
        let Some(actions) = self.side_panel(theme, &status) else {
            return;
        };
        let Some(g) = &self.gl else { return };
        let (size, scale) = (g.window.inner_size(), g.window.scale_factor() as f32);
        // A page's canvas can change pixel density (a move to another screen, zoom) with
        // no resize event: the drawing buffer follows the size winit reports.
        #[cfg(target_arch = "wasm32")]
        g.resize(size.width, size.height);
        let (w, h) = (
            (size.width as f32 - self.side.panel_px).max(1.0),
            size.height as f32,
        );
        self.build_scene(theme, &status, (w, h), scale);
        self.render((size.width, size.height));
        self.drawing.frame_time = drawing.elapsed();
        if let Some(g) = &self.gl {
            if let Err(e) = g.swap() {
                eprintln!("spall: swap failed: {e}");
            }
        }
        self.apply(actions, theme);
    }

    /// Runs egui: the side panel (with the status bar), the keys overlay and the context
    /// menu; acts on a menu choice. `None` without a window.
    pub(super) fn side_panel(&mut self, theme: Theme, status: &str) -> Option<Actions> {
        let status_bar = self.status_bar();
        let (show_help, panel_hidden) = (self.input.show_help, self.side.panel_hidden);
        let panel_start = self.side.panel_start;
        let (menu, mut choice) = (self.input.context_menu, None);
        let bindings = &self.input.bindings;
        let g = self.gl.as_mut()?;
        let mut actions = Actions::default();
        self.side.panel.hold = matches!(self.input.drag, Some(Drag::Range { .. }));
        self.side.panel.recent.clone_from(&self.settings.recent);
        self.side.panel.comparing = match (&self.shown.base_loading, &self.shown.base) {
            (Some(p), _) => Some(format!("{} (loading …)", p.display())),
            (None, Some(b)) => Some(b.source.clone()),
            (None, None) => None,
        };
        let (loaded, mut state, panel) = (
            self.shown.loaded.as_deref(),
            self.shown.state.as_mut(),
            &mut self.side.panel,
        );
        let mut panel_points = 0.0;
        g.egui.egui_ctx.set_visuals(match theme.kind {
            ThemeKind::Light => egui::Visuals::light(),
            ThemeKind::Dark => egui::Visuals::dark(),
        });
        g.egui.run(&g.window, |ui| {
            if !panel_hidden {
                let r = egui::Panel::right("side")
                    .default_size(panel_start)
                    .min_size(260.0)
                    .max_size(1200.0)
                    .show(ui, |ui| {
                        egui::Panel::bottom("status_bar").show(ui, |ui| {
                            // As wide as the panel whatever the text: egui repaints again
                            // when a widget's size changes, and the text changes each frame.
                            let text = egui::RichText::new(&status_bar).small().monospace();
                            let layout = egui::Layout::left_to_right(egui::Align::Center)
                                .with_main_justify(true)
                                .with_main_wrap(false);
                            ui.with_layout(layout, |ui| ui.add(egui::Label::new(text).wrap()));
                        });
                        actions = panel.ui(ui, loaded, state.as_deref_mut(), status);
                    });
                panel_points = r.response.rect.width();
            }
            if show_help {
                crate::app::overlays::help(ui.ctx(), bindings);
            }
            if let Some((pick, x, y)) = menu {
                choice = crate::app::overlays::context_menu(ui.ctx(), pick, x, y);
            }
        });
        if let Some(c) = choice {
            self.input.context_menu = None;
            self.menu_choice(c);
            self.redraw();
        }
        let g = self.gl.as_mut()?;
        let ppp = g.egui.egui_ctx.pixels_per_point();
        self.side.panel_px = panel_points * ppp;
        if panel_points > 0.0 {
            self.side.panel_points = panel_points;
        }
        Some(actions)
    }

    /// Brings the view to the main area's size (`w × h` pixels at `scale`), shows a
    /// remembered view or fits the trace, asks for the flame graph, and builds the scene;
    /// with no trace, the message screen.
    pub(super) fn build_scene(
        &mut self,
        theme: Theme,
        status: &str,
        (w, h): (f32, f32),
        scale: f32,
    ) {
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            message(
                &mut self.drawing.scene,
                &mut self.drawing.fonts,
                theme,
                w,
                h,
                status,
                self.file.loading.as_ref(),
            );
            return;
        };
        s.timeline.theme = theme;
        s.timeline.set_scale(l, scale);
        if (s.timeline.width, s.timeline.height) != (w, h) {
            s.timeline.resize(w, h);
        }
        if let Some(((a, b), shown)) = self.shown.restore {
            self.shown.fit_pending = false;
            let v = s.timeline.viewport;
            match shown {
                Some(o) if (o.t0, o.ns_per_px) != (v.t0, v.ns_per_px) => self.shown.restore = None,
                Some(o) if o.width == v.width => {}
                _ => {
                    s.timeline.viewport.show_exact(a, b);
                    self.shown.restore = Some(((a, b), Some(s.timeline.viewport)));
                }
            }
        } else if self.shown.fit_pending {
            self.shown.fit_pending = false;
            s.fit_all(l);
        }
        if s.mode == Mode::Flame {
            if let Some(want) = s.flame_wanted(l) {
                if self.shown.flame_pending.as_ref() != Some(&want) {
                    // Merging costs O(spans): off the UI thread, as loading is.
                    self.shown.flame_pending = Some(want.clone());
                    let (bg, proxy) = (l.clone(), self.proxy.clone());
                    let base = s.flame.base.clone();
                    platform::spawn(move || {
                        let tree = bg.trace.flame(&want.0, want.1);
                        let changes = compare_tree(&bg.trace, base.as_deref(), &want, &tree);
                        let built = (want, tree, base, changes);
                        let _ = proxy.send_event(UserEvent::Flame(Box::new(built)));
                    });
                }
            }
        }
        s.sync_compare();
        let d = &mut self.drawing;
        d.builder.build(&mut d.scene, &mut d.fonts, l, s);
    }

    /// Renders the scene and the side panel to the window's `size` (pixels), then what
    /// comes after a frame: its count and timing, the platform's report, a screenshot.
    pub(super) fn render(&mut self, size: (u32, u32)) {
        let Some(g) = self.gl.as_mut() else { return };
        // SAFETY: our context is current on this thread.
        unsafe {
            use glow::HasContext;
            g.gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            g.renderer
                .render(&mut self.drawing.scene, &self.drawing.fonts);
            g.gl.viewport(0, 0, size.0 as i32, size.1 as i32);
        }
        g.egui.paint(&g.window);
        self.drawing.frames += 1;
        if let Some(t) = self.drawing.timing {
            if self.drawing.frames == 1 {
                eprintln!(
                    "spall: first frame after {:.0} ms",
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
            let first = !std::mem::replace(&mut self.drawing.timed_trace_frame, true);
            if self.shown.loaded.is_some() && first {
                eprintln!(
                    "spall: first frame of the trace after {:.0} ms",
                    t.elapsed().as_secs_f64() * 1e3
                );
            }
        }
        platform::frame_drawn(
            g,
            size,
            self.drawing.frames,
            self.shown.loaded.as_deref(),
            self.shown.state.as_ref(),
            self.file.error.as_deref(),
            &self.side.panel.query,
        );
        if std::mem::take(&mut self.drawing.save_pending) {
            // Before the frame is handed to the page: a WebGL canvas keeps its pixels only
            // until then.
            let name = self
                .shown
                .loaded
                .as_ref()
                .map_or("spall", |l| l.source.as_str());
            let path = self.file.path.as_deref();
            self.side.notice = Some(platform::save_screenshot(g, size, path, name));
        }
        #[cfg(target_arch = "wasm32")]
        self.page_overlay();
    }

    /// What the side panel asked for.
    pub(super) fn apply(&mut self, actions: Actions, theme: Theme) {
        if let Some(p) = actions.open {
            self.open(Some(p), false);
        }
        if actions.pick_file {
            self.pick_file();
        }
        if actions.pick_base {
            self.pick_base();
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(p) = actions.compare {
            self.compare_with(p);
        }
        if actions.stop_comparing {
            self.stop_comparing();
        }
        if actions.toggle_theme {
            self.side.theme = Some(theme.toggled());
            self.save_settings();
            self.redraw();
        }
        if actions.redraw {
            self.redraw();
        }
    }
}

/// The memory this process uses (resident set), where the platform says.
fn memory_in_use() -> Option<u64> {
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
