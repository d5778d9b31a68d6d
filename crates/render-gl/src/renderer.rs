//! The GL side: uploads a [`Scene`] and draws it in a handful of indexed draw calls.
//!
//! Every rectangle, line and glyph becomes a quad of four vertices, drawn as two triangles
//! through one shared index buffer, not one instance each: software rasterizers run an
//! instanced draw instance by instance (Chromium's SwiftShader: 10,000 quads 126 ms a frame
//! instanced, 23 ms as triangles; docs/PERFORMANCE.md).
//!
//! State is set at the start of every `render` and unbound at the end (program, vertex
//! array, buffers, texture, scissor), so other GL users on the context, such as egui,
//! coexist without surprises.

use std::sync::Arc;

use glow::HasContext;

use crate::atlas::{AtlasPacker, AtlasSlot};
use crate::scene::{Batch, LineInstance, RectInstance, Scene};
use crate::shaders::{self, ShaderVersion};
use crate::text::{Fonts, GlyphKey};
use crate::{gl_err, RenderError};

/// A rectangle's or line's vertex: x, y (f32), rgba.
const SOLID_STRIDE: i32 = 12;
/// A glyph's vertex: x, y (f32), the atlas pixel (two u16), rgba.
const GLYPH_STRIDE: i32 = 16;
/// Indices a quad: two triangles, `0 1 2` and `2 1 3` of its corners (top-left, top-right,
/// bottom-left, bottom-right), the diagonal a triangle strip of the four would have.
const QUAD_INDICES: usize = 6;

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

/// The index buffer every pipeline's vertex array draws through: quad `q`'s two triangles
/// over vertices `4q..4q + 4`, for `quads` quads, so a range of quads is a range of indices.
struct QuadIndices {
    buffer: glow::Buffer,
    quads: usize,
}

/// Draws scenes. Buffers and the glyph atlas persist and grow; a steady state allocates
/// nothing per frame.
pub struct Renderer {
    gl: Arc<glow::Context>,
    /// Rectangles' quads, then lines'.
    solid: Pipeline,
    glyphs: Pipeline,
    quads: QuadIndices,
    u_atlas: Option<glow::UniformLocation>,
    u_tex: Option<glow::UniformLocation>,
    atlas: glow::Texture,
    packer: AtlasPacker,
    /// Scratch: each glyph's vertices with atlas coordinates, reused between frames.
    glyph_bytes: Vec<u8>,
    solid_bytes: Vec<u8>,
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
    /// A program and its vertex array, whose attributes (`attrs`, `stride` bytes a vertex)
    /// read its own vertex buffer and whose indices are `quads`'.
    unsafe fn new(
        gl: &glow::Context,
        (vs, fs): (&str, &str),
        (attrs, stride): (Attrs, i32),
        quads: glow::Buffer,
    ) -> Result<Pipeline, RenderError> {
        let program = compile(gl, vs, fs)?;
        let vao = gl
            .create_vertex_array()
            .map_err(gl_err("creating a vertex array"))?;
        let vbo = gl.create_buffer().map_err(gl_err("creating a buffer"))?;
        gl.bind_vertex_array(Some(vao));
        gl.bind_buffer(glow::ARRAY_BUFFER, Some(vbo));
        gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(quads));
        for &(loc, n, ty, norm, off) in attrs {
            gl.enable_vertex_attrib_array(loc);
            gl.vertex_attrib_pointer_f32(loc, n, ty, norm, stride, off);
        }
        gl.bind_vertex_array(None);
        gl.bind_buffer(glow::ARRAY_BUFFER, None);
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

impl QuadIndices {
    unsafe fn new(gl: &glow::Context) -> Result<QuadIndices, RenderError> {
        let buffer = gl.create_buffer().map_err(gl_err("creating a buffer"))?;
        Ok(QuadIndices { buffer, quads: 0 })
    }

