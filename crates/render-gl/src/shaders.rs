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

pub const RECT_VS: &str = r#"
layout(location = 0) in vec2 a_xw;
layout(location = 1) in vec2 a_yh;
layout(location = 2) in vec4 a_color;
out vec4 v_color;
void main() {
    // Triangle strip corners from the vertex id: (0,0) (1,0) (0,1) (1,1).
    vec2 c = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    vec2 p = vec2(a_xw.x + c.x * a_xw.y, a_yh.x + c.y * a_yh.y);
    gl_Position = to_ndc(p);
    v_color = a_color;
}
"#;

pub const LINE_VS: &str = r#"
layout(location = 0) in vec4 a_p0p1;
layout(location = 1) in float a_width;
layout(location = 2) in vec4 a_color;
out vec4 v_color;
void main() {
    vec2 p0 = a_p0p1.xy;
    vec2 p1 = a_p0p1.zw;
    vec2 d = p1 - p0;
    float len = length(d);
    vec2 u = len > 0.0 ? d / len : vec2(1.0, 0.0);
    vec2 n = vec2(-u.y, u.x) * (a_width * 0.5);
    float along = float(gl_VertexID & 1);
    float side = float((gl_VertexID >> 1) & 1) * 2.0 - 1.0;
    vec2 p = mix(p0, p1, along) + n * side;
    gl_Position = to_ndc(p);
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

pub const GLYPH_VS: &str = r#"
layout(location = 0) in vec4 a_rect;
layout(location = 1) in vec4 a_uv;
layout(location = 2) in vec4 a_color;
uniform vec2 u_atlas;
out vec2 v_uv;
out vec4 v_color;
void main() {
    vec2 c = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
    vec2 p = a_rect.xy + c * a_rect.zw;
    gl_Position = to_ndc(p);
    v_uv = mix(a_uv.xy, a_uv.zw, c) / u_atlas;
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
