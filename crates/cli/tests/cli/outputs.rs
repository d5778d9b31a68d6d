//! Every command that writes a file leaves an existing file byte-for-byte intact when it
//! fails, and a `convert` killed at any moment leaves either the old file or the complete
//! new one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use spall_format::synth::Synth;

use crate::common::SPALL_CLI;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `good.json` in `d`: one 5 µs span named "a".
fn one_span(d: &Path) -> PathBuf {
    let good = d.join("good.json");
    let span = r#"[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1}]"#;
    std::fs::write(&good, span).unwrap();
    good
}

const OLD: &[u8] = b"the user's precious file\n";

/// Runs `spall-cli ARGS` expecting exit 2, and checks `out` still holds `OLD` and no
/// temporary file is left beside it.
fn fails_and_keeps(d: &Path, out: &Path, args: &[&str]) {
    std::fs::write(out, OLD).unwrap();
    let before = files(d);
    let o = Command::new(SPALL_CLI).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(std::fs::read(out).unwrap(), OLD, "{args:?} changed {out:?}");
    assert_eq!(files(d), before, "{args:?} left files behind");
}

#[test]
fn bad_input_leaves_every_output_intact() {
    let d = dir("bad");
    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, "this is not a trace at all").unwrap();
    let spall = d.join("bad.spall");
    // The magic, then a header cut short.
    std::fs::write(&spall, 0x0BAD_F00Du64.to_le_bytes()).unwrap();
    let g = garbage.to_str().unwrap();
    for input in [g, spall.to_str().unwrap()] {
        for target in ["out.json", "out.json.gz", "out.spall"] {
            let out = d.join(target);
            fails_and_keeps(&d, &out, &["convert", input, out.to_str().unwrap()]);
        }
        for format in ["svg", "folded", "json"] {
            let out = d.join(format!("flame.{format}"));
            let o = out.to_str().unwrap();
            fails_and_keeps(&d, &out, &["flame", input, "--format", format, "-o", o]);
        }
    }
    // A valid trace with a bad option: the graph is never started.
    let good = one_span(&d);
    let out = d.join("flame.svg");
    let (gs, o) = (good.to_str().unwrap(), out.to_str().unwrap());
    fails_and_keeps(&d, &out, &["flame", gs, "--thread", "9:9", "-o", o]);
    // And converting a file onto itself is refused, through any spelling of its path.
    let dotted = format!("{}/./good.json", d.display());
    let o = Command::new(SPALL_CLI)
        .args(["convert", gs, &dotted])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("overwrite the input"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn flame_output_is_written_whole() {
    let d = dir("flame");
    let good = one_span(&d);
    let out = d.join("flame.folded");
    std::fs::write(&out, OLD).unwrap();
    let st = Command::new(SPALL_CLI)
        .args(["flame", good.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a 5000\n");
    assert_eq!(files(&d), ["flame.folded", "good.json"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Kills `convert` at several moments (SIGKILL: no cleanup possible) and checks the target
/// is always the old file or exactly the complete conversion.
fn killed_convert(target: &str) {
    let d = dir(&format!("kill-{}", target.replace('.', "-")));
    let input = d.join("big.json");
    // Large enough that the kills spread over the load and the write; each run is a
    // debug build's, and the test makes fifteen.
    let synth = Synth {
        spans: 100_000,
        ..Synth::default()
    };
    synth
        .write_json(std::fs::File::create(&input).unwrap(), true)
        .unwrap();
    let reference = d.join(format!("reference{target}"));
    let t0 = std::time::Instant::now();
    let st = Command::new(SPALL_CLI)
        .args(["convert", input.to_str().unwrap()])
        .arg(&reference)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    // Kill at moments spread over a whole run, as timed here, and past its end.
    let whole = t0.elapsed();
    let complete = std::fs::read(&reference).unwrap();
    let out = d.join(format!("out{target}"));
    let (mut old, mut new) = (0, 0);
    for percent in [0, 2, 5, 10, 20, 35, 50, 65, 80, 90, 95, 100, 150, 400] {
        let delay = whole * percent / 100;
        std::fs::write(&out, OLD).unwrap();
        let mut child = Command::new(SPALL_CLI)
            .args(["convert", input.to_str().unwrap()])
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Past the run's end there is nothing left to kill: stop waiting once it exits.
        let until = std::time::Instant::now() + delay;
        while std::time::Instant::now() < until && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = child.kill();
        let _ = child.wait();
        let now = std::fs::read(&out).unwrap();
        if now == OLD {
            old += 1;
        } else {
            assert!(
                now == complete,
                "killed after {delay:?}: {out:?} is neither the old file nor the complete \
                 conversion ({} bytes, expected {})",
                now.len(),
                complete.len()
            );
            new += 1;
        }
        // What a killed process leaves is only its hidden temporary file.
        for f in files(&d) {
            assert!(
                f.starts_with(".out") && f.ends_with(".partial")
                    || [
                        "big.json",
                        &format!("out{target}"),
                        &format!("reference{target}")
                    ]
                    .contains(&f.as_str()),
                "unexpected file {f}"
            );
        }
    }
    // Both outcomes happened, so the kills did land mid-write (not all before or after).
    assert!(old > 0 && new > 0, "old {old}, new {new}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn killed_convert_to_json_leaves_old_or_complete() {
    killed_convert(".json");
}

#[test]
fn killed_convert_to_spall_leaves_old_or_complete() {
    killed_convert(".spall");
}

#[cfg(unix)]
#[test]
fn interrupted_convert_cleans_up() {
    let d = dir("sigterm");
    let input = d.join("big.json");
    Synth {
        spans: 300_000,
        ..Synth::default()
    }
    .write_json(std::fs::File::create(&input).unwrap(), true)
    .unwrap();
    let out = d.join("out.json.gz");
    std::fs::write(&out, OLD).unwrap();
    let child = Command::new(SPALL_CLI)
        .args(["convert", input.to_str().unwrap()])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    if o.status.success() {
        // It finished first: the complete file is there and nothing else.
        assert_ne!(std::fs::read(&out).unwrap(), OLD);
    } else {
        assert_eq!(o.status.code(), Some(130), "{o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("interrupted"));
        assert_eq!(std::fs::read(&out).unwrap(), OLD);
    }
    assert_eq!(files(&d), ["big.json", "out.json.gz"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A trace truncated at some moment while `spall-cli` reads it: the command either finished
/// first or fails with exit 2 and a message; it is never killed by a signal (SIGBUS).
#[cfg(target_os = "linux")]
#[test]
fn a_trace_truncated_while_loading_is_an_error_not_a_crash() {
    let d = dir("shrink");
    let mut bytes = Vec::new();
    Synth {
        spans: 600_000,
        ..Synth::default()
    }
    .write_spall(&mut bytes)
    .unwrap();
    let p = d.join("live.spall");
    let (mut finished, mut refused) = (0, 0);
    for delay_ms in [0, 5, 20, 50, 100, 200, 400] {
        std::fs::write(&p, &bytes).unwrap();
        let child = Command::new(SPALL_CLI)
            .args(["stats", p.to_str().unwrap(), "--top", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(0) => finished += 1,
            Some(2) => {
                assert!(!err.contains("panicked"), "{err}");
                refused += 1;
            }
            _ => panic!("truncated after {delay_ms} ms: {:?} {err}", o.status),
        }
    }
    eprintln!("{finished} loads finished first, {refused} saw the truncation");
    std::fs::remove_dir_all(&d).unwrap();
}
