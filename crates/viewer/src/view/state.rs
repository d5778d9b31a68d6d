//! Everything about what the user is looking at: the view, scroll, selection, range,
//! search and highlights, and the operations on them. No GL: unit-tested directly.

use std::sync::Arc;

use trace_model::{FlameOptions, FlameSort, InstantScope, NameStats, SpanRef, StatsFilter, StrId};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::theme::Theme;
use crate::view::flame::{FlameHit, FlameView, Mode};
use crate::view::layout::{Collapsed, Layout, RowKind, Track};
use crate::view::viewport::Viewport;

pub use crate::view::search::Matches;

/// Height of the minimap strip at the top.
pub const MINIMAP_H: f32 = 36.0;
/// Height of the time ruler under it.
pub const RULER_H: f32 = 22.0;
/// Where the tracks start.
pub const TRACKS_TOP: f32 = MINIMAP_H + RULER_H;

/// The state of one trace's view.
#[derive(Clone, Debug)]
pub struct ViewState {
    /// The visible time window and its scale.
    pub viewport: Viewport,
    /// How far the tracks are scrolled down, in physical pixels.
    pub scroll_y: f32,
    /// Collapsed, hidden and pinned tracks.
    pub collapsed: Collapsed,
    /// The rows, for the current [`collapsed`](Self::collapsed).
    pub layout: Layout,
    /// The colours.
    pub theme: Theme,
    /// Size of the timeline area in pixels (the side panel excluded).
    pub width: f32,
    /// Height of the timeline area in pixels.
    pub height: f32,
    /// The selected span or event.
    pub selected: Option<Pick>,
    /// What is under the pointer, and the pointer's position in pixels.
    pub hover: Option<(Pick, f32, f32)>,
    /// Which flow arrows to draw.
    pub flows: FlowMode,
    /// A selected time range, absolute ns.
    pub range: Option<(i64, i64)>,
    /// Markers, in time order ([`crate::timeline::markers`]).
    pub markers: Vec<trace_model::Marker>,
    /// The search's matches.
    pub matches: Matches,
    /// Physical pixels per logical pixel (HiDPI): rows, strips and text scale with it.
    pub scale: f32,
    /// Timeline or flame graph.
    pub mode: Mode,
    /// The flame graph's state.
    pub flame: FlameView,
    /// Compare mode: BASE's tracks, drawn under NEW's ([`crate::view::compare`]).
    pub compare: Option<Box<BaseTimeline>>,
    /// Pixels between the ruler and the tracks: BASE's pane sits below NEW's.
    pub pane_top: f32,
}

impl ViewState {
    /// A view of the whole trace in a `width × height` area, nothing selected.
    pub fn new(l: &Loaded, width: f32, height: f32, theme: Theme) -> ViewState {
        let t = &l.trace;
        let collapsed = Collapsed::for_trace(t);
        let layout = Layout::new(t, &l.kinds, &collapsed, 1.0);
        ViewState {
            viewport: Viewport::fit(
                t.start_ns(),
                t.start_ns(),
                t.end_ns().max(t.start_ns() + 1),
                width as f64,
            ),
            scroll_y: 0.0,
            collapsed,
            layout,
            theme,
            width,
            height,
            selected: None,
            hover: None,
            flows: FlowMode::Selected,
            range: None,
            markers: Vec::new(),
            matches: Matches::default(),
            scale: 1.0,
            mode: Mode::Timeline,
            flame: FlameView::default(),
            compare: None,
            pane_top: 0.0,
        }
    }

    /// Builds the flame graph now if its scope changed (the screenshot and tests; the
    /// window builds big ones off its UI thread).
    pub fn ensure_flame(&mut self, l: &Loaded) {
        if let Some(want) = self.flame_wanted(l) {
            let tree = l.trace.flame(&want.0, want.1);
            self.flame.install(l, want, tree);
        }
    }

    /// What the flame graph should be built from now: `None` when the built one is current.
    pub fn flame_wanted(&self, l: &Loaded) -> Option<(FlameOptions, FlameSort)> {
        self.flame.wanted(l, &self.collapsed, self.range)
    }

    /// The options the flame graph's scope asks for.
    pub fn flame_options(&self, l: &Loaded) -> FlameOptions {
        self.flame.options(l, &self.collapsed, self.range)
    }

