//! The main area's scene for a view: the timeline or the flame graph, per the view's
//! mode, with the warnings banner over either. CPU only: the caller renders the `Scene`.

use render_gl::{Fonts, Scene};

use crate::loaded::Loaded;
use crate::overlay::banner;
use crate::timeline::draw::{tooltip, TimelineBuilder};
use crate::view::flame::Mode;
use crate::view::state::ViewState;

/// Builds the main area's scene, reusing buffers between frames.
#[derive(Debug, Default)]
pub struct SceneBuilder {
    timeline: TimelineBuilder,
}

impl SceneBuilder {
    /// Builds the scene for `state` into `scene`, which is `state.width × state.height` (the
    /// main area; a side panel, if any, is drawn by the caller).
    pub fn build(&mut self, scene: &mut Scene, fonts: &mut Fonts, l: &Loaded, s: &ViewState) {
        scene.begin(
            s.timeline.width.ceil() as u32,
            s.timeline.height.ceil() as u32,
            s.timeline.theme.background,
        );
        match s.mode {
            Mode::Flame => crate::flame::draw::build(scene, fonts, l, s),
            Mode::Timeline => {
                self.timeline.build(scene, fonts, l, s);
                crate::timeline::base_pane::base_pane(&mut self.timeline, scene, fonts, l, s);
            }
        }
        if let Some(w) = &l.warnings {
            banner(scene, fonts, s, w);
        }
        if s.mode == Mode::Timeline {
            tooltip(scene, fonts, l, s);
            crate::timeline::base_pane::base_tooltip(scene, fonts, s);
        }
    }
}
