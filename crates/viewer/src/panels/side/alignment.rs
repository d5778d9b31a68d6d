//! Compare mode's row in the side panel: how BASE's tracks line up with NEW's on the
//! timeline (at their starts, or at the selected span in each).

use egui::Ui;

use super::Actions;
use crate::loaded::Loaded;
use crate::view::flame::Mode;
use crate::view::state::ViewState;

/// "Align BASE at the selection / at the starts", on the timeline in compare mode.
pub(super) fn align_row(ui: &mut Ui, l: &Loaded, s: &mut ViewState, act: &mut Actions) {
    if s.compare.is_none() || s.mode != Mode::Timeline {
        return;
    }
    ui.horizontal(|ui| {
        ui.label("Align BASE");
        let tip = "line BASE up with the span selected in NEW: at the span selected in \
                   BASE, else at BASE's first span of that name";
        let can = s.timeline.selected_span().is_some();
        if ui
            .add_enabled(can, egui::Button::new("at the selection").small())
            .on_hover_text(tip)
            .on_disabled_hover_text("select a span in NEW's tracks (above) first")
            .clicked()
            && s.align_at_selection(l)
        {
            act.redraw = true;
        }
        if ui.small_button("at the starts").clicked() {
            s.align_at_starts(l);
            act.redraw = true;
        }
    });
}
