//! Where things are on the timeline: the on-screen box of a span, or of another pick, in
//! the rows laid out for a view. Pure arithmetic over the layout and viewport.

use trace_model::{InstantScope, SpanRef};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::view::layout::RowKind;
use crate::view::state::{pick_extent, ViewState};

impl ViewState {
    /// The on-screen box of a span, if its row is laid out.
    pub fn span_box(&self, l: &Loaded, r: SpanRef) -> Option<(f32, f32, f32, f32)> {
        let row = self.layout.lane_row(r.thread, r.depth)?;
        let sp = l.trace.span(r);
        let x0 = self.viewport.x(sp.start) as f32;
        let x1 = self.viewport.x(sp.end()) as f32;
        let y = self.tracks_top() + row.y - self.scroll_y;
        Some((x0, y, (x1 - x0).max(1.0), row.h - 1.0))
    }

    /// The on-screen box of a pick that is not a span, for the selection outline.
    pub fn pick_box(&self, l: &Loaded, p: Pick) -> Option<(f32, f32, f32, f32)> {
        let t = &l.trace;
        let want = |k: RowKind| -> bool {
            match (p, k) {
                (Pick::Instant(i), RowKind::ThreadInstants(th)) => {
                    let e = &t.instants()[i as usize];
                    e.scope == InstantScope::Thread && e.thread == th
                }
                (Pick::Instant(i), RowKind::ProcessInstants(pr)) => {
                    let e = &t.instants()[i as usize];
                    e.scope == InstantScope::Process && e.process == pr
                }
                (Pick::Instant(i), RowKind::GlobalInstants) => {
                    t.instants()[i as usize].scope == InstantScope::Global
                }
                (Pick::Async(i), RowKind::AsyncRow { track, row }) => {
                    l.kinds.async_place[i as usize] == (track, row)
                }
                (Pick::Counter { group, .. }, RowKind::Counter(g)) => g == group,
                (Pick::Sample { track, .. }, RowKind::Samples(th)) => {
                    t.samples()[track as usize].thread == th
                }
                _ => false,
            }
        };
        let row = self.layout.rows.iter().find(|r| want(r.kind))?;
        let (a, b) = pick_extent(l, p)?;
        let x0 = self.viewport.x(a) as f32;
        let x1 = self.viewport.x(b) as f32;
        let y = self.tracks_top() + row.y - self.scroll_y;
        let w = (x1 - x0).max(1.0);
        if w <= 2.0 {
            let r = row.h * 0.4;
            return Some((x0 - r, y, 2.0 * r, row.h - 1.0));
        }
        Some((x0, y, w, row.h - 1.0))
    }
}
