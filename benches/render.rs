//! render-gl: building a scene on the CPU, and drawing it on the GPU (llvmpipe on CI).
//!
//! ```sh
//! cargo bench -p render-gl --bench render
//! ```
//!
//! The frame is a timeline-like 1920×1080 scene: 20,000 rectangles in rows, and 2,000
//! labels of about 20 characters, truncated to their boxes. Baseline in the same run: a
//! frame that only clears the screen, the fixed cost of a draw on this machine.

#![allow(unsafe_code)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use render_gl::{Color, Fonts, Headless, Renderer, Scene, ShaderVersion, VAlign};

const NAMES: [&str; 8] = [
    "render_frame_main_loop",
    "physics::integrate",
    "update_world_state",
    "ui::layout_pass",
    "audio::mix_buffers",
    "net::poll_sockets",
    "gc::mark_and_sweep",
    "io::read_file_async",
];

/// Colours are looked up per name, as the viewer does (computed once, not per box).
fn palette() -> Vec<Color> {
    (0..97u64)
        .map(|i| Color::from_hash(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        .collect()
}

fn build(scene: &mut Scene, fonts: &mut Fonts, palette: &[Color]) {
    scene.begin(1920, 1080, Color::rgb(250, 250, 252));
    let rows = 50;
    let per_row = 20_000 / rows;
    let mut labels = 0;
    for r in 0..rows {
        let y = 10.0 + r as f32 * 21.0;
        for i in 0..per_row {
            let x = i as f32 * (1920.0 / per_row as f32);
            let w = 1920.0 / per_row as f32 - 0.5;
            let name = NAMES[(r + i) % NAMES.len()];
            let c = palette[(r * 31 + i) % 97];
            scene.rect(x, y, w, 20.0, c);
            // Every tenth box is wide enough in this layout's story to carry a label.
            if i % 10 == 0 && labels < 2000 {
                labels += 1;
                if let Some(t) = fonts.truncate(name, 12.0, 60.0) {
                    scene.text(
                        fonts,
                        x + 2.0,
                        y + 10.0,
                        12.0,
                        VAlign::Center,
                        Color::BLACK,
                        &t,
                    );
                }
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut fonts = Fonts::new();
    let palette = palette();
    let mut scene = Scene::new();
    build(&mut scene, &mut fonts, &palette);
    eprintln!(
        "{} rects, {} glyphs, {} batches",
        scene.rects.len(),
        scene.glyphs.len(),
        scene.batches.len()
    );
    c.bench_function("scene/build_20k_rects_2k_labels", |b| {
        b.iter(|| {
            build(&mut scene, &mut fonts, &palette);
            black_box(scene.instance_count())
        })
    });

    let headless = match Headless::new(1920, 1080) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("no headless GL ({e}); skipping the GPU benchmarks");
            return;
        }
    };
    eprintln!("GL renderer: {}", headless.renderer_name());
    let gl = headless.gl().clone();
    let mut renderer = unsafe { Renderer::new(gl.clone(), ShaderVersion::Gl33) }.unwrap();
    headless.bind();
    let mut g = c.benchmark_group("gpu");
    g.sample_size(20);
    let mut empty = Scene::new();
    g.bench_function("draw_clear_only_1920x1080", |b| {
        b.iter(|| unsafe {
            empty.begin(1920, 1080, Color::WHITE);
            renderer.render(&mut empty, &fonts);
            glow::HasContext::finish(&*gl);
        })
    });
    build(&mut scene, &mut fonts, &palette);
    g.bench_function("draw_20k_rects_2k_labels_1920x1080", |b| {
        b.iter(|| unsafe {
            renderer.render(&mut scene, &fonts);
            glow::HasContext::finish(&*gl);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
