//! Renders a sample frame headless and writes it as a PNG: a quick look at render-gl.
//!
//! ```sh
//! cargo run --release -p render-gl --example render-demo -- demo.png
//! ```

#![allow(unsafe_code)]

use render_gl::{Color, Fonts, Headless, Renderer, Scene, ShaderVersion, VAlign};

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "render-demo.png".into());
    let (w, h) = (640u32, 240u32);
    let headless = Headless::new(w, h).expect("headless EGL context");
    let mut renderer =
        unsafe { Renderer::new(headless.gl().clone(), ShaderVersion::Gl33) }.expect("renderer");
    let mut fonts = Fonts::new();
    let mut scene = Scene::new();
    scene.begin(w, h, Color::rgb(250, 250, 252));
    let names = [
        "main",
        "update_world",
        "physics::step",
        "render_frame",
        "submit",
        "wait_for_gpu",
    ];
    for depth in 0..4 {
        let y = 20.0 + depth as f32 * 22.0;
        let mut x = 10.0 + depth as f32 * 30.0;
        for (i, name) in names.iter().enumerate().skip(depth) {
            let wdt = 200.0 - depth as f32 * 40.0 - i as f32 * 10.0;
            let c = Color::from_hash((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            scene.rect(x, y, wdt, 20.0, c);
            if let Some(label) = fonts.truncate(name, 13.0, wdt - 8.0) {
                scene.text(
                    &mut fonts,
                    x + 4.0,
                    y + 10.0,
                    13.0,
                    VAlign::Center,
                    Color::BLACK,
                    &label,
                );
            }
            x += wdt + 4.0;
        }
    }
    let pts: Vec<(f32, f32)> = (0..60)
        .map(|i| {
            (
                10.0 + i as f32 * 10.0,
                200.0 - ((i as f32 * 0.3).sin() * 25.0),
            )
        })
        .collect();
    scene.polyline(&pts, 1.5, Color::rgb(200, 60, 60));
    scene.arrow(400.0, 120.0, 560.0, 160.0, 1.5, 9.0, Color::BLACK);
    scene.outline(380.0, 110.0, 200.0, 70.0, 1.0, Color::rgb(40, 40, 40));
    headless.bind();
    unsafe { renderer.render(&mut scene, &fonts) };
    let file = std::io::BufWriter::new(std::fs::File::create(&out).expect("create the png"));
    render_gl::encode_png(file, w, h, &headless.read_rgba()).expect("png");
    eprintln!(
        "{out}: {} ({} instances)",
        headless.renderer_name(),
        scene.instance_count()
    );
}
