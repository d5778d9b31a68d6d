//! PNG encoding of read-back frames (no GL, so it builds for every target).

/// Encodes RGBA pixels (rows from the top) as a PNG. Writing files is the caller's business
/// (the viewer writes them atomically).
pub fn encode_png(
    out: impl std::io::Write,
    width: u32,
    height: u32,
    rgba: &[u8],
) -> std::io::Result<()> {
    let mut enc = png::Encoder::new(out, width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(rgba).map_err(std::io::Error::other)?;
    w.finish().map_err(std::io::Error::other)
}
