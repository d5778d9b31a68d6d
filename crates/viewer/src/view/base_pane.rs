//! Compare mode's timeline: BASE's tracks under NEW's, on one time axis, to look at the
//! same work in both runs.
//!
//! The tracks area splits in two panes: NEW's tracks above, a labelled divider, BASE's
//! tracks below. Each pane scrolls, collapses and selects on its own; the time axis is
//! NEW's, with BASE shifted by an offset so that both start at 0, or so that a span
//! chosen in each starts at the same x ([`Alignment`]). BASE's pane is a
//! [`TimelineView`] of its own whose viewport follows NEW's
//! ([`ViewState::sync_compare`]), so the timeline's drawing and hit testing serve both
//! panes unchanged. The types live in `state` (a [`ViewState`] holds its BASE); the
//! operations, which need both panes, are here.
//!
//! ```no_run
//! # fn f(new: &spall_viewer::Loaded, base: std::sync::Arc<spall_viewer::Loaded>,
//! #      s: &mut spall_viewer::view::state::ViewState) {
//! s.set_base(new, Some(base));
//! s.jump_to_name(new, "render"); // the first `render` in each, aligned
//! # }
//! ```

use std::sync::Arc;

use trace_model::{SpanRef, Trace};

use crate::loaded::Loaded;
use crate::view::search::{kth_of_two, Matches};
use crate::view::state::{Alignment, BaseTimeline, Side, ViewState};
use crate::view::timeline::{TimelineView, DIVIDER_H};

impl BaseTimeline {
    fn new(new: &Trace, loaded: Arc<Loaded>, s: &ViewState) -> BaseTimeline {
        let t = &s.timeline;
        let mut view = TimelineView::new(&loaded, t.width, t.height, t.theme);
        view.set_scale(&loaded, t.scale);
        let offset = loaded.trace.start_ns() - new.start_ns();
        BaseTimeline {
            loaded,
            view,
            offset,
            aligned: Alignment::Starts,
        }
    }

    /// What the divider says: BASE's name and how it is aligned.
    pub fn label(&self, new: &Trace) -> String {
        let how = match &self.aligned {
            Alignment::Starts => "aligned at the starts".to_string(),
            Alignment::Span(name) => {
                let shift = self.offset - (self.loaded.trace.start_ns() - new.start_ns());
                // BASE's start is drawn at NEW's time -shift.
                let sign = if shift > 0 { "-" } else { "+" };
                let d = spall_util::format_duration(shift.abs());
                format!("aligned at {name} (BASE starts at {sign}{d})")
            }
        };
        format!("BASE  {}  ·  {how}", self.loaded.source)
    }
}

impl ViewState {
    /// Compare mode on (`Some(BASE)`) or off: the flame graph is coloured by the changes
    /// against BASE, and the timeline shows BASE's tracks under NEW's, aligned at the
    /// starts.
    pub fn set_base(&mut self, l: &Loaded, base: Option<Arc<Loaded>>) {
        self.flame.set_base(base.as_ref().map(|b| b.trace.clone()));
        self.timeline.split = base.is_some().then_some(0.5);
        self.compare = base.map(|b| Box::new(BaseTimeline::new(&l.trace, b, self)));
        self.search_base(false);
        self.sync_compare();
        self.timeline.clamp_scroll();
    }

    /// Compare mode: BASE's pane highlights what NEW's does: the same query, or with
    /// `exact` (a statistics row's name) that name, if BASE has it. Stepping through
    /// matches goes through both ([`step_both`](Self::step_both)).
    pub(crate) fn search_base(&mut self, exact: bool) {
        let q = &self.timeline.matches.query;
        let Some(c) = self.compare.as_deref_mut() else {
            return;
        };
        let b = &c.loaded;
        c.view.matches = match (exact, b.trace.strings().lookup(q)) {
            (true, Some(id)) => Matches::for_name(b, id),
            (true, None) => Matches {
                query: q.clone(),
                names: vec![false; b.trace.strings().len()],
                ..Matches::default()
            },
            (false, _) => Matches::for_query(b, q),
        };
    }

    /// Brings BASE's pane to NEW's view: size, scale, theme, and the time axis shifted by
    /// the offset. Call after NEW's view changed and before drawing or hit testing BASE.
    pub fn sync_compare(&mut self) {
        let top =
            self.timeline.tracks_top() + self.timeline.split_h() + DIVIDER_H * self.timeline.scale;
        let (vp, (w, h), scale, theme) = (
            self.timeline.viewport,
            (self.timeline.width, self.timeline.height),
            self.timeline.scale,
            self.timeline.theme,
        );
        let Some(c) = self.compare.as_deref_mut() else {
            return;
        };
        let v = &mut c.view;
        v.set_scale(&c.loaded, scale);
        // BASE's pane starts below NEW's and the divider.
        v.pane_top = top - crate::view::timeline::TRACKS_TOP * scale;
        (v.width, v.height, v.theme) = (w, h, theme);
        v.viewport = vp;
        v.viewport.origin = vp.origin + c.offset;
        v.clamp_scroll();
    }

