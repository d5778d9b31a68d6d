//! Text measurement and layout with no GL: the embedded Hack font through ab_glyph.
//!
//! Glyphs are placed on whole pixels and rasterised once per (glyph, pixel size), so the
//! same text always produces the same pixels.

use std::borrow::Cow;

use ab_glyph::{Font, FontRef, GlyphId, PxScale, ScaleFont};
use hashbrown::HashMap;

/// The ellipsis appended to truncated labels.
pub const ELLIPSIS: char = '…';

/// Sizes are quantised to quarter pixels, so the glyph cache stays small.
#[inline]
pub fn size_key(px: f32) -> u16 {
    (px.clamp(1.0, 1000.0) * 4.0).round() as u16
}

/// A glyph at one size: where its bitmap sits relative to the pen, and how big it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlyphBox {
    /// Offset of the bitmap's left edge from the pen position, in pixels.
    pub left: i32,
    /// Offset of the bitmap's top edge from the baseline, in pixels (y down: negative above
    /// it).
    pub top: i32,
    /// Width of the bitmap, in pixels.
    pub width: u16,
    /// Height of the bitmap, in pixels.
    pub height: u16,
}

/// Key of a rasterised glyph: glyph id and quantised size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlyphKey {
    /// The font's glyph id.
    pub glyph: u16,
    /// The pixel size, in quarter pixels (see [`size_key`]).
    pub size: u16,
}

/// The font and its measurement caches. Shared by scenes (layout) and renderers (rasters).
#[derive(Debug)]
pub struct Fonts {
    font: FontRef<'static>,
    /// Glyph id and unscaled advance of the printable ASCII characters.
    ascii: [(GlyphId, f32); 128],
    boxes: HashMap<GlyphKey, Option<GlyphBox>>,
    /// Per size, the boxes of ASCII glyphs: one table lookup per character when laying out.
    ascii_boxes: HashMap<u16, Box<[Option<Option<GlyphBox>>; 128]>>,
}

impl Default for Fonts {
    fn default() -> Self {
        Fonts::new()
    }
}

impl Fonts {
    /// The embedded Hack Regular (from `epaint_default_fonts`).
    pub fn new() -> Fonts {
        let font = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
            .expect("the embedded font parses");
        let mut ascii = [(GlyphId(0), 0.0); 128];
        for (c, slot) in ascii.iter_mut().enumerate() {
            let id = font.glyph_id(char::from(c as u8));
            *slot = (id, font.h_advance_unscaled(id));
        }
        Fonts {
            font,
            ascii,
            boxes: HashMap::new(),
            ascii_boxes: HashMap::new(),
        }
    }