    /// The flame graph frame at a point of the main area.
    pub fn flame_hit(&self, x: f32, y: f32) -> Option<FlameHit> {
        self.flame.hit((self.width, self.height), self.scale, x, y)
    }

    /// The pointer moved to `(x, y)` over the flame graph: the frame under it (NEW's, or
    /// in compare mode one only BASE has); false when nothing was and nothing is.
    pub fn flame_hover(&mut self, x: f32, y: f32) -> bool {
        let hit = self.flame_hit(x, y).map(|h| (h, x, y));
        let size = (self.width, self.height);
        let removed = (hit.is_none())
            .then(|| self.flame.hit_removed(size, self.scale, x, y))
            .flatten()
            .map(|k| (k, x, y));
        let idle = hit.is_none() && removed.is_none();
        if idle && self.flame.hover.is_none() && self.flame.hover_removed.is_none() {
            return false;
        }
        self.flame.hover = hit;
        self.flame.hover_removed = removed;
        true
    }

    /// A click on a flame graph frame: zooms into it and selects it.
    pub fn flame_click(&mut self, l: &Loaded, h: FlameHit) {
        let opts = self.flame_options(l);
        self.flame.click(l, &opts, h);
    }

    /// Sets the HiDPI scale (physical pixels per logical pixel), relaying out the tracks.
    pub fn set_scale(&mut self, l: &Loaded, scale: f32) {
        let scale = scale.clamp(0.5, 4.0);
        if scale != self.scale {
            self.scroll_y *= scale / self.scale;
            self.scale = scale;
            self.relayout(l);
        }
    }

    /// Height of the minimap strip, in physical pixels.
    pub fn minimap_h(&self) -> f32 {
        MINIMAP_H * self.scale
    }

    /// Height of the time ruler, in physical pixels.
    pub fn ruler_h(&self) -> f32 {
        RULER_H * self.scale
    }

    /// Where the tracks start, below the minimap and the ruler.
    pub fn tracks_top(&self) -> f32 {
        TRACKS_TOP * self.scale + self.pane_top
    }

    /// Fits the view to a new timeline area size, in pixels.
    pub fn resize(&mut self, width: f32, height: f32) {
        self.width = width.max(1.0);
        self.height = height.max(1.0);
        self.viewport.resize(self.width as f64);
        self.clamp_scroll();
    }

    /// The most zoomed-out scale: the whole trace fits in a tenth of the width.
    pub fn max_ns_per_px(&self, l: &Loaded) -> f64 {
        let (a, b) = self.extent(l);
        ((b - a).max(1) as f64 / self.width as f64) * 10.0
    }

    /// Height of the area the tracks scroll in, in physical pixels.
    /// In compare mode, NEW's pane: BASE's follows it.
    pub fn tracks_height(&self) -> f32 {
        if self.compare.is_some() {
            return self.split_h();
        }
        (self.height - self.tracks_top()).max(0.0)
    }

    /// Where BASE's pane starts below NEW's tracks' top: NEW's pane and the divider.
    pub(crate) fn split_h(&self) -> f32 {
        let avail = (self.height - self.tracks_top()).max(0.0);
        let share = self.compare.as_ref().map_or(0.5, |c| c.split);
        ((avail - DIVIDER_H * self.scale) * share).max(0.0).floor()
    }

    /// Keeps the scroll within the rows (and a little past the last).
    pub fn clamp_scroll(&mut self) {
        let max = (self.layout.height - self.tracks_height() + 40.0).max(0.0);
        self.scroll_y = self.scroll_y.clamp(0.0, max);
    }

    /// Zooms by `factor` about pixel column `x`, no further out than
    /// [`max_ns_per_px`](Self::max_ns_per_px).
    pub fn zoom_at(&mut self, l: &Loaded, x: f32, factor: f64) {
        let max = self.max_ns_per_px(l);
        self.viewport.zoom_at(x as f64, factor, max);
    }

    /// Moves the time window by `dx` pixels.
    pub fn pan(&mut self, dx: f32) {
        self.viewport.pan(dx as f64);
    }

    /// Scrolls the tracks by `dy` pixels.
    pub fn scroll(&mut self, dy: f32) {
        self.scroll_y += dy;
        self.clamp_scroll();
    }

    /// The selected span, if a span is selected.
    pub fn selected_span(&self) -> Option<SpanRef> {
        self.selected.and_then(Pick::span)
    }

