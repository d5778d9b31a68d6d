//! A hand-written `glow` renderer: instanced rectangles, glyph-atlas text and lines, on a
//! window or offscreen. It knows nothing about traces.
//!
//! This crate is being built; see the project's issue "render-gl".
