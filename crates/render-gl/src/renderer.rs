//! The GL side: uploads a [`Scene`] and draws it in a handful of instanced draw calls.
//!
//! State is set at the start of every `render` and unbound at the end (program, vertex
//! array, buffers, texture, scissor), so other GL users on the context, such as egui,
//! coexist without surprises.

use std::sync::Arc;

use glow::HasContext;

use crate::atlas::{AtlasPacker, AtlasSlot};
use crate::scene::{Batch, Scene};
use crate::shaders::{self, ShaderVersion};
use crate::text::{Fonts, GlyphKey};
use crate::{gl_err, RenderError};

const RECT_STRIDE: i32 = 16;
const LINE_STRIDE: i32 = 24;
const GLYPH_STRIDE: i32 = 28;

/// Where a glyph's bitmap is, if it can be placed.
enum Slot {
    Placed(AtlasSlot),
    /// The glyph draws nothing (no outline).
    NoBitmap,
    /// The atlas has no room left.
    Full,
}

struct Pipeline {
    program: glow::Program,
    vao: glow::VertexArray,
    vbo: glow::Buffer,
    capacity: usize,
    u_screen: Option<glow::UniformLocation>,
}

/// Draws scenes. Buffers and the glyph atlas persist and grow; a steady state allocates
/// nothing per frame.
pub struct Renderer {
    gl: Arc<glow::Context>,
    rects: Pipeline,
    lines: Pipeline,
    glyphs: Pipeline,
    u_atlas: Option<glow::UniformLocation>,
    u_tex: Option<glow::UniformLocation>,
    atlas: glow::Texture,
    packer: AtlasPacker,
    /// Scratch: glyph instances with atlas coordinates, reused between frames.
    glyph_bytes: Vec<u8>,
    rect_bytes: Vec<u8>,
    line_bytes: Vec<u8>,
    version: ShaderVersion,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("atlas_size", &self.packer.size)
            .finish_non_exhaustive()
    }
}

unsafe fn compile(gl: &glow::Context, vs: &str, fs: &str) -> Result<glow::Program, RenderError> {
    let program = gl.create_program().map_err(gl_err("creating a program"))?;
    let mut shaders = Vec::new();
    let stages = [
        (glow::VERTEX_SHADER, vs, "vertex"),
        (glow::FRAGMENT_SHADER, fs, "fragment"),
    ];
    for (kind, src, stage) in stages {
        let s = gl
            .create_shader(kind)
            .map_err(gl_err("creating a shader"))?;
        gl.shader_source(s, src);
        gl.compile_shader(s);
        if !gl.get_shader_compile_status(s) {
            let log = gl.get_shader_info_log(s);
            return Err(RenderError::Shader { stage, log });
        }
        gl.attach_shader(program, s);
        shaders.push(s);
    }
    gl.link_program(program);
    if !gl.get_program_link_status(program) {
        let log = gl.get_program_info_log(program);
        return Err(RenderError::Shader { stage: "link", log });
    }
    for s in shaders {
        gl.detach_shader(program, s);
        gl.delete_shader(s);
    }
    Ok(program)
}

impl Pipeline {
    unsafe fn new(gl: &glow::Context, vs: &str, fs: &str) -> Result<Pipeline, RenderError> {
        let program = compile(gl, vs, fs)?;
        let vao = gl
            .create_vertex_array()
            .map_err(gl_err("creating a vertex array"))?;
        let vbo = gl.create_buffer().map_err(gl_err("creating a buffer"))?;
        Ok(Pipeline {
            program,
            vao,
            vbo,
            capacity: 0,
            u_screen: gl.get_uniform_location(program, "u_screen"),
        })
    }

    /// Uploads `bytes`, growing the buffer when needed (orphaning it otherwise).
    unsafe fn upload(&mut self, gl: &glow::Context, bytes: &[u8]) {
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(self.vbo));
        if bytes.len() > self.capacity {
            self.capacity = bytes.len().next_power_of_two().max(4096);
        }
        gl.buffer_data_size(glow::ARRAY_BUFFER, self.capacity as i32, glow::STREAM_DRAW);
        if !bytes.is_empty() {
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, 0, bytes);
        }
    }

    unsafe fn delete(&self, gl: &glow::Context) {
        gl.delete_program(self.program);
        gl.delete_vertex_array(self.vao);
        gl.delete_buffer(self.vbo);
    }
}

/// Attribute layout: (location, components, type, normalized, byte offset).
type Attrs = &'static [(u32, i32, u32, bool, i32)];
const RECT_ATTRS: Attrs = &[
    (0, 2, glow::FLOAT, false, 0),
    (1, 2, glow::UNSIGNED_SHORT, false, 8),
    (2, 4, glow::UNSIGNED_BYTE, true, 12),
];
const LINE_ATTRS: Attrs = &[
    (0, 4, glow::FLOAT, false, 0),
    (1, 1, glow::FLOAT, false, 16),
    (2, 4, glow::UNSIGNED_BYTE, true, 20),
];
const GLYPH_ATTRS: Attrs = &[
    (0, 4, glow::FLOAT, false, 0),
    (1, 4, glow::UNSIGNED_SHORT, false, 16),
    (2, 4, glow::UNSIGNED_BYTE, true, 24),
];