    /// Makes room for `n` quads. The buffer is bound through `vao` (a vertex array holds
    /// its index buffer's binding; every pipeline's holds this one, so all see it grow).
    unsafe fn reserve(&mut self, gl: &glow::Context, vao: glow::VertexArray, n: usize) {
        if n <= self.quads {
            return;
        }
        let quads = n.next_power_of_two().max(1024);
        let mut bytes = Vec::with_capacity(quads * QUAD_INDICES * 4);
        for q in 0..quads as u32 {
            for i in [0, 1, 2, 2, 1, 3] {
                bytes.extend_from_slice(&(4 * q + i).to_le_bytes());
            }
        }
        gl.bind_vertex_array(Some(vao));
        gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(self.buffer));
        gl.buffer_data_u8_slice(glow::ELEMENT_ARRAY_BUFFER, &bytes, glow::STATIC_DRAW);
        gl.bind_vertex_array(None);
        self.quads = quads;
    }
}

/// Attribute layout: (location, components, type, normalized, byte offset).
type Attrs = &'static [(u32, i32, u32, bool, i32)];
const SOLID_ATTRS: Attrs = &[
    (0, 2, glow::FLOAT, false, 0),
    (2, 4, glow::UNSIGNED_BYTE, true, 8),
];
const GLYPH_ATTRS: Attrs = &[
    (0, 2, glow::FLOAT, false, 0),
    (1, 2, glow::UNSIGNED_SHORT, false, 8),
    (2, 4, glow::UNSIGNED_BYTE, true, 12),
];

/// Appends a quad's four corners (top-left, top-right, bottom-left, bottom-right, as
/// `QUAD_INDICES` reads them), each with `tail` (its colour, or atlas pixel and colour).
fn push_quad<const N: usize>(out: &mut Vec<u8>, corners: [[f32; 2]; 4], tails: [[u8; N]; 4]) {
    for ([x, y], tail) in corners.into_iter().zip(tails) {
        out.extend_from_slice(&x.to_le_bytes());
        out.extend_from_slice(&y.to_le_bytes());
        out.extend_from_slice(&tail);
    }
}

