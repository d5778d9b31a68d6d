//! The CPU side of a frame: instance lists and clip batches, with no GL calls, so it can be
//! built, tested and benchmarked anywhere. Buffers keep their capacity between frames.
//!
//! Coordinates are physical pixels, origin at the top-left, y down.

use crate::color::Color;
use crate::text::{Fonts, GlyphKey};

/// A solid rectangle: 16 bytes per instance.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RectInstance {
    /// Left edge, in pixels.
    pub x: f32,
    /// Width, in pixels.
    pub w: f32,
    /// Top edge, in whole pixels.
    pub y: u16,
    /// Height, in whole pixels.
    pub h: u16,
    /// The colour, [`Color::packed`].
    pub rgba: u32,
}

/// A line segment of some width (a quad in the shader): 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineInstance {
    /// Start point's x, in pixels.
    pub x0: f32,
    /// Start point's y, in pixels.
    pub y0: f32,
    /// End point's x, in pixels.
    pub x1: f32,
    /// End point's y, in pixels.
    pub y1: f32,
    /// Thickness across the segment, in pixels.
    pub width: f32,
    /// The colour, [`Color::packed`].
    pub rgba: u32,
}

/// A glyph quad: its top-left pixel, its key in the atlas, its colour. The renderer turns
/// keys into atlas coordinates; sizes come from the key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlyphInstance {
    /// Left edge of the bitmap, in pixels.
    pub x: i32,
    /// Top edge of the bitmap, in pixels.
    pub y: i32,
    /// Width of the bitmap, in pixels.
    pub w: u16,
    /// Height of the bitmap, in pixels.
    pub h: u16,
    /// Which glyph at which size.
    pub key: GlyphKey,
    /// The colour, [`Color::packed`].
    pub rgba: u32,
}

/// A pixel rectangle (for clipping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClipRect {
    /// Left edge, in pixels.
    pub x: i32,
    /// Top edge, in pixels.
    pub y: i32,
    /// Width, in pixels (never negative).
    pub w: i32,
    /// Height, in pixels (never negative).
    pub h: i32,
}

/// Instances drawn under one clip rectangle: rects, then lines, then glyphs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Batch {
    /// The clip rectangle; `None` draws on the whole frame.
    pub clip: Option<ClipRect>,
    /// Start and end (exclusive) of the batch's instances in [`Scene::rects`].
    pub rects: (u32, u32),
    /// Start and end (exclusive) of the batch's instances in [`Scene::lines`].
    pub lines: (u32, u32),
    /// Start and end (exclusive) of the batch's instances in [`Scene::glyphs`].
    pub glyphs: (u32, u32),
}

/// Vertical placement of text relative to the `y` given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VAlign {
    /// `y` is the top of the line box.
    Top,
    /// `y` is the middle of the line box.
    Center,
    /// `y` is the baseline.
    Baseline,
}

/// One frame's worth of drawing.
#[derive(Debug, Default)]
pub struct Scene {
    /// Width of the frame, in pixels.
    pub width: u32,
    /// Height of the frame, in pixels.
    pub height: u32,
    /// The background colour the frame is cleared to.
    pub clear: Color,
    /// The frame's rectangles, in drawing order.
    pub rects: Vec<RectInstance>,
    /// The frame's lines, in drawing order.
    pub lines: Vec<LineInstance>,
    /// The frame's glyphs, in drawing order.
    pub glyphs: Vec<GlyphInstance>,
    /// Runs of instances under one clip each, in drawing order.
    pub batches: Vec<Batch>,
    clip_stack: Vec<Option<ClipRect>>,
}

impl Scene {
    /// An empty scene; [`begin`](Scene::begin) starts each frame.
    pub fn new() -> Scene {
        Scene::default()
    }

    /// Starts a frame of `width × height` pixels, cleared to `clear`. Keeps capacity.
    pub fn begin(&mut self, width: u32, height: u32, clear: Color) {
        self.width = width;
        self.height = height;
        self.clear = clear;
        self.rects.clear();
        self.lines.clear();
        self.glyphs.clear();
        self.batches.clear();
        self.clip_stack.clear();
        self.start_batch(None);
    }

