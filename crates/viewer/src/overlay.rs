//! What is drawn over either scene (the timeline or the flame graph): the pointer's
//! tooltip box and the warnings banner.

use render_gl::{Fonts, Scene, VAlign};

use crate::view::state::ViewState;
use crate::view::timeline::TimelineView;

/// Height of the warning banner, in logical pixels.
pub const BANNER_PX: f32 = 20.0;

/// A strip along the bottom of the main area: the trace loaded, but with warnings.
pub fn banner(scene: &mut Scene, fonts: &mut Fonts, s: &ViewState, text: &str) {
    let h = BANNER_PX * s.timeline.scale;
    let y = s.timeline.height - h;
    scene.rect(0.0, y, s.timeline.width, h, s.timeline.theme.warning);
    if let Some(fit) = fonts.truncate(text, 12.0 * s.timeline.scale, s.timeline.width - 16.0) {
        scene.text(
            fonts,
            8.0,
            y + h / 2.0,
            12.0 * s.timeline.scale,
            VAlign::Center,
            s.timeline.theme.text,
            &fit,
        );
    }
}

/// A box of lines beside the pointer (the first line bright), kept on screen.
pub fn tooltip_box(
    scene: &mut Scene,
    fonts: &mut Fonts,
    s: &TimelineView,
    lines: &[String],
    x: f32,
    y: f32,
) {
    let th = s.theme;
    let px = 12.0 * s.scale;
    let lh = fonts.line_height(px) + 2.0;
    let tw = lines
        .iter()
        .map(|s| fonts.measure(s, px))
        .fold(0.0f32, f32::max)
        .min(600.0 * s.scale);
    let (bw, bh) = (tw + 16.0, lh * lines.len() as f32 + 10.0);
    let bx = (x + 14.0).min(s.width - bw - 2.0).max(2.0);
    let by = if y + 18.0 + bh < s.height {
        y + 18.0
    } else {
        (y - bh - 8.0).max(2.0)
    };
    scene.rect(bx, by, bw, bh, th.tooltip);
    scene.outline(bx, by, bw, bh, 1.0, th.tick);
    for (i, line) in lines.iter().enumerate() {
        let label = fonts.truncate(line, px, tw).unwrap_or_default();
        let c = if i == 0 { th.text } else { th.text_dim };
        scene.text(
            fonts,
            bx + 8.0,
            by + 5.0 + i as f32 * lh,
            px,
            VAlign::Top,
            c,
            &label,
        );
    }
}
