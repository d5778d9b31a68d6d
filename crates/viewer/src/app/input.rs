//! The app's input: pointer, wheel and keys on the timeline, and the right-click menu's
//! choices. The panel's input is egui's.

use winit::event::{MouseButton, MouseScrollDelta};
use winit::keyboard::{Key, NamedKey};

use trace_model::FlameSort;

use super::{App, Drag};
use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::persist::keys::Action;
use crate::theme::Theme;
use crate::timeline::draw::minimap_time;
use crate::view::flame::{Mode, Which};
use crate::view::state::{Side, ViewState};
use web_time::{Duration, Instant};

impl App {
    /// What was chosen in a right-click's menu, for what was clicked.
    pub(super) fn menu_choice(&mut self, (pick, c): (Pick, crate::app::overlays::MenuChoice)) {
        use crate::app::overlays::MenuChoice;
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            return;
        };
        let name = crate::kinds::copy_text(&l.trace, pick, false);
        match c {
            MenuChoice::CopyName | MenuChoice::CopyStack => {
                let text = crate::kinds::copy_text(&l.trace, pick, c == MenuChoice::CopyStack);
                if let (Some(text), Some(g)) = (text, &self.gl) {
                    g.egui.egui_ctx.copy_text(text);
                }
            }
            MenuChoice::Search => {
                let name = name.unwrap_or_default();
                s.search(l, &name);
                self.side.panel.search = name;
            }
            MenuChoice::Zoom => s.timeline.zoom_to_pick(l, pick),
            MenuChoice::Flame => {
                if let Pick::Span(r) = pick {
                    s.timeline.selected = Some(pick);
                    s.mode = Mode::Flame;
                    let label = trace_model::FrameLabel::Name(l.trace.span(r).name);
                    s.flame.open_sandwich(l, label);
                }
            }
        }
    }

    pub(super) fn mouse_moved(&mut self, x: f32, y: f32) {
        let (dx, dy) = (x - self.input.cursor.0, y - self.input.cursor.1);
        self.input.cursor = (x, y);
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            return;
        };
        match &mut self.input.drag {
            Some(Drag::Pan {
                x: x0,
                y: y0,
                moved,
            }) => {
                if (x - *x0).abs() + (y - *y0).abs() > 3.0 {
                    *moved = true;
                }
                s.timeline.pan(-dx);
                // In compare mode, the pane the drag started in scrolls.
                s.scroll_at(*y0, -dy);
                s.clear_hover();
                s.sync_compare();
            }
            Some(Drag::Range { from }) => {
                // Statistics are recomputed when the drag ends, not on every move.
                let t = s.timeline.viewport.time_at(x as f64);
                s.range = Some(((*from).min(t), (*from).max(t)));
            }
            Some(Drag::Divider) => {
                s.drag_divider(y);
                s.clear_hover();
            }
            Some(Drag::Minimap) => {
                let t = minimap_time(l, s, x);
                let (a, b) = s.timeline.viewport.visible();
                s.timeline.viewport.show(t - (b - a) / 2, t + (b - a) / 2);
            }
            None if s.mode == Mode::Flame => {
                if !s.flame_hover(x, y) {
                    return;
                }
            }
            None if s.hover_base(x, y) => {}
            // Redrawn even where nothing is hovered: the status bar gives the cursor's time.
            None => s.timeline.hover = s.timeline.hit(l, x, y).map(|r| (r, x, y)),
        }
        self.redraw();
    }

    pub(super) fn mouse_button(&mut self, button: MouseButton, pressed: bool) {
        let (x, y) = self.input.cursor;
        // A click anywhere but on the menu closes a right-click's menu.
        if button == MouseButton::Left && pressed && self.input.context_menu.take().is_some() {
            self.redraw();
        }
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            return;
        };
        if x > s.timeline.width {
            return;
        }
        if button == MouseButton::Right && !pressed && s.mode == Mode::Timeline {
            self.input.context_menu = s.timeline.hit(l, x, y).map(|p| (p, x, y));
            self.redraw();
            return;
        }
        if button != MouseButton::Left {
            return;
        }
        if s.mode == Mode::Flame {
            // A click zooms into a frame (an ancestor's bar zooms back out).
            if !pressed {
                if let Some(h) = s.flame_hit(x, y) {
                    s.flame_click(l, h);
                    self.redraw();
                }
            }
            return;
        }
        if pressed {
            self.input.drag = Some(if y < s.timeline.minimap_h() {
                let t = minimap_time(l, s, x);
                let (a, b) = s.timeline.viewport.visible();
                s.timeline.viewport.show(t - (b - a) / 2, t + (b - a) / 2);
                Drag::Minimap
            } else if y < s.timeline.tracks_top() || self.input.shift {
                let t = s.timeline.viewport.time_at(x as f64);
                s.range = Some((t, t));
                Drag::Range { from: t }
            } else if s.on_divider(y) {
                Drag::Divider
            } else {
                Drag::Pan { x, y, moved: false }
            });
        } else {
            match self.input.drag.take() {
                Some(Drag::Pan { moved: false, .. }) => {
                    let now = Instant::now();
                    let double = self.input.last_click.is_some_and(|(t, px, py)| {
                        now - t < Duration::from_millis(400)
                            && (px - x).abs() < 4.0
                            && (py - y).abs() < 4.0
                    });
                    self.input.last_click = Some((now, x, y));
                    if s.in_base(y) {
                        s.click_base(x, y, double);
                    } else if let Some(kind) = s.timeline.header_at(y) {
                        s.timeline.toggle_collapse(l, kind);
                    } else {
                        let hit = s.timeline.hit(l, x, y);
                        match (hit, double) {
                            (Some(p), true) => s.timeline.zoom_to_pick(l, p),
                            (hit, _) => s.timeline.select_pick(l, hit),
                        }
                    }
                }
                Some(Drag::Range { .. }) => {
                    // A click on the ruler (no real drag) clears the range.
                    if let Some((a, b)) = s.range {
                        if b - a < (s.timeline.viewport.ns_per_px * 2.0) as i64 {
                            s.range = None;
                        }
                    }
                }
                _ => {}
            }
        }
        self.redraw();
    }

    pub(super) fn wheel(&mut self, delta: MouseScrollDelta) {
        let (x, _) = self.input.cursor;
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            return;
        };
        if x > s.timeline.width || s.mode == Mode::Flame {
            return;
        }
        let (dx, dy) = match delta {
            MouseScrollDelta::LineDelta(a, b) => (a * 40.0, b * 40.0),
            MouseScrollDelta::PixelDelta(p) => (p.x as f32, p.y as f32),
        };
        if self.input.shift {
            s.scroll_at(self.input.cursor.1, -(dy + dx));
        } else if dx.abs() > dy.abs() {
            s.timeline.pan(-dx);
        } else {
            s.zoom_at(l, x, 1.0015f64.powf(dy as f64));
        }
        s.clear_hover();
        self.redraw();
    }

    pub(super) fn key(&mut self, key: &Key) {
        if self.input.ctrl {
            match key {
                Key::Character(c) if c.eq_ignore_ascii_case("o") => self.pick_file(),
                Key::Character(c) if c.eq_ignore_ascii_case("f") => {
                    self.side.panel.focus_search = true;
                }
                Key::Character(c) if c.eq_ignore_ascii_case("r") => self.reload(),
                Key::Character(c) if c.eq_ignore_ascii_case("s") => {
                    self.drawing.save_pending = true
                }
                Key::Character(c) if c.eq_ignore_ascii_case("c") => {
                    // Ctrl+C: the selection's name; Ctrl+Shift+C: its call stack.
                    let text = match (&self.shown.loaded, &self.shown.state) {
                        (Some(l), Some(s)) => s
                            .timeline
                            .selected
                            .and_then(|p| crate::kinds::copy_text(&l.trace, p, self.input.shift)),
                        _ => None,
                    };
                    if let (Some(text), Some(g)) = (text, &self.gl) {
                        g.egui.egui_ctx.copy_text(text);
                    }
                }
                _ => return,
            }
            self.redraw();
            return;
        }
        if *key == Key::Named(NamedKey::F5) {
            self.reload();
            return;
        }
        let action = self.input.bindings.action(key);
        match action {
            Some(Action::Help) => self.input.show_help = !self.input.show_help,
            Some(Action::TogglePanel) => self.side.panel_hidden = !self.side.panel_hidden,
            Some(Action::Clear) if self.input.show_help => self.input.show_help = false,
            Some(Action::Clear) if self.input.context_menu.is_some() => {
                self.input.context_menu = None
            }
            _ => {
                self.view_key(key, action);
                return;
            }
        }
        self.redraw();
    }

    /// A key that acts on the trace shown: the flame graph's own keys, or an action.
    fn view_key(&mut self, key: &Key, action: Option<Action>) {
        let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) else {
            return;
        };
        if action == Some(Action::FlameGraph) {
            s.mode = match s.mode {
                Mode::Timeline => Mode::Flame,
                Mode::Flame => Mode::Timeline,
            };
            s.flame.hover = None;
            s.flame.hover_removed = None;
            self.redraw();
            return;
        }
        if s.mode == Mode::Flame {
            if flame_key(l, s, key, &mut self.side.theme) {
                self.redraw();
            }
            return;
        }
        let (cx, w) = (s.timeline.width / 2.0, s.timeline.width);
        let Some(action) = action else { return };
        match action {
            Action::ZoomIn => s.zoom_at(l, cx, 1.25),
            Action::ZoomOut => s.zoom_at(l, cx, 0.8),
            Action::PanLeft => s.timeline.pan(-w * 0.1),
            Action::PanRight => s.timeline.pan(w * 0.1),
            Action::ScrollUp => s.timeline.scroll(-40.0),
            Action::ScrollDown => s.timeline.scroll(40.0),
            Action::Fit => s.fit(l),
            Action::FitAll => s.fit_all(l),
            Action::ToggleTheme => self.side.theme = Some(s.timeline.theme.toggled()),
            Action::Search => self.side.panel.focus_search = true,
            Action::Flows => s.timeline.flows = s.timeline.flows.cycled(),
            Action::PrevSlice | Action::NextSlice => {
                if !s.timeline.step_on_lane(l, action == Action::NextSlice) {
                    return;
                }
            }
            Action::MarkRange => {
                if !s.mark_selection(l) {
                    return;
                }
            }
            Action::AddMarker => {
                // The pointer's pane takes it (BASE's in compare mode); off the
                // timeline, NEW's at the middle.
                let (x, y) = match self.input.cursor {
                    (x, y) if x < s.timeline.width => (x, y),
                    _ => (cx, 0.0),
                };
                let panel = &mut self.side.panel;
                match crate::timeline::markers::add_at(s, l, x, y) {
                    Some((Side::Base, i)) => panel.focus_base_marker = Some(i),
                    Some((Side::New, i)) => panel.focus_marker = Some(i),
                    None => {}
                }
                self.side.panel_hidden = false;
                // Kept at once: a viewer that is killed loses only the notes typed since.
                self.remember_view();
                self.save_settings();
            }
            Action::NextMatch => {
                s.step_match(l, !self.input.shift);
            }
            Action::Clear => {
                s.timeline.selected = None;
                if let Some(c) = s.compare.as_deref_mut() {
                    c.view.selected = None;
                }
                s.range = None;
                s.search(l, "");
                self.side.panel.search.clear();
            }
            Action::FlameGraph | Action::Help | Action::TogglePanel => return,
        }
        self.redraw();
    }
}

/// A key in the flame graph view; returns whether anything changed.
fn flame_key(l: &Loaded, s: &mut ViewState, key: &Key, theme: &mut Option<Theme>) -> bool {
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
            "t" => *theme = Some(s.timeline.theme.toggled()),
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