    /// Keeps `old`'s markers of BASE when this view compares with the same BASE (another
    /// trace opened, or this one reloaded, while comparing).
    pub fn keep_base_markers(&mut self, old: &ViewState) {
        if let (Some(c), Some(o)) = (self.compare.as_deref_mut(), old.compare.as_deref()) {
            if Arc::ptr_eq(&c.loaded, &o.loaded) {
                c.view.markers = o.view.markers.clone();
            }
        }
    }

    /// Whether pixel row `y` is in BASE's pane (or its divider) in compare mode.
    pub fn in_base(&self, y: f32) -> bool {
        self.compare.is_some() && y >= self.timeline.tracks_top() + self.timeline.tracks_height()
    }

    /// Whether pixel row `y` is on the divider between the panes (compare mode).
    pub fn on_divider(&self, y: f32) -> bool {
        let top = self.timeline.tracks_top() + self.timeline.tracks_height();
        self.compare.is_some() && y >= top && y < top + DIVIDER_H * self.timeline.scale
    }

    /// Moves the divider so that its middle is at pixel row `y`: NEW's pane gets the
    /// tracks area above it, BASE's the rest, each at least a tenth.
    pub fn drag_divider(&mut self, y: f32) {
        let d = DIVIDER_H * self.timeline.scale;
        let avail = (self.timeline.height - self.timeline.tracks_top() - d).max(1.0);
        let share = ((y - self.timeline.tracks_top() - d / 2.0) / avail).clamp(0.1, 0.9);
        if self.compare.is_some() {
            self.timeline.split = Some(share);
        }
        self.timeline.clamp_scroll();
        self.sync_compare();
    }

    /// No hover in either pane (the view moved under the pointer).
    pub fn clear_hover(&mut self) {
        self.timeline.hover = None;
        if let Some(c) = self.compare.as_deref_mut() {
            c.view.hover = None;
        }
    }

    /// Scrolls the pane under pixel row `y` by `dy` pixels.
    pub fn scroll_at(&mut self, y: f32, dy: f32) {
        if self.in_base(y) {
            if let Some(c) = self.compare.as_deref_mut() {
                c.view.scroll(dy);
            }
        } else {
            self.timeline.scroll(dy);
        }
    }

    /// Hover at a point of BASE's pane (`None` over NEW's, which keeps its own hover):
    /// sets BASE's hover and clears NEW's. Returns whether the point is in BASE's pane.
    pub fn hover_base(&mut self, x: f32, y: f32) -> bool {
        let inside = self.in_base(y);
        let Some(c) = self.compare.as_deref_mut() else {
            return false;
        };
        c.view.hover = if inside {
            c.view.hit(&c.loaded, x, y).map(|p| (p, x, y))
        } else {
            None
        };
        if inside {
            self.timeline.hover = None;
        }
        inside
    }

    /// A click in BASE's pane: a header collapses, a span or event is selected; a double
    /// click zooms the shared axis to it.
    pub fn click_base(&mut self, x: f32, y: f32, double: bool) {
        let Some(c) = self.compare.as_deref_mut() else {
            return;
        };
        let b = c.loaded.clone();
        if let Some(kind) = c.view.header_at(y) {
            c.view.toggle_collapse(&b, kind);
            return;
        }
        let hit = c.view.hit(&b, x, y);
        c.view.selected = hit;
        if let (true, Some(p)) = (double, hit) {
            if let Some((a, e)) = crate::view::timeline::pick_extent(&b, p) {
                let off = c.offset;
                self.timeline
                    .viewport
                    .show(a - off, (e - off).max(a - off + 1));
                self.sync_compare();
            }
        }
    }

    /// Compare mode's Enter / Shift+Enter: the next (or previous) match of both panes, in
    /// the order of the shared axis (NEW's first at equal times), after the current one in
    /// either pane, else the first after the view's middle. The match is selected in its
    /// own pane and centred there (the axis is shared, so both panes move); the other
    /// pane's selection stays. Returns its position among both panes' matches.
    pub(crate) fn step_both(&mut self, l: &Loaded, forward: bool) -> Option<usize> {
        self.sync_compare();
        let (n, current) = self.match_position(l);
        if n == 0 {
            return None;
        }
        let next = match current {
            Some((k, _)) if forward => (k + 1) % n,
            Some((k, _)) => (k + n - 1) % n,
            None => {
                let (a, b) = self.timeline.viewport.visible();
                let mid = a + (b - a) / 2;
                let c = self.compare.as_deref()?;
                let i = self.timeline.matches.before(l, mid)
                    + c.view.matches.before(&c.loaded, mid + c.offset);
                if forward {
                    i % n
                } else {
                    (i + n - 1) % n
                }
            }
        };
        let c = self.compare.as_deref_mut()?;
        let (bm, b, off) = (&c.view.matches, c.loaded.clone(), c.offset);
        let in_new = |i| self.timeline.matches.nth_timed(l, i).map_or(0, |m| m.0);
        let in_base = |j| bm.nth_timed(&b, j).map_or(0, |m| m.0 - off);
        let from = (self.timeline.matches.len(), in_new);
        match kth_of_two(next, from, (bm.len(), in_base))? {
            (true, i) => {
                c.view.matches.current = None;
                self.timeline.matches.current = Some(i);
                let pick = self.timeline.matches.nth(l, i)?;
                self.timeline.show_match(l, pick);
            }
            (false, j) => {
                self.timeline.matches.current = None;
                c.view.matches.current = Some(j);
                let pick = c.view.matches.nth(&b, j)?;
                // Shown in BASE's own view, whose axis NEW's then follows.
                c.view.show_match(&b, pick);
                self.timeline.viewport = c.view.viewport;
                self.timeline.viewport.origin -= off;
            }
        }
        self.sync_compare();
        Some(next)
    }