impl Renderer {
    /// Creates the pipelines on a current context.
    ///
    /// # Safety
    /// `gl` must be current on this thread for every call on the renderer.
    pub unsafe fn new(
        gl: Arc<glow::Context>,
        version: ShaderVersion,
    ) -> Result<Renderer, RenderError> {
        let solid = (
            &*shaders::vertex(version, shaders::SOLID_VS),
            &*shaders::fragment(version, shaders::SOLID_FS),
        );
        let glyph = (
            &*shaders::vertex(version, shaders::GLYPH_VS),
            &*shaders::fragment(version, shaders::GLYPH_FS),
        );
        let quads = QuadIndices::new(&gl)?;
        let solid = Pipeline::new(&gl, solid, (SOLID_ATTRS, SOLID_STRIDE), quads.buffer)?;
        let glyphs = Pipeline::new(&gl, glyph, (GLYPH_ATTRS, GLYPH_STRIDE), quads.buffer)?;
        let u_atlas = gl.get_uniform_location(glyphs.program, "u_atlas");
        let u_tex = gl.get_uniform_location(glyphs.program, "u_tex");
        let atlas = gl.create_texture().map_err(gl_err("creating a texture"))?;
        let mut r = Renderer {
            gl,
            solid,
            glyphs,
            quads,
            u_atlas,
            u_tex,
            atlas,
            packer: AtlasPacker::new(1024),
            glyph_bytes: Vec::new(),
            solid_bytes: Vec::new(),
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

    /// The scene's glyphs as quads with their atlas coordinates. If the atlas fills up, it
    /// is cleared (and grown, up to 4096²) and the frame's glyphs are placed again.
    unsafe fn glyph_vertices(&mut self, scene: &Scene, fonts: &Fonts) {
        for attempt in 0..4 {
            self.glyph_bytes.clear();
            let mut full = false;
            for g in &scene.glyphs {
                // One quad per scene glyph, always, so batch ranges stay aligned; a glyph with
                // no bitmap becomes an empty quad.
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
                let (x0, y0) = (g.x as f32, g.y as f32);
                let (x1, y1) = (x0 + size[0], y0 + size[1]);
                let c = g.rgba.to_le_bytes();
                let tail = |u: u16, v: u16| {
                    let [u, v] = [u.to_le_bytes(), v.to_le_bytes()];
                    [u[0], u[1], v[0], v[1], c[0], c[1], c[2], c[3]]
                };
                let (u0, v0, u1, v1) = (s.x, s.y, s.x + s.w, s.y + s.h);
                push_quad(
                    &mut self.glyph_bytes,
                    [[x0, y0], [x1, y0], [x0, y1], [x1, y1]],
                    [tail(u0, v0), tail(u1, v0), tail(u0, v1), tail(u1, v1)],
                );
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

        solid_vertices(&scene.rects, &scene.lines, &mut self.solid_bytes);
        self.glyph_vertices(scene, fonts);
        self.solid.upload(&gl, &self.solid_bytes);
        self.glyphs.upload(&gl, &self.glyph_bytes);
        // Lines' quads follow the rectangles'.
        let line_base = scene.rects.len() as u32;
        let most = (scene.rects.len() + scene.lines.len()).max(scene.glyphs.len());
        self.quads.reserve(&gl, self.solid.vao, most);

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
        for p in [&self.solid, &self.glyphs] {
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
        let placed = (self.glyph_bytes.len() / (4 * GLYPH_STRIDE) as usize) as u32;
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
            draw(&gl, &self.solid, rects);
            draw(&gl, &self.solid, (lines.0 + line_base, lines.1 + line_base));
            let glyphs = (glyphs.0.min(placed), glyphs.1.min(placed));
            draw(&gl, &self.glyphs, glyphs);
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
        self.solid.delete(&self.gl);
        self.glyphs.delete(&self.gl);
        self.gl.delete_buffer(self.quads.buffer);
        self.gl.delete_texture(self.atlas);
    }
}

/// The rectangles' quads as vertices, then the lines', into `out`.
fn solid_vertices(rs: &[RectInstance], ls: &[LineInstance], out: &mut Vec<u8>) {
    out.clear();
    for r in rs {
        let (x0, x1) = (r.x, r.x + r.w);
        let (y0, y1) = (r.y as f32, r.y as f32 + r.h as f32);
        let c = r.rgba.to_le_bytes();
        push_quad(out, [[x0, y0], [x1, y0], [x0, y1], [x1, y1]], [c; 4]);
    }
    for l in ls {
        // Across the segment by half its width on each side.
        let (dx, dy) = (l.x1 - l.x0, l.y1 - l.y0);
        let len = (dx * dx + dy * dy).sqrt();
        let (ux, uy) = if len > 0.0 {
            (dx / len, dy / len)
        } else {
            (1.0, 0.0)
        };
        let (nx, ny) = (-uy * l.width * 0.5, ux * l.width * 0.5);
        let corners = [
            [l.x0 - nx, l.y0 - ny],
            [l.x1 - nx, l.y1 - ny],
            [l.x0 + nx, l.y0 + ny],
            [l.x1 + nx, l.y1 + ny],
        ];
        push_quad(out, corners, [l.rgba.to_le_bytes(); 4]);
    }
}

/// One indexed draw of `range` (first, end) of a pipeline's quads.
unsafe fn draw(gl: &glow::Context, p: &Pipeline, range: (u32, u32)) {
    let (first, end) = range;
    if end <= first {
        return;
    }
    gl.use_program(Some(p.program));
    gl.bind_vertex_array(Some(p.vao));
    let count = (end - first) as usize * QUAD_INDICES;
    let offset = first as usize * QUAD_INDICES * 4;
    gl.draw_elements(
        glow::TRIANGLES,
        count as i32,
        glow::UNSIGNED_INT,
        offset as i32,
    );
}