    /// The header row (process or thread) under a point, for collapsing.
    pub fn header_at(&self, y: f32) -> Option<RowKind> {
        if y < self.tracks_top() || y >= self.tracks_top() + self.tracks_height() {
            return None;
        }
        let row = self.layout.row_at(y - self.tracks_top() + self.scroll_y)?;
        row.kind.is_header().then_some(row.kind)
    }

    /// Collapses or expands the header row `kind`, and lays the rows out again.
    pub fn toggle_collapse(&mut self, l: &Loaded, kind: RowKind) {
        match kind {
            RowKind::Process(p) => self.collapsed.processes[p as usize] ^= true,
            RowKind::Thread(t) => self.collapsed.threads[t as usize] ^= true,
            RowKind::AsyncHeader(a) => self.collapsed.asyncs[a as usize] ^= true,
            RowKind::AsyncGroup(p) => self.collapsed.async_groups[p as usize] ^= true,
            _ => return,
        }
        self.relayout(l);
    }

    /// Shows the whole trace (in compare mode, BASE's too).
    pub fn fit_all(&mut self, l: &Loaded) {
        let (a, b) = self.extent(l);
        self.viewport.show(a, b.max(a + 1));
    }

    /// The times the view can show: the trace's, and in compare mode BASE's, shifted.
    fn extent(&self, l: &Loaded) -> (i64, i64) {
        let t = &l.trace;
        let (a, b) = (t.start_ns(), t.end_ns());
        match self.compare.as_deref() {
            None => (a, b),
            Some(c) => {
                let bt = &c.loaded.trace;
                (
                    a.min(bt.start_ns() - c.offset),
                    b.max(bt.end_ns() - c.offset),
                )
            }
        }
    }

    /// Fits the selection (a span, else the range), or the whole trace (F / Home).
    pub fn fit(&mut self, l: &Loaded) {
        if let Some((a, b)) = self.selected.and_then(|p| pick_extent(l, p)) {
            self.viewport.show(a, b.max(a + 1));
        } else if let Some((a, b)) = self.range {
            self.viewport.show(a, b.max(a + 1));
        } else {
            self.fit_all(l);
        }
    }

    /// Selects a span and brings its row into view.
    pub fn select(&mut self, l: &Loaded, r: Option<SpanRef>) {
        self.selected = r.map(Pick::Span);
        if let Some(r) = r {
            self.reveal(l, r);
        }
    }

    /// Selects what a click hit. A scheduling slice (a CPU lane's box) also brings its
    /// thread's row into view, as Perfetto does, where its states and who woke it show.
    pub fn select_pick(&mut self, l: &Loaded, hit: Option<Pick>) {
        self.selected = hit;
        let Some(p @ Pick::Sched(_)) = hit else {
            return;
        };
        let Some(th) = crate::timeline::sched::pick_thread(&l.trace, p) else {
            return;
        };
        let process = l.trace.threads()[th as usize].process;
        self.show_tracks(l, process, Some(th), None);
        let row = (self.layout.rows.iter())
            .find(|r| matches!(r.kind, RowKind::ThreadStates(t) | RowKind::Thread(t) if t == th));
        if let Some(row) = row {
            let (top, bottom) = (row.y, row.y + row.h);
            let visible = self.tracks_height();
            if top < self.scroll_y || bottom > self.scroll_y + visible {
                self.scroll_y = top - visible / 2.0;
                self.clamp_scroll();
            }
        }
    }

    /// `[` / `]`: selects the previous or next span on the selected span's lane, centring
    /// it when it is off screen. False when there is none.
    pub fn step_on_lane(&mut self, l: &Loaded, forward: bool) -> bool {
        let Some(Pick::Span(r)) = self.selected else {
            return false;
        };
        let lane = &l.trace.threads()[r.thread as usize].lanes[r.depth as usize];
        let next = if forward {
            r.index
                .checked_add(1)
                .filter(|&i| (i as usize) < lane.len())
        } else {
            r.index.checked_sub(1)
        };
        let Some(index) = next else { return false };
        let r = SpanRef { index, ..r };
        self.selected = Some(Pick::Span(r));
        let span = l.trace.span(r);
        let (a, b) = self.viewport.visible();
        if span.end() < a || span.start > b {
            self.center_on(l, r);
        }
        true
    }

    /// `M`: the selection's time range becomes the range (its statistics show). False when
    /// nothing with a duration is selected.
    pub fn mark_selection(&mut self, l: &Loaded) -> bool {
        match self.selected.and_then(|p| pick_extent(l, p)) {
            Some((a, b)) => {
                self.range = Some((a, b));
                true
            }
            None => false,
        }
    }

