//! Marks more than one kind of row draws: a counter series' step graph and a curved arrow
//! (flows, and a system trace's waker).

use render_gl::{Color, Scene};

use crate::kinds::first_at_or_after;
use crate::loaded::Loaded;
use crate::view::timeline::TimelineView;

/// One counter series as a step graph scaled to `lo..hi` (0 included) in the row at
/// `y` of height `h`: per pixel column the range of its values there, found through its
/// [`SeriesIndex`](trace_index::SeriesIndex), so the cost is bounded by the row's width.
#[allow(clippy::too_many_arguments)]
pub(crate) fn series_columns(
    scene: &mut Scene,
    l: &Loaded,
    s: &TimelineView,
    (ts, vals, index): (&[i64], &[f64], &trace_index::SeriesIndex),
    (min, max): (f64, f64),
    (y, h): (f32, f32),
    color: Color,
    alpha: u8,
) {
    let lo = min.min(0.0);
    let hi = if max > lo { max } else { lo + 1.0 };
    let (top, bottom) = (y + 3.0 * s.scale, y + h - 2.0);
    let y_of = |v: f64| bottom - ((v - lo) / (hi - lo)) as f32 * (bottom - top);
    let (t0, t1) = s.viewport.visible();
    let cols = s.width.ceil() as usize;
    let end_x = s.viewport.x(l.trace.end_ns()) as f32;
    let fill = color.with_alpha(alpha);
    let mut i = ts.partition_point(|&x| x < t0);
    // (first column, min, max) of the run being drawn.
    let mut run: Option<(usize, f64, f64)> = None;
    let flush = |scene: &mut Scene, run: Option<(usize, f64, f64)>, to: usize| {
        let Some((from, a, b)) = run else { return };
        let x0 = from as f32;
        let w = (to as f32).min(end_x) - x0;
        if w <= 0.0 {
            return;
        }
        let (ya, yb) = (y_of(a), y_of(b));
        scene.rect(x0, yb, w, bottom - yb, fill);
        scene.rect(x0, yb, w, (1.5 * s.scale).max(1.0), color);
        if ya - yb >= 1.0 {
            scene.rect(x0, yb, w.max(1.0), ya - yb + 1.0, color);
        }
    };
    for col in 0..cols {
        let tc = s.viewport.time_at(col as f64 + 1.0);
        let j = i + first_at_or_after(&ts[i..], tc, |&x| x);
        let carry = i.checked_sub(1).map(|p| vals[p]);
        let inside = index.min_max(vals, i, j);
        let mm = match (carry, inside) {
            (Some(v), Some((a, b))) => Some((v.min(a), v.max(b))),
            (Some(v), None) => Some((v, v)),
            (None, m) => m,
        };
        i = j;
        match (run, mm) {
            (Some((_, a, b)), Some((c, d))) if a == b && c == d && a == c => {}
            _ => {
                flush(scene, run, col);
                run = mm.map(|(a, b)| (col, a, b));
            }
        }
        if tc > t1 && i >= ts.len() {
            break;
        }
    }
    flush(scene, run, cols);
}

/// A cubic Bézier from `a` to `b` leaving and arriving horizontally, with an arrow head.
pub(crate) fn bezier_arrow(
    scene: &mut Scene,
    a: (f32, f32),
    b: (f32, f32),
    scale: f32,
    color: Color,
) {
    let dx = ((b.0 - a.0).abs() * 0.5).clamp(12.0 * scale, 200.0 * scale);
    let (c1, c2) = ((a.0 + dx, a.1), (b.0 - dx, b.1));
    let width = 1.5 * scale;
    let mut prev = a;
    // Segments of about 24 px: a short arrow needs few, and thousands of arrows share a frame.
    let n = (((b.0 - a.0).abs() + (b.1 - a.1).abs()) / (24.0 * scale)).clamp(3.0, 16.0) as usize;
    for k in 1..=n {
        let u = k as f32 / n as f32;
        let v = 1.0 - u;
        let p = (
            v * v * v * a.0 + 3.0 * v * v * u * c1.0 + 3.0 * v * u * u * c2.0 + u * u * u * b.0,
            v * v * v * a.1 + 3.0 * v * v * u * c1.1 + 3.0 * v * u * u * c2.1 + u * u * u * b.1,
        );
        if k == n {
            scene.arrow(prev.0, prev.1, p.0, p.1, width, 7.0 * scale, color);
        } else {
            scene.line(prev.0, prev.1, p.0, p.1, width, color);
        }
        prev = p;
    }
    scene.rect(
        a.0 - 2.0 * scale,
        a.1 - 2.0 * scale,
        4.0 * scale,
        4.0 * scale,
        color,
    );
}
