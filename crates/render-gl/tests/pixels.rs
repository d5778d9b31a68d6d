#![allow(unsafe_code)] // Renderer calls are unsafe: each test owns its current context.

//! Pixel tests on a headless EGL context (Mesa llvmpipe on CI): exact colours at chosen
//! pixels, text inside its box and nowhere else, and byte-identical re-renders.

use render_gl::{Color, Fonts, Headless, Renderer, Scene, ShaderVersion, VAlign};

const W: u32 = 200;
const H: u32 = 120;
const BG: Color = Color::WHITE;
const RED: Color = Color::rgb(220, 20, 30);
const BLUE: Color = Color::rgb(20, 40, 200);

struct Rig {
    headless: Headless,
    renderer: Renderer,
    fonts: Fonts,
}

impl Rig {
    fn new(version: ShaderVersion) -> Rig {
        let headless = Headless::with_version(W, H, version).expect("a headless EGL context");
        let renderer =
            unsafe { Renderer::new(headless.gl().clone(), version) }.expect("shaders compile");
        Rig {
            headless,
            renderer,
            fonts: Fonts::new(),
        }
    }

    fn draw(&mut self, build: impl FnOnce(&mut Scene, &mut Fonts)) -> Image {
        let mut scene = Scene::new();
        scene.begin(W, H, BG);
        build(&mut scene, &mut self.fonts);
        self.headless.bind();
        unsafe { self.renderer.render(&mut scene, &self.fonts) };
        Image(self.headless.read_rgba())
    }
}

struct Image(Vec<u8>);

impl Image {
    fn at(&self, x: u32, y: u32) -> Color {
        let i = ((y * W + x) * 4) as usize;
        Color([self.0[i], self.0[i + 1], self.0[i + 2], self.0[i + 3]])
    }
}

#[test]
fn rectangles_lines_clips_and_text() {
    let mut rig = Rig::new(ShaderVersion::Gl33);
    eprintln!("renderer: {}", rig.headless.renderer_name());

    // Rectangles: exact colours, exact edges, later ones on top.
    let img = rig.draw(|s, _| {
        s.rect(10.0, 10.0, 20.0, 20.0, RED);
        s.rect(25.0, 25.0, 20.0, 20.0, BLUE);
        s.rect(60.0, 10.0, 20.0, 20.0, Color::BLACK.with_alpha(128));
        s.outline(100.0, 10.0, 30.0, 20.0, 2.0, RED);
    });
    assert_eq!(img.at(15, 15), RED);
    assert_eq!(img.at(10, 10), RED);
    assert_eq!(img.at(29, 24), RED);
    assert_eq!(
        img.at(30, 15),
        BG,
        "x = 30 is past the red rect's right edge"
    );
    assert_eq!(img.at(9, 15), BG);
    assert_eq!(img.at(26, 26), BLUE, "drawn later, on top");
    assert_eq!(img.at(44, 44), BLUE);
    assert_eq!(img.at(45, 44), BG);
    let grey = img.at(70, 20);
    assert!(
        (126..=128).contains(&grey.0[0]) && grey.0[0] == grey.0[1],
        "{grey:?}"
    );
    assert_eq!(img.at(100, 10), RED, "outline corner");
    assert_eq!(img.at(101, 20), RED, "outline left side");
    assert_eq!(img.at(115, 20), BG, "outline interior stays empty");
    assert_eq!(img.at(129, 29), RED, "outline bottom-right");

    // Lines and arrows.
    let img = rig.draw(|s, _| {
        s.line(10.0, 50.0, 90.0, 50.0, 2.0, BLUE);
        s.line(150.0, 40.0, 150.0, 100.0, 2.0, RED);
        s.arrow(20.0, 100.0, 100.0, 100.0, 2.0, 10.0, Color::BLACK);
    });
    assert_eq!(img.at(50, 49), BLUE);
    assert_eq!(img.at(50, 50), BLUE);
    assert_eq!(img.at(50, 47), BG);
    assert_eq!(img.at(50, 52), BG);
    assert_eq!(img.at(95, 49), BG, "past the line's end");
    assert_eq!(img.at(149, 70), RED);
    assert_eq!(img.at(152, 70), BG);
    assert_eq!(img.at(60, 100), Color::BLACK);
    // The arrow head's barbs reach back and sideways from the tip.
    assert_eq!(img.at(93, 96), Color::BLACK, "upper barb");
    assert_eq!(img.at(93, 103), Color::BLACK, "lower barb");

    // Rectangles and lines in one frame, each where it was put (they share a buffer).
    let img = rig.draw(|s, _| {
        s.rect(10.0, 10.0, 20.0, 20.0, RED);
        s.line(10.0, 50.0, 90.0, 50.0, 2.0, BLUE);
    });
    assert_eq!(img.at(15, 15), RED);
    assert_eq!(img.at(50, 50), BLUE);
    assert_eq!(img.at(50, 47), BG);

    // Clipping: a full-frame rect clipped to a corner, then unclipped.
    let img = rig.draw(|s, _| {
        s.push_clip(0.0, 0.0, 50.0, 40.0);
        s.rect(0.0, 0.0, W as f32, H as f32, RED);
        s.pop_clip();
        s.rect(100.0, 100.0, 10.0, 10.0, BLUE);
    });
    assert_eq!(img.at(49, 39), RED);
    assert_eq!(img.at(50, 39), BG);
    assert_eq!(img.at(49, 40), BG);
    assert_eq!(img.at(105, 105), BLUE);

    // Text: ink inside each label's box, none outside it.
    let labels = [
        ("render_frame", 10.0, 20.0, 14.0),
        ("Ag|jy", 120.0, 70.0, 24.0),
    ];
    let mut boxes = Vec::new();
    let img = rig.draw(|s, fonts| {
        for (text, x, y, px) in labels {
            let w = s.text(fonts, x, y, px, VAlign::Top, Color::BLACK, text);
            assert_eq!(w, fonts.measure(text, px));
            boxes.push((x, y, w, fonts.line_height(px)));
        }
    });
    for (i, &(x, y, w, h)) in boxes.iter().enumerate() {
        let inside = |px: u32, py: u32| {
            (px as f32) >= x - 1.0
                && (px as f32) < x + w + 1.0
                && (py as f32) >= y - 1.0
                && (py as f32) < y + h + 1.0
        };
        let mut ink_inside = 0;
        for py in 0..H {
            for px in 0..W {
                let c = img.at(px, py);
                if c != BG {
                    if inside(px, py) {
                        ink_inside += 1;
                    } else if !boxes.iter().any(|&(bx, by, bw, bh)| {
                        (px as f32) >= bx - 1.0
                            && (px as f32) < bx + bw + 1.0
                            && (py as f32) >= by - 1.0
                            && (py as f32) < by + bh + 1.0
                    }) {
                        panic!("ink at ({px}, {py}) outside every label box");
                    }
                }
            }
        }
        assert!(ink_inside > 30, "label {i} drew {ink_inside} pixels");
    }
}