    /// Zooms to what was double-clicked.
    pub fn zoom_to_pick(&mut self, l: &Loaded, p: Pick) {
        match p {
            Pick::Span(r) => self.zoom_to(l, r),
            p => {
                self.selected = Some(p);
                if let Some((a, b)) = pick_extent(l, p) {
                    if b > a {
                        self.viewport.show(a, b);
                    }
                }
            }
        }
    }

    /// Zooms to a span (double-click).
    pub fn zoom_to(&mut self, l: &Loaded, r: SpanRef) {
        self.selected = Some(Pick::Span(r));
        let s = l.trace.span(r);
        self.viewport.show(s.start, s.end().max(s.start + 1));
        self.reveal(l, r);
    }

    /// Centres a span horizontally (keeping the zoom unless it does not fit) and scrolls its
    /// row into view, expanding collapsed tracks.
    pub fn center_on(&mut self, l: &Loaded, r: SpanRef) {
        let s = l.trace.span(r);
        self.center_range(s.start, s.end());
        self.reveal(l, r);
    }

    /// Centres `[a, b]` horizontally, zooming out only when it does not fit.
    pub(crate) fn center_range(&mut self, a: i64, b: i64) {
        let w = self.viewport.ns_per_px * self.width as f64;
        if ((b - a) as f64) > w * 0.9 {
            self.viewport.show(a, b);
        } else {
            let mid = (a - self.viewport.origin) as f64 + (b - a) as f64 / 2.0;
            self.viewport.t0 = mid - w / 2.0;
        }
    }

    /// Scrolls the row of an instant, async slice, counter value or sample into view,
    /// expanding and showing its tracks if needed.
    fn reveal_pick(&mut self, l: &Loaded, p: Pick) {
        let t = &l.trace;
        match p {
            Pick::Async(i) => {
                let track = l.kinds.async_place[i as usize].0;
                let process = t.async_tracks()[track as usize].process;
                self.show_tracks(l, process, None, Some(track));
            }
            Pick::Instant(i) => {
                let e = &t.instants()[i as usize];
                let thread = (e.scope == InstantScope::Thread).then_some(e.thread);
                self.show_tracks(l, e.process, thread, None);
            }
            _ => {}
        }
        if let Some((_, y, _, h)) = self.pick_box(l, p) {
            let top = self.tracks_top();
            let bottom = top + self.tracks_height();
            if y < top || y + h > bottom {
                self.scroll_y += y - top - self.tracks_height() / 2.0;
                self.clamp_scroll();
            }
        }
    }

    /// Expands and shows a process, and one of its threads or async tracks; lays the rows
    /// out again if that changed anything.
    fn show_tracks(&mut self, l: &Loaded, process: u32, thread: Option<u32>, asyncs: Option<u32>) {
        let before = self.collapsed.clone();
        let c = &mut self.collapsed;
        c.processes[process as usize] = false;
        c.set_hidden(Track::Process(process), false);
        if let Some(th) = thread {
            c.threads[th as usize] = false;
            c.set_hidden(Track::Thread(th), false);
        }
        if let Some(a) = asyncs {
            c.async_groups[process as usize] = false;
            c.asyncs[a as usize] = false;
            c.set_hidden(Track::Async(a), false);
        }
        if self.collapsed != before {
            self.relayout(l);
        }
    }

    /// Lays the rows out again after `collapsed` changed.
    pub fn relayout(&mut self, l: &Loaded) {
        self.layout = Layout::new(&l.trace, &l.kinds, &self.collapsed, self.scale);
        self.clamp_scroll();
    }

    /// Scrolls the span's row into view, expanding (and showing) its tracks if needed.
    fn reveal(&mut self, l: &Loaded, r: SpanRef) {
        let process = l.trace.threads()[r.thread as usize].process;
        self.show_tracks(l, process, Some(r.thread), None);
        if let Some(row) = self.layout.lane_row(r.thread, r.depth) {
            let (top, bottom) = (row.y, row.y + row.h);
            let visible = self.tracks_height();
            if top < self.scroll_y || bottom > self.scroll_y + visible {
                self.scroll_y = top - visible / 2.0;
                self.clamp_scroll();
            }
        }
    }

