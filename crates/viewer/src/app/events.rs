//! The event loop's calls into the app: the window (or canvas) is created, events from
//! other threads arrive, window events (pointer, keys, resizes, redraws), and exit.

use web_time::{Duration, Instant};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow};
use winit::window::WindowId;

use super::App;
use crate::platform::{create_gl, UserEvent};

impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.gl.is_some() {
            return;
        }
        match create_gl(el, self.side.window_start) {
            Ok(g) => {
                let proxy = self.proxy.clone();
                g.egui.egui_ctx.set_request_repaint_callback(move |info| {
                    let _ = proxy.send_event(UserEvent::Repaint(info.delay));
                });
                self.gl = Some(g);
            }
            Err(e) => {
                eprintln!("spall: cannot open a window: {e}");
                el.exit();
                return;
            }
        }
        if let Some(path) = self.file.initial.take() {
            self.open(path, false);
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(base) = self.file.initial_base.clone() {
            self.compare_with(base);
        }
    }

    fn user_event(&mut self, _el: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Progress => self.redraw(),
            UserEvent::Loaded(r) => self.on_loaded(*r),
            UserEvent::FileChanged => self.reload(),
            #[cfg(not(target_arch = "wasm32"))]
            UserEvent::Picked(path, gave_up) => {
                let for_base = std::mem::take(&mut self.file.picking_base);
                match path {
                    Some(p) if for_base => self.compare_with(p),
                    Some(p) => self.open(Some(p), false),
                    None if gave_up => {
                        self.side.panel.show_open = true;
                        self.side.panel.open_for_base = for_base;
                        self.redraw();
                    }
                    None => {}
                }
            }
            #[cfg(target_arch = "wasm32")]
            UserEvent::Open(name, bytes) => self.open_bytes(name, bytes),
            #[cfg(target_arch = "wasm32")]
            UserEvent::OpenFailed(e) => {
                self.file.steps = None;
                // A worker that failed after handing over the trace, before its index.
                #[cfg(target_arch = "wasm32")]
                {
                    self.file.taking = None;
                }
                self.file.loading = None;
                self.file.error = Some(e);
                self.redraw();
            }
            #[cfg(target_arch = "wasm32")]
            UserEvent::Step => self.step(),
            #[cfg(target_arch = "wasm32")]
            UserEvent::Page(p) => self.page_load(p),
            #[cfg(target_arch = "wasm32")]
            UserEvent::PageBase(b) => self.page_base(b),
            #[cfg(target_arch = "wasm32")]
            UserEvent::Sql(sql) => {
                self.side.panel.query.run_text(&sql);
                self.redraw();
            }
            UserEvent::Flame(b) => {
                let (want, tree, base, changes) = *b;
                if self.shown.flame_pending.as_ref() == Some(&want) {
                    self.shown.flame_pending = None;
                }
                if let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) {
                    // A graph compared with another BASE than the one now chosen is stale.
                    let same_base = match (&base, &s.flame.base) {
                        (None, None) => true,
                        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                        _ => false,
                    };
                    if same_base && s.flame_wanted(l).as_ref() == Some(&want) {
                        s.flame.install_compared(l, want, tree, changes);
                    }
                }
                self.redraw();
            }
            UserEvent::Base(b) => self.on_base_loaded(*b),
            UserEvent::Repaint(d) => {
                if d.is_zero() {
                    self.redraw();
                } else if d < Duration::from_secs(3600) {
                    self.drawing.repaint_at = Some(Instant::now() + d);
                }
            }
        }
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(g) = self.gl.as_mut() else { return };
        if let WindowEvent::Resized(size) = &event {
            g.resize(size.width, size.height);
            g.window.request_redraw();
        }
        // Before the first frame the panel's width is not known: egui is given every move.
        let panel_left = match self.side.panel_px {
            0.0 if !self.side.panel_hidden => 0.0,
            px => g.window.inner_size().width as f32 - px,
        };
        let consumed = match &event {
            WindowEvent::RedrawRequested | WindowEvent::CloseRequested => false,
            WindowEvent::CursorMoved { position, .. }
                if !egui_sees_move(
                    &g.egui.egui_ctx,
                    position,
                    panel_left,
                    &mut self.input.egui_pointer,
                ) =>
            {
                false
            }
            _ => {
                let r = g.egui.on_window_event(&g.window, &event);
                if r.repaint {
                    g.window.request_redraw();
                }
                // egui judges a button or wheel by where its last pass saw the pointer: one
                // that comes with a move off its panel, before a frame, is the timeline's.
                let pointer = matches!(
                    event,
                    WindowEvent::MouseInput { .. } | WindowEvent::MouseWheel { .. }
                );
                r.consumed && (self.input.egui_pointer || !pointer)
            }
        };
        // Pointer events over the panel belong to egui.
        let over_panel = self
            .shown
            .state
            .as_ref()
            .is_some_and(|s| self.input.cursor.0 > s.timeline.width);
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::RedrawRequested => self.draw(),
            WindowEvent::ModifiersChanged(m) => {
                self.input.shift = m.state().shift_key();
                self.input.ctrl = m.state().control_key() || m.state().super_key();
            }
            WindowEvent::DroppedFile(path) => self.open(Some(path), false),
            WindowEvent::CursorMoved { position, .. } => {
                let (x, y) = (position.x as f32, position.y as f32);
                if over_panel && self.input.drag.is_none() {
                    self.input.cursor = (x, y);
                    if let Some(s) = &mut self.shown.state {
                        if s.timeline.hover.take().is_some() {
                            self.redraw();
                        }
                    }
                } else {
                    self.mouse_moved(x, y);
                }
            }
            WindowEvent::MouseInput { state, button, .. }
                if !consumed || self.input.drag.is_some() =>
            {
                self.mouse_button(button, state == ElementState::Pressed)
            }
            WindowEvent::MouseWheel { delta, .. } if !consumed && !over_panel => self.wheel(delta),
            WindowEvent::KeyboardInput { event, .. }
                if !consumed && event.state == ElementState::Pressed =>
            {
                let theme = self.side.theme;
                let quit = self.input.ctrl
                    && matches!(&event.logical_key, winit::keyboard::Key::Character(c) if c.eq_ignore_ascii_case("q"));
                if quit && cfg!(not(target_arch = "wasm32")) {
                    // Ctrl+Q: as closing the window (a page cannot close itself).
                    el.exit();
                    return;
                }
                self.key(&event.logical_key);
                if self.side.theme != theme {
                    self.save_settings();
                }
            }
            WindowEvent::ThemeChanged(_) | WindowEvent::ScaleFactorChanged { .. } => self.redraw(),
            // A page going out of sight may never come back (closed tabs send nothing else).
            WindowEvent::Occluded(true) if cfg!(target_arch = "wasm32") => {
                self.remember_view();
                self.save_settings();
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, el: &ActiveEventLoop) {
        match self.drawing.repaint_at {
            Some(t) if t <= Instant::now() => {
                self.drawing.repaint_at = None;
                self.redraw();
                el.set_control_flow(ControlFlow::Wait);
            }
            Some(t) => el.set_control_flow(ControlFlow::WaitUntil(t)),
            None => el.set_control_flow(ControlFlow::Wait),
        }
        if self.file.loading.is_some() && cfg!(not(target_arch = "wasm32")) {
            // Keep the elapsed-time display moving while loading, a few times a second
            // (a page redraws after each step of its load).
            el.set_control_flow(ControlFlow::WaitUntil(
                Instant::now() + Duration::from_millis(200),
            ));
            self.redraw();
        }
    }

    fn exiting(&mut self, _el: &ActiveEventLoop) {
        self.remember_view();
        self.remember_layout();
        self.save_settings();
        if let Some(g) = &mut self.gl {
            g.egui.destroy();
            // SAFETY: the context is still current.
            unsafe { g.renderer.destroy() };
        }
    }
}

/// Whether egui is given a pointer move to `pos` (pixels): over its panel (and the panel's
/// resize handle beside it) or one of its windows, while it drags, or as the pointer leaves
/// them (so that nothing stays hovered); `was`: whether the last move was one of these.
/// egui repaints once more after any event it is given, and the side panel is most of a
/// frame's drawing, so moves over the timeline (a redraw each, for the hover and the
/// status bar's cursor time) are kept from it.
fn egui_sees_move(
    ctx: &egui::Context,
    pos: &winit::dpi::PhysicalPosition<f64>,
    panel_left: f32,
    was: &mut bool,
) -> bool {
    let ppp = ctx.pixels_per_point();
    let grab = ctx.global_style().interaction.resize_grab_radius_side * ppp;
    let at = egui::pos2(pos.x as f32 / ppp, pos.y as f32 / ppp);
    let over = pos.x as f32 >= panel_left - grab
        || ctx.egui_is_using_pointer()
        || ctx
            .layer_id_at(at)
            .is_some_and(|l| l.order != egui::Order::Background);
    let sees = over || *was;
    *was = over;
    sees
}
