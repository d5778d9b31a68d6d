//! Opening files and keeping what the viewer remembers: the file dialog, a finished
//! load, reloads, and the settings (views, layout) written on the way.

use std::path::PathBuf;
use std::sync::Arc;

use web_time::Duration;

use super::App;
use crate::loaded::Loaded;
use crate::panels::side::{Panel, SortColumn};
use crate::persist::reload::FileStamp;
use crate::persist::settings::Settings;
use crate::platform::{self, Loading, UserEvent};
use crate::view::state::ViewState;
use crate::ViewerError;

impl App {
    /// Starts loading on a background thread (in steps, on the web); the window stays
    /// responsive. A `reload` of the file shown keeps the view.
    pub(super) fn open(&mut self, path: Option<PathBuf>, reload: bool) {
        if self.file.loading.is_some() {
            // One load at a time; a file that changes meanwhile is loaded again after.
            self.file.reload_pending |= reload;
            if reload {
                return;
            }
        }
        let source = path
            .as_ref()
            .map_or(crate::DEMO_NAME.to_string(), |p| p.display().to_string());
        let loading = Loading::new(source, reload);
        #[cfg(not(target_arch = "wasm32"))]
        {
            if !reload && self.file.follow {
                if let Some(p) = &path {
                    crate::platform::native::watch(p.clone(), self.proxy.clone());
                }
            }
            crate::platform::native::load(
                path.clone(),
                &self.file.decode,
                &loading,
                self.proxy.clone(),
            );
        }
        // A page opens files by their bytes (`open_bytes`): only the demo comes here.
        #[cfg(target_arch = "wasm32")]
        {
            self.file.steps = Some(crate::platform::web::Stepping::new(
                crate::DEMO.to_vec(),
                &self.file.decode,
            ));
            crate::platform::web::step_soon(&self.proxy);
        }
        if !reload {
            self.remember_view();
        }
        self.file.path = path;
        self.file.page_file = None;
        self.file.page_pending = None;
        self.file.loading = Some(loading);
        self.file.error = None;
        self.redraw();
    }

