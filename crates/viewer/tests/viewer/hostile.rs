//! Hostile files in the viewer: each either loads with a warning banner over the readable
//! part, or fails with an error that names the file. None panics.

use std::path::{Path, PathBuf};

use render_gl::Color;
use spall_test_support::fixture;
use spall_viewer::screenshot::{prepare, render, Shot};
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::Loaded;

/// The colour of the bottom-right pixel: where the warning banner is.
fn corner(l: &Loaded) -> Color {
    let (w, h) = (800u32, 300u32);
    let shot = Shot {
        width: w,
        height: h,
        view: None,
        select: None,
        flows: spall_viewer::view::timeline::FlowMode::Selected,
        theme: Theme::new(ThemeKind::Light),
        scale: 1.0,
        mode: spall_viewer::view::flame::Mode::Timeline,
        thread: None,
        sandwich: None,
        flame_up: false,
    };
    let s = prepare(l, &shot).unwrap();
    let px = render(l, &s).expect("headless rendering works");
    let i = (((h - 3) * w + (w - 3)) * 4) as usize;
    Color([px[i], px[i + 1], px[i + 2], px[i + 3]])
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn hostile_files_load_with_a_banner_or_fail_with_an_error() {
    let warning = Theme::new(ThemeKind::Light).warning;
    let dir = std::env::temp_dir().join(format!("spall-viewer-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // A clean trace has no banner.
    let clean = spall_viewer::load(
        Some(&fixture("edge/multiprocess.json")),
        &Default::default(),
        |_, _| {},
    )
    .unwrap();
    assert!(clean.warnings.is_none());
    assert_ne!(corner(&clean), warning);

    let json = std::fs::read(fixture("edge/multiprocess.json")).unwrap();
    let spall = std::fs::read(fixture("spall/odingengine_v3.spall")).unwrap();
    let mut flipped = json.clone();
    for i in (5..flipped.len()).step_by(37) {
        flipped[i] ^= 0x5A;
    }
    let mut huge_name = spall[..32].to_vec();
    // A v3 buffer claiming 4 GB, holding a Begin whose name runs past the end.
    huge_name.extend_from_slice(&u32::MAX.to_le_bytes());
    huge_name.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    huge_name.extend_from_slice(&[3, 1, 0, 0, 0, 0, 0, 0, 0, 255, 255, b'a']);
    let mut unclosed = String::from("[");
    for i in 0..20_000 {
        unclosed.push_str(&format!(
            "{{\"name\":\"b\",\"ph\":\"B\",\"ts\":{i},\"pid\":1,\"tid\":\"worker\"}},"
        ));
    }
    unclosed
        .push_str("{\"name\":\"bad\",\"ph\":\"X\",\"ts\":1e999,\"dur\":-5,\"pid\":-1,\"tid\":1}]");
    let readable = [
        write(&dir, "truncated.json", &json[..json.len() * 2 / 3]),
        write(&dir, "truncated.spall", &spall[..spall.len() - 5]),
        write(&dir, "flipped.json", &flipped),
        write(&dir, "huge-name.spall", &huge_name),
        write(&dir, "unclosed.json", unclosed.as_bytes()),
    ];
    for p in &readable {
        let l = spall_viewer::load(Some(p), &Default::default(), |_, _| {})
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let text = l.warnings.clone().unwrap_or_default();
        assert!(text.contains("warning"), "{}: banner {text:?}", p.display());
        assert_eq!(corner(&l), warning, "{}: no banner drawn", p.display());
    }

    let unreadable = [
        write(&dir, "empty.json", b""),
        write(&dir, "text.txt", b"hello, this is not a trace"),
        write(
            &dir,
            "bad-header.spall",
            &[0x0D, 0xF0, 0xAD, 0x0B, 0, 0, 0, 0, 9],
        ),
        dir.clone(),
        dir.join("missing.json"),
    ];
    for p in &unreadable {
        let e = spall_viewer::load(Some(p), &Default::default(), |_, _| {})
            .expect_err(&p.display().to_string());
        assert!(matches!(e, spall_viewer::ViewerError::Load(_)), "{e:?}");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            e.to_string().contains(&name),
            "{}: error {e:?} does not name the file",
            p.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