    fn start_batch(&mut self, clip: Option<ClipRect>) {
        let (r, l, g) = self.close_batch();
        if let Some(last) = self.batches.last_mut() {
            if last.rects.0 == r && last.lines.0 == l && last.glyphs.0 == g {
                // The previous batch is empty: reuse it.
                last.clip = clip;
                return;
            }
        }
        self.batches.push(Batch {
            clip,
            rects: (r, r),
            lines: (l, l),
            glyphs: (g, g),
        });
    }

    /// Ends the open batch's ranges at the current instance counts, and returns them.
    fn close_batch(&mut self) -> (u32, u32, u32) {
        let (r, l, g) = (
            self.rects.len() as u32,
            self.lines.len() as u32,
            self.glyphs.len() as u32,
        );
        if let Some(last) = self.batches.last_mut() {
            last.rects.1 = r;
            last.lines.1 = l;
            last.glyphs.1 = g;
        }
        (r, l, g)
    }

    /// Closes the open batch's ranges (call before drawing; `Renderer` does).
    pub fn finish(&mut self) {
        self.close_batch();
    }

    fn current_clip(&self) -> Option<ClipRect> {
        self.batches.last().and_then(|b| b.clip)
    }

    /// Clips what follows to `rect` (intersected with the current clip) until `pop_clip`.
    pub fn push_clip(&mut self, x: f32, y: f32, w: f32, h: f32) {
        let mut c = ClipRect {
            x: x.round() as i32,
            y: y.round() as i32,
            w: w.round().max(0.0) as i32,
            h: h.round().max(0.0) as i32,
        };
        let outer = self.current_clip();
        if let Some(o) = outer {
            let x0 = c.x.max(o.x);
            let y0 = c.y.max(o.y);
            let x1 = (c.x + c.w).min(o.x + o.w);
            let y1 = (c.y + c.h).min(o.y + o.h);
            c = ClipRect {
                x: x0,
                y: y0,
                w: (x1 - x0).max(0),
                h: (y1 - y0).max(0),
            };
        }
        self.clip_stack.push(outer);
        self.start_batch(Some(c));
    }

    /// Restores the clip in force before the matching [`push_clip`](Scene::push_clip).
    pub fn pop_clip(&mut self) {
        let prev = self.clip_stack.pop().flatten();
        self.start_batch(prev);
    }

