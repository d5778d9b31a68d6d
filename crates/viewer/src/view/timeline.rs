//! One pane of tracks on the timeline: its time axis, scroll, collapsed tracks, rows,
//! selection, hover, markers and search matches, in an area of the screen. The view of a
//! trace has one ([`ViewState::timeline`](crate::view::state::ViewState::timeline)); in
//! compare mode BASE's pane is another, whose axis follows NEW's
//! ([`crate::view::base_pane`]). Hit testing and on-screen boxes are in
//! [`crate::view::geometry`]. No GL: unit-tested through the view.

use trace_model::{InstantScope, Lane, SpanRef};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::theme::Theme;
use crate::view::layout::{Collapsed, Layout, RowKind, Track};
use crate::view::search::Matches;
use crate::view::viewport::Viewport;

/// Height of the minimap strip at the top.
pub const MINIMAP_H: f32 = 36.0;
/// Height of the time ruler under it.
pub const RULER_H: f32 = 22.0;
/// Where the tracks start.
pub const TRACKS_TOP: f32 = MINIMAP_H + RULER_H;
/// Height of the divider between NEW's and BASE's panes, logical pixels.
pub const DIVIDER_H: f32 = 22.0;

/// A pane of tracks and what the user does in it.
#[derive(Clone, Debug)]
pub struct TimelineView {
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
    /// Size of the main area in pixels (the side panel excluded); the flame graph is
    /// drawn in the same area.
    pub width: f32,
    /// Height of the main area in pixels.
    pub height: f32,
    /// Physical pixels per logical pixel (HiDPI): rows, strips and text scale with it.
    pub scale: f32,
    /// The selected span or event.
    pub selected: Option<Pick>,
    /// What is under the pointer, and the pointer's position in pixels.
    pub hover: Option<(Pick, f32, f32)>,
    /// Which flow arrows to draw.
    pub flows: FlowMode,
    /// Markers, in time order ([`crate::timeline::markers`]).
    pub markers: Vec<trace_model::Marker>,
    /// The search's matches.
    pub matches: Matches,
    /// Pixels between the ruler and the tracks: BASE's pane sits below NEW's.
    pub pane_top: f32,
    /// Compare mode, NEW's pane: its share of the tracks area (the divider drags it),
    /// 0.1..=0.9; BASE's pane takes the rest. `None`: the pane has the area to itself.
    pub split: Option<f32>,
}

impl TimelineView {
    /// The whole trace in a `width × height` area, nothing selected.
    pub fn new(l: &Loaded, width: f32, height: f32, theme: Theme) -> TimelineView {
        let t = &l.trace;
        let collapsed = Collapsed::for_trace(t);
        let layout = Layout::new(t, &l.kinds, &collapsed, 1.0);
        TimelineView {
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
            scale: 1.0,
            selected: None,
            hover: None,
            flows: FlowMode::Selected,
            markers: Vec::new(),
            matches: Matches::default(),
            pane_top: 0.0,
            split: None,
        }
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

    /// Height of the area the tracks scroll in, in physical pixels.
    /// In compare mode, NEW's pane: BASE's follows it.
    pub fn tracks_height(&self) -> f32 {
        match self.split {
            Some(_) => self.split_h(),
            None => (self.height - self.tracks_top()).max(0.0),
        }
    }

    /// Compare mode: the height of NEW's pane, where the divider and BASE's pane below it
    /// start.
    pub(crate) fn split_h(&self) -> f32 {
        let avail = (self.height - self.tracks_top()).max(0.0);
        let share = self.split.unwrap_or(0.5);
        ((avail - DIVIDER_H * self.scale) * share).max(0.0).floor()
    }

    /// Keeps the scroll within the rows (and a little past the last).
    pub fn clamp_scroll(&mut self) {
        let max = (self.layout.height - self.tracks_height() + 40.0).max(0.0);
        self.scroll_y = self.scroll_y.clamp(0.0, max);
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
            RowKind::CpuCounters => self.collapsed.cpu_counters ^= true,
            _ => return,
        }
        self.relayout(l);
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
        let Some(th) = crate::kinds::pick_thread(&l.trace, p) else {
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

    /// The selected span's ancestors, outermost first, then the span itself.
    pub fn call_stack(&self, l: &Loaded, r: SpanRef) -> Vec<SpanRef> {
        l.trace.call_stack(r)
    }
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
            let (lane, i) = stack_box(l, p)?;
            Some((lane.start[i], lane.end(i)))
        }
        Pick::Sched(_) | Pick::State(_) => crate::kinds::pick_extent(t, p),
    }
}

/// The lane and index of a [`Pick::Stack`]'s box.
pub fn stack_box(l: &Loaded, p: Pick) -> Option<(&Lane, usize)> {
    let Pick::Stack {
        track,
        depth,
        sample,
    } = p
    else {
        return None;
    };
    let st = l.trace.samples().get(track as usize)?;
    let stacks = l.kinds.sample_stacks.get(st.thread as usize)?;
    let lane = stacks.lanes.get(depth as usize)?;
    let ts = *st.ts.get(sample as usize)?;
    // The box holding the sample: the last one starting at or before it.
    let i = lane.start.partition_point(|&s| s <= ts).checked_sub(1)?;
    Some((lane, i))
}
