//! Pixel tests for every kind of event besides spans: counters, instants, async slices, flows
//! and CPU samples, on real corpus traces and on generated ones whose tracks are known.

use render_gl::Color;
use spall_test_support::fixture;
use spall_viewer::screenshot::{prepare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::layout::RowKind;
use spall_viewer::view::state::ViewState;
use spall_viewer::view::timeline::FlowMode;
use spall_viewer::Loaded;

fn from_bytes(bytes: &[u8]) -> Loaded {
    Loaded::new(trace_model::load_bytes(bytes).unwrap(), "test".into())
}

fn from_fixture(rel: &str) -> Loaded {
    spall_viewer::load(Some(&fixture(rel)), &Default::default(), |_, _| {}).unwrap()
}

/// The fixture without the events of the given phases (its JSON otherwise unchanged).
fn without(rel: &str, phases: &str) -> Loaded {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = match v.get_mut("traceEvents") {
        Some(e) => e,
        None => &mut v,
    };
    events.as_array_mut().unwrap().retain(|e| {
        let ph = e.get("ph").and_then(|p| p.as_str()).unwrap_or("");
        !phases.contains(ph) || ph.is_empty()
    });
    from_bytes(serde_json::to_string(&v).unwrap().as_bytes())
}

struct Img {
    px: Vec<u8>,
    w: u32,
    h: u32,
}

impl Img {
    fn at(&self, x: f32, y: f32) -> Color {
        let (x, y) = (x.round() as u32, y.round() as u32);
        let i = ((y * self.w + x) * 4) as usize;
        Color([self.px[i], self.px[i + 1], self.px[i + 2], self.px[i + 3]])
    }

    /// Whether any pixel within `r` of (x, y) has colour `c`.
    fn near(&self, x: f32, y: f32, r: i32, c: Color) -> bool {
        (-r..=r).any(|dx| {
            (-r..=r).any(|dy| {
                let (px, py) = (x as i32 + dx, y as i32 + dy);
                px >= 0
                    && py >= 0
                    && (px as u32) < self.w
                    && (py as u32) < self.h
                    && self.at(px as f32, py as f32) == c
            })
        })
    }
}

/// A screenshot's settings: the light theme's defaults at `w` x `h`.
fn settings(w: u32, h: u32, flows: FlowMode, select: Option<&str>) -> Shot {
    Shot {
        width: w,
        height: h,
        view: None,
        select: select.map(str::to_string),
        flows,
        theme: Theme::new(ThemeKind::Light),
        scale: 1.0,
        mode: spall_viewer::view::flame::Mode::Timeline,
        thread: None,
        sandwich: None,
        flame_up: false,
    }
}

fn shot_with(
    l: &Loaded,
    w: u32,
    h: u32,
    flows: FlowMode,
    select: Option<&str>,
) -> (ViewState, Img) {
    let s = prepare(l, &settings(w, h, flows, select)).unwrap();
    let px = render(l, &s).expect("headless rendering works");
    (s, Img { px, w, h })
}

fn shot(l: &Loaded) -> (ViewState, Img) {
    shot_with(l, 1000, 700, FlowMode::Selected, None)
}

/// The screen rectangle (y, h) of the first row of a kind.
fn row(s: &ViewState, want: impl Fn(RowKind) -> bool) -> (f32, f32) {
    let r = s
        .timeline
        .layout
        .rows
        .iter()
        .find(|r| want(r.kind))
        .expect("the row is laid out");
    (s.timeline.tracks_top() + r.y - s.timeline.scroll_y, r.h)
}

fn differing(a: &Img, b: &Img) -> usize {
    a.px.chunks(4)
        .zip(b.px.chunks(4))
        .filter(|(x, y)| x != y)
        .count()
}

#[test]
fn each_kind_changes_the_picture() {
    for (file, phases, flows) in [
        ("real/catapult_simple_trace.json", "C", FlowMode::Selected),
        (
            "real/catapult_instant_events.json",
            "iI",
            FlowMode::Selected,
        ),
        (
            "real/catapult_nestable_async.json",
            "bne",
            FlowMode::Selected,
        ),
        ("real/catapult_flow_simple.json", "stf", FlowMode::All),
        (
            "real/chrome116_devtools_export.json",
            "P",
            FlowMode::Selected,
        ),
    ] {
        let with = from_fixture(file);
        let (_, a) = shot_with(&with, 1000, 700, flows, None);
        let (_, b) = shot_with(&without(file, phases), 1000, 700, flows, None);
        let n = differing(&a, &b);
        assert!(n > 200, "{file}: {phases} events changed only {n} pixels");
    }
}

#[test]
fn a_counter_is_a_step_graph_on_its_scale() {
    // Values 10, 1, 5, 1, 10 at 826, 832, 839, 848, 854 us.
    let l = from_fixture("real/catapult_simple_trace.json");
    let (s, img) = shot(&l);
    let (y, h) = row(&s, |k| matches!(k, RowKind::Counter(_)));
    let g = &l.kinds.counters[0];
    assert_eq!((g.min, g.max), (1.0, 10.0));
    let x = |us: i64| s.timeline.viewport.x(us * 1000) as f32;
    let bg = s.timeline.theme.background;
    // Under value 10 the column is filled near the top of the row; under value 1 it is not.
    let near_top = y + 8.0;
    assert_ne!(img.at(x(829), near_top), bg, "value 10 reaches the top");
    assert_eq!(img.at(x(833), near_top), bg, "value 1 does not");
    assert_ne!(
        img.at(x(833), y + h - 4.0),
        bg,
        "value 1 is filled near the bottom"
    );
    // Before the first sample nothing is drawn.
    assert_eq!(img.at(x(823), y + h - 6.0), bg);
}

#[test]
fn a_one_sample_spike_survives_zooming_out() {
    let mut json = String::from("[");
    for i in 0..200_000 {
        let v = if i == 123_457 { 100 } else { 1 };
        json.push_str(&format!(
            r#"{{"ph":"C","name":"mem","ts":{i},"pid":1,"tid":1,"args":{{"v":{v}}}}},"#
        ));
    }
    json.push_str(r#"{"ph":"X","name":"a","ts":0,"dur":200000,"pid":1,"tid":1}]"#);
    let l = from_bytes(json.as_bytes());
    let (s, img) = shot(&l);
    let (y, _) = row(&s, |k| matches!(k, RowKind::Counter(_)));
    let x = s.timeline.viewport.x(l.trace.start_ns() + 123_457_000) as f32;
    assert!(
        s.timeline.viewport.ns_per_px > 100_000.0,
        "many samples per pixel"
    );
    let series = Theme::new(ThemeKind::Light).span_fill(spall_viewer::loaded::name_color("mem"));
    assert!(
        img.near(x, y + 6.0, 1, series),
        "the spike's column reaches the top"
    );
    assert!(
        !img.near(x + 40.0, y + 6.0, 1, series),
        "its neighbours do not"
    );
}

#[test]
fn instants_are_diamonds_on_their_tracks() {
    let l = from_fixture("real/catapult_instant_events.json");
    let (s, img) = shot(&l);
    let t = &l.trace;
    for (i, inst) in t.instants().iter().enumerate() {
        let kind = match inst.scope {
            trace_model::InstantScope::Thread => RowKind::ThreadInstants(inst.thread),
            trace_model::InstantScope::Process => RowKind::ProcessInstants(inst.process),
            trace_model::InstantScope::Global => RowKind::GlobalInstants,
        };
        let (y, h) = row(&s, |k| k == kind);
        let x = s.timeline.viewport.x(inst.ts) as f32;
        let c = s.timeline.theme.span_fill(l.colors[inst.name.0 as usize]);
        assert!(
            img.near(x, y + h / 2.0, 2, c),
            "instant {i} ({}) is drawn at its time",
            t.str(inst.name)
        );
        // Hovering it picks it.
        assert_eq!(
            s.timeline.hit(&l, x, y + h / 2.0),
            Some(spall_viewer::kinds::Pick::Instant(i as u32))
        );
    }
}

#[test]
fn overlapping_async_operations_get_their_own_rows() {
    let l = from_fixture("real/catapult_nestable_async.json");
    let t = &l.trace;
    let (mut s, _) = shot(&l);
    // A process's async tracks are folded into one group until it is opened.
    assert!(s
        .timeline
        .layout
        .rows
        .iter()
        .any(|r| matches!(r.kind, RowKind::AsyncGroup(_))));
    s.timeline.collapsed.async_groups.fill(false);
    s.timeline.relayout(&l);
    let (w, h) = (s.timeline.width as u32, s.timeline.height as u32);
    let img = Img {
        px: render(&l, &s).expect("headless rendering works"),
        w,
        h,
    };
    let bar = t
        .async_tracks()
        .iter()
        .position(|a| t.str(a.name) == "REQUEST_BAR")
        .unwrap() as u32;
    let rows = &t.async_tracks()[bar as usize].rows;
    assert!(rows.len() >= 3, "nested and overlapping slices take rows");
    // Every slice of every row is drawn in its colour, in its row.
    for (r, ids) in rows.iter().enumerate() {
        let (y, h) = row(&s, |k| {
            k == RowKind::AsyncRow {
                track: bar,
                row: r as u32,
            }
        });
        for &id in ids {
            let a = &t.async_slices()[id as usize];
            let c = s.timeline.theme.span_fill(l.colors[a.name.0 as usize]);
            let x = if a.end > a.start {
                (s.timeline.viewport.x(a.start) as f32 + s.timeline.viewport.x(a.end) as f32) / 2.0
            } else {
                s.timeline.viewport.x(a.start) as f32
            };
            assert!(
                img.near(x, y + h / 2.0, 2, c),
                "{} in row {r}",
                t.str(a.name)
            );
        }
    }
}

#[test]
fn a_flow_arrow_joins_two_known_slices() {
    let l = from_fixture("real/catapult_flow_simple.json");
    let t = &l.trace;
    assert!(!t.flow_links().is_empty());
    let link = t.flow_links()[0];
    let from = t.str(t.span(link.from).name).to_string();
    let (s, img) = shot_with(&l, 1000, 500, FlowMode::Selected, Some(&from));
    assert_eq!(
        s.timeline.selected_span(),
        Some(link.from),
        "--select picks the flow's source"
    );
    let anchor = |r: trace_model::SpanRef, out: bool| {
        let row = s.timeline.layout.lane_row(r.thread, r.depth).unwrap();
        let sp = t.span(r);
        let x = s.timeline.viewport.x(if out { sp.end() } else { sp.start }) as f32;
        (
            x,
            s.timeline.tracks_top() + row.y - s.timeline.scroll_y + row.h / 2.0,
        )
    };
    let (a, b) = (anchor(link.from, true), anchor(link.to, false));
    // The curve's middle is the midpoint of its ends (its control points are symmetric).
    let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
    assert!(
        img.near(mid.0, mid.1, 2, s.timeline.theme.flow),
        "the arrow passes {mid:?}"
    );
    // With flows off, it is gone.
    let (_, off) = shot_with(&l, 1000, 500, FlowMode::None, Some(&from));
    assert!(!off.near(mid.0, mid.1, 2, s.timeline.theme.flow));
}

#[test]
fn cpu_samples_get_a_track_coloured_by_leaf_frame() {
    let l = from_fixture("real/chrome116_devtools_export.json");
    let t = &l.trace;
    let track = t
        .samples()
        .iter()
        .position(|s| s.ts.len() > 100)
        .expect("the V8 profile's samples") as u32;
    let st = &t.samples()[track as usize];
    let (s, img) = shot(&l);
    let (y, h) = row(&s, |k| k == RowKind::Samples(st.thread));
    let bg = s.timeline.theme.background;
    let painted = (0..1000)
        .filter(|&x| img.at(x as f32, y + h / 2.0) != bg)
        .count();
    assert!(painted > 50, "only {painted} columns of samples");
    // A sample's tick has its leaf frame's colour.
    let i = st.ts.len() / 2;
    let x = s.timeline.viewport.x(st.ts[i]) as f32;
    let leaf = t.frames()[st.frame[i] as usize].name;
    let c = s.timeline.theme.span_fill(l.colors[leaf.0 as usize]);
    assert!(
        img.near(x, y + h / 2.0, 1, c),
        "the tick has its leaf frame's colour"
    );
    let hit = s.timeline.hit(&l, x, y + h / 2.0);
    assert!(matches!(
        hit,
        Some(spall_viewer::kinds::Pick::Sample { .. })
    ));
}

/// A profile's stacks are drawn over time as speedscope's time-order view: under the
/// samples' ticks, a row per stack depth, consecutive samples with one frame at a depth
/// merged into one box of that frame's colour, which a click picks with its frame.
#[test]
fn sample_stacks_are_drawn_over_time_as_boxes() {
    for rel in ["real/profiles/work.cpuprofile", "real/profiles/spin.perf"] {
        let l = from_fixture(rel);
        let t = &l.trace;
        let stacks = &l.kinds.sample_stacks;
        // The widest outermost box of any thread, in a view three times its width.
        let widest = |th: usize| {
            let lane = stacks[th].lanes.first()?;
            (0..lane.len())
                .max_by_key(|&i| lane.dur[i])
                .map(|i| (lane.dur[i], i))
        };
        let th = (0..stacks.len()).max_by_key(|&th| widest(th)).unwrap();
        let i = widest(th).unwrap().1;
        assert!(
            stacks[th].depth() > 3,
            "{rel}: stacks {}",
            stacks[th].depth()
        );
        let lane = &stacks[th].lanes[0];
        // Fewer boxes than samples: merged runs, not one box per sample.
        let samples = t.samples()[stacks[th].track as usize].ts.len();
        assert!(lane.len() * 2 < samples, "{rel}: {} boxes", lane.len());
        let (a, b) = (lane.start[i] - t.start_ns(), lane.end(i) - t.start_ns());
        let mut shot = settings(1000, 700, FlowMode::None, None);
        shot.view = Some((Some(a - lane.dur[i]), Some(b + lane.dur[i])));
        let s = prepare(&l, &shot).unwrap();
        let img = Img {
            px: render(&l, &s).unwrap(),
            w: 1000,
            h: 700,
        };
        let want = |k| {
            k == RowKind::Stack {
                thread: th as u32,
                depth: 0,
            }
        };
        let (y, h) = row(&s, want);
        let (x0, x1) = (
            s.timeline.viewport.x(lane.start[i]) as f32,
            s.timeline.viewport.x(lane.end(i)) as f32,
        );
        assert!(x1 - x0 > 200.0, "{rel}: the box is {} px wide", x1 - x0);
        let fill = s
            .timeline
            .theme
            .span_fill(l.colors[lane.name[i].0 as usize]);
        // Across the row, above its label's text.
        for x in [x0 + 3.0, (x0 + x1) / 2.0, x1 - 3.0] {
            assert_eq!(img.at(x, y + 2.0), fill, "{rel}: the box at {x}");
        }
        let mid = (x0 + x1) / 2.0;
        let hit = s
            .timeline
            .hit(&l, mid, y + h / 2.0)
            .expect("the box is picked");
        assert!(matches!(
            hit,
            spall_viewer::kinds::Pick::Stack { depth: 0, .. }
        ));
        let name = spall_viewer::kinds::copy_text(t, hit, false).unwrap();
        assert_eq!(name, t.str(lane.name[i]), "{rel}");
        // The layout reports them as one track of the thread.
        shot.view = None;
        let s = prepare(&l, &shot).unwrap();
        let drawn = spall_viewer::view::drawn::drawn_tracks(&l, &s);
        let n = drawn.iter().filter(|d| d.kind == "sample_stacks").count();
        assert_eq!(n, stacks.iter().filter(|s| s.depth() > 0).count(), "{rel}");
    }
}

#[test]
fn a_generated_trace_lays_out_every_kind_in_order() {
    let l = from_bytes(
        br#"[
        {"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
        {"ph":"i","name":"boot","ts":0,"s":"g","pid":1,"tid":1},
        {"ph":"i","name":"gc","ts":1,"s":"p","pid":1,"tid":1},
        {"ph":"C","name":"heap","ts":0,"pid":1,"args":{"used":1,"free":3}},
        {"ph":"C","name":"heap","ts":5,"pid":1,"args":{"used":2,"free":2}},
        {"ph":"b","name":"load","cat":"n","id":"1","ts":0,"pid":1,"tid":1},
        {"ph":"e","name":"load","cat":"n","id":"1","ts":8,"pid":1,"tid":1},
        {"ph":"X","name":"main","ts":0,"dur":10,"pid":1,"tid":1},
        {"ph":"i","name":"tick","ts":2,"s":"t","pid":1,"tid":1},
        {"ph":"P","name":"leaf","ts":3,"pid":1,"tid":1}
    ]"#,
    );
    let (s, _) = shot(&l);
    let kinds: Vec<RowKind> = s.timeline.layout.rows.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            RowKind::GlobalInstants,
            RowKind::Process(0),
            RowKind::ProcessInstants(0),
            // Thread 0 is (pid 1, tid 0), made by the counter events: with nothing to
            // draw, it gets no track.
            RowKind::Thread(1),
            RowKind::ThreadInstants(1),
            RowKind::Samples(1),
            RowKind::Stack {
                thread: 1,
                depth: 0
            },
            RowKind::Lane {
                thread: 1,
                depth: 0
            },
            // The process's counter and async track under its threads.
            RowKind::Counter(0),
            RowKind::AsyncHeader(0),
            RowKind::AsyncRow { track: 0, row: 0 },
        ]
    );
    // Two series of one counter event share a track.
    assert_eq!(l.kinds.counters[0].series.len(), 2);
}

