//! The horizontal view: which time is at which pixel, zooming around a point, panning,
//! fitting, and the ruler's adaptive ticks. Pure arithmetic, unit-tested without GL.

/// Times are `f64` nanoseconds here (a view can sit between nanoseconds when zoomed far in);
/// the trace's `i64` times convert exactly up to 2^53 ns (104 days) from the trace start,
/// which is why the view is kept relative to `origin`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// The trace's start: every other time here is relative to it.
    pub origin: i64,
    /// Time (ns after `origin`) at the left edge.
    pub t0: f64,
    /// Nanoseconds per pixel.
    pub ns_per_px: f64,
    /// Width of the timeline area in pixels.
    pub width: f64,
}

/// The most one pixel may show: 100 pixels per nanosecond.
pub const MIN_NS_PER_PX: f64 = 0.01;

impl Viewport {
    /// A view showing `[start, end]` of a trace (absolute ns) on `width` pixels.
    pub fn fit(origin: i64, start: i64, end: i64, width: f64) -> Viewport {
        let mut v = Viewport {
            origin,
            t0: 0.0,
            ns_per_px: 1.0,
            width: width.max(1.0),
        };
        v.show(start, end);
        v
    }

    /// Shows `[start, end]` (absolute ns) with a small margin on both sides.
    pub fn show(&mut self, start: i64, end: i64) {
        let span = ((end - start) as f64).max(1.0);
        let margin = span * 0.02;
        self.ns_per_px = ((span + 2.0 * margin) / self.width).max(MIN_NS_PER_PX);
        let mid = (start - self.origin) as f64 + span / 2.0;
        self.t0 = mid - self.ns_per_px * self.width / 2.0;
    }

    /// Pixel x of an absolute time.
    #[inline]
    pub fn x(&self, t: i64) -> f64 {
        ((t - self.origin) as f64 - self.t0) / self.ns_per_px
    }

    /// Absolute time (rounded to ns) at pixel x.
    #[inline]
    pub fn time_at(&self, x: f64) -> i64 {
        self.origin + (self.t0 + x * self.ns_per_px).round() as i64
    }

    /// Shows exactly `[start, end]` (absolute ns): a remembered view comes back as it was.
    pub fn show_exact(&mut self, start: i64, end: i64) {
        let span = ((end - start) as f64).max(1.0);
        self.ns_per_px = (span / self.width).max(MIN_NS_PER_PX);
        self.t0 = (start - self.origin) as f64;
    }

    /// The visible range, absolute ns: `[start, end]`.
    pub fn visible(&self) -> (i64, i64) {
        (
            self.origin + self.t0.floor() as i64,
            self.origin + (self.t0 + self.width * self.ns_per_px).ceil() as i64,
        )
    }

    /// Zooms by `factor` (> 1 zooms in) keeping the time under pixel `x` where it is.
    pub fn zoom_at(&mut self, x: f64, factor: f64, max_ns_per_px: f64) {
        let t = self.t0 + x * self.ns_per_px;
        self.ns_per_px =
            (self.ns_per_px / factor).clamp(MIN_NS_PER_PX, max_ns_per_px.max(MIN_NS_PER_PX));
        self.t0 = t - x * self.ns_per_px;
    }

    /// Moves the view right by `dx` pixels (content moves left).
    pub fn pan(&mut self, dx: f64) {
        self.t0 += dx * self.ns_per_px;
    }

    /// Changes the width, keeping the left edge and the scale.
    pub fn resize(&mut self, width: f64) {
        self.width = width.max(1.0);
    }
}

/// Ruler ticks: a step of 1, 2 or 5 × 10^k ns, at least `min_px` apart.
pub fn tick_step(ns_per_px: f64, min_px: f64) -> i64 {
    let want = ns_per_px * min_px;
    let mut step: i64 = 1;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if s as f64 >= want {
                return s;
            }
        }
        if step > i64::MAX / 10 {
            return i64::MAX;
        }
        step *= 10;
    }
}

/// A time for the ruler and tooltips, with a unit and just enough decimals for `step`.
pub fn format_time(ns: i64, step: i64) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    // The largest unit in which the step is at least a tenth, or the value at least 10,000.
    let (unit, div): (&str, u64) = [
        ("s", 1_000_000_000u64),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ]
    .into_iter()
    .find(|&(_, u)| step.max(1) as u64 * 10 > u || a >= u.saturating_mul(10_000))
    .unwrap_or(("ns", 1));
    // Decimals needed to show `step` in this unit.
    let mut decimals = 0;
    let s = step.max(1) as u64;
    let mut d = div;
    while d > 1 && !s.is_multiple_of(d) && decimals < 9 {
        d /= 10;
        decimals += 1;
    }
    let value = a as f64 / div as f64;
    if decimals == 0 {
        format!("{sign}{value:.0} {unit}")
    } else {
        format!("{sign}{value:.decimals$} {unit}")
    }
}

