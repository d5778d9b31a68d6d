//! Colours: RGBA, 8 bits per channel, packed so the bytes in memory are r, g, b, a.

/// A colour, straight (not premultiplied) alpha.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Color(pub [u8; 4]);

impl Color {
    /// Opaque black.
    pub const BLACK: Color = Color([0, 0, 0, 255]);
    /// Opaque white.
    pub const WHITE: Color = Color([255, 255, 255, 255]);
    /// Fully transparent (black, alpha 0).
    pub const TRANSPARENT: Color = Color([0, 0, 0, 0]);

    /// An opaque colour.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color([r, g, b, 255])
    }

    /// A colour with alpha `a` (0 transparent, 255 opaque).
    pub const fn rgba(r: u8, g: u8, b: u8, a: u8) -> Color {
        Color([r, g, b, a])
    }

    /// The colour with its alpha replaced.
    pub const fn with_alpha(self, a: u8) -> Color {
        Color([self.0[0], self.0[1], self.0[2], a])
    }

    /// Packed for a vertex buffer (bytes r, g, b, a in memory).
    #[inline]
    pub fn packed(self) -> u32 {
        u32::from_le_bytes(self.0)
    }

    /// Components as floats in `0..=1`.
    pub fn to_f32(self) -> [f32; 4] {
        self.0.map(|c| c as f32 / 255.0)
    }

    /// A stable, pleasant colour for a name: the same name always gets the same colour.
    pub fn from_hash(h: u64) -> Color {
        // Hue from the hash; saturation and lightness kept in a readable band.
        let hue = (h % 360) as f32;
        let sat = 0.45 + ((h >> 16) % 20) as f32 / 100.0;
        let light = 0.55 + ((h >> 32) % 15) as f32 / 100.0;
        hsl(hue, sat, light)
    }

    /// Perceived brightness in `0..=1`, to pick readable text on a fill.
    pub fn luma(self) -> f32 {
        let [r, g, b, _] = self.to_f32();
        0.299 * r + 0.587 * g + 0.114 * b
    }
}

/// HSL (hue in degrees) to an opaque colour.
pub fn hsl(h: f32, s: f32, l: f32) -> Color {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h / 60.0) % 6.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let q = |v: f32| ((v + m).clamp(0.0, 1.0) * 255.0).round() as u8;
    Color::rgb(q(r), q(g), q(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_byte_order() {
        let c = Color::rgba(1, 2, 3, 4);
        assert_eq!(c.packed().to_le_bytes(), [1, 2, 3, 4]);
    }

    #[test]
    fn hashed_colours_are_stable_and_readable() {
        assert_eq!(Color::from_hash(12345), Color::from_hash(12345));
        for h in [0u64, 1, 99, u64::MAX, 0xdead_beef] {
            let l = Color::from_hash(h.wrapping_mul(0x9E37_79B9_7F4A_7C15)).luma();
            assert!((0.25..0.95).contains(&l), "{l}");
        }
        assert_eq!(hsl(0.0, 1.0, 0.5), Color::rgb(255, 0, 0));
        assert_eq!(hsl(120.0, 1.0, 0.5), Color::rgb(0, 255, 0));
    }
}