    /// A solid rectangle. Parts outside the frame are cut off on the CPU, so huge spans
    /// stay exact in `f32`.
    #[inline]
    pub fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, color: Color) {
        let x0 = x.max(-1.0);
        let x1 = (x + w).min(self.width as f32 + 1.0);
        let y0 = y.max(0.0);
        let y1 = (y + h).min(self.height as f32).min(65535.0);
        if x1 <= x0 || y1 <= y0 {
            return;
        }
        self.rects.push(RectInstance {
            x: x0,
            w: x1 - x0,
            y: y0.round() as u16,
            h: (y1.round() - y0.round()) as u16,
            rgba: color.packed(),
        });
    }

    /// A rectangle outline `thickness` pixels wide, inside the rectangle's bounds.
    pub fn outline(&mut self, x: f32, y: f32, w: f32, h: f32, thickness: f32, color: Color) {
        let t = thickness.min(w / 2.0).min(h / 2.0);
        self.rect(x, y, w, t, color);
        self.rect(x, y + h - t, w, t, color);
        self.rect(x, y + t, t, h - 2.0 * t, color);
        self.rect(x + w - t, y + t, t, h - 2.0 * t, color);
    }

    /// A line segment `width` pixels thick.
    #[inline]
    pub fn line(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, width: f32, color: Color) {
        self.lines.push(LineInstance {
            x0,
            y0,
            x1,
            y1,
            width,
            rgba: color.packed(),
        });
    }

    /// Connected segments through `points`.
    pub fn polyline(&mut self, points: &[(f32, f32)], width: f32, color: Color) {
        for w in points.windows(2) {
            self.line(w[0].0, w[0].1, w[1].0, w[1].1, width, color);
        }
    }

    /// A line from `(x0, y0)` to `(x1, y1)` with an arrow head of size `head` at the end.
    #[allow(clippy::too_many_arguments)]
    pub fn arrow(
        &mut self,
        x0: f32,
        y0: f32,
        x1: f32,
        y1: f32,
        width: f32,
        head: f32,
        color: Color,
    ) {
        self.line(x0, y0, x1, y1, width, color);
        let (dx, dy) = (x1 - x0, y1 - y0);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-3 {
            return;
        }
        let (ux, uy) = (dx / len, dy / len);
        for side in [-1.0f32, 1.0] {
            // 30 degrees either side of the shaft.
            let (c, s) = (0.866f32, 0.5 * side);
            let (bx, by) = (-(ux * c - uy * s), -(uy * c + ux * s));
            self.line(x1, y1, x1 + bx * head, y1 + by * head, width, color);
        }
    }

    /// Text at `px` pixels with its left edge at `x`; `valign` says what `y` is. Returns
    /// the advance width.
    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        fonts: &mut Fonts,
        x: f32,
        y: f32,
        px: f32,
        valign: VAlign,
        color: Color,
        text: &str,
    ) -> f32 {
        let (ascent, descent) = fonts.ascent_descent(px);
        let baseline = match valign {
            VAlign::Baseline => y,
            VAlign::Top => y + ascent,
            VAlign::Center => y + (ascent - descent) / 2.0,
        };
        let rgba = color.packed();
        let glyphs = &mut self.glyphs;
        fonts.layout(text, px, x, baseline, |key, b, gx, gy| {
            glyphs.push(GlyphInstance {
                x: gx,
                y: gy,
                w: b.width,
                h: b.height,
                key,
                rgba,
            });
        })
    }

    /// Instances in the frame (rects + lines + glyphs).
    pub fn instance_count(&self) -> usize {
        self.rects.len() + self.lines.len() + self.glyphs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_small() {
        assert_eq!(std::mem::size_of::<RectInstance>(), 16);
        assert_eq!(std::mem::size_of::<LineInstance>(), 24);
    }

    #[test]
    fn clips_nest_and_batches_split() {
        let mut s = Scene::new();
        s.begin(100, 100, Color::WHITE);
        s.rect(0.0, 0.0, 10.0, 10.0, Color::BLACK);
        s.push_clip(10.0, 10.0, 50.0, 50.0);
        s.rect(0.0, 0.0, 100.0, 100.0, Color::BLACK);
        s.push_clip(40.0, 40.0, 50.0, 50.0);
        s.rect(0.0, 0.0, 100.0, 100.0, Color::BLACK);
        s.pop_clip();
        s.pop_clip();
        s.finish();
        let clips: Vec<_> = s.batches.iter().map(|b| b.clip).collect();
        assert_eq!(
            clips,
            vec![
                None,
                Some(ClipRect {
                    x: 10,
                    y: 10,
                    w: 50,
                    h: 50
                }),
                Some(ClipRect {
                    x: 40,
                    y: 40,
                    w: 20,
                    h: 20
                }),
                None
            ]
        );
        assert_eq!(s.batches[1].rects, (1, 2));
        assert_eq!(s.batches[3].rects, (3, 3));
    }

    #[test]
    fn rects_are_cut_to_the_frame() {
        let mut s = Scene::new();
        s.begin(100, 50, Color::WHITE);
        s.rect(-1e12, 10.0, 2e12, 10.0, Color::BLACK);
        s.rect(200.0, 0.0, 10.0, 10.0, Color::BLACK); // off screen: dropped
        s.rect(0.0, 45.0, 10.0, 10.0, Color::BLACK);
        assert_eq!(s.rects.len(), 2);
        assert_eq!((s.rects[0].x, s.rects[0].w), (-1.0, 102.0));
        assert_eq!(s.rects[1].h, 5);
    }
}