#[test]
fn counters_take_the_colour_the_file_names() {
    // Bazel's profile gives its counters chrome://tracing's reserved colours: "CPU usage
    // (Bazel)" is `good` (dark green), "CPU usage (total)" `rail_load`.
    let l = from_fixture("real/bazel_profile_with_queuing.json.gz");
    let (mut s, _) = shot(&l);
    // The process's counters come under its threads: scrolled to.
    let counter = (s.timeline.layout.rows.iter())
        .find(|r| matches!(r.kind, RowKind::Counter(_)))
        .unwrap();
    s.timeline.scroll_y = counter.y - 10.0;
    let (w, h) = (s.timeline.width as u32, s.timeline.height as u32);
    let img = Img {
        px: render(&l, &s).expect("headless rendering works"),
        w,
        h,
    };
    let t = &l.trace;
    for (name, rgb) in [
        ("CPU usage (Bazel)", (0, 125, 0)),
        ("CPU usage (total)", (13, 168, 97)),
    ] {
        let g = l
            .kinds
            .counters
            .iter()
            .position(|g| t.str(g.name) == name)
            .unwrap_or_else(|| panic!("{name} is a counter"));
        let (y, h) = row(&s, |k| k == RowKind::Counter(g as u32));
        let want = Color::rgb(rgb.0, rgb.1, rgb.2);
        let hits = (0..img.w)
            .flat_map(|x| (y as u32..(y + h) as u32).map(move |y| (x, y)))
            .filter(|&(x, y)| img.at(x as f32, y as f32) == want)
            .count();
        assert!(hits > 100, "{name}: {hits} pixels of its cname colour");
    }
}
