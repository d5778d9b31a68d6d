//! What the user is looking at, as a whole: the timeline ([`TimelineView`]), the flame
//! graph ([`FlameView`]), the range and the mode, and in compare mode BASE's pane
//! ([`BaseTimeline`]); the operations that need more than one part (fitting, zooming no
//! further out than both traces, search, statistics). No GL: unit-tested directly.

use std::sync::Arc;

use trace_model::{FlameOptions, FlameSort, NameStats, StatsFilter, StrId};

use crate::loaded::Loaded;
use crate::theme::Theme;
use crate::view::flame::{FlameHit, FlameView, Mode};
use crate::view::timeline::{pick_extent, TimelineView};

pub use crate::view::search::Matches;

/// The state of one trace's view, in parts: the timeline, the flame graph, and in
/// compare mode BASE's timeline; the range and the mode are the whole view's.
#[derive(Clone, Debug)]
pub struct ViewState {
    /// The timeline (NEW's pane in compare mode): axis, tracks, selection, markers,
    /// search, and the main area's size, scale and theme.
    pub timeline: TimelineView,
    /// A selected time range, absolute ns: shaded on the timeline, the scope of the
    /// statistics and (when asked) of the flame graph.
    pub range: Option<(i64, i64)>,
    /// Timeline or flame graph.
    pub mode: Mode,
    /// The flame graph's state.
    pub flame: FlameView,
    /// Compare mode: BASE's tracks, drawn under NEW's ([`crate::view::base_pane`]).
    pub compare: Option<Box<BaseTimeline>>,
}

