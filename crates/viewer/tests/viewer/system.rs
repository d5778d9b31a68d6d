//! System traces (tests/fixtures/systrace): CPU lanes above the processes, each thread's
//! state strip over its slices, and a scheduling slice's thread and waker on a click.

use render_gl::Color;
use spall_test_support::fixture;
use spall_viewer::kinds::{thread_state_ids, Pick};
use spall_viewer::screenshot::{prepare, render};
use spall_viewer::theme::ThemeKind;
use spall_viewer::timeline::draw::fill_for;
use spall_viewer::timeline::sched::{describe, state_color, state_kind, StateKind};
use spall_viewer::view::drawn::drawn_tracks;
use spall_viewer::view::layout::RowKind;
use spall_viewer::view::state::ViewState;
use spall_viewer::view::timeline::TimelineView;
use spall_viewer::Loaded;

const W: u32 = 1000;
const H: u32 = 700;

fn load(rel: &str) -> Loaded {
    spall_viewer::load(Some(&fixture(rel)), &Default::default(), |_, _| {}).unwrap()
}

fn shot(l: &Loaded) -> (ViewState, Vec<u8>) {
    let settings = crate::screenshots::settings(W, H, ThemeKind::Light, None);
    let s = prepare(l, &settings).unwrap();
    let px = render(l, &s).expect("headless rendering works");
    (s, px)
}

fn at(px: &[u8], x: f32, y: f32) -> Color {
    let i = ((y as u32 * W + x as u32) * 4) as usize;
    Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
}

/// The window y of a row.
fn row_y(s: &TimelineView, kind: RowKind) -> Option<(f32, f32)> {
    let row = s.layout.rows.iter().find(|r| r.kind == kind)?;
    Some((s.tracks_top() + row.y - s.scroll_y, row.h))
}

#[test]
fn every_system_fixture_lays_out_cpu_lanes_and_state_strips() {
    for f in [
        "systrace/events.pftrace.gz",
        "systrace/compact.pftrace.gz",
        "systrace/events.trace",
        "systrace/events.html",
        "systrace/events.ctrace",
        "systrace/android.html",
        "systrace/chrome-system.json",
    ] {
        let l = load(f);
        let (s, _) = shot(&l);
        let tracks = drawn_tracks(&l, &s);
        let kinds: Vec<&str> = tracks.iter().map(|d| d.kind).collect();
        let cpus = kinds.iter().take_while(|&&k| k == "cpu").count();
        assert_eq!(cpus, 2, "{f}: two CPU lanes first: {kinds:?}");
        let first_process = kinds.iter().position(|&k| k == "process").unwrap();
        assert!(
            kinds[..first_process].iter().all(|k| k.starts_with("cpu")),
            "{f}: the CPUs and their counters above the processes: {kinds:?}"
        );
        // Every thread with states has its strip right under its header.
        let strips = (tracks.iter().enumerate()).filter(|(_, d)| d.kind == "thread_states");
        let mut n = 0;
        for (i, d) in strips {
            assert_eq!(tracks[i - 1].kind, "thread", "{f}: {d:?}");
            assert_eq!(tracks[i - 1].thread, d.thread, "{f}");
            n += 1;
        }
        assert!(n >= 2, "{f}: {n} state strips: {kinds:?}");
    }
}

#[test]
fn cpu_slices_take_their_threads_colour_and_states_perfettos() {
    let l = load("systrace/events.pftrace.gz");
    let (vs, px) = shot(&l);
    let s = &vs.timeline;
    let t = &l.trace;
    let sd = t.sched().unwrap();
    // CPU 0's longest slice is drawn in its thread's colour, mid-box.
    let lanes = &l.kinds.cpu_lanes;
    let lane = &lanes.lanes[0];
    let i = (0..lane.len()).max_by_key(|&i| lane.dur[i]).unwrap();
    let (y, h) = row_y(s, RowKind::Cpu(0)).expect("CPU 0's lane");
    let x = s.viewport.x(lane.start[i] + lane.dur[i] / 2) as f32;
    assert_eq!(at(&px, x, y + h / 2.0), fill_for(&l, s, lane.name[i]));
    let thread = sd.slices[lanes.slices[0][i] as usize].thread;
    assert_eq!(lane.name[i], t.threads()[thread as usize].name.unwrap());
    // The idle task has no box: no slice of tid 0 in any lane.
    let idle = lanes.idle.expect("the idle task");
    let all = lanes.slices.iter().flatten();
    assert!(all.clone().all(|&k| sd.slices[k as usize].thread != idle));
    // Each thread's longest Running and Runnable states are drawn in Perfetto's colours.
    for want in [StateKind::Running, StateKind::Runnable] {
        let st = (sd.states())
            .filter(|st| st.dur() > 0 && state_kind(st) == want)
            .max_by_key(|st| st.dur())
            .unwrap_or_else(|| panic!("a {want:?} state"));
        let (y, h) = row_y(s, RowKind::ThreadStates(st.thread)).unwrap();
        let x = s.viewport.x(st.ts + st.dur() / 2) as f32;
        assert_eq!(at(&px, x, y + h / 2.0), state_color(want), "{want:?}");
    }
}

