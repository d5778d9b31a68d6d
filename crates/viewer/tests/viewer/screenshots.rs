//! Screenshot tests: render real traces headless and check what a person would see.

use render_gl::Color;
use std::path::PathBuf;

use spall_test_support::{corpus, fixture};
use spall_viewer::screenshot::{prepare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::timeline::draw::fill_for;
use spall_viewer::view::drawn::{drawn_tracks, first_spans_y};
use spall_viewer::view::layout::RowKind;
use spall_viewer::view::state::ViewState;
use spall_viewer::view::timeline::TRACKS_TOP;
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

/// A screenshot's settings: the defaults at `width` x `height`.
pub(crate) fn settings(width: u32, height: u32, kind: ThemeKind, select: Option<&str>) -> Shot {
    Shot {
        width,
        height,
        view: None,
        select: select.map(str::to_string),
        flows: spall_viewer::view::timeline::FlowMode::Selected,
        theme: Theme::new(kind),
        scale: 1.0,
        mode: spall_viewer::view::flame::Mode::Timeline,
        thread: None,
        sandwich: None,
        flame_up: false,
    }
}

fn shot(l: &Loaded, kind: ThemeKind, select: Option<&str>) -> (ViewState, Img) {
    let s = prepare(l, &settings(1000, 500, kind, select)).unwrap();
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
        let (x, y, w, h) = s.timeline.span_box(&l, r).unwrap();
        let row = s.timeline.layout.lane_row(r.thread, r.depth).unwrap();
        assert_eq!(y, TRACKS_TOP + row.y, "{name}");
        // A pixel near the right end of the box, clear of the label, has the name's colour.
        let c = img.at(x + w - 3.0, y + h / 2.0);
        assert_eq!(
            c,
            fill_for(&l, &s.timeline, l.trace.span(r).name),
            "{name} at depth {depth}"
        );
        // Below the deepest lane there is only background.
    }
    let (_, y, _, h) = s.timeline.span_box(&l, find(&l, "gamma")).unwrap();
    assert_eq!(img.at(500.0, y + h + 30.0), s.timeline.theme.background);
    // The header rows carry the header colour.
    let header = s
        .timeline
        .layout
        .rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Thread(_)))
        .unwrap();
    assert_eq!(
        img.at(990.0, TRACKS_TOP + header.y + 5.0),
        s.timeline.theme.thread_header
    );
}

#[test]
fn labels_are_drawn_inside_their_boxes() {
    let l = load("edge/simple.json");
    let (s, img) = shot(&l, ThemeKind::Light, None);
    let r = find(&l, "alpha");
    let (x, y, _, h) = s.timeline.span_box(&l, r).unwrap();
    let fill = fill_for(&l, &s.timeline, l.trace.span(r).name);
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
    let r = s.timeline.selected_span().expect("--select found gamma");
    assert_eq!(l.trace.str(l.trace.span(r).name), "gamma");
    let (x, y, w, _) = s.timeline.span_box(&l, r).unwrap();
    // The outline sits just outside the box: its top edge is the selection colour.
    assert_eq!(img.at(x + w / 2.0, y - 1.0), s.timeline.theme.selection);
    // Unselected, the same pixel is not.
    let (_, plain) = shot(&l, ThemeKind::Light, None);
    assert_ne!(plain.at(x + w / 2.0, y - 1.0), s.timeline.theme.selection);
}

