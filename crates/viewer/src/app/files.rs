//! Opening files and keeping what the viewer remembers: the file dialog, a finished
//! load, reloads, and the settings (views, layout) written on the way.

use std::sync::Arc;

use web_time::Duration;

use super::{platform, App, UserEvent};
use crate::loaded::Loaded;
use crate::panels::side::Panel;
use crate::persist::reload::FileStamp;
use crate::persist::settings::Settings;
use crate::view::state::ViewState;
use crate::ViewerError;

impl App {
    /// Ctrl+O: a page's file picker, the desktop's file dialog, or (with no dialog to
    /// show) the path prompt in the side panel.
    pub(super) fn pick_file(&mut self) {
        #[cfg(target_arch = "wasm32")]
        crate::platform::web::pick_file();
        #[cfg(not(target_arch = "wasm32"))]
        if !crate::platform::native::file_dialog(&self.proxy) {
            self.panel.show_open = true;
        }
    }

    /// Where the trace shown keeps its view in the settings, and the file's stamp: its
    /// path, or for a page's trace its name and size (`page:SIZE:NAME`); `None` for the demo.
    fn saved_view_key(&self) -> Option<(String, Option<FileStamp>)> {
        if let Some(p) = &self.path {
            let key = Settings::file_key(p).to_string_lossy().into_owned();
            return Some((key, FileStamp::of(p)));
        }
        let (name, len) = self.page_file.as_ref()?;
        let stamp = FileStamp {
            len: *len,
            modified: None,
        };
        Some((format!("page:{len}:{name}"), Some(stamp)))
    }

    /// Keeps the view of the file shown in the settings (saved with them).
    pub(super) fn remember_view(&mut self) {
        if let (Some((key, stamp)), Some(l), Some(s)) =
            (self.saved_view_key(), &self.loaded, &self.state)
        {
            let v = crate::persist::saved_view::save(s, l, stamp);
            self.settings.views.insert(key, v);
        }
    }

    /// Keeps the panel's and window's sizes if the user changed them (a size egui or the
    /// window system adjusts by a point is not a change, so nothing drifts run to run).
    pub(super) fn remember_layout(&mut self) {
        let Some(g) = &self.gl else { return };
        let size = g
            .window
            .inner_size()
            .to_logical::<f32>(g.window.scale_factor());
        let (w0, h0) = self.window_start;
        if (size.width - w0).abs() > 1.0 || (size.height - h0).abs() > 1.0 {
            self.settings.window_points = Some((size.width.round(), size.height.round()));
        }
        if self.panel_points > 0.0 && (self.panel_points - self.panel_start).abs() > 1.0 {
            self.settings.panel_points = Some(self.panel_points.round());
        }
        self.settings.panel_hidden = self.panel_hidden;
    }

    /// Writes the settings (atomically); a failure is reported, never fatal.
    pub(super) fn save_settings(&mut self) {
        self.settings.theme = self.theme.map(|t| t.kind);
        if let Some(p) = &self.settings_path {
            if let Err(e) = self.settings.save(p) {
                eprintln!("spall: the settings were not saved: {e}");
            }
        }
        #[cfg(target_arch = "wasm32")]
        crate::platform::web::save_settings(&self.settings);
    }

    /// F5, Ctrl+R, or `--follow` seeing the file change: load the file shown again.
    pub(super) fn reload(&mut self) {
        if self.path.is_some() {
            self.open(self.path.clone(), true);
        }
    }

    /// A load finished: the trace shown, or its error.
    pub(super) fn on_loaded(&mut self, result: Result<Loaded, ViewerError>) {
        let loading = self.loading.take();
        let reload = loading.as_ref().is_some_and(|l| l.reload);
        if result.is_ok() {
            self.load_time = loading.map(|l| l.started.elapsed());
        }
        if let Some(t) = self.timing {
            eprintln!(
                "spall: trace loaded and indexed after {:.0} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        let page_file = self.page_pending.take();
        match result {
            Ok(l) => {
                if page_file.is_some() {
                    self.page_file = page_file;
                }
                // The whole-trace statistics the side panel shows first are O(spans): they
                // are computed on a thread of their own, and the panel says so meanwhile.
                let l = Arc::new(l);
                let (bg, proxy) = (l.clone(), self.proxy.clone());
                platform::spawn(move || {
                    bg.whole_stats();
                    let _ = proxy.send_event(UserEvent::Repaint(Duration::ZERO));
                });
                let (w, h) = self.timeline_size();
                let mut s = ViewState::new(&l, w, h, self.theme());
                if let Some(g) = &self.gl {
                    g.window.set_title(&format!("spall · {}", l.source));
                }
                match (&self.loaded, &self.state) {
                    (Some(old_l), Some(old)) if reload => s.carry_over(old, old_l, &l),
                    _ => {
                        // The SQL editor and its history outlive a trace (and a query the
                        // page asked for before the load is still to run).
                        let query = std::mem::take(&mut self.panel.query);
                        self.panel = Panel::default();
                        self.panel.query = query;
                        self.fit_pending = true;
                        if let Some((key, stamp)) = self.saved_view_key() {
                            if let Some(v) = self.settings.views.get(&key) {
                                self.restore =
                                    crate::persist::saved_view::apply(v, &mut s, &l, stamp)
                                        .map(|r| (r, None));
                            }
                            if self.path.is_none() {
                                self.settings.add_page(&key);
                            }
                        }
                        if let Some(p) = self.path.clone() {
                            if s.markers.is_empty() && s.range.is_none() {
                                crate::persist::saved_view::apply_sidecar(&p, &mut s, &l);
                            }
                            self.settings.add_recent(&p);
                            self.save_settings();
                        }
                    }
                }
                // SQL runs on a worker thread holding the new trace; the page has no threads,
                // so there it runs at once.
                #[cfg(not(target_arch = "wasm32"))]
                self.panel
                    .query
                    .set_runner(Box::new(crate::platform::native::ThreadRunner::new(
                        l.trace.clone(),
                        self.proxy.clone(),
                    )));
                #[cfg(target_arch = "wasm32")]
                self.panel.query.set_runner(Box::new(
                    crate::panels::query::InlineRunner::deferred(l.trace.clone()),
                ));
                self.loaded = Some(l);
                self.state = Some(s);
            }
            // A failed reload keeps the trace on screen, with the error in the panel.
            Err(e) => self.error = Some(e.to_string()),
        }
        if std::mem::take(&mut self.reload_pending) {
            self.reload();
        }
        self.redraw();
    }
}
