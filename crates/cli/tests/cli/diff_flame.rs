//! `diff --by stack --format folded | svg`: the differential folded stacks hold each trace's
//! own `flame` output, column by column, and the differential flame graph colours frames by
//! the sign of their change.

use crate::common::pair::pair;
use crate::common::{fixture, run};

use std::collections::BTreeMap;
use std::path::PathBuf;

/// stdout of a run that must not fail with a usage or input error (`diff` exits 1 on a
/// regression).
fn out(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn tmp() -> PathBuf {
    let d = std::env::temp_dir().join(format!("spall-diff-flame-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `flame`'s folded lines, summed per stack (two frames can print alike).
fn folded(text: &str) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let (s, n) = l.rsplit_once(' ').unwrap();
        *m.entry(s.to_string()).or_default() += n.parse::<i64>().unwrap();
    }
    m
}

/// The two columns of a differential folded output, each without its zeros.
fn columns(text: &str) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let (mut b, mut n) = (BTreeMap::new(), BTreeMap::new());
    for l in text.lines() {
        let (rest, nv) = l.rsplit_once(' ').unwrap();
        let (s, bv) = rest.rsplit_once(' ').unwrap();
        let (bv, nv): (i64, i64) = (bv.parse().unwrap(), nv.parse().unwrap());
        assert!(bv > 0 || nv > 0, "a line for nothing: {l}");
        for (col, v) in [(&mut b, bv), (&mut n, nv)] {
            if v > 0 {
                assert!(col.insert(s.to_string(), v).is_none(), "{s} twice");
            }
        }
    }
    (b, n)
}

fn check_columns(base: &str, new: &str, extra: &[&str]) {
    let mut args = vec![
        "diff",
        base,
        new,
        "--by",
        "stack",
        "--format",
        "folded",
        "--fail-on",
        "never",
    ];
    args.extend(extra);
    let (b, n) = columns(&out(&args));
    let flame = |t: &str| {
        let mut a = vec!["flame", t];
        a.extend(extra);
        folded(&out(&a))
    };
    let (want_b, want_n) = (flame(base), flame(new));
    assert!(!want_b.is_empty() && !want_n.is_empty(), "{base} {new}");
    assert!(
        b == want_b,
        "{base} {extra:?}: BASE's column is not its flame output"
    );
    assert!(
        n == want_n,
        "{new} {extra:?}: NEW's column is not its flame output"
    );
}

#[test]
fn folded_columns_are_each_traces_flame_output() {
    // Two real clang -ftime-trace runs (clang 14 and 19), in both orders.
    let c14 = fixture("real/clang/blender-mac-clang14_obj_export_file_writer.json");
    let c19 = fixture("real/clang/self-win-clang-19.1_BuildEvents.json");
    check_columns(&c14, &c19, &[]);
    check_columns(&c19, &c14, &[]);
    // Both share frames (`ExecuteCompiler;Frontend`) and each has its own.
    let (b, n) = columns(&out(&[
        "diff", &c14, &c19, "--by", "stack", "--format", "folded",
    ]));
    assert!(b.keys().any(|k| n.contains_key(k)));
    assert!(b.keys().any(|k| !n.contains_key(k)) && n.keys().any(|k| !b.contains_key(k)));

    // A generated pair, whole and with the selection options `flame` shares.
    let (base, new) = pair(&tmp(), 1);
    check_columns(&base, &new, &[]);
    check_columns(&base, &new, &["--range", "1ms..20ms"]);
    check_columns(&base, &new, &["--filter", "^(slow|new|gone)_fn$"]);
    check_columns(&base, &new, &["--thread", "main"]);
}

/// Each frame of an inferno SVG: (function, fill colour as r, g, b).
fn frames(svg: &str) -> Vec<(String, [u8; 3])> {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_str(svg);
    let (mut out, mut title, mut in_title) = (Vec::new(), String::new(), false);
    loop {
        match r.read_event().expect("well-formed XML") {
            Event::Start(e) if e.name().as_ref() == b"title" => {
                in_title = true;
                title.clear();
            }
            Event::End(e) if e.name().as_ref() == b"title" => in_title = false,
            // Entities come apart from the text (`&lt;`): kept as written.
            Event::Text(t) if in_title => title.push_str(&t.decode().unwrap()),
            Event::GeneralRef(r) if in_title => {
                title.push_str(&format!("&{};", r.decode().unwrap()));
            }
            Event::Empty(e) if e.name().as_ref() == b"rect" && !title.is_empty() => {
                let fill = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.as_ref() == b"fill")
                    .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
                    .unwrap();
                let rgb: Vec<u8> = fill
                    .trim_start_matches("rgb(")
                    .trim_end_matches(')')
                    .split(',')
                    .map(|c| c.trim().parse().unwrap())
                    .collect();
                let name = title.split(" (").next().unwrap().to_string();
                out.push((name, [rgb[0], rgb[1], rgb[2]]));
                title.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

fn colour(frames: &[(String, [u8; 3])], name: &str) -> Option<[u8; 3]> {
    let mut found = frames.iter().filter(|(n, _)| n == name).map(|(_, c)| *c);
    let c = found.next();
    assert!(found.next().is_none(), "{name} drawn twice");
    c
}

fn red(c: [u8; 3]) -> bool {
    c[0] == 255 && c[1] == c[2] && c[1] <= 200
}

fn blue(c: [u8; 3]) -> bool {
    c[2] == 255 && c[0] == c[1] && c[0] <= 200
}

/// Barely tinted: noise, not a change.
fn pale(c: [u8; 3]) -> bool {
    c.iter().all(|&x| x >= 235)
}

#[test]
fn svg_colours_follow_the_signs_of_the_changes() {
    let (base, new) = pair(&tmp(), 2);
    let svg = |extra: &[&str]| {
        let mut a = vec!["diff", &base, &new, "--by", "stack", "--format", "svg"];
        a.extend(extra);
        let s = out(&a);
        assert!(
            s.starts_with("<?xml") && s.contains("<svg"),
            "an SVG document"
        );
        s
    };

    // NEW's frames: slower red, faster and removed blue, added red, the rest pale.
    let f = frames(&svg(&["--title", "perf <diff>"]));
    let c = |n| colour(&f, n).unwrap_or_else(|| panic!("{n} drawn: {f:?}"));
    assert!(red(c("slow_fn")), "{:?}", c("slow_fn"));
    assert!(blue(c("fast_fn")), "{:?}", c("fast_fn"));
    assert!(red(c("new_fn")), "{:?}", c("new_fn"));
    assert_eq!(colour(&f, "gone_fn"), None, "NEW has no gone_fn to draw");
    for steady in ["steady_a", "steady_b", "steady_c", "steady_d", "frame"] {
        assert!(pale(c(steady)), "{steady}: {:?}", c(steady));
    }

    // BASE's frames: the removed function shows, blue; the added one is gone.
    let f = frames(&svg(&["--base-widths"]));
    let c = |n| colour(&f, n).unwrap_or_else(|| panic!("{n} drawn: {f:?}"));
    assert!(blue(c("gone_fn")), "{:?}", c("gone_fn"));
    assert!(red(c("slow_fn")) && blue(c("fast_fn")));
    assert_eq!(colour(&f, "new_fn"), None);

    // The two pictures need call stacks of self time.
    for bad in [
        &["diff", &base, &new, "--format", "svg"][..],
        &[
            "diff", &base, &new, "--by", "stack", "--format", "folded", "--metric", "p90",
        ],
    ] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--by stack"));
    }
}
