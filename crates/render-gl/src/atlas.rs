//! The glyph atlas: a single-channel texture packed in shelves, filled on demand.

use hashbrown::HashMap;

use crate::text::GlyphKey;

/// Where a glyph's bitmap lives in the atlas (texels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtlasSlot {
    /// Left edge of the bitmap, in texels.
    pub x: u16,
    /// Top edge of the bitmap, in texels.
    pub y: u16,
    /// Width of the bitmap, in texels (the border not included).
    pub w: u16,
    /// Height of the bitmap, in texels (the border not included).
    pub h: u16,
}

/// Shelf packing: rows of glyphs, each row as tall as its tallest glyph.
#[derive(Debug)]
pub struct AtlasPacker {
    /// Width and height of the square atlas, in texels.
    pub size: u32,
    shelf_x: u32,
    shelf_y: u32,
    shelf_h: u32,
    /// Where each glyph placed so far lives.
    pub slots: HashMap<GlyphKey, AtlasSlot>,
}

impl AtlasPacker {
    /// An empty atlas of `size × size` texels.
    pub fn new(size: u32) -> AtlasPacker {
        AtlasPacker {
            size,
            shelf_x: 1,
            shelf_y: 1,
            shelf_h: 0,
            slots: HashMap::new(),
        }
    }

    /// Reserves `w × h` texels (with a 1-texel border); `None` when the atlas is full.
    pub fn alloc(&mut self, w: u32, h: u32) -> Option<AtlasSlot> {
        if w + 2 > self.size || h + 2 > self.size {
            return None;
        }
        if self.shelf_x + w + 1 > self.size {
            self.shelf_y += self.shelf_h + 1;
            self.shelf_x = 1;
            self.shelf_h = 0;
        }
        if self.shelf_y + h + 1 > self.size {
            return None;
        }
        let slot = AtlasSlot {
            x: self.shelf_x as u16,
            y: self.shelf_y as u16,
            w: w as u16,
            h: h as u16,
        };
        self.shelf_x += w + 1;
        self.shelf_h = self.shelf_h.max(h);
        Some(slot)
    }

    /// Forgets everything (when full: the renderer then re-rasterises what the frame needs).
    pub fn reset(&mut self) {
        *self = AtlasPacker::new(self.size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_without_overlap_and_reports_full() {
        let mut p = AtlasPacker::new(64);
        let mut got = Vec::new();
        while let Some(s) = p.alloc(10, 12) {
            got.push(s);
        }
        assert!(got.len() >= 16);
        for (i, a) in got.iter().enumerate() {
            assert!(a.x as u32 + a.w as u32 <= 64 && a.y as u32 + a.h as u32 <= 64);
            for b in &got[i + 1..] {
                let apart =
                    a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
        assert_eq!(p.alloc(100, 1), None);
    }
}
