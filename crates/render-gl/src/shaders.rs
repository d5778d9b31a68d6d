//! GLSL for the three pipelines. One body, two headers: desktop GL 3.3 core, or
//! OpenGL ES 3.0 / WebGL2.

/// Which GLSL dialect to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderVersion {
    /// `#version 330 core` (OpenGL 3.3 core and later).
    Gl33,
    /// `#version 300 es` (OpenGL ES 3.0, WebGL2).
    Gles30,
}

impl ShaderVersion {
    /// The lines that start every shader of this dialect: `#version`, and for ES the
    /// default precisions.
    pub fn header(self) -> &'static str {
        match self {
            ShaderVersion::Gl33 => "#version 330 core\n",
            ShaderVersion::Gles30 => {
                "#version 300 es\nprecision highp float;\nprecision highp int;\n"
            }
        }
    }
}

/// Pixel coordinates (top-left origin) to clip space.
const TO_NDC: &str = r#"
uniform vec2 u_screen;
vec4 to_ndc(vec2 p) {
    return vec4(p.x / u_screen.x * 2.0 - 1.0, 1.0 - p.y / u_screen.y * 2.0, 0.0, 1.0);
}
"#;

/// A rectangle's or line's corner, its quad laid out on the CPU.
pub const SOLID_VS: &str = r#"
layout(location = 0) in vec2 a_pos;
layout(location = 2) in vec4 a_color;
out vec4 v_color;
void main() {
    gl_Position = to_ndc(a_pos);
    v_color = a_color;
}
"#;

pub const SOLID_FS: &str = r#"
in vec4 v_color;
out vec4 o_color;
void main() {
    o_color = v_color;
}
"#;

/// A glyph's corner, with its atlas pixel.
pub const GLYPH_VS: &str = r#"
layout(location = 0) in vec2 a_pos;
layout(location = 1) in vec2 a_uv;
layout(location = 2) in vec4 a_color;
uniform vec2 u_atlas;
out vec2 v_uv;
out vec4 v_color;
void main() {
    gl_Position = to_ndc(a_pos);
    v_uv = a_uv / u_atlas;
    v_color = a_color;
}
"#;

pub const GLYPH_FS: &str = r#"
in vec2 v_uv;
in vec4 v_color;
uniform sampler2D u_tex;
out vec4 o_color;
void main() {
    float a = texture(u_tex, v_uv).r;
    o_color = vec4(v_color.rgb, v_color.a * a);
}
"#;

/// The full source of a vertex shader.
pub fn vertex(version: ShaderVersion, body: &str) -> String {
    format!("{}{TO_NDC}{body}", version.header())
}

/// The full source of a fragment shader.
pub fn fragment(version: ShaderVersion, body: &str) -> String {
    format!("{}{body}", version.header())
}