#[test]
fn a_click_on_a_cpu_slice_selects_its_thread_and_names_its_waker() {
    let l = load("systrace/events.pftrace.gz");
    let (mut vs, _) = shot(&l);
    let s = &mut vs.timeline;
    let t = &l.trace;
    let sd = t.sched().unwrap();
    let lanes = &l.kinds.cpu_lanes;
    // A slice whose thread was woken by another: the runnable state just before it.
    let (c, k, waker) = (0..lanes.cpus.len())
        .flat_map(|c| lanes.slices[c].iter().map(move |&k| (c, k)))
        .find_map(|(c, k)| {
            let x = &sd.slices[k as usize];
            let ids = thread_state_ids(sd, x.thread);
            let before = ids
                .iter()
                .rev()
                .find(|&&i| sd.state(i as usize).ts < x.ts)?;
            Some((c, k, sd.state(*before as usize).waker()?))
        })
        .expect("a woken slice");
    let x = &sd.slices[k as usize];
    let (y, h) = row_y(s, RowKind::Cpu(c as u32)).unwrap();
    let px = s.viewport.x(x.ts + x.dur.max(1) / 2) as f32;
    let hit = s.hit(&l, px, y + h / 2.0);
    assert_eq!(hit, Some(Pick::Sched(k)));
    s.select_pick(&l, hit);
    assert_eq!(s.selected, hit);
    // Its thread's strip is on screen, and its details say who woke it.
    let (sy, _) = row_y(s, RowKind::ThreadStates(x.thread)).unwrap();
    assert!(sy >= s.tracks_top() && sy < H as f32, "{sy}");
    let lines = describe(&l, Pick::Sched(k)).join("\n");
    assert!(lines.contains(&t.thread_label(x.thread)), "{lines}");
    let woken = format!("woken by  {}", t.thread_label(waker));
    assert!(lines.contains(&woken), "{lines}");
    // A state's tooltip names it as Perfetto does.
    let (ty, th) = row_y(s, RowKind::ThreadStates(x.thread)).unwrap();
    let Some(Pick::State(i)) = s.hit(&l, px, ty + th / 2.0) else {
        panic!("no state under the slice");
    };
    assert_eq!(describe(&l, Pick::State(i))[0], "Running");
}

#[test]
fn a_page_draws_the_same_rows_from_a_transferred_trace() {
    // The page's worker hands the model over as a transfer; the page builds its views
    // from what arrives, so the CPU lanes and strips must come through it.
    let l = load("systrace/events.pftrace.gz");
    let back = trace_model::Trace::from_transfer(&l.trace.to_transfer()).unwrap();
    let page = Loaded::new(back, "page".into());
    let (s, a) = shot(&l);
    let (sp, b) = shot(&page);
    let rows = |l: &Loaded, s: &ViewState| {
        let v: Vec<_> = (drawn_tracks(l, s).into_iter())
            .map(|d| (d.kind, d.thread, d.name, d.y as i32))
            .collect();
        v
    };
    assert_eq!(rows(&l, &s), rows(&page, &sp));
    assert!(rows(&page, &sp).iter().any(|r| r.0 == "cpu"));
    assert!(a == b, "the same pixels");
}

#[test]
fn cpu_counters_start_folded_under_the_cpu_lanes() {
    let l = load("systrace/events.pftrace.gz");
    let (mut vs, px) = shot(&l);
    let n = l.trace.sched().unwrap().counters.len();
    assert!(n >= 3, "{n} CPU counters");
    let kinds = |vs: &ViewState| -> Vec<&'static str> {
        drawn_tracks(&l, vs).iter().map(|d| d.kind).collect()
    };
    // Folded: the CPU lanes, one header for every counter, then the processes.
    let folded = kinds(&vs);
    assert_eq!(
        folded[..3],
        ["cpu", "cpu", "cpu_counter_group"],
        "{folded:?}"
    );
    assert_eq!(folded[3], "process", "{folded:?}");
    let s = &vs.timeline;
    let (y, h) = row_y(s, RowKind::CpuCounters).unwrap();
    // The header is drawn as a thread's is: a band, not the background.
    assert_ne!(
        at(&px, W as f32 / 2.0, y + h / 2.0),
        at(&px, W as f32 / 2.0, 1.0)
    );
    let first_process = |s: &TimelineView| {
        (s.layout.rows.iter())
            .find(|r| matches!(r.kind, RowKind::Process(_)))
            .unwrap()
            .y
    };
    let folded_at = first_process(s);
    // A click on the header unfolds them, CPU by CPU, right under it.
    vs.timeline.toggle_collapse(&l, RowKind::CpuCounters);
    let open = kinds(&vs);
    assert_eq!(open[..3], ["cpu", "cpu", "cpu_counter_group"]);
    assert!(
        open[3..3 + n].iter().all(|&k| k == "cpu_counter"),
        "{open:?}"
    );
    assert_eq!(open[3 + n], "process");
    assert!(first_process(&vs.timeline) > folded_at);
    vs.timeline.toggle_collapse(&l, RowKind::CpuCounters);
    assert_eq!(kinds(&vs), folded);
}