    /// How many matches both panes have, and the current one's position among them in
    /// the order `step_both` goes through them, with its pane. Out
    /// of compare mode, NEW's alone.
    pub fn match_position(&self, l: &Loaded) -> (usize, Option<(usize, Side)>) {
        let m = &self.timeline.matches;
        let Some(c) = self.compare.as_deref() else {
            return (m.len(), m.current.map(|i| (i, Side::New)));
        };
        let (bm, b, off) = (&c.view.matches, &c.loaded, c.offset);
        let n = m.len() + bm.len();
        // Before NEW's match at `t`: BASE's earlier on the shared axis; before BASE's at
        // `t`: NEW's at `t` or earlier.
        let at = match (m.current, bm.current) {
            (Some(i), _) => m
                .nth_timed(l, i)
                .map(|(t, _)| (i + bm.before(b, t + off), Side::New)),
            (None, Some(j)) => bm
                .nth_timed(b, j)
                .map(|(t, _)| (j + m.before(l, t - off + 1), Side::Base)),
            (None, None) => None,
        };
        (n, at)
    }

    /// Lines BASE up with NEW again at their starts.
    pub fn align_at_starts(&mut self, l: &Loaded) {
        if let Some(c) = self.compare.as_deref_mut() {
            c.offset = c.loaded.trace.start_ns() - l.trace.start_ns();
            c.aligned = Alignment::Starts;
        }
        self.sync_compare();
    }

    /// Lines BASE up at the span selected in NEW: with the span selected in BASE, else
    /// BASE's first span of the same name (selected). Returns whether it could.
    pub fn align_at_selection(&mut self, l: &Loaded) -> bool {
        let Some(r) = self.timeline.selected_span() else {
            return false;
        };
        let Some(c) = self.compare.as_deref_mut() else {
            return false;
        };
        let name = l.trace.str(l.trace.span(r).name).to_string();
        let b = c.loaded.clone();
        let chosen = c
            .view
            .selected_span()
            .or_else(|| first_named(&b.trace, &name, None));
        let Some(br) = chosen else {
            return false;
        };
        c.view.select(&b, Some(br));
        c.offset = b.trace.span(br).start - l.trace.span(r).start;
        c.aligned = Alignment::Span(name);
        self.sync_compare();
        true
    }

    /// Jumps to the function `name` in both timelines (a click on a statistics row in
    /// compare mode): its first span in each (within the selected range, if any) is
    /// selected and shown, and BASE is aligned at it. Returns whether either has it.
    pub fn jump_to_name(&mut self, l: &Loaded, name: &str) -> bool {
        let range = self.range;
        let new = first_named(&l.trace, name, range);
        self.timeline.select(l, new);
        if let Some(r) = new {
            let sp = l.trace.span(r);
            self.timeline.center_range(sp.start, sp.end());
        }
        let Some(c) = self.compare.as_deref_mut() else {
            return new.is_some();
        };
        let b = c.loaded.clone();
        let base_range = range.map(|(a, e)| (a + c.offset, e + c.offset));
        let base =
            first_named(&b.trace, name, base_range).or_else(|| first_named(&b.trace, name, None));
        let Some(br) = base else {
            c.view.selected = None;
            return new.is_some();
        };
        c.view.select(&b, Some(br));
        let bs = b.trace.span(br);
        match new {
            Some(r) => {
                c.offset = bs.start - l.trace.span(r).start;
                c.aligned = Alignment::Span(name.to_string());
            }
            // Only BASE has it: show it where it is.
            None => {
                let off = c.offset;
                self.timeline.center_range(bs.start - off, bs.end() - off);
            }
        }
        self.sync_compare();
        true
    }
}

/// The first span (by start) named exactly `name`, starting in `range` if one is given.
pub fn first_named(t: &Trace, name: &str, range: Option<(i64, i64)>) -> Option<SpanRef> {
    t.strings().lookup(name)?;
    let all = t.occurrences(|n| n == name);
    match range {
        None => all.first().copied(),
        Some((a, b)) => all.into_iter().find(|&r| {
            let s = t.span(r);
            s.end() >= a && s.start <= b
        }),
    }
}