impl Renderer {
    /// Creates the pipelines on a current context.
    ///
    /// # Safety
    /// `gl` must be current on this thread for every call on the renderer.
    pub unsafe fn new(
        gl: Arc<glow::Context>,
        version: ShaderVersion,
    ) -> Result<Renderer, RenderError> {
        let v = |b| shaders::vertex(version, b);
        let f = |b| shaders::fragment(version, b);
        let rects = Pipeline::new(&gl, &v(shaders::RECT_VS), &f(shaders::SOLID_FS))?;
        let lines = Pipeline::new(&gl, &v(shaders::LINE_VS), &f(shaders::SOLID_FS))?;
        let glyphs = Pipeline::new(&gl, &v(shaders::GLYPH_VS), &f(shaders::GLYPH_FS))?;
        let u_atlas = gl.get_uniform_location(glyphs.program, "u_atlas");
        let u_tex = gl.get_uniform_location(glyphs.program, "u_tex");
        let atlas = gl.create_texture().map_err(gl_err("creating a texture"))?;
        let mut r = Renderer {
            gl,
            rects,
            lines,
            glyphs,
            u_atlas,
            u_tex,
            atlas,
            packer: AtlasPacker::new(1024),
            glyph_bytes: Vec::new(),
            rect_bytes: Vec::new(),
            line_bytes: Vec::new(),
            version,
        };
        r.reset_atlas(1024);
        Ok(r)
    }

    /// The GL context the renderer draws with.
    pub fn gl(&self) -> &Arc<glow::Context> {
        &self.gl
    }