    /// The embedded font, for measurements the caches do not cover.
    pub fn font(&self) -> &FontRef<'static> {
        &self.font
    }

    fn scale(&self, px: f32) -> f32 {
        // PxScale is the font's height in pixels; unscaled units per em differ per font.
        self.font.as_scaled(PxScale::from(px)).h_scale_factor()
    }

    #[inline]
    fn glyph(&self, c: char) -> (GlyphId, f32) {
        if (c as u32) < 128 {
            self.ascii[c as usize]
        } else {
            let id = self.font.glyph_id(c);
            (id, self.font.h_advance_unscaled(id))
        }
    }

    /// Ascent (above the baseline) and descent (below, positive) at `px`, in pixels.
    pub fn ascent_descent(&self, px: f32) -> (f32, f32) {
        let s = self.font.as_scaled(PxScale::from(px));
        (s.ascent(), -s.descent())
    }

    /// The height of a line of text at `px`, in pixels.
    pub fn line_height(&self, px: f32) -> f32 {
        let (a, d) = self.ascent_descent(px);
        a + d
    }

    /// The width of `text` at `px`, in pixels (advances rounded to whole pixels, as drawn).
    pub fn measure(&self, text: &str, px: f32) -> f32 {
        let k = self.scale(px);
        let mut pen = 0.0f32;
        for c in text.chars() {
            pen += (self.glyph(c).1 * k).round();
        }
        pen
    }

    /// `text` cut to fit `max_width` pixels with an ellipsis, or unchanged if it fits.
    /// `None` when not even the ellipsis fits.
    pub fn truncate<'t>(&self, text: &'t str, px: f32, max_width: f32) -> Option<Cow<'t, str>> {
        let k = self.scale(px);
        let ell = (self.glyph(ELLIPSIS).1 * k).round();
        let mut pen = 0.0f32;
        // The last char boundary where the text plus an ellipsis still fits.
        let mut fit_with_ellipsis: Option<usize> = if ell <= max_width { Some(0) } else { None };
        for (i, c) in text.char_indices() {
            let adv = (self.glyph(c).1 * k).round();
            if pen + adv > max_width {
                return fit_with_ellipsis.map(|end| {
                    let mut s = String::with_capacity(end + 3);
                    s.push_str(&text[..end]);
                    s.push(ELLIPSIS);
                    Cow::Owned(s)
                });
            }
            pen += adv;
            if pen + ell <= max_width {
                fit_with_ellipsis = Some(i + c.len_utf8());
            }
        }
        Some(Cow::Borrowed(text))
    }

    /// The bitmap box of a glyph at a size (cached). `None` for glyphs with no outline.
    pub fn glyph_box(&mut self, key: GlyphKey) -> Option<GlyphBox> {
        let font = &self.font;
        *self.boxes.entry(key).or_insert_with(|| {
            let g = GlyphId(key.glyph).with_scale(PxScale::from(key.size as f32 / 4.0));
            let outlined = font.outline_glyph(g)?;
            let b = outlined.px_bounds();
            Some(GlyphBox {
                left: b.min.x as i32,
                top: b.min.y as i32,
                width: b.width() as u16,
                height: b.height() as u16,
            })
        })
    }

    /// Rasterises a glyph: coverage bytes, row by row, `width × height` of its box.
    pub fn rasterize(&self, key: GlyphKey) -> Option<(GlyphBox, Vec<u8>)> {
        let g = GlyphId(key.glyph).with_scale(PxScale::from(key.size as f32 / 4.0));
        let outlined = self.font.outline_glyph(g)?;
        let b = outlined.px_bounds();
        let (w, h) = (b.width() as u32, b.height() as u32);
        let mut data = vec![0u8; (w * h) as usize];
        outlined.draw(|x, y, c| {
            if x < w && y < h {
                data[(y * w + x) as usize] = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        });
        let gb = GlyphBox {
            left: b.min.x as i32,
            top: b.min.y as i32,
            width: w as u16,
            height: h as u16,
        };
        Some((gb, data))
    }

    /// Lays out `text` with its baseline at `(x, baseline)`, calling `emit` for each visible
    /// glyph with its key and the top-left pixel of its bitmap. Returns the advance width.
    pub fn layout(
        &mut self,
        text: &str,
        px: f32,
        x: f32,
        baseline: f32,
        mut emit: impl FnMut(GlyphKey, GlyphBox, i32, i32),
    ) -> f32 {
        let k = self.scale(px);
        let size = size_key(px);
        let (x0, y0) = (x.round(), baseline.round());
        let mut table = self
            .ascii_boxes
            .remove(&size)
            .unwrap_or_else(|| Box::new([None; 128]));
        let mut pen = 0.0f32;
        for c in text.chars() {
            let (id, adv) = self.glyph(c);
            if !c.is_whitespace() {
                let key = GlyphKey { glyph: id.0, size };
                let b = if (c as u32) < 128 {
                    *table[c as usize].get_or_insert_with(|| self.glyph_box(key))
                } else {
                    self.glyph_box(key)
                };
                if let Some(b) = b {
                    emit(key, b, (x0 + pen) as i32 + b.left, y0 as i32 + b.top);
                }
            }
            pen += (adv * k).round();
        }
        self.ascii_boxes.insert(size, table);
        pen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measuring_is_monospace_and_additive() {
        let f = Fonts::new();
        let one = f.measure("a", 14.0);
        assert!(one > 5.0 && one < 12.0, "{one}");
        assert_eq!(f.measure("abcd", 14.0), 4.0 * one);
        assert_eq!(f.measure("", 14.0), 0.0);
        assert!(f.measure("abcd", 28.0) > f.measure("abcd", 14.0) * 1.8);
    }

    #[test]
    fn truncation_adds_an_ellipsis_and_fits() {
        let f = Fonts::new();
        let w = f.measure("render_frame", 12.0);
        assert_eq!(f.truncate("render_frame", 12.0, w).unwrap(), "render_frame");
        let cut = f.truncate("render_frame", 12.0, w - 1.0).unwrap();
        assert!(cut.ends_with(ELLIPSIS), "{cut}");
        assert!(f.measure(&cut, 12.0) <= w - 1.0);
        assert_eq!(f.truncate("render_frame", 12.0, 1.0), None);
        let tiny = f
            .truncate("render_frame", 12.0, f.measure("…", 12.0))
            .unwrap();
        assert_eq!(tiny, "…");
        // Multi-byte text is cut at character boundaries.
        let jp = f.truncate("日本語のテキスト", 12.0, 30.0).unwrap();
        assert!(jp.ends_with(ELLIPSIS));
    }

    #[test]
    fn layout_places_glyphs_on_whole_pixels() {
        let mut f = Fonts::new();
        let mut glyphs = Vec::new();
        let w = f.layout("Hi there", 16.0, 10.3, 20.6, |k, b, x, y| {
            glyphs.push((k, b, x, y))
        });
        assert_eq!(glyphs.len(), 7); // the space has no bitmap
        assert_eq!(w, f.measure("Hi there", 16.0));
        let (_, b, x, y) = glyphs[0];
        assert_eq!(x, 10 + b.left);
        assert_eq!(y, 21 + b.top);
        assert!(b.top < 0, "glyphs sit above the baseline");
    }
}