pub use spall_util::format_duration;

/// A counter value: whole numbers as integers (with thousands separated), others with four
/// significant digits; large magnitudes with SI suffixes.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a >= 1e6 {
        let (d, u) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")]
            .into_iter()
            .find(|&(d, _)| a >= d)
            .unwrap_or((1e6, "M"));
        return format!("{:.3}{u}", v / d);
    }
    if v.fract() == 0.0 {
        let digits = (a as u64).to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        return if v < 0.0 { format!("-{out}") } else { out };
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_values_read_well() {
        assert_eq!(format_value(1234567.0), "1.235M");
        assert_eq!(format_value(12345.0), "12,345");
        assert_eq!(format_value(-999.0), "-999");
        assert_eq!(format_value(0.25), "0.2500");
        assert_eq!(format_value(4.56789), "4.568");
    }

    #[test]
    fn fit_shows_the_range_with_a_margin() {
        let v = Viewport::fit(1_000, 1_000, 101_000, 1000.0);
        let (s, e) = v.visible();
        assert!(s < 1_000 && s > -2_000, "{s}");
        assert!(e > 101_000 && e < 104_000, "{e}");
        assert!((v.x(51_000) - 500.0).abs() < 1e-6, "the middle is centred");
    }

    /// A remembered view comes back as it was saved, however often: no margin accrues.
    #[test]
    fn show_exact_gives_back_the_visible_range() {
        let mut v = Viewport::fit(1_000, 1_000, 9_001_000, 733.0);
        let (a, b) = (2_345_678, 5_678_901);
        for _ in 0..5 {
            v.show_exact(a, b);
            let (s, e) = v.visible();
            assert!(
                (s - a).abs() <= 1 && (e - b).abs() <= 1,
                "{s}..{e} for {a}..{b}"
            );
        }
    }

    #[test]
    fn zoom_keeps_the_time_under_the_cursor() {
        let mut v = Viewport::fit(0, 0, 1_000_000, 1000.0);
        let before = v.time_at(250.0);
        v.zoom_at(250.0, 4.0, 1e9);
        assert_eq!(v.time_at(250.0), before);
        assert!((v.ns_per_px - 1_040.0 / 4.0).abs() < 1.0);
        v.zoom_at(250.0, 1e12, 1e9);
        assert_eq!(v.ns_per_px, MIN_NS_PER_PX, "clamped");
        v.zoom_at(0.0, 1e-12, 5_000.0);
        assert_eq!(v.ns_per_px, 5_000.0, "clamped to the maximum");
    }

    #[test]
    fn pan_moves_by_pixels() {
        let mut v = Viewport::fit(0, 0, 1000, 100.0);
        let t = v.time_at(50.0);
        v.pan(10.0);
        assert_eq!(v.time_at(40.0), t);
    }

    #[test]
    fn far_from_the_epoch_times_stay_exact() {
        // A trace at 1.7e18 ns (a 2024 wall clock): pixels still map to exact nanoseconds.
        let origin = 1_712_195_495_519_689_047;
        let v = Viewport::fit(origin, origin, origin + 1_000, 1000.0);
        assert_eq!(v.time_at(v.x(origin + 337)), origin + 337);
    }

    #[test]
    fn ticks_are_1_2_5_steps() {
        assert_eq!(tick_step(1.0, 100.0), 100);
        assert_eq!(tick_step(1.5, 100.0), 200);
        assert_eq!(tick_step(3.0, 100.0), 500);
        assert_eq!(tick_step(7.0, 100.0), 1000);
        assert_eq!(tick_step(0.001, 100.0), 1);
    }

    #[test]
    fn time_labels_have_units_and_enough_decimals() {
        assert_eq!(format_time(0, 100), "0 ns");
        assert_eq!(format_time(500, 100), "500 ns");
        assert_eq!(format_time(1_500, 500), "1.5 us");
        assert_eq!(format_time(400, 100), "400 ns");
        assert_eq!(format_time(123_456_789, 500), "123456.8 us");
        assert_eq!(format_time(2_000_000, 1_000_000), "2 ms");
        assert_eq!(format_time(2_500_000, 500_000), "2.5 ms");
        assert_eq!(format_time(3_000_000_000, 1_000_000_000), "3 s");
        assert_eq!(format_duration(1_234_000), "1.234 ms");
        assert_eq!(format_duration(56), "56 ns");
    }
}