    /// Sets the search text (a case-insensitive substring; case-sensitive when it has
    /// capitals). An empty query clears the highlights.
    pub fn search(&mut self, l: &Loaded, query: &str) {
        self.matches = Matches::for_query(l, query);
        self.search_base(false);
    }

    /// Highlights every span of one name (a click on a statistics row).
    pub fn highlight_name(&mut self, l: &Loaded, name: StrId) {
        self.matches = Matches::for_name(l, name);
        self.search_base(true);
    }

    /// Steps to the next (or previous) match after the current one (else the first after
    /// the view's middle), selects and centres it. Returns its position among the matches.
    /// In compare mode the steps go through both panes' matches
    /// (`step_both`), the position counting both.
    pub fn step_match(&mut self, l: &Loaded, forward: bool) -> Option<usize> {
        if self.compare.is_some() {
            return self.step_both(l, forward);
        }
        let (a, b) = self.viewport.visible();
        let (next, pick) = self.matches.step(l, forward, a + (b - a) / 2)?;
        self.show_match(l, pick);
        Some(next)
    }

    /// Selects a match and centres it, scrolling its row into view.
    pub(crate) fn show_match(&mut self, l: &Loaded, pick: Pick) {
        self.selected = Some(pick);
        match pick {
            Pick::Span(r) => self.center_on(l, r),
            p => {
                if let Some((a, b)) = pick_extent(l, p) {
                    self.center_range(a, b);
                }
                self.reveal_pick(l, p);
            }
        }
    }

    /// Statistics per name for the selected range, or the whole trace (computed once).
    pub fn stats(&self, l: &Loaded) -> Vec<NameStats> {
        match self.range {
            None => l.whole_stats().to_vec(),
            range => l.trace.stats(&StatsFilter {
                range,
                ..StatsFilter::default()
            }),
        }
    }

    /// The selected span's ancestors, outermost first, then the span itself.
    pub fn call_stack(&self, l: &Loaded, r: SpanRef) -> Vec<SpanRef> {
        l.trace.call_stack(r)
    }
}

/// Which trace's pane, in compare mode: NEW's (the trace shown) or BASE's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The trace shown, on top.
    New,
    /// The trace it is compared with, below.
    Base,
}

/// Height of the divider between NEW's and BASE's panes, logical pixels.
pub const DIVIDER_H: f32 = 22.0;

/// How BASE's times are lined up with NEW's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// Both traces start at 0.
    Starts,
    /// A span chosen in each starts at the same time: its name (NEW's).
    Span(String),
}

/// BASE's pane: the trace, its own view of its tracks, and where it sits in time.
/// ([`crate::view::compare`] has its operations.)
#[derive(Clone, Debug)]
pub struct BaseTimeline {
    /// BASE, loaded (its index, colours, kinds).
    pub loaded: Arc<Loaded>,
    /// BASE's tracks: scroll, collapsing, selection and hover of their own; the viewport
    /// and size follow NEW's view.
    pub view: ViewState,
    /// BASE's time at NEW's time 0: a BASE time `b` is drawn where NEW's `b - offset` is.
    pub offset: i64,
    /// What the offset lines up.
    pub aligned: Alignment,
    /// NEW's pane's share of the tracks area (the divider drags it), 0.1..=0.9.
    pub split: f32,
}

/// Which flow arrows the timeline draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowMode {
    /// No flow arrows.
    None,
    /// The flows into and out of the selected span, followed along their chains.
    Selected,
    /// Every flow in view (capped per frame).
    All,
}

impl FlowMode {
    /// The next mode (the L key).
    pub fn cycled(self) -> FlowMode {
        match self {
            FlowMode::None => FlowMode::Selected,
            FlowMode::Selected => FlowMode::All,
            FlowMode::All => FlowMode::None,
        }
    }
}

