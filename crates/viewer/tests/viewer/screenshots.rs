//! Screenshot tests: render real traces headless and check what a person would see.

use render_gl::Color;
use spall_test_support::fixture;
use spall_viewer::screenshot::{prepare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::timeline::draw::fill_for;
use spall_viewer::view::layout::RowKind;
use spall_viewer::view::state::{ViewState, TRACKS_TOP};
use spall_viewer::Loaded;
use trace_model::SpanRef;

fn load(rel: &str) -> Loaded {
    spall_viewer::load(Some(&fixture(rel)), &Default::default(), |_, _| {}).unwrap()
}

struct Img {
    px: Vec<u8>,
    w: u32,
}

impl Img {
    fn at(&self, x: f32, y: f32) -> Color {
        let i = ((y as u32 * self.w + x as u32) * 4) as usize;
        Color([self.px[i], self.px[i + 1], self.px[i + 2], self.px[i + 3]])
    }
}

fn shot(l: &Loaded, kind: ThemeKind, select: Option<&str>) -> (ViewState, Img) {
    let s = prepare(
        l,
        &Shot {
            width: 1000,
            height: 500,
            view: None,
            select: select.map(str::to_string),
            flows: spall_viewer::view::state::FlowMode::Selected,
            theme: Theme::new(kind),
            scale: 1.0,
            mode: spall_viewer::view::flame::Mode::Timeline,
            thread: None,
            sandwich: None,
            flame_up: false,
        },
    )
    .unwrap();
    let px = render(l, &s).expect("headless rendering works");
    (s, Img { px, w: 1000 })
}

fn find(l: &Loaded, name: &str) -> SpanRef {
    let t = &l.trace;
    for (ti, th) in t.threads().iter().enumerate() {
        for (d, lane) in th.lanes.iter().enumerate() {
            if let Some(i) = lane.name.iter().position(|&n| t.str(n) == name) {
                return SpanRef {
                    thread: ti as u32,
                    depth: d as u32,
                    index: i as u32,
                };
            }
        }
    }
    panic!("no span {name}")
}

#[test]
fn spans_sit_in_their_rows_with_their_colours() {
    // edge/simple.json: alpha [0,14] > beta [1,13] > gamma [2,7], epsilon [7,7] (µs).
    let l = load("edge/simple.json");
    let (s, img) = shot(&l, ThemeKind::Light, None);
    for (name, depth) in [("alpha", 0), ("beta", 1), ("gamma", 2)] {
        let r = find(&l, name);
        assert_eq!(r.depth, depth);
        let (x, y, w, h) = s.span_box(&l, r).unwrap();
        let row = s.layout.lane_row(r.thread, r.depth).unwrap();
        assert_eq!(y, TRACKS_TOP + row.y, "{name}");
        // A pixel near the right end of the box, clear of the label, has the name's colour.
        let c = img.at(x + w - 3.0, y + h / 2.0);
        assert_eq!(
            c,
            fill_for(&l, &s, l.trace.span(r).name),
            "{name} at depth {depth}"
        );
        // Below the deepest lane there is only background.
    }
    let (_, y, _, h) = s.span_box(&l, find(&l, "gamma")).unwrap();
    assert_eq!(img.at(500.0, y + h + 30.0), s.theme.background);
    // The header rows carry the header colour.
    let header = s
        .layout
        .rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Thread(_)))
        .unwrap();
    assert_eq!(
        img.at(990.0, TRACKS_TOP + header.y + 5.0),
        s.theme.thread_header
    );
}

#[test]
fn labels_are_drawn_inside_their_boxes() {
    let l = load("edge/simple.json");
    let (s, img) = shot(&l, ThemeKind::Light, None);
    let r = find(&l, "alpha");
    let (x, y, _, h) = s.span_box(&l, r).unwrap();
    let fill = fill_for(&l, &s, l.trace.span(r).name);
    let mut text_px = 0;
    for px in (x as u32 + 2)..(x as u32 + 60) {
        for py in (y as u32 + 2)..(y + h - 2.0) as u32 {
            if img.at(px as f32, py as f32) != fill {
                text_px += 1;
            }
        }
    }
    assert!(
        text_px > 20,
        "the label 'alpha' should draw ink in its box ({text_px} pixels)"
    );
}

#[test]
fn the_selection_is_highlighted() {
    let l = load("edge/simple.json");
    let (s, img) = shot(&l, ThemeKind::Light, Some("gamma"));
    let r = s.selected_span().expect("--select found gamma");
    assert_eq!(l.trace.str(l.trace.span(r).name), "gamma");
    let (x, y, w, _) = s.span_box(&l, r).unwrap();
    // The outline sits just outside the box: its top edge is the selection colour.
    assert_eq!(img.at(x + w / 2.0, y - 1.0), s.theme.selection);
    // Unselected, the same pixel is not.
    let (_, plain) = shot(&l, ThemeKind::Light, None);
    assert_ne!(plain.at(x + w / 2.0, y - 1.0), s.theme.selection);
}

