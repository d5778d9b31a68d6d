//! The settings file: round trip, lenient reading of corrupt files, the recent list, and a
//! file that stays whole when the writer is killed at any moment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spall_viewer::persist::settings::{Settings, RECENT_MAX};
use spall_viewer::theme::ThemeKind;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-settings-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn many_recent(n: usize) -> Settings {
    let mut s = Settings {
        theme: Some(ThemeKind::Dark),
        ..Settings::default()
    };
    for i in 0..n {
        s.add_recent(Path::new(&format!(
            "/traces/run-{i:04}-{}.json",
            "x".repeat(200)
        )));
    }
    s
}

#[test]
fn settings_round_trip() {
    let d = dir("roundtrip");
    let p = d.join("nested/settings.json");
    let (none, warning) = Settings::load(&p);
    assert_eq!(
        (none, warning),
        (Settings::default(), None),
        "missing is the defaults"
    );
    let mut s = many_recent(3);
    // Key bindings survive a save verbatim, bad ones included (they are warned about when
    // read, never dropped).
    s.keys = Some(serde_json::json!({"zoom_in": "i", "fit": ["nope!"]}));
    s.panel_points = Some(640.0);
    s.panel_hidden = true;
    s.window_points = Some((1920.0, 1080.0));
    s.stats_columns = vec!["p50".into(), "max".into()];
    s.save(&p).unwrap();
    let (back, warning) = Settings::load(&p);
    assert_eq!(warning, None);
    assert_eq!(back, s);
    assert_eq!(back.theme, Some(ThemeKind::Dark));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn recent_files_come_first_once_and_are_capped() {
    let mut s = many_recent(RECENT_MAX + 5);
    assert_eq!(s.recent.len(), RECENT_MAX);
    let again = s.recent[4].clone();
    s.add_recent(&again);
    assert_eq!(s.recent[0], again);
    assert_eq!(s.recent.iter().filter(|p| **p == again).count(), 1);
    assert_eq!(s.recent.len(), RECENT_MAX);
}

#[test]
fn corrupt_settings_are_ignored_with_a_warning() {
    let d = dir("corrupt");
    let p = d.join("settings.json");
    for (bytes, why) in [
        (
            &b"{\"theme\": \"dark\", \"recent\": [\"/a\""[..],
            "not JSON",
        ),
        (b"[1, 2]", "not a JSON object"),
        (b"{\"theme\": \"purple\"}", "unknown theme"),
        (b"{\"recent\": 7}", "not a list"),
        (b"\xff\xfe garbage", "not JSON"),
    ] {
        std::fs::write(&p, bytes).unwrap();
        let (s, warning) = Settings::load(&p);
        assert_eq!(s, Settings::default());
        let w = warning.expect("a warning");
        assert!(w.contains(why) && w.contains("using defaults"), "{w}");
    }
    // A newer viewer's keys are not an error.
    std::fs::write(&p, br#"{"version": 9, "theme": "light", "panel": 300}"#).unwrap();
    let (s, warning) = Settings::load(&p);
    assert_eq!((s.theme, warning), (Some(ThemeKind::Light), None));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Set in the child process of the test below: where it saves settings until killed.
const WRITER: &str = "SPALL_SETTINGS_WRITER";

/// Saves settings at `p` in a loop until the process is killed.
fn write_settings_until_killed(p: &Path) -> ! {
    let mut i = 0;
    loop {
        many_recent(1 + i % RECENT_MAX).save(p).unwrap();
        i += 1;
    }
}

#[test]
fn settings_written_while_the_writer_is_killed_are_never_corrupt() {
    // This test runs itself again as the writer: the child process, killed mid-write.
    if let Some(p) = std::env::var_os(WRITER) {
        write_settings_until_killed(Path::new(&p));
    }
    let d = dir("kill");
    let p = d.join("settings.json");
    // The writer saves the dark theme; the file starts light, so its own writes show.
    let before = Settings {
        theme: Some(ThemeKind::Light),
        ..Settings::default()
    };
    for delay_ms in [1, 3, 7, 15, 30, 60, 120, 250] {
        before.save(&p).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                // Its name in this binary (tests/viewer/main.rs): module, then test.
                "settings::settings_written_while_the_writer_is_killed_are_never_corrupt",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WRITER, &p)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill it only once it is writing, so every delay lands among its writes.
        let start = Instant::now();
        while Settings::load(&p).0.theme != Some(ThemeKind::Dark) {
            let exited = child.try_wait().unwrap();
            assert!(exited.is_none(), "the writer exited: {exited:?}");
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the writer never wrote"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let (s, warning) = Settings::load(&p);
        assert_eq!(warning, None, "killed after {delay_ms} ms");
        assert!(!s.recent.is_empty() && s.theme == Some(ThemeKind::Dark));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Views are kept for the files in the recent list, and dropped with them.
#[test]
fn views_follow_the_recent_list() {
    let mut s = many_recent(2);
    let kept = s.recent[0].to_string_lossy().into_owned();
    s.views
        .insert(kept.clone(), serde_json::json!({"view": [1, 2]}));
    s.views.insert(
        "/not/recent.json".into(),
        serde_json::json!({"view": [3, 4]}),
    );
    let back = Settings::from_json(s.to_json().to_string().as_bytes()).unwrap();
    assert_eq!(back.views.len(), 1);
    assert_eq!(back.views[&kept], serde_json::json!({"view": [1, 2]}));
    assert!(Settings::from_json(br#"{"views": [1]}"#).is_err());
}

/// A web page's traces have no path: their views are kept by name and size, for the last
/// RECENT_MAX of them, most recent first.
#[test]
fn page_views_follow_the_page_list() {
    let mut s = Settings::default();
    for i in 0..RECENT_MAX + 2 {
        let key = format!("page:{i}:trace{i}.json");
        s.views
            .insert(key.clone(), serde_json::json!({"view": [i, i + 1]}));
        s.add_page(&key);
    }
    s.add_page("page:3:trace3.json"); // opened again: first, not twice
    let back = Settings::from_json(s.to_json().to_string().as_bytes()).unwrap();
    assert_eq!(back.pages.len(), RECENT_MAX);
    assert_eq!(back.pages[0], "page:3:trace3.json");
    assert_eq!(
        back.pages[1],
        format!("page:{0}:trace{0}.json", RECENT_MAX + 1)
    );
    assert_eq!(back.views.len(), RECENT_MAX);
    assert!(
        !back.views.contains_key("page:0:trace0.json"),
        "the oldest is dropped"
    );
    assert_eq!(
        back.views["page:3:trace3.json"],
        serde_json::json!({"view": [3, 4]})
    );
    assert!(Settings::from_json(br#"{"pages": {}}"#).is_err());
}

#[test]
fn sizes_out_of_range_are_ignored_not_fatal() {
    let s = Settings::from_json(
        br#"{"panel_width": 5, "window_size": [99999, 700], "panel_hidden": "yes", "theme": "dark"}"#,
    )
    .unwrap();
    assert_eq!(s.panel_points, None);
    assert_eq!(s.window_points, None);
    assert!(!s.panel_hidden);
    assert_eq!(s.theme, Some(ThemeKind::Dark), "the rest is read");
}