/// The time a pick covers (a point for instants, samples and counter values).
pub fn pick_extent(l: &Loaded, p: Pick) -> Option<(i64, i64)> {
    let t = &l.trace;
    match p {
        Pick::Span(r) => {
            let s = t.span(r);
            Some((s.start, s.end()))
        }
        Pick::Instant(i) => t.instants().get(i as usize).map(|x| (x.ts, x.ts)),
        Pick::Async(i) => t.async_slices().get(i as usize).map(|x| (x.start, x.end)),
        Pick::Counter { ts, .. } => Some((ts, ts)),
        Pick::Sample { track, index } => {
            let ts = *t.samples().get(track as usize)?.ts.get(index as usize)?;
            Some((ts, ts))
        }
        Pick::Stack { .. } => {
            let (lane, i) = crate::timeline::stacks::stack_box(l, p)?;
            Some((lane.start[i], lane.end(i)))
        }
        Pick::Sched(_) | Pick::State(_) => crate::timeline::sched::pick_extent(t, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::ThemeKind;
    use crate::view::layout::{HEADER_H, LANE_H};

    fn loaded() -> Loaded {
        let t = trace_model::load_bytes(
            br#"[{"ph":"X","name":"main","ts":0,"dur":1000,"pid":1,"tid":1},
                 {"ph":"X","name":"render","ts":100,"dur":300,"pid":1,"tid":1},
                 {"ph":"X","name":"draw","ts":150,"dur":100,"pid":1,"tid":1},
                 {"ph":"X","name":"render","ts":500,"dur":300,"pid":1,"tid":1},
                 {"ph":"X","name":"tick","ts":900,"dur":0.001,"pid":1,"tid":1},
                 {"ph":"X","name":"io","ts":0,"dur":50,"pid":1,"tid":2}]"#,
        )
        .unwrap();
        Loaded::new(t, "test".into())
    }

    fn state(l: &Loaded) -> ViewState {
        ViewState::new(l, 1000.0, 600.0, Theme::new(ThemeKind::Light))
    }

    /// The screen y of the middle of a lane row.
    fn lane_y(s: &ViewState, thread: u32, depth: u32) -> f32 {
        let r = s.layout.lane_row(thread, depth).unwrap();
        TRACKS_TOP + r.y - s.scroll_y + r.h / 2.0
    }

    #[test]
    fn hit_testing_maps_pixels_to_spans() {
        let l = loaded();
        let s = state(&l);
        assert_eq!(lane_y(&s, 0, 0), TRACKS_TOP + 2.0 * HEADER_H + LANE_H / 2.0);
        let x = s.viewport.x(200_000) as f32;
        let hit = s.hit(&l, x, lane_y(&s, 0, 1)).and_then(Pick::span).unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "render");
        let hit = s.hit(&l, x, lane_y(&s, 0, 2)).and_then(Pick::span).unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "draw");
        // A 1 ns span is still pickable within the pixel tolerance.
        let x = s.viewport.x(900_000) as f32 + 1.0;
        let hit = s.hit(&l, x, lane_y(&s, 0, 1)).and_then(Pick::span).unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "tick");
        assert_eq!(s.hit(&l, x, 5.0), None, "the minimap is not a track");
        assert_eq!(s.header_at(TRACKS_TOP + 1.0), Some(RowKind::Process(0)));
    }

    #[test]
    fn selection_fit_and_zoom() {
        let l = loaded();
        let mut s = state(&l);
        let draw = SpanRef {
            thread: 0,
            depth: 2,
            index: 0,
        };
        s.zoom_to(&l, draw);
        let (a, b) = s.viewport.visible();
        assert!(a <= 150_000 && b >= 250_000 && b - a < 120_000, "{a}..{b}");
        s.selected = None;
        s.fit(&l);
        let (a, b) = s.viewport.visible();
        assert!(a <= 0 && b >= 1_000_000);
        assert_eq!(s.call_stack(&l, draw).len(), 3);
        let kids = l.trace.children_by_name(SpanRef {
            thread: 0,
            depth: 0,
            index: 0,
        });
        assert_eq!(kids.len(), 2);
        assert_eq!(
            (l.trace.str(kids[0].0), kids[0].1, kids[0].2),
            ("render", 2, 600_000)
        );
        assert_eq!(
            (l.trace.str(kids[1].0), kids[1].1, kids[1].2),
            ("tick", 1, 1)
        );
    }

    #[test]
    fn range_statistics_clip_to_the_range() {
        let l = loaded();
        let mut s = state(&l);
        s.range = Some((450_000, 2_000_000));
        let stats = s.stats(&l);
        let render = stats
            .iter()
            .find(|x| l.trace.str(x.name) == "render")
            .unwrap();
        assert_eq!((render.count, render.total_ns), (1, 300_000));
        let main = stats
            .iter()
            .find(|x| l.trace.str(x.name) == "main")
            .unwrap();
        assert_eq!(main.total_ns, 550_000);
    }

    #[test]
    fn collapsing_and_revealing() {
        let l = loaded();
        let mut s = state(&l);
        s.toggle_collapse(&l, RowKind::Thread(0));
        assert!(s.layout.lane_row(0, 0).is_none());
        s.select(
            &l,
            Some(SpanRef {
                thread: 0,
                depth: 1,
                index: 0,
            }),
        );
        assert!(
            s.layout.lane_row(0, 1).is_some(),
            "selecting expands the track"
        );
    }

    #[test]
    fn search_steps_through_matches_in_time_order() {
        let l = loaded();
        let mut s = state(&l);
        s.search(&l, "REN"); // capitals: case-sensitive, no match
        assert!(s.matches.spans.is_empty());
        s.search(&l, "ren");
        assert_eq!(s.matches.spans.len(), 2);
        s.viewport.show(0, 200_000);
        assert_eq!(s.step_match(&l, true), Some(0));
        assert_eq!(s.step_match(&l, true), Some(1));
        assert_eq!(l.trace.span(s.selected_span().unwrap()).start, 500_000);
        let (a, b) = s.viewport.visible();
        assert!(a < 650_000 && b > 650_000, "centred on the match");
        assert_eq!(s.step_match(&l, true), Some(0), "wraps around");
        assert_eq!(s.step_match(&l, false), Some(1));
        s.search(&l, "");
        assert!(!s.matches.is_active());
    }

    #[test]
    fn search_steps_through_spans_instants_and_async_slices_in_time_order() {
        let t = trace_model::load_bytes(
            br#"[{"ph":"X","name":"load page","ts":0,"dur":100,"pid":1,"tid":1},
                 {"ph":"i","name":"load done","ts":50,"pid":1,"tid":1,"s":"t"},
                 {"ph":"b","name":"load image","cat":"c","id":"1","ts":20,"pid":1,"tid":1},
                 {"ph":"e","name":"load image","cat":"c","id":"1","ts":70,"pid":1,"tid":1},
                 {"ph":"X","name":"load page","ts":50,"dur":10,"pid":1,"tid":2},
                 {"ph":"i","name":"other","ts":60,"pid":1,"tid":1,"s":"t"}]"#,
        )
        .unwrap();
        let l = Loaded::new(t, "test".into());
        let mut s = state(&l);
        s.search(&l, "load");
        assert_eq!(s.matches.len(), 4);
        s.viewport
            .show(l.trace.start_ns() - 1000, l.trace.start_ns());
        let mut seen = Vec::new();
        for _ in 0..5 {
            s.step_match(&l, true);
            let p = s.selected.unwrap();
            let (a, _) = pick_extent(&l, p).unwrap();
            let kind = match p {
                Pick::Span(_) => "span",
                Pick::Instant(_) => "instant",
                Pick::Async(_) => "async",
                _ => "other",
            };
            seen.push((a / 1000, kind));
        }
        // Time order, a span before an instant at the same time, then around again.
        assert_eq!(
            seen,
            [
                (0, "span"),
                (20, "async"),
                (50, "span"),
                (50, "instant"),
                (0, "span")
            ]
        );
        // The view follows the match.
        let (a, b) = s.viewport.visible();
        assert!(a <= 0 && b >= 0);
    }

    #[test]
    fn nth_match_agrees_with_a_merge() {
        let l = loaded();
        let spans = l.trace.occurrences(|_| true);
        let starts: Vec<i64> = spans.iter().map(|&r| l.trace.span(r).start).collect();
        // Others at times between, before, after and equal to span starts.
        for others in [
            vec![],
            vec![-5],
            vec![0, 100_000, 2_000_000],
            vec![0, 0, 150_000, 900_000, 900_000],
        ] {
            let m = Matches {
                query: "x".into(),
                spans: spans.clone(),
                others: others
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (t, Pick::Instant(i as u32)))
                    .collect(),
                ..Matches::default()
            };
            let mut merged: Vec<(i64, u8, Pick)> = starts
                .iter()
                .zip(&spans)
                .map(|(&t, &r)| (t, 0, Pick::Span(r)))
                .collect();
            merged.extend(m.others.iter().map(|&(t, p)| (t, 1, p)));
            merged.sort_by_key(|x| (x.0, x.1));
            for (k, want) in merged.iter().enumerate() {
                assert_eq!(m.nth(&l, k), Some(want.2), "k {k} others {others:?}");
            }
            assert_eq!(m.nth(&l, merged.len()), None);
        }
    }
}