    /// The page gave a trace's bytes: load them in steps, replacing any load under way.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn open_bytes(&mut self, name: String, bytes: Vec<u8>) {
        self.remember_view();
        self.file.page_pending = Some((name.clone(), bytes.len() as u64));
        self.file.steps = Some(crate::platform::web::Stepping::new(
            bytes,
            &self.file.decode,
        ));
        crate::platform::web::step_soon(&self.proxy);
        self.file.path = None;
        self.file.loading = Some(Loading::new(name, false));
        self.file.error = None;
        self.redraw();
    }

    /// The page's load worker: a load began (replacing any under way), advanced, built
    /// its trace and index (taken from the worker's buffer in steps), or sent the
    /// whole-trace statistics of the trace shown.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn page_load(&mut self, p: crate::platform::web::PageLoad) {
        use crate::platform::web::PageLoad;
        use std::sync::atomic::Ordering;
        match p {
            PageLoad::Begun(name) => {
                self.remember_view();
                self.file.steps = None;
                self.file.taking = None;
                self.file.early_stats = None;
                self.file.levels = None;
                self.file.path = None;
                self.file.page_pending = None;
                self.file.loading = Some(Loading::new(name, false));
                self.file.error = None;
                // Not drawn: the page's overlay shows the load from its start, and a canvas
                // frame is drawn and read back on the CPU where the browser has no GPU,
                // 40-300 ms of a core beside the worker's decode (docs/PERFORMANCE.md,
                // "The page beside speedscope 1.25"). The next frame drawn for any other
                // reason shows the status.
                return;
            }
            PageLoad::Progress { done, total, stage } => {
                if let Some(l) = &mut self.file.loading {
                    l.done.store(done, Ordering::Relaxed);
                    l.total.store(total, Ordering::Relaxed);
                    l.stage = stage;
                }
                // The page's overlay shows it (index.html updates it on each message): a
                // canvas frame would be read back by the browser where it draws WebGL on the
                // CPU (docs/PERFORMANCE.md, "The page's frames while loading").
                return;
            }
            PageLoad::Built(_, model) => {
                self.file.taking = Some(crate::platform::web::Taking::new(model));
                crate::platform::web::step_soon(&self.proxy);
                // Nothing on the canvas changes until the trace is taken, and a canvas
                // frame costs the page a read-back where the browser draws WebGL on the CPU.
                return;
            }
            PageLoad::Index(name, index) => {
                let loading = self.file.loading.as_ref().filter(|l| l.source == name);
                if let (Some(taking), Some(_)) = (&mut self.file.taking, loading) {
                    taking.add_index(&index);
                    crate::platform::web::step_soon(&self.proxy);
                }
                return;
            }
            PageLoad::Levels(name, part) => {
                let levels = crate::platform::web::LevelsTaking::new(name, &part);
                self.file.levels = Some(levels);
                crate::platform::web::step_soon(&self.proxy);
                return;
            }
            PageLoad::Stats(name, bytes) if self.file.taking.is_some() => {
                self.file.early_stats = Some((name, bytes));
            }
            PageLoad::Stats(name, bytes) => {
                let shown = self.shown.loaded.as_ref().filter(|l| l.source == name);
                if let Some(l) = shown.cloned() {
                    // None: the worker had none to send; the page computes them.
                    match crate::platform::web::read_stats(&bytes, &l.trace) {
                        Some(stats) => l.set_whole_stats(stats),
                        None => self.stats_in_background(&l),
                    }
                }
            }
        }
        self.redraw();
    }

    /// The next steps of a load in a page, for about a frame's time; then the page gets
    /// to draw the progress and handle input before the next.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn step(&mut self) {
        if let (Some(taking), Some(loading)) = (&mut self.file.taking, &self.file.loading) {
            let name = loading.source.clone();
            match taking.run(&name) {
                None => {
                    // Not drawn: the canvas would say "indexing" again, and a frame of it
                    // costs more than a step where the browser draws WebGL on the CPU.
                    // The browser still draws its frames and answers input between steps.
                    // Waiting for the index's part: its arrival steps again.
                    if !taking.waiting() {
                        crate::platform::web::step_soon(&self.proxy);
                    }
                    return;
                }
                Some(Ok(l)) => {
                    self.file.taking = None;
                    let size = l.trace.decode_summary().input_bytes;
                    self.file.page_pending = Some((name, size));
                    self.file.stats_coming = true;
                    self.on_loaded(Ok(l));
                    if let Some((name, bytes)) = self.file.early_stats.take() {
                        self.page_load(crate::platform::web::PageLoad::Stats(name, bytes));
                    }
                    if self.file.levels.is_some() {
                        crate::platform::web::step_soon(&self.proxy);
                    }
                }
                Some(Err(e)) => {
                    self.file.taking = None;
                    self.file.loading = None;
                    self.file.error = Some(format!("{name}: {e}"));
                }
            }
            self.redraw();
            return;
        }
        if self.take_levels() {
            return;
        }
        let (Some(steps), Some(loading)) = (&mut self.file.steps, &mut self.file.loading) else {
            return;
        };
        match steps.run(Duration::from_millis(30), loading) {
            None => {
                // The overlay, not the canvas, shows the progress between steps.
                Self::page_progress(loading);
                crate::platform::web::step_soon(&self.proxy);
            }
            Some(result) => {
                self.file.steps = None;
                self.on_loaded(result);
                self.redraw();
            }
        }
    }

    /// A turn of taking the index's stored levels, once the trace they are for is shown
    /// and no other load is under way; true if there were levels to take. Nothing is
    /// drawn: the views' answers are the same with them.
    #[cfg(target_arch = "wasm32")]
    fn take_levels(&mut self) -> bool {
        let Some(levels) = &mut self.file.levels else {
            return false;
        };
        let shown = self
            .shown
            .loaded
            .as_ref()
            .filter(|l| l.source == levels.source);
        let Some(l) = shown.filter(|_| self.file.loading.is_none()) else {
            return false;
        };
        match levels.run(&l.trace) {
            None => crate::platform::web::step_soon(&self.proxy),
            Some(r) => {
                self.file.levels = None;
                // Levels for another trace, or damaged: the pyramids answer alone.
                crate::platform::web::levels_taken(r.is_ok_and(|lv| l.index.set_levels(lv)));
            }
        }
        true
    }

    /// After each frame: the page's progress overlay is hidden once no load is under way
    /// (loaded, failed, or cancelled); the load worker's messages show and advance it.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn page_overlay(&self) {
        match &self.file.loading {
            Some(l) if self.file.steps.is_some() => Self::page_progress(l),
            Some(_) => {}
            None => crate::platform::web::show_progress(None),
        }
        let dark = self.theme().kind == crate::theme::ThemeKind::Dark;
        crate::platform::web::panel_width(self.side.panel_px, dark);
    }

    #[cfg(target_arch = "wasm32")]
    fn page_progress(l: &Loading) {
        use std::sync::atomic::Ordering;
        let (done, total) = (
            l.done.load(Ordering::Relaxed),
            l.total.load(Ordering::Relaxed),
        );
        if total == 0 {
            // Before the first step: the page's "reading" stays.
            return;
        }
        crate::platform::web::show_progress(Some((&l.source, done, total, l.stage)));
    }

    /// Ctrl+O: a page's file picker, the desktop's file dialog, or (with no dialog to
    /// show) the path prompt in the side panel.
    pub(super) fn pick_file(&mut self) {
        if !platform::pick_file(&self.proxy) {
            self.side.panel.show_open = true;
            self.side.panel.open_for_base = false;
        }
    }

    /// "Compare with…": the file dialog, picking compare mode's BASE (or the path prompt).
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn pick_base(&mut self) {
        self.file.picking_base = platform::pick_file(&self.proxy);
        if !self.file.picking_base {
            self.side.panel.show_open = true;
            self.side.panel.open_for_base = true;
        }
    }

    /// Compare mode: loads BASE on a thread; once it is there the flame graph is
    /// coloured by each frame's change against it.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn compare_with(&mut self, path: PathBuf) {
        let (proxy, decode) = (self.proxy.clone(), self.file.decode.clone());
        self.shown.base_loading = Some(path.clone());
        std::thread::spawn(move || {
            let r = trace_model::load_with(&path, &decode, |_, _| {})
                .map(|t| Loaded::new(t, path.display().to_string()))
                .map_err(|e| e.to_string());
            let _ = proxy.send_event(UserEvent::Base(Box::new((path, r))));
        });
        self.redraw();
    }

    /// "Compare with…" on a page: its second file picker, whose file the page loads as
    /// BASE ([`App::page_base`]).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn pick_base(&mut self) {
        crate::platform::web::base::pick();
    }

    /// The page's load of BASE: begun (the trace shown stays; one the page is still
    /// loading opens on the flame graph, as `--compare` does), or done.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn page_base(&mut self, b: crate::platform::web::base::PageBase) {
        let name = b.name();
        match b.into_loaded() {
            None => {
                if self.shown.loaded.is_none() || self.file.loading.is_some() {
                    self.file.initial_base = Some(name.clone());
                }
                self.shown.base_loading = Some(name);
                self.redraw();
            }
            Some(r) => self.on_base_loaded((name, r)),
        }
    }

    /// BASE loaded (or failed to): compare mode starts, on the flame graph.
    pub(super) fn on_base_loaded(&mut self, (path, r): (PathBuf, Result<Loaded, String>)) {
        // A BASE chosen since replaces this one.
        if self.shown.base_loading.as_ref() != Some(&path) {
            return;
        }
        self.shown.base_loading = None;
        match r {
            Ok(b) => {
                let b = Arc::new(b);
                self.shown.base = Some(b.clone());
                if let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) {
                    s.set_base(l, Some(b));
                    s.mode = crate::view::flame::Mode::Flame;
                }
            }
            Err(e) => self.file.error = Some(format!("compare with {}: {e}", path.display())),
        }
        self.redraw();
    }

    /// Compare mode off: the flame graph in its usual colours.
    pub(super) fn stop_comparing(&mut self) {
        self.shown.base = None;
        self.shown.base_loading = None;
        if let (Some(l), Some(s)) = (&self.shown.loaded, &mut self.shown.state) {
            s.set_base(l, None);
        }
        self.redraw();
    }

    /// Where the trace shown keeps its view in the settings, and the file's stamp: its
    /// path, or for a page's trace its name and size (`page:SIZE:NAME`); `None` for the demo.
    fn saved_view_key(&self) -> Option<(String, Option<FileStamp>)> {
        if let Some(p) = &self.file.path {
            let key = Settings::file_key(p).to_string_lossy().into_owned();
            return Some((key, FileStamp::of(p)));
        }
        let (name, len) = self.file.page_file.as_ref()?;
        let stamp = FileStamp {
            len: *len,
            modified: None,
        };
        Some((format!("page:{len}:{name}"), Some(stamp)))
    }

    /// Keeps the view of the file shown in the settings (saved with them).
    pub(super) fn remember_view(&mut self) {
        if let (Some((key, stamp)), Some(l), Some(s)) =
            (self.saved_view_key(), &self.shown.loaded, &self.shown.state)
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
        let (w0, h0) = self.side.window_start;
        if (size.width - w0).abs() > 1.0 || (size.height - h0).abs() > 1.0 {
            self.settings.window_points = Some((size.width.round(), size.height.round()));
        }
        if self.side.panel_points > 0.0
            && (self.side.panel_points - self.side.panel_start).abs() > 1.0
        {
            self.settings.panel_points = Some(self.side.panel_points.round());
        }
        self.settings.panel_hidden = self.side.panel_hidden;
        self.settings.stats_columns = SortColumn::labels(&self.side.panel.stats_extra);
    }

    /// Writes the settings (atomically); a failure is reported, never fatal.
    pub(super) fn save_settings(&mut self) {
        self.settings.theme = self.side.theme.map(|t| t.kind);
        if let Some(p) = &self.settings_path {
            if let Err(e) = self.settings.save(p) {
                eprintln!("spall: the settings were not saved: {e}");
            }
        }
        platform::save_settings(&self.settings);
    }

    /// The whole-trace statistics the side panel shows first are O(spans): they are
    /// computed on a thread of their own (a page's: after a frame), and the panel says so
    /// meanwhile.
    fn stats_in_background(&self, l: &Arc<Loaded>) {
        let (bg, proxy) = (l.clone(), self.proxy.clone());
        platform::spawn(move || {
            bg.whole_stats();
            let _ = proxy.send_event(UserEvent::Repaint(Duration::ZERO));
        });
    }

    /// F5, Ctrl+R, or `--follow` seeing the file change: load the file shown again.
    pub(super) fn reload(&mut self) {
        if self.file.path.is_some() {
            self.open(self.file.path.clone(), true);
        }
    }

    /// A load finished: the trace shown, or its error.
    pub(super) fn on_loaded(&mut self, result: Result<Loaded, ViewerError>) {
        let loading = self.file.loading.take();
        let reload = loading.as_ref().is_some_and(|l| l.reload);
        if result.is_ok() {
            self.file.load_time = loading.map(|l| l.started.elapsed());
        }
        if let Some(t) = self.drawing.timing {
            eprintln!(
                "spall: trace loaded and indexed after {:.0} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        let page_file = self.file.page_pending.take();
        match result {
            Ok(l) => {
                if page_file.is_some() {
                    self.file.page_file = page_file;
                }
                let l = Arc::new(l);
                #[cfg(target_arch = "wasm32")]
                let stats_coming = std::mem::take(&mut self.file.stats_coming);
                #[cfg(not(target_arch = "wasm32"))]
                let stats_coming = false;
                if !stats_coming {
                    self.stats_in_background(&l);
                }
                let (w, h) = self.timeline_size();
                let mut s = ViewState::new(&l, w, h, self.theme());
                if let Some(g) = &self.gl {
                    g.window.set_title(&format!("spall · {}", l.source));
                }
                match (&self.shown.loaded, &self.shown.state) {
                    (Some(old_l), Some(old)) if reload => s.carry_over(old, old_l, &l),
                    _ => {
                        // The SQL editor and its history outlive a trace (and a query the
                        // page asked for before the load is still to run).
                        let query = std::mem::take(&mut self.side.panel.query);
                        self.side.panel = Panel::default();
                        self.side.panel.query = query;
                        self.shown.fit_pending = true;
                        if let Some((key, stamp)) = self.saved_view_key() {
                            if let Some(v) = self.settings.views.get(&key) {
                                self.shown.restore =
                                    crate::persist::saved_view::apply(v, &mut s, &l, stamp)
                                        .map(|r| (r, None));
                            }
                            if self.file.path.is_none() {
                                self.settings.add_page(&key);
                            }
                        }
                        if let Some(p) = self.file.path.clone() {
                            if s.timeline.markers.is_empty() && s.range.is_none() {
                                crate::persist::saved_view::apply_sidecar(&p, &mut s, &l);
                            }
                            self.settings.add_recent(&p);
                            self.save_settings();
                        }
                    }
                }
                // SQL runs on a worker thread holding the new trace; the page has no threads,
                // so there it runs at once.
                self.side
                    .panel
                    .query
                    .set_runner(platform::query_runner(l.trace.clone(), self.proxy.clone()));
                // Compare mode outlives the trace compared; `--compare` opens on its graph.
                s.set_base(&l, self.shown.base.clone());
                if let Some(old) = &self.shown.state {
                    s.keep_base_markers(old);
                }
                if self.file.initial_base.take().is_some() {
                    s.mode = crate::view::flame::Mode::Flame;
                }
                self.shown.loaded = Some(l);
                self.shown.state = Some(s);
            }
            // A failed reload keeps the trace on screen, with the error in the panel.
            Err(e) => self.file.error = Some(e.to_string()),
        }
        if std::mem::take(&mut self.file.reload_pending) {
            self.reload();
        }
        self.redraw();
    }
}
