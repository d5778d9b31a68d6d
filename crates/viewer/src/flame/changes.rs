//! Compare mode's look: the colour that shows a frame's change against BASE (red slower,
//! blue faster, the deeper the larger, neutral grey when unchanged), the notch and fill of
//! the stacks only BASE has, and the tooltip's lines. The changes themselves are worked
//! out in [`trace_model::changes`].

use render_gl::Color;
use trace_model::changes::{Change, Status};
use trace_model::NoiseRules;

use crate::theme::{Theme, ThemeKind};

/// The notch on a frame under which BASE ran stacks NEW no longer has, and the outline of
/// those stacks' own frames.
pub const REMOVED: Color = Color::rgb(44, 108, 224);

/// The fill of a frame only BASE has: a pale blue, so the outline and the label read as
/// BASE's work, not NEW's.
pub fn removed_fill(theme: &Theme) -> Color {
    match theme.kind {
        ThemeKind::Light => Color::rgb(214, 226, 248),
        ThemeKind::Dark => Color::rgb(40, 52, 82),
    }
}

/// The fill of a frame in compare mode.
pub fn fill(theme: &Theme, c: &Change) -> Color {
    let neutral = match theme.kind {
        ThemeKind::Light => [206, 206, 206],
        ThemeKind::Dark => [88, 88, 92],
    };
    let target = match c.status {
        Status::Unchanged => return Color::rgb(neutral[0], neutral[1], neutral[2]),
        Status::Slower | Status::Added => [224, 52, 48],
        // Less in NEW; a frame of NEW's graph is never only in BASE.
        Status::Faster | Status::Removed => [44, 108, 224],
    };
    // Every counted change shows, the largest at full colour.
    let k = 0.35 + 0.65 * c.intensity.clamp(0.0, 1.0);
    let mix = |i: usize| (neutral[i] as f32 + (target[i] as f32 - neutral[i] as f32) * k) as u8;
    Color::rgb(mix(0), mix(1), mix(2))
}

/// The tooltip's lines for a frame.
pub fn describe(c: &Change) -> Vec<String> {
    use crate::view::viewport::format_duration;
    let Some(b) = c.base_self else {
        return vec![format!(
            "added: not in BASE · self {}",
            format_duration(c.new_self)
        )];
    };
    let d = c.new_self - b;
    let pct = if b > 0 {
        format!(" ({:+.1}%)", d as f64 * 100.0 / b as f64)
    } else {
        String::new()
    };
    let what = match c.status {
        Status::Slower => "slower",
        Status::Faster => "faster",
        _ => "unchanged",
    };
    let mut lines = vec![format!(
        "self: base {} → new {} · {}{}{pct} · {what}",
        format_duration(b),
        format_duration(c.new_self),
        if d > 0 { "+" } else { "" },
        format_duration(d)
    )];
    if c.base_count > 0 && c.new_count > 0 {
        let (pb, pn) = (b / c.base_count as i64, c.new_self / c.new_count as i64);
        let pct = if pb > 0 {
            format!(" ({:+.1}%)", (pn - pb) as f64 * 100.0 / pb as f64)
        } else {
            String::new()
        };
        lines.push(format!(
            "per call: {} → {}{pct} · calls {} → {}",
            format_duration(pb),
            format_duration(pn),
            c.base_count,
            c.new_count
        ));
    }
    if let Some(p) = c.p_value {
        let verdict = if p < NoiseRules::new(0).alpha {
            "a shift"
        } else {
            "noise: drawn unchanged"
        };
        lines.push(format!("Mann-Whitney p = {p:.3} ({verdict})"));
    }
    lines.extend(describe_removed(c));
    lines
}

/// The tooltip's lines for the stacks only in BASE under a frame.
fn describe_removed(c: &Change) -> Vec<String> {
    use crate::view::viewport::format_duration;
    if c.removed.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!("removed here (only in BASE): {}", c.removed.len())];
    for r in c.removed.iter().take(6) {
        lines.push(format!(
            "  − {} · base {}",
            r.name,
            format_duration(r.base_total)
        ));
    }
    if c.removed.len() > 6 {
        lines.push(format!("  … {} more", c.removed.len() - 6));
    }
    lines
}