#[test]
fn rendering_the_same_scene_twice_is_byte_identical() {
    let mut rig = Rig::new(ShaderVersion::Gl33);
    let build = |s: &mut Scene, f: &mut Fonts| {
        for i in 0..200 {
            let x = (i * 7 % 190) as f32;
            let y = (i * 13 % 110) as f32;
            s.rect(x, y, 9.5, 6.0, Color::from_hash(i as u64 * 0x9E37_79B9));
        }
        s.arrow(5.0, 5.0, 150.0, 90.0, 1.5, 8.0, Color::BLACK);
        s.text(
            f,
            5.0,
            60.0,
            13.0,
            VAlign::Center,
            Color::BLACK,
            "deterministic 0.123 ms…",
        );
    };
    let a = rig.draw(build);
    let b = rig.draw(build);
    assert!(a.0 == b.0, "second render differs");
    // A fresh renderer (empty atlas) gives the same bytes too.
    let mut other = Rig::new(ShaderVersion::Gl33);
    assert!(other.draw(build).0 == a.0, "a new renderer differs");
}

#[test]
fn the_es3_shaders_compile_and_draw() {
    // OpenGL ES 3.0 / WebGL2 flavour of the same shaders, on an ES context.
    let mut rig = match std::panic::catch_unwind(|| Rig::new(ShaderVersion::Gles30)) {
        Ok(r) => r,
        Err(_) => panic!("no GLES 3.0 context: Mesa provides one through EGL"),
    };
    let img = rig.draw(|s, f| {
        s.rect(10.0, 10.0, 20.0, 20.0, RED);
        s.text(f, 40.0, 10.0, 14.0, VAlign::Top, Color::BLACK, "es");
    });
    assert_eq!(img.at(15, 15), RED);
    assert_eq!(img.at(5, 5), BG);
}

#[test]
fn png_output_round_trips() {
    let mut rig = Rig::new(ShaderVersion::Gl33);
    let img = rig.draw(|s, _| s.rect(0.0, 0.0, 10.0, 10.0, RED));
    let path = std::env::temp_dir().join(format!("render-gl-{}.png", std::process::id()));
    render_gl::encode_png(std::fs::File::create(&path).unwrap(), W, H, &img.0).unwrap();
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (W, H));
    assert_eq!(&buf[..4], &RED.0);
    std::fs::remove_file(path).ok();
}