#[test]
fn the_dark_theme_differs_from_the_light_one() {
    let l = load("real/chrome116_devtools_export.json");
    let (ls, light) = shot(&l, ThemeKind::Light, None);
    let (ds, dark) = shot(&l, ThemeKind::Dark, None);
    assert_ne!(ls.theme.background, ds.theme.background);
    // The bottom corner: the background, or the warning banner when the load warned.
    let bottom = 499.0;
    let corner = |th: &Theme| match l.warnings {
        Some(_) => th.warning,
        None => th.background,
    };
    assert_eq!(light.at(999.0, bottom), corner(&ls.theme));
    assert_eq!(dark.at(999.0, bottom), corner(&ds.theme));
    let differing = light
        .px
        .chunks(4)
        .zip(dark.px.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(differing > 1000 * 500 / 2, "{differing} pixels differ");
    // Light is mostly light, dark mostly dark.
    let mean = |img: &Img| img.px.iter().map(|&b| b as u64).sum::<u64>() / img.px.len() as u64;
    assert!(
        mean(&light) > 180 && mean(&dark) < 120,
        "{} {}",
        mean(&light),
        mean(&dark)
    );
}

#[test]
fn spall_files_render_and_a_range_view_zooms() {
    let l = load("spall/odingengine_v3.spall");
    let mut s = prepare(
        &l,
        &Shot {
            width: 800,
            height: 300,
            view: Some((Some(0), Some(2_000_000))),
            select: Some("Frame".into()),
            flows: spall_viewer::view::state::FlowMode::Selected,
            theme: Theme::new(ThemeKind::Light),
            scale: 1.0,
            mode: spall_viewer::view::flame::Mode::Timeline,
            thread: None,
            sandwich: None,
            flame_up: false,
        },
    )
    .unwrap();
    let (a, b) = s.viewport.visible();
    assert!(b - a < 2_200_000 && a <= l.trace.start_ns() + 1, "{a}..{b}");
    s.hover = s.selected.map(|r| (r, 100.0, 100.0));
    let px = render(&l, &s).unwrap();
    assert_eq!(px.len(), 800 * 300 * 4);
    // Something was drawn: spans in many colours over much of the picture, and the
    // selected frame's outline.
    let pixels = || px.chunks_exact(4).map(|p| [p[0], p[1], p[2], p[3]]);
    let drawn = pixels().filter(|&p| p != s.theme.background.0).count();
    assert!(
        drawn > 800 * 300 / 4,
        "{drawn} pixels differ from the background"
    );
    let colours: std::collections::HashSet<[u8; 4]> = pixels().collect();
    assert!(colours.len() >= 16, "{} colours", colours.len());
    assert!(
        pixels().any(|p| p == s.theme.selection.0),
        "no selection outline"
    );
}

#[test]
fn the_binary_writes_a_png_and_reports_bad_input() {
    let out = std::env::temp_dir().join(format!("spall-shot-{}.png", std::process::id()));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
        .arg(fixture("edge/simple.json"))
        .args([
            "--screenshot",
            out.to_str().unwrap(),
            "--size",
            "640x360",
            "--theme",
            "dark",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
    let info = dec.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (640, 360));
    std::fs::remove_file(&out).ok();

    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
        .args(["/no/such/trace.json", "--screenshot", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
        .arg(fixture("edge/simple.json"))
        .args([
            "--screenshot",
            out.to_str().unwrap(),
            "--select",
            "nonexistent",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no span"));
}

#[test]
fn a_chromium_protobuf_trace_opens_on_its_main_threads_spans() {
    // Chromium 148's startup trace (Perfetto protobuf): the first screen shows the
    // browser's main thread with its spans, its thread_time counter under them (not 29
    // counters stacked above every thread).
    let l = load("real/chromium148_startup.pftrace.gz");
    let (s, img) = shot(&l, ThemeKind::Light, None);
    let t = &l.trace;
    let main = (t.threads().iter())
        .position(|th| th.name.is_some_and(|n| t.str(n) == "CrBrowserMain"))
        .expect("CrBrowserMain") as u32;
    let lanes = t.threads()[main as usize].lanes.len() as u32;
    let last = s.layout.lane_row(main, lanes - 1).unwrap();
    assert!(
        TRACKS_TOP + last.y + last.h < 500.0,
        "its lanes are on the first screen"
    );
    // The longest top-level span is drawn in its colour.
    let lane = &t.threads()[main as usize].lanes[0];
    let i = (0..lane.len()).max_by_key(|&i| lane.dur[i]).unwrap();
    let r = SpanRef {
        thread: main,
        depth: 0,
        index: i as u32,
    };
    let (x, y, w, h) = s.span_box(&l, r).unwrap();
    assert!(w > 20.0, "{w}");
    assert_eq!(
        img.at(x + w - 3.0, y + h / 2.0),
        fill_for(&l, &s, t.span(r).name)
    );
    // Right under the lanes: the thread's own counter.
    let next = (s.layout.rows.iter())
        .position(|row| row.y > last.y)
        .map(|k| s.layout.rows[k].kind);
    let Some(RowKind::Counter(g)) = next else {
        panic!("after the lanes: {next:?}");
    };
    assert_eq!(t.str(l.kinds.counters[g as usize].name), "thread_time");
}