impl ViewState {
    /// A view of the whole trace in a `width × height` area, nothing selected.
    pub fn new(l: &Loaded, width: f32, height: f32, theme: Theme) -> ViewState {
        ViewState {
            timeline: TimelineView::new(l, width, height, theme),
            range: None,
            mode: Mode::Timeline,
            flame: FlameView::default(),
            compare: None,
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
        self.flame.wanted(l, &self.timeline.collapsed, self.range)
    }

    /// The options the flame graph's scope asks for.
    pub fn flame_options(&self, l: &Loaded) -> FlameOptions {
        self.flame.options(l, &self.timeline.collapsed, self.range)
    }

    /// The flame graph frame at a point of the main area.
    pub fn flame_hit(&self, x: f32, y: f32) -> Option<FlameHit> {
        self.flame.hit(
            (self.timeline.width, self.timeline.height),
            self.timeline.scale,
            x,
            y,
        )
    }

    /// The pointer moved to `(x, y)` over the flame graph: the frame under it (NEW's, or
    /// in compare mode one only BASE has); false when nothing was and nothing is.
    pub fn flame_hover(&mut self, x: f32, y: f32) -> bool {
        let hit = self.flame_hit(x, y).map(|h| (h, x, y));
        let size = (self.timeline.width, self.timeline.height);
        let removed = (hit.is_none())
            .then(|| self.flame.hit_removed(size, self.timeline.scale, x, y))
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

    /// The most zoomed-out scale: the whole trace fits in a tenth of the width.
    pub fn max_ns_per_px(&self, l: &Loaded) -> f64 {
        let (a, b) = self.extent(l);
        ((b - a).max(1) as f64 / self.timeline.width as f64) * 10.0
    }

    /// Zooms by `factor` about pixel column `x`, no further out than
    /// [`max_ns_per_px`](Self::max_ns_per_px).
    pub fn zoom_at(&mut self, l: &Loaded, x: f32, factor: f64) {
        let max = self.max_ns_per_px(l);
        self.timeline.viewport.zoom_at(x as f64, factor, max);
    }

    /// Shows the whole trace (in compare mode, BASE's too).
    pub fn fit_all(&mut self, l: &Loaded) {
        let (a, b) = self.extent(l);
        self.timeline.viewport.show(a, b.max(a + 1));
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
        if let Some((a, b)) = self.timeline.selected.and_then(|p| pick_extent(l, p)) {
            self.timeline.viewport.show(a, b.max(a + 1));
        } else if let Some((a, b)) = self.range {
            self.timeline.viewport.show(a, b.max(a + 1));
        } else {
            self.fit_all(l);
        }
    }

    /// `M`: the selection's time range becomes the range (its statistics show). False when
    /// nothing with a duration is selected.
    pub fn mark_selection(&mut self, l: &Loaded) -> bool {
        match self.timeline.selected.and_then(|p| pick_extent(l, p)) {
            Some((a, b)) => {
                self.range = Some((a, b));
                true
            }
            None => false,
        }
    }

    /// Sets the search text (a case-insensitive substring; case-sensitive when it has
    /// capitals). An empty query clears the highlights.
    pub fn search(&mut self, l: &Loaded, query: &str) {
        self.timeline.matches = Matches::for_query(l, query);
        self.search_base(false);
    }

    /// Highlights every span of one name (a click on a statistics row).
    pub fn highlight_name(&mut self, l: &Loaded, name: StrId) {
        self.timeline.matches = Matches::for_name(l, name);
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
        let (a, b) = self.timeline.viewport.visible();
        let (next, pick) = self.timeline.matches.step(l, forward, a + (b - a) / 2)?;
        self.timeline.show_match(l, pick);
        Some(next)
    }

    /// Statistics per name for the selected range, or the whole trace (computed once).
    pub fn stats(&self, l: &Loaded) -> Vec<NameStats> {
        match self.range {
            None => l.whole_stats().to_vec(),
            range => l.trace.table_stats(&StatsFilter {
                range,
                ..StatsFilter::default()
            }),
        }
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

/// How BASE's times are lined up with NEW's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// Both traces start at 0.
    Starts,
    /// A span chosen in each starts at the same time: its name (NEW's).
    Span(String),
}

/// BASE's pane: the trace, its own view of its tracks, and where it sits in time.
/// ([`crate::view::base_pane`] has its operations.)
#[derive(Clone, Debug)]
pub struct BaseTimeline {
    /// BASE, loaded (its index, colours, kinds).
    pub loaded: Arc<Loaded>,
    /// BASE's tracks: scroll, collapsing, selection and hover of their own; the viewport
    /// and size follow NEW's timeline.
    pub view: TimelineView,
    /// BASE's time at NEW's time 0: a BASE time `b` is drawn where NEW's `b - offset` is.
    pub offset: i64,
    /// What the offset lines up.
    pub aligned: Alignment,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Pick;
    use crate::theme::ThemeKind;
    use crate::view::layout::{RowKind, HEADER_H, LANE_H};
    use crate::view::timeline::TRACKS_TOP;
    use trace_model::SpanRef;

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
        let r = s.timeline.layout.lane_row(thread, depth).unwrap();
        TRACKS_TOP + r.y - s.timeline.scroll_y + r.h / 2.0
    }

    #[test]
    fn hit_testing_maps_pixels_to_spans() {
        let l = loaded();
        let s = state(&l);
        assert_eq!(lane_y(&s, 0, 0), TRACKS_TOP + 2.0 * HEADER_H + LANE_H / 2.0);
        let x = s.timeline.viewport.x(200_000) as f32;
        let hit = s
            .timeline
            .hit(&l, x, lane_y(&s, 0, 1))
            .and_then(Pick::span)
            .unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "render");
        let hit = s
            .timeline
            .hit(&l, x, lane_y(&s, 0, 2))
            .and_then(Pick::span)
            .unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "draw");
        // A 1 ns span is still pickable within the pixel tolerance.
        let x = s.timeline.viewport.x(900_000) as f32 + 1.0;
        let hit = s
            .timeline
            .hit(&l, x, lane_y(&s, 0, 1))
            .and_then(Pick::span)
            .unwrap();
        assert_eq!(l.trace.str(l.trace.span(hit).name), "tick");
        assert_eq!(
            s.timeline.hit(&l, x, 5.0),
            None,
            "the minimap is not a track"
        );
        assert_eq!(
            s.timeline.header_at(TRACKS_TOP + 1.0),
            Some(RowKind::Process(0))
        );
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
        s.timeline.zoom_to(&l, draw);
        let (a, b) = s.timeline.viewport.visible();
        assert!(a <= 150_000 && b >= 250_000 && b - a < 120_000, "{a}..{b}");
        s.timeline.selected = None;
        s.fit(&l);
        let (a, b) = s.timeline.viewport.visible();
        assert!(a <= 0 && b >= 1_000_000);
        assert_eq!(s.timeline.call_stack(&l, draw).len(), 3);
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
        s.timeline.toggle_collapse(&l, RowKind::Thread(0));
        assert!(s.timeline.layout.lane_row(0, 0).is_none());
        s.timeline.select(
            &l,
            Some(SpanRef {
                thread: 0,
                depth: 1,
                index: 0,
            }),
        );
        assert!(
            s.timeline.layout.lane_row(0, 1).is_some(),
            "selecting expands the track"
        );
    }

    #[test]
    fn search_steps_through_matches_in_time_order() {
        let l = loaded();
        let mut s = state(&l);
        s.search(&l, "REN"); // capitals: case-sensitive, no match
        assert!(s.timeline.matches.spans.is_empty());
        s.search(&l, "ren");
        assert_eq!(s.timeline.matches.spans.len(), 2);
        s.timeline.viewport.show(0, 200_000);
        assert_eq!(s.step_match(&l, true), Some(0));
        assert_eq!(s.step_match(&l, true), Some(1));
        assert_eq!(
            l.trace.span(s.timeline.selected_span().unwrap()).start,
            500_000
        );
        let (a, b) = s.timeline.viewport.visible();
        assert!(a < 650_000 && b > 650_000, "centred on the match");
        assert_eq!(s.step_match(&l, true), Some(0), "wraps around");
        assert_eq!(s.step_match(&l, false), Some(1));
        s.search(&l, "");
        assert!(!s.timeline.matches.is_active());
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
        assert_eq!(s.timeline.matches.len(), 4);
        s.timeline
            .viewport
            .show(l.trace.start_ns() - 1000, l.trace.start_ns());
        let mut seen = Vec::new();
        for _ in 0..5 {
            s.step_match(&l, true);
            let p = s.timeline.selected.unwrap();
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
        let (a, b) = s.timeline.viewport.visible();
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
