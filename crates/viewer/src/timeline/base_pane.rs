//! Compare mode's timeline: under NEW's tracks, a divider naming BASE and how it is
//! aligned, then BASE's tracks, drawn by the same code as NEW's through BASE's own view
//! ([`crate::view::base_pane`]). Each pane is clipped to itself and draws only its visible
//! rows through the level of detail, so a frame costs about what one timeline costs.

use render_gl::{Fonts, Scene, VAlign};

use crate::loaded::Loaded;
use crate::overlay::tooltip_box;
use crate::timeline::draw::{TimelineBuilder, HEADER_PX};
use crate::timeline::kinds as fk;
use crate::view::state::ViewState;
use crate::view::timeline::DIVIDER_H;

/// The divider and BASE's pane, in compare mode (nothing otherwise).
pub(crate) fn base_pane(
    b: &mut TimelineBuilder,
    scene: &mut Scene,
    fonts: &mut Fonts,
    l: &Loaded,
    s: &ViewState,
) {
    let Some(c) = s.compare.as_deref() else {
        return;
    };
    let th = s.timeline.theme;
    let (y, h) = (
        s.timeline.tracks_top() + s.timeline.tracks_height(),
        DIVIDER_H * s.timeline.scale,
    );
    scene.rect(0.0, y, s.timeline.width, h, th.ruler);
    scene.rect(
        0.0,
        y,
        s.timeline.width,
        s.timeline.scale.max(1.0),
        th.text_dim,
    );
    let text = format!("NEW above · {}", c.label(&l.trace));
    let px = HEADER_PX * s.timeline.scale;
    let text = fonts
        .truncate(&text, px, (s.timeline.width - 12.0).max(0.0))
        .unwrap_or_default();
    scene.text(fonts, 6.0, y + h / 2.0, px, VAlign::Center, th.text, &text);
    b.tracks(scene, fonts, &c.loaded, &c.view, None);
    crate::timeline::markers::lines_below(scene, l, s, y + h);
    crate::timeline::markers::draw_base(scene, fonts, c);
}

/// BASE's hovered pick's tooltip, if any.
pub(crate) fn base_tooltip(scene: &mut Scene, fonts: &mut Fonts, s: &ViewState) {
    let Some(c) = s.compare.as_deref() else {
        return;
    };
    if let Some((p, x, y)) = c.view.hover {
        let mut lines = fk::describe(&c.loaded, p);
        if let Some(first) = lines.first_mut() {
            first.insert_str(0, "BASE · ");
        }
        tooltip_box(scene, fonts, &c.view, &lines, x, y);
    }
}