#[test]
fn the_dark_theme_differs_from_the_light_one() {
    let l = load("real/chrome116_devtools_export.json");
    let (ls, light) = shot(&l, ThemeKind::Light, None);
    let (ds, dark) = shot(&l, ThemeKind::Dark, None);
    assert_ne!(ls.timeline.theme.background, ds.timeline.theme.background);
    // The bottom corner: the background, or the warning banner when the load warned.
    let bottom = 499.0;
    let corner = |th: &Theme| match l.warnings {
        Some(_) => th.warning,
        None => th.background,
    };
    assert_eq!(light.at(999.0, bottom), corner(&ls.timeline.theme));
    assert_eq!(dark.at(999.0, bottom), corner(&ds.timeline.theme));
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
            flows: spall_viewer::view::timeline::FlowMode::Selected,
            theme: Theme::new(ThemeKind::Light),
            scale: 1.0,
            mode: spall_viewer::view::flame::Mode::Timeline,
            thread: None,
            sandwich: None,
            flame_up: false,
        },
    )
    .unwrap();
    let (a, b) = s.timeline.viewport.visible();
    assert!(b - a < 2_200_000 && a <= l.trace.start_ns() + 1, "{a}..{b}");
    s.timeline.hover = s.timeline.selected.map(|r| (r, 100.0, 100.0));
    let px = render(&l, &s).unwrap();
    assert_eq!(px.len(), 800 * 300 * 4);
    // Something was drawn: spans in many colours over much of the picture, and the
    // selected frame's outline.
    let pixels = || px.chunks_exact(4).map(|p| [p[0], p[1], p[2], p[3]]);
    let drawn = pixels()
        .filter(|&p| p != s.timeline.theme.background.0)
        .count();
    assert!(
        drawn > 800 * 300 / 4,
        "{drawn} pixels differ from the background"
    );
    let colours: std::collections::HashSet<[u8; 4]> = pixels().collect();
    assert!(colours.len() >= 16, "{} colours", colours.len());
    assert!(
        pixels().any(|p| p == s.timeline.theme.selection.0),
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
    let last = s.timeline.layout.lane_row(main, lanes - 1).unwrap();
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
    let (x, y, w, h) = s.timeline.span_box(&l, r).unwrap();
    assert!(w > 20.0, "{w}");
    assert_eq!(
        img.at(x + w - 3.0, y + h / 2.0),
        fill_for(&l, &s.timeline, t.span(r).name)
    );
    // Right under the lanes: the thread's own counter.
    let next = (s.timeline.layout.rows.iter())
        .position(|row| row.y > last.y)
        .map(|k| s.timeline.layout.rows[k].kind);
    let Some(RowKind::Counter(g)) = next else {
        panic!("after the lanes: {next:?}");
    };
    assert_eq!(t.str(l.kinds.counters[g as usize].name), "thread_time");
}

