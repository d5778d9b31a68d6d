//! The real windowed app on an X server (Xvfb): it draws, zooms on the mouse wheel and
//! selects on a click. Input comes from xdotool; frames come from the app's
//! `SPALL_FRAME_DUMP` hook, which writes each frame it draws.
//!
//! Runs when an X display is available (`DISPLAY`, as under `xvfb-run`) or `Xvfb` can be
//! started; with `SPALL_WINDOW_TEST=1` (set by `.ci/run`) a missing X server is a failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The tests share one X server, where input goes to the window on top: one at a time.
static ONE_WINDOW: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_window() -> std::sync::MutexGuard<'static, ()> {
    // An X server resets when its last client leaves (unless started with -noreset), and
    // refuses connections for a moment meanwhile: between two tests, a client stays (an
    // xdotool waiting for a window that never appears; it ends with the server).
    static KEEP_ALIVE: std::sync::Once = std::sync::Once::new();
    KEEP_ALIVE.call_once(|| {
        if std::env::var_os("DISPLAY").is_some() && have("xdotool") {
            let _ = Command::new("xdotool")
                .args([
                    "search",
                    "--sync",
                    "--name",
                    "spall-test-keep-alive-never-shown",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
        }
    });
    ONE_WINDOW
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A display for a window test, with xdotool when `xdotool` is set; `None` (after a note)
/// to skip the test, which fails instead when SPALL_WINDOW_TEST says it must run.
fn display_for(test: &str, xdotool: bool) -> Option<(String, Option<Kill>)> {
    let found = display().filter(|_| !xdotool || have("xdotool"));
    let needs = if xdotool {
        "an X server and xdotool"
    } else {
        "an X server"
    };
    let what = format!("{test} needs {needs} (or Xvfb)");
    spall_test_support::available(found.is_some(), "SPALL_WINDOW_TEST", &what);
    found
}

/// The display to use, starting Xvfb if there is none.
fn display() -> Option<(String, Option<Kill>)> {
    if let Ok(d) = std::env::var("DISPLAY") {
        if !d.is_empty() {
            return Some((d, None));
        }
    }
    if !have("Xvfb") {
        return None;
    }
    // One server per test (each kills its own when done): numbers unique within the process.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let n = 100 + (std::process::id() * 16 + k) % 4000;
    let d = format!(":{n}");
    let child = Command::new("Xvfb")
        .args([&d, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let guard = Kill(child);
    let sock = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
    let t = Instant::now();
    while !sock.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((d, Some(guard)))
}

/// Waits for a frame newer than `after` showing a loaded trace, then until the app stops
/// drawing (no new frame for half a second: every input has been handled); returns the
/// last frame's number and pixels.
fn next_frame(dir: &Path, after: u64) -> (u64, Vec<u8>, u32) {
    let mut last = newer_frame(dir, after);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = frame_number(dir);
        // An idle viewer draws nothing; if it kept drawing, take what it shows by now.
        if now == last.0 || Instant::now() > deadline {
            return last;
        }
        last = newer_frame(dir, last.0.min(now.saturating_sub(1)));
    }
}

fn frame_number(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("frame.txt"))
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn newer_frame(dir: &Path, after: u64) -> (u64, Vec<u8>, u32) {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(dir.join("frame.txt")) {
            let mut it = s.split_whitespace();
            let n: u64 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            let loaded = it.next() == Some("true");
            if n > after && loaded {
                if let Ok(f) = std::fs::File::open(dir.join("frame.png")) {
                    let mut r = png::Decoder::new(std::io::BufReader::new(f))
                        .read_info()
                        .unwrap();
                    let mut buf = vec![0; r.output_buffer_size()];
                    let info = r.next_frame(&mut buf).unwrap();
                    buf.truncate(info.buffer_size());
                    return (n, buf, info.width);
                }
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no new frame after frame {after}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn xdotool(display: &str, args: &[&str]) {
    let ok = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display)
        .status()
        .unwrap()
        .success();
    assert!(ok, "xdotool {args:?}");
}

/// Pixels of the timeline area (left 600 columns) that differ between two frames.
fn changed(a: &[u8], b: &[u8], w: u32) -> usize {
    a.chunks(4)
        .zip(b.chunks(4))
        .enumerate()
        .filter(|(i, (p, q))| (*i as u32 % w) < 600 && p != q)
        .count()
}

#[test]
fn the_window_draws_zooms_and_selects() {
    let _one = one_window();
    let Some((display, _xvfb)) = display_for("the window test", true) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spall-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = spall_test_support::fixture("edge/simple.json");
    let _viewer = Kill(
        Command::new(env!("CARGO_BIN_EXE_spall"))
            .arg(&trace)
            .args(["--theme", "light"])
            .env("DISPLAY", &display)
            .env_remove("WAYLAND_DISPLAY")
            .env("SPALL_FRAME_DUMP", &dir)
            .env(
                "SPALL_CONFIG_DIR",
                std::env::temp_dir().join("spall-test-config"),
            )
            .spawn()
            .expect("the viewer starts"),
    );
    let (n0, first, w) = next_frame(&dir, 0);
    // Let the first layout settle (the side panel's width is known after one frame).
    std::thread::sleep(Duration::from_millis(300));
    // Two places, so that the pointer moves (an earlier test may have left it at one): a
    // move redraws (the status bar's cursor time), a pointer already there sends nothing.
    xdotool(
        &display,
        &["mousemove", "290", "290", "mousemove", "300", "300"],
    );
    let (n1, before, _) = next_frame(&dir, n0);
    assert!(first.len() == before.len());

    // The wheel zooms: the timeline changes. (Under load the X server has been seen to
    // lose a burst of wheel clicks (once in six runs in one session): send it again, up to
    // three times, before calling the zoom broken.)
    let (mut n2, mut zoomed) = (n1, before.clone());
    for _ in 0..3 {
        xdotool(
            &display,
            &["click", "4", "click", "4", "click", "4", "click", "4"],
        );
        std::thread::sleep(Duration::from_millis(300));
        (n2, zoomed, _) = next_frame(&dir, n2);
        if changed(&before, &zoomed, w) > 500 {
            break;
        }
    }
    assert!(
        changed(&before, &zoomed, w) > 500,
        "zooming changed {} pixels",
        changed(&before, &zoomed, w)
    );

    // A click on the top-level span selects it: the selection outline appears.
    // Row of depth 0: minimap 36 + ruler 22 + process and thread headers 2 × 22, + half a lane.
    xdotool(&display, &["mousemove", "300", "112", "click", "1"]);
    std::thread::sleep(Duration::from_millis(300));
    let (_, selected, _) = next_frame(&dir, n2);
    assert!(
        changed(&zoomed, &selected, w) > 50,
        "selecting changed {} pixels",
        changed(&zoomed, &selected, w)
    );
    let orange = selected
        .chunks(4)
        .filter(|p| p[..3] == [255, 140, 0])
        .count();
    assert!(orange > 100, "{orange} pixels of the selection colour");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hostile files: the window shows the readable part with a warning banner, or the error,
/// and keeps running either way.
#[test]
fn the_window_survives_hostile_files() {
    let _one = one_window();
    let Some((display, _xvfb)) = display_for("the hostile-file window test", false) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spall-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let simple = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/edge/multiprocess.json"),
    )
    .unwrap();
    // Truncated inside an event: loads with a warning.
    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &simple[..simple.len() * 2 / 3]).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    let garbage = dir.join("garbage.bin");
    std::fs::write(
        &garbage,
        (0..4096u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    for (file, loads) in [
        (&truncated, true),
        (&empty, false),
        (&garbage, false),
        (&dir, false),
    ] {
        let frames = dir.join(format!(
            "frames-{}",
            file.file_name().unwrap().to_string_lossy()
        ));
        let mut viewer = Kill(
            Command::new(env!("CARGO_BIN_EXE_spall"))
                .arg(file)
                .args(["--theme", "light"])
                .env("DISPLAY", &display)
                .env_remove("WAYLAND_DISPLAY")
                .env("SPALL_FRAME_DUMP", &frames)
                .env(
                    "SPALL_CONFIG_DIR",
                    std::env::temp_dir().join("spall-test-config"),
                )
                .spawn()
                .expect("the viewer starts"),
        );
        if loads {
            let (_, px, _) = next_frame(&frames, 0);
            let banner = px.chunks(4).filter(|p| p[..3] == [255, 222, 140]).count();
            assert!(banner > 1000, "{}: {banner} banner pixels", file.display());
        } else {
            let t = Instant::now();
            while frame_number(&frames) == 0 {
                assert!(
                    t.elapsed() < Duration::from_secs(30),
                    "{}: no frame",
                    file.display()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        std::thread::sleep(Duration::from_millis(700));
        assert!(
            viewer.0.try_wait().unwrap().is_none(),
            "{}: the viewer exited",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `frame.txt`'s fields after the frame number: (spans, visible start, visible end) of the
/// trace shown, when one is.
fn shown(dir: &Path) -> Option<(u64, i64, i64)> {
    let s = std::fs::read_to_string(dir.join("frame.txt")).ok()?;
    let v: Vec<&str> = s.split_whitespace().collect();
    if v.get(1) != Some(&"true") {
        return None;
    }
    Some((v[2].parse().ok()?, v[3].parse().ok()?, v[4].parse().ok()?))
}

/// Waits until the trace shown satisfies `ok`.
fn wait_shown(dir: &Path, what: &str, ok: impl Fn((u64, i64, i64)) -> bool) -> (u64, i64, i64) {
    let t = Instant::now();
    loop {
        if let Some(v) = shown(dir).filter(|&v| ok(v)) {
            return v;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{what}: {:?}",
            shown(dir)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A trace still being written: `--follow` reloads it as it grows, and F5 reloads by hand;
/// both keep the visible range the user zoomed to.
#[test]
fn follow_and_f5_reload_a_growing_trace_keeping_the_view() {
    let _one = one_window();
    let Some((display, _xvfb)) = display_for("the follow test", true) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spall-follow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ev = |tid: u32, ts: u32| {
        format!(r#"{{"name":"step","ph":"X","ts":{ts},"dur":40,"pid":1,"tid":{tid}}},"#)
    };
    let trace = dir.join("live.json");
    let mut text = String::from("[");
    for i in 0..20 {
        text += &ev(1, i * 100);
    }
    std::fs::write(&trace, &text).unwrap();
    let append = |from: u32, to: u32| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&trace)
            .unwrap();
        for i in from..to {
            f.write_all(ev(2, i * 100).as_bytes()).unwrap();
        }
    };
    // Opens the trace, zooms in (so a reload that lost the view would show), and returns
    // the viewer, its frame directory and the visible range.
    let start = |follow: bool| {
        let frames = dir.join(format!("frames-{follow}"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_spall"));
        cmd.arg(&trace).args(["--theme", "light"]);
        if follow {
            cmd.arg("--follow");
        }
        let viewer = Kill(
            cmd.env("DISPLAY", &display)
                .env_remove("WAYLAND_DISPLAY")
                .env("SPALL_FRAME_DUMP", &frames)
                .env(
                    "SPALL_CONFIG_DIR",
                    std::env::temp_dir().join("spall-test-config"),
                )
                .spawn()
                .expect("the viewer starts"),
        );
        let (n0, _, _) = next_frame(&frames, 0);
        let spans = shown(&frames).unwrap().0;
        std::thread::sleep(Duration::from_millis(300));
        xdotool(&display, &["mousemove", "300", "300"]);
        xdotool(&display, &["click", "4", "click", "4", "click", "4"]);
        next_frame(&frames, n0);
        let (_, a, b) = shown(&frames).unwrap();
        (viewer, frames, spans, (a, b))
    };

    // F5 without --follow.
    let (viewer, frames, spans, view) = start(false);
    assert_eq!(spans, 20);
    append(20, 50);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(
        shown(&frames).unwrap().0,
        20,
        "reloaded without --follow or F5"
    );
    focus(&display, &viewer);
    xdotool(&display, &["key", "F5"]);
    let again = wait_shown(&frames, "F5 reloads", |v| v.0 == 50);
    assert_eq!((again.1, again.2), view, "F5 moved the view");
    drop(viewer);

    // --follow: appends show up by themselves.
    let (_viewer, frames, spans, view) = start(true);
    assert_eq!(spans, 50);
    append(50, 80);
    let grown = wait_shown(&frames, "--follow reloads", |v| v.0 == 80);
    assert_eq!((grown.1, grown.2), view, "--follow moved the view");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts the viewer on `trace` with its frames dumped to `frames`, in directory `cwd`.
fn spawn_viewer(display: &str, trace: &Path, frames: &Path, cwd: &Path, args: &[&str]) -> Kill {
    Kill(
        Command::new(env!("CARGO_BIN_EXE_spall"))
            .current_dir(cwd)
            .arg(trace)
            .args(["--theme", "light"])
            .args(args)
            .env("DISPLAY", display)
            .env_remove("WAYLAND_DISPLAY")
            .env("SPALL_FRAME_DUMP", frames)
            .env(
                "SPALL_CONFIG_DIR",
                std::env::temp_dir().join("spall-test-config"),
            )
            .spawn()
            .expect("the viewer starts"),
    )
}

/// Gives the viewer's window the keyboard focus (no window manager does under Xvfb).
fn focus(display: &str, viewer: &Kill) {
    let wid = String::from_utf8(
        Command::new("xdotool")
            .args(["search", "--pid", &viewer.0.id().to_string()])
            .env("DISPLAY", display)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    if let Some(w) = wid.split_whitespace().next() {
        xdotool(display, &["windowfocus", w]);
    }
}

/// Whether `xclip` is there to read the clipboard; a missing one fails under
/// `SPALL_WINDOW_TEST`, else `what` is skipped with a note.
fn have_xclip(what: &str) -> bool {
    let what = format!("{what} needs xclip");
    spall_test_support::available(have("xclip"), "SPALL_WINDOW_TEST", &what)
}

/// The X clipboard's text (through `xclip`).
fn clipboard(display: &str) -> String {
    let o = Command::new("xclip")
        .args(["-o", "-selection", "clipboard"])
        .env("DISPLAY", display)
        .output()
        .expect("xclip runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The clipboard once it holds `want`, or what it holds after 10 s: a loaded machine may
/// take a while to deliver the key and draw the frame that copies.
fn clipboard_soon(display: &str, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let got = clipboard(display);
        if got == want || Instant::now() > deadline {
            return got;
        }
    }
}

/// Ctrl+C puts the selected span's name on the X clipboard, Ctrl+Shift+C its call stack.
#[test]
fn ctrl_c_copies_the_selection_to_the_clipboard() {
    let Some((display, _xvfb)) = display_for("the clipboard test", true) else {
        return;
    };
    if !have_xclip("the clipboard test") {
        return;
    }
    let _one = one_window();
    let dir = std::env::temp_dir().join(format!("spall-clip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = spall_test_support::fixture("edge/simple.json");
    let viewer = spawn_viewer(&display, &trace, &dir, &std::env::temp_dir(), &[]);
    let (n0, _, _) = next_frame(&dir, 0);
    std::thread::sleep(Duration::from_millis(300));
    focus(&display, &viewer);
    // The depth-1 row: minimap 36 + ruler 22 + two headers of 22 + a lane of 20, + half one.
    xdotool(&display, &["mousemove", "300", "132", "click", "1"]);
    next_frame(&dir, n0);
    xdotool(&display, &["key", "ctrl+c"]);
    assert_eq!(clipboard_soon(&display, "beta"), "beta");
    xdotool(&display, &["key", "ctrl+shift+c"]);
    assert_eq!(clipboard_soon(&display, "alpha\nbeta"), "alpha\nbeta");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl+S saves the window as a PNG in the current directory, named after the trace.
#[test]
fn ctrl_s_saves_the_window_as_a_png() {
    let Some((display, _xvfb)) = display_for("the Ctrl+S test", true) else {
        return;
    };
    let _one = one_window();
    let dir = std::env::temp_dir().join(format!("spall-ctrl-s-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let frames = dir.join("frames");
    let trace = spall_test_support::fixture("edge/simple.json");
    let viewer = spawn_viewer(&display, &trace, &frames, &dir, &[]);
    let (_, _, w) = next_frame(&frames, 0);
    focus(&display, &viewer);
    xdotool(&display, &["key", "ctrl+s"]);
    let t = Instant::now();
    let saved = loop {
        let found = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .find(|n| n.starts_with("simple-") && n.ends_with(".png"));
        if let Some(n) = found {
            break dir.join(n);
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no screenshot saved");
        std::thread::sleep(Duration::from_millis(100));
    };
    let r = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&saved).unwrap(),
    ))
    .read_info()
    .unwrap();
    assert_eq!(r.info().width, w, "the whole window");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `?` shows every key over the window (pixels) and Esc closes it; `]` and `[` step the
/// selection along its lane (read back through Ctrl+C and the X clipboard).
#[test]
fn help_overlay_and_stepping_along_a_lane() {
    let Some((display, _xvfb)) = display_for("the keys test", true) else {
        return;
    };
    if !have_xclip("the keys test") {
        return;
    }
    let _one = one_window();
    let dir = std::env::temp_dir().join(format!("spall-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = spall_test_support::fixture("edge/simple.json");
    let viewer = spawn_viewer(&display, &trace, &dir, &std::env::temp_dir(), &[]);
    next_frame(&dir, 0);
    std::thread::sleep(Duration::from_millis(300));
    focus(&display, &viewer);
    let (n0, before, w) = next_frame(&dir, 0);
    xdotool(&display, &["key", "shift+question"]);
    let (n1, help, _) = next_frame(&dir, n0);
    let covered = changed(&before, &help, w);
    assert!(covered > 20_000, "? changed only {covered} pixels");
    xdotool(&display, &["key", "Escape"]);
    let (n2, closed, _) = next_frame(&dir, n1);
    let left = changed(&before, &closed, w);
    assert!(left < 200, "{left} pixels still differ after Esc");
    // From over the side panel: a click that comes with the move off it, before egui has
    // seen the pointer anywhere else, is the timeline's.
    xdotool(&display, &["mousemove", "1080", "62"]);
    let (n2, _, _) = next_frame(&dir, n2);
    // The depth-2 row (one below the Ctrl+C test's): gamma, then epsilon after it.
    xdotool(&display, &["mousemove", "300", "152", "click", "1"]);
    let (n3, _, _) = next_frame(&dir, n2);
    let copy = |want: &str| {
        xdotool(&display, &["key", "ctrl+c"]);
        assert_eq!(clipboard_soon(&display, want), want);
    };
    copy("gamma");
    xdotool(&display, &["key", "bracketright"]);
    let (n4, _, _) = next_frame(&dir, n3);
    copy("epsilon");
    xdotool(&display, &["key", "bracketleft"]);
    next_frame(&dir, n4);
    copy("gamma");
    let _ = std::fs::remove_dir_all(&dir);
}

/// File ▸ Recent opens a file the settings remember.
#[test]
fn opening_a_file_through_the_recent_list() {
    let Some((display, _xvfb)) = display_for("the recent files test", true) else {
        return;
    };
    let _one = one_window();
    let dir = std::env::temp_dir().join(format!("spall-recent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let fixtures = spall_test_support::fixture("");
    let other = std::fs::canonicalize(fixtures.join("real/catapult_flow.json")).unwrap();
    let config = std::env::temp_dir().join("spall-test-config");
    std::fs::create_dir_all(&config).unwrap();
    let settings = serde_json::json!({"version": 1, "recent": [other]});
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    let trace = fixtures.join("edge/simple.json");
    let viewer = spawn_viewer(&display, &trace, &dir, &std::env::temp_dir(), &[]);
    let (n0, _, _) = next_frame(&dir, 0);
    assert_eq!(shown(&dir).map(|s| s.0), Some(4), "simple.json first");
    focus(&display, &viewer);
    // The panel's first row (1400-pixel window, 520-point panel): Open…, Theme, Recent.
    // Opening simple.json put it first in the list; the other file is the second item.
    xdotool(&display, &["mousemove", "1050", "12", "click", "1"]);
    next_frame(&dir, n0);
    xdotool(&display, &["mousemove", "1080", "62", "click", "1"]);
    let (spans, _, _) = wait_shown(&dir, "the recent file", |(n, _, _)| n != 4);
    assert!(spans > 100, "catapult_flow.json has {spans} spans");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `spall NEW --compare BASE` opens the window on NEW's flame graph coloured by its
/// changes: the frame that got slower in compare mode's red, the faster one in its blue
/// (exactly the colours the headless renderer gives those changes).
#[test]
fn compare_opens_on_the_coloured_flame_graph() {
    use spall_viewer::flame::changes::fill;
    use trace_model::changes::Status;
    let Some((display, _xvfb)) = display_for("the compare mode test", false) else {
        return;
    };
    let _one = one_window();
    let dir = std::env::temp_dir().join(format!("spall-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 20 frames calling grows and shrinks: +50% and -50% from BASE to NEW.
    let trace = |grows: f64, shrinks: f64| {
        let mut ev = Vec::new();
        for i in 0..20 {
            let t = i as f64 * 1000.0;
            ev.push(format!(
                r#"{{"ph":"X","name":"frame","ts":{t},"dur":900,"pid":1,"tid":1}}"#
            ));
            ev.push(format!(
                r#"{{"ph":"X","name":"grows","ts":{},"dur":{grows},"pid":1,"tid":1}}"#,
                t + 10.0
            ));
            ev.push(format!(
                r#"{{"ph":"X","name":"shrinks","ts":{},"dur":{shrinks},"pid":1,"tid":1}}"#,
                t + 450.0
            ));
        }
        format!("[{}]", ev.join(",\n"))
    };
    let (base, new) = (dir.join("base.json"), dir.join("new.json"));
    std::fs::write(&base, trace(200.0, 400.0)).unwrap();
    std::fs::write(&new, trace(300.0, 200.0)).unwrap();

    // The colours compare mode gives the two changes.
    let l = spall_viewer::Loaded::new(
        trace_model::load_bytes(&std::fs::read(&new).unwrap()).unwrap(),
        "new".into(),
    );
    let b = trace_model::load_bytes(&std::fs::read(&base).unwrap()).unwrap();
    let b = std::sync::Arc::new(spall_viewer::Loaded::new(b, "base".into()));
    let shot = spall_viewer::screenshot::Shot {
        width: 800,
        height: 400,
        view: None,
        select: None,
        flows: spall_viewer::view::timeline::FlowMode::Selected,
        theme: spall_viewer::theme::Theme::new(spall_viewer::theme::ThemeKind::Light),
        scale: 1.0,
        mode: spall_viewer::view::flame::Mode::Flame,
        thread: None,
        sandwich: None,
        flame_up: false,
    };
    let s = spall_viewer::screenshot::prepare_compare(&l, &shot, Some(b)).unwrap();
    let colour = |status| {
        let c = s.flame.changes.iter().find(|c| c.status == status).unwrap();
        fill(&shot.theme, c).0
    };
    let (slower, faster) = (colour(Status::Slower), colour(Status::Faster));

    let frames = dir.join("frames");
    let base_arg = base.to_str().unwrap();
    let _viewer = spawn_viewer(&display, &new, &frames, &dir, &["--compare", base_arg]);
    // The graph is built, and BASE loaded, off the UI thread: wait for both colours.
    let t = Instant::now();
    let count = |px: &[u8], c: [u8; 4]| px.chunks(4).filter(|p| p[..3] == c[..3]).count();
    let mut after = 0;
    loop {
        let (n, px, _) = next_frame(&frames, after);
        let (red, blue) = (count(&px, slower), count(&px, faster));
        if red > 200 && blue > 200 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "compare colours not drawn: {red} slower and {blue} faster pixels"
        );
        after = n;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
