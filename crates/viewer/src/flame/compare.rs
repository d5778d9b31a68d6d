//! Compare mode: each frame of NEW's flame graph matched by call stack with BASE's, its
//! self time judged as `spall-cli diff --by stack` judges it (a change counts from 5% of
//! BASE's value and from 0.1% of BASE's duration), and the colour that shows the change:
//! red slower, blue faster, the deeper the larger, neutral grey when unchanged.

use std::collections::HashMap;

use render_gl::Color;
use trace_model::{label_text, FlameTree, Trace};

use crate::theme::{Theme, ThemeKind};

/// A change counts from this many percent of BASE's self time (`diff --threshold`).
const THRESHOLD_PCT: f64 = 5.0;

/// How a frame changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// More self time in NEW, past the thresholds.
    Slower,
    /// Less self time in NEW, past the thresholds.
    Faster,
    /// Within what counts as noise.
    Unchanged,
    /// The stack is only in NEW.
    Added,
}

/// One frame of NEW against BASE.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// BASE's self time on the same stack (`None`: BASE has no such stack).
    pub base_self: Option<i64>,
    /// NEW's self time.
    pub new_self: i64,
    /// Spans on the stack in BASE (0 without it), for the change per call.
    pub base_count: u64,
    /// Spans on the stack in NEW.
    pub new_count: u64,
    /// The verdict.
    pub status: Status,
    /// The change's size against the largest change in the graph, 0..=1.
    pub intensity: f32,
}

/// Per node of `new` (NEW's tree), its change against `base` (BASE's tree, built with the
/// same scope). Stacks match by their frames' names from the root.
pub fn changes(nt: &Trace, new: &FlameTree, bt: &Trace, base: &FlameTree) -> Vec<Change> {
    // BASE's nodes by (parent's key, name); a node's key is its index.
    let mut by_name: HashMap<(u32, String), u32> = HashMap::new();
    for i in 1..base.len() {
        let name = label_text(bt, base.label[i]).into_owned();
        by_name.insert((base.parent[i], name), i as u32);
    }
    let min_delta = min_delta(bt);
    // NEW's node -> BASE's node.
    let mut twin: Vec<Option<u32>> = vec![None; new.len()];
    let mut out = Vec::with_capacity(new.len());
    for i in 0..new.len() {
        let b = if i == 0 {
            (!base.is_empty()).then_some(0)
        } else {
            twin[new.parent[i] as usize].and_then(|p| {
                let name = label_text(nt, new.label[i]).into_owned();
                by_name.get(&(p, name)).copied()
            })
        };
        twin[i] = b;
        let n = new.self_ns[i];
        let base_self = b.map(|b| base.self_ns[b as usize]);
        let status = judge(base_self, n, min_delta);
        out.push(Change {
            base_self,
            new_self: n,
            base_count: b.map_or(0, |b| base.count[b as usize]),
            new_count: new.count[i],
            status,
            intensity: 0.0,
        });
    }
    let size = |c: &Change| match c.status {
        Status::Slower | Status::Faster | Status::Added => {
            (c.new_self - c.base_self.unwrap_or(0)).unsigned_abs()
        }
        Status::Unchanged => 0,
    };
    let max = out.iter().map(size).max().unwrap_or(0).max(1);
    for c in &mut out {
        c.intensity = (size(c) as f64 / max as f64) as f32;
    }
    out
}

/// The verdict on a self time of `new` against BASE's `base` (`None`: BASE has none): a
/// change counts from 5% of BASE's value and from `min_delta`.
pub fn judge(base: Option<i64>, new: i64, min_delta: i64) -> Status {
    let Some(v) = base else {
        return Status::Added;
    };
    let d = new - v;
    let big = d != 0
        && d.unsigned_abs() >= min_delta.unsigned_abs()
        && (v == 0 || d.unsigned_abs() as f64 * 100.0 >= THRESHOLD_PCT * v as f64);
    match (big, d > 0) {
        (false, _) => Status::Unchanged,
        (true, true) => Status::Slower,
        (true, false) => Status::Faster,
    }
}

/// The smallest change that counts in a comparison with `base`: 0.1% of its duration
/// (`diff --min-delta`'s default).
pub fn min_delta(base: &Trace) -> i64 {
    (base.duration_ns() / 1000).max(1)
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
        Status::Faster => [44, 108, 224],
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
    lines
}