    unsafe fn reset_atlas(&mut self, size: u32) {
        let gl = &self.gl;
        gl.bind_texture(glow::TEXTURE_2D, Some(self.atlas));
        let zeros = vec![0u8; (size * size) as usize];
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            glow::R8 as i32,
            size as i32,
            size as i32,
            0,
            glow::RED,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(&zeros)),
        );
        for (k, v) in [
            (glow::TEXTURE_MIN_FILTER, glow::NEAREST),
            (glow::TEXTURE_MAG_FILTER, glow::NEAREST),
            (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, k, v as i32);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        self.packer = AtlasPacker::new(size);
    }

    /// The atlas slot of a glyph, rasterising and uploading it on first use.
    unsafe fn slot(&mut self, fonts: &Fonts, key: GlyphKey) -> Slot {
        if let Some(s) = self.packer.slots.get(&key) {
            return Slot::Placed(*s);
        }
        let Some((b, data)) = fonts.rasterize(key) else {
            return Slot::NoBitmap;
        };
        let Some(slot) = self.packer.alloc(b.width as u32, b.height as u32) else {
            return Slot::Full;
        };
        let gl = &self.gl;
        gl.bind_texture(glow::TEXTURE_2D, Some(self.atlas));
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.tex_sub_image_2d(
            glow::TEXTURE_2D,
            0,
            slot.x as i32,
            slot.y as i32,
            slot.w as i32,
            slot.h as i32,
            glow::RED,
            glow::UNSIGNED_BYTE,
            glow::PixelUnpackData::Slice(Some(&data)),
        );
        self.packer.slots.insert(key, slot);
        Slot::Placed(slot)
    }

    /// Resolves the scene's glyphs to atlas coordinates. If the atlas fills up, it is
    /// cleared (and grown, up to 4096²) and the frame's glyphs are placed again.
    unsafe fn glyph_instances(&mut self, scene: &Scene, fonts: &Fonts) {
        for attempt in 0..4 {
            self.glyph_bytes.clear();
            let mut full = false;
            for g in &scene.glyphs {
                // One instance per scene glyph, always, so batch ranges stay aligned; a glyph
                // with no bitmap becomes an empty quad.
                let (s, size) = match self.slot(fonts, g.key) {
                    Slot::Placed(s) => (s, [g.w as f32, g.h as f32]),
                    Slot::NoBitmap => (
                        AtlasSlot {
                            x: 0,
                            y: 0,
                            w: 0,
                            h: 0,
                        },
                        [0.0, 0.0],
                    ),
                    Slot::Full => {
                        full = true;
                        break;
                    }
                };
                let b = &mut self.glyph_bytes;
                for v in [g.x as f32, g.y as f32, size[0], size[1]] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                for v in [s.x, s.y, s.x + s.w, s.y + s.h] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                b.extend_from_slice(&g.rgba.to_le_bytes());
            }
            if !full {
                return;
            }
            let size = (self.packer.size * 2).min(4096);
            if attempt == 3 {
                return;
            }
            self.reset_atlas(size);
        }
    }

    /// Draws `scene` into the bound framebuffer, which is `scene.width × scene.height`.
    ///
    /// # Safety
    /// The renderer's context must be current on this thread.
    pub unsafe fn render(&mut self, scene: &mut Scene, fonts: &Fonts) {
        scene.finish();
        let gl = self.gl.clone();
        let (w, h) = (scene.width as i32, scene.height as i32);

        self.rect_bytes.clear();
        for r in &scene.rects {
            self.rect_bytes.extend_from_slice(&r.x.to_le_bytes());
            self.rect_bytes.extend_from_slice(&r.w.to_le_bytes());
            self.rect_bytes.extend_from_slice(&r.y.to_le_bytes());
            self.rect_bytes.extend_from_slice(&r.h.to_le_bytes());
            self.rect_bytes.extend_from_slice(&r.rgba.to_le_bytes());
        }
        self.line_bytes.clear();
        for l in &scene.lines {
            for v in [l.x0, l.y0, l.x1, l.y1, l.width] {
                self.line_bytes.extend_from_slice(&v.to_le_bytes());
            }
            self.line_bytes.extend_from_slice(&l.rgba.to_le_bytes());
        }
        self.glyph_instances(scene, fonts);
        self.rects.upload(&gl, &self.rect_bytes);
        self.lines.upload(&gl, &self.line_bytes);
        self.glyphs.upload(&gl, &self.glyph_bytes);

        gl.viewport(0, 0, w, h);
        gl.disable(glow::DEPTH_TEST);
        gl.disable(glow::CULL_FACE);
        gl.disable(glow::SCISSOR_TEST);
        if self.version == ShaderVersion::Gl33 {
            gl.disable(glow::FRAMEBUFFER_SRGB);
        }
        gl.color_mask(true, true, true, true);
        let [r, g, b, a] = scene.clear.to_f32();
        gl.clear_color(r, g, b, a);
        gl.clear(glow::COLOR_BUFFER_BIT);
        gl.enable(glow::BLEND);
        gl.blend_equation(glow::FUNC_ADD);
        gl.blend_func_separate(
            glow::SRC_ALPHA,
            glow::ONE_MINUS_SRC_ALPHA,
            glow::ONE,
            glow::ONE_MINUS_SRC_ALPHA,
        );
        for p in [&self.rects, &self.lines, &self.glyphs] {
            gl.use_program(Some(p.program));
            gl.uniform_2_f32(p.u_screen.as_ref(), w as f32, h as f32);
        }
        gl.use_program(Some(self.glyphs.program));
        gl.uniform_2_f32(
            self.u_atlas.as_ref(),
            self.packer.size as f32,
            self.packer.size as f32,
        );
        gl.uniform_1_i32(self.u_tex.as_ref(), 0);
        gl.active_texture(glow::TEXTURE0);
        gl.bind_texture(glow::TEXTURE_2D, Some(self.atlas));

        // Glyphs that could not be placed are skipped; keep ranges consistent.
        let placed = (self.glyph_bytes.len() / GLYPH_STRIDE as usize) as u32;
        for batch in &scene.batches {
            let Batch {
                clip,
                rects,
                lines,
                glyphs,
            } = *batch;
            match clip {
                Some(c) => {
                    gl.enable(glow::SCISSOR_TEST);
                    gl.scissor(c.x, h - (c.y + c.h), c.w.max(0), c.h.max(0));
                }
                None => gl.disable(glow::SCISSOR_TEST),
            }
            draw(&gl, &self.rects, RECT_ATTRS, RECT_STRIDE, rects);
            draw(&gl, &self.lines, LINE_ATTRS, LINE_STRIDE, lines);
            let glyphs = (glyphs.0.min(placed), glyphs.1.min(placed));
            draw(&gl, &self.glyphs, GLYPH_ATTRS, GLYPH_STRIDE, glyphs);
        }

        gl.disable(glow::SCISSOR_TEST);
        gl.bind_vertex_array(None);
        gl.bind_buffer(glow::ARRAY_BUFFER, None);
        gl.bind_texture(glow::TEXTURE_2D, None);
        gl.use_program(None);
    }

    /// Frees the GL objects.
    ///
    /// # Safety
    /// The renderer's context must be current on this thread.
    pub unsafe fn destroy(&self) {
        self.rects.delete(&self.gl);
        self.lines.delete(&self.gl);
        self.glyphs.delete(&self.gl);
        self.gl.delete_texture(self.atlas);
    }
}

/// One instanced draw of `range` (first, end) of a pipeline's instances.
unsafe fn draw(gl: &glow::Context, p: &Pipeline, attrs: Attrs, stride: i32, range: (u32, u32)) {
    let (first, end) = range;
    if end <= first {
        return;
    }
    gl.use_program(Some(p.program));
    gl.bind_vertex_array(Some(p.vao));
    gl.bind_buffer(glow::ARRAY_BUFFER, Some(p.vbo));
    let base = first as i32 * stride;
    for &(loc, n, ty, norm, off) in attrs {
        gl.enable_vertex_attrib_array(loc);
        gl.vertex_attrib_pointer_f32(loc, n, ty, norm, stride, base + off);
        gl.vertex_attrib_divisor(loc, 1);
    }
    gl.draw_arrays_instanced(glow::TRIANGLE_STRIP, 0, 4, (end - first) as i32);
}