/// Every real trace: the shared corpus's (`../shared/corpus`: real/, real/clang/, spall/)
/// and tests/fixtures/real's. A missing corpus skips its part with a note, and fails with
/// `SPALL_REQUIRE_CORPUS=1` (set by `.ci/run`).
fn real_traces() -> Vec<PathBuf> {
    let mut dirs = vec![fixture("real"), fixture("real/clang")];
    if let Some(root) = corpus("every_real_trace_opens_on_a_threads_spans") {
        dirs.extend(["real", "real/clang", "spall"].map(|d| root.join(d)));
    }
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let trace = [".json", ".json.gz", ".pftrace.gz", ".pftrace", ".spall"];
            if path.is_file() && trace.iter().any(|e| name.ends_with(e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The first screen shows the work: at 1600x900 and default settings, every real trace
/// with spans shows a thread's spans starting in the top half of the window, not a screen
/// of process counters or async tracks of one slice each above them. Computed from the
/// layout, without GL (the binary's `--layout-json` is checked below).
#[test]
fn every_real_trace_opens_on_a_threads_spans() {
    let traces = real_traces();
    assert!(traces.len() >= 15, "{traces:?}");
    let mut loaded: Vec<(String, Loaded)> = (traces.iter())
        .map(|path| {
            let l = spall_viewer::load(Some(path), &Default::default(), |_, _| {})
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path.display().to_string(), l)
        })
        .collect();
    loaded.push((
        "LTHI with 60 startup metrics".into(),
        with_startup_metrics(60),
    ));
    let mut bad = Vec::new();
    for (name, l) in &loaded {
        if l.trace.span_count() == 0 {
            continue;
        }
        let s = prepare(l, &settings(1600, 900, ThemeKind::Light, None)).unwrap();
        let tracks = drawn_tracks(l, &s);
        let first = tracks.iter().find(|d| d.kind == "spans" && d.visible);
        // The page reports the same (data-first-spans).
        let y = first_spans_y(&s);
        match first {
            Some(d) if d.y < 450.0 && y == Some(d.y) => {}
            _ => bad.push(format!("{name}: first spans at {first:?}, {y:?}")),
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Chrome's LTHI excerpt with `n` startup metrics in the browser process, as a Chrome
/// startup trace writes them (`Startup.LoadTime.ProcessCreateToApplicationStart`, ...):
/// async slices of a name each, so a track of one slice each.
fn with_startup_metrics(n: u32) -> Loaded {
    let text = std::fs::read_to_string(fixture("real/demo_lthi_excerpt.json")).unwrap();
    let head = text.trim_end().strip_suffix("]}").unwrap();
    let metrics: String = (0..n)
        .map(|i| {
            let (a, b) = (456441003108u64 + 100 * i as u64, 456441013108u64 + 90 * i as u64);
            let e = |ph: &str, ts: u64| {
                format!(
                    r#",{{"cat":"startup","pid":89414,"tid":1287,"ts":{ts},"ph":"{ph}","name":"Startup.Metric{i}","id":"0x{i:x}"}}"#
                )
            };
            e("b", a) + &e("e", b)
        })
        .collect();
    let json = format!("{head}{metrics}]}}");
    let trace = trace_model::load_bytes(json.as_bytes()).unwrap();
    let t = trace.async_tracks().iter();
    assert!(t.filter(|a| a.rows.concat().len() == 1).count() >= n as usize);
    Loaded::new(trace, "metrics.json".into())
}

/// `--layout-json` writes what the layout draws: on Chromium's startup trace (protobuf),
/// the browser's main thread's spans high on the first screen, its async track under its
/// threads.
#[test]
fn the_binary_writes_the_drawn_tracks_as_json() {
    let dir = std::env::temp_dir();
    let png = dir.join(format!("spall-layout-{}.png", std::process::id()));
    let json = dir.join(format!("spall-layout-{}.json", std::process::id()));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
        .arg(fixture("real/chromium148_startup.pftrace.gz"))
        .args(["--screenshot", png.to_str().unwrap()])
        .args(["--layout-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&png).ok();
    std::fs::remove_file(&json).ok();
    assert_eq!(
        (v["width"].as_f64(), v["height"].as_f64()),
        (Some(1600.0), Some(900.0))
    );
    let tracks = v["tracks"].as_array().unwrap();
    let field = |t: &serde_json::Value, k: &str| t[k].as_str().unwrap_or("").to_string();
    let main = (tracks.iter())
        .find(|t| field(t, "kind") == "spans" && field(t, "name") == "CrBrowserMain")
        .expect("CrBrowserMain's spans");
    assert!(main["visible"].as_bool().unwrap());
    assert!(main["y"].as_f64().unwrap() < 450.0, "{main}");
    assert_eq!(field(main, "process"), "5338");
    // Above it only the browser's header and instants (the process track's instants sit in
    // its async track, among its slices, as trace_processor nests them); its async track
    // after its threads.
    let above: Vec<String> = (tracks.iter())
        .take_while(|t| !std::ptr::eq(*t, main))
        .map(|t| field(t, "kind"))
        .collect();
    assert_eq!(
        above,
        ["global_instants", "process", "thread", "thread_instants"]
    );
    let of_browser = |k: &str| {
        (tracks.iter())
            .filter(|t| field(t, "process") == "5338" && field(t, "kind") == k)
            .map(|t| t["y"].as_f64().unwrap())
            .collect::<Vec<f64>>()
    };
    let last_thread = of_browser("spans").into_iter().fold(0.0, f64::max);
    // Its two async tracks (one of them the process track's instants) under one header.
    let asyncs = [of_browser("async"), of_browser("async_group")].concat();
    assert!(!asyncs.is_empty() && asyncs.iter().all(|&y| y > last_thread));
    // Without --screenshot the option is refused.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spall"))
        .args(["--layout-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success());
}
