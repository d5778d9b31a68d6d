//! Sampling profiles on real recordings: threads and processes as the profiler named them,
//! and stacks over time, each checked against a plain reading of the file.

use std::collections::BTreeSet;

use spall_test_support::fixture;
use trace_model::{load, ExtId, Trace};

/// The (pid, tid) pairs of a `perf script` file's headers, read plainly: the first field
/// after the command that is `pid/tid` or a bare tid (pid = tid).
fn perf_threads(rel: &str) -> BTreeSet<(i64, i64)> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let id = line.split_whitespace().nth(1).unwrap();
        let (pid, tid) = id.split_once('/').unwrap_or((id, id));
        out.insert((pid.parse().unwrap(), tid.parse().unwrap()));
    }
    out
}

fn model_threads(t: &Trace) -> BTreeSet<(i64, i64)> {
    let num = |x: ExtId| match x {
        ExtId::Num(n) => n,
        ExtId::Str(_) => panic!("a numeric id"),
    };
    (t.threads().iter())
        .map(|th| (num(t.processes()[th.process as usize].pid), num(th.tid)))
        .collect()
}

/// `perf script -F comm,pid,tid,...` prints `comm pid/tid`: the worker thread joins its
/// process. Without the pid (perf's default fields), each tid is a process of its own.
#[test]
fn perf_threads_join_their_process_where_perf_printed_its_pid() {
    let fields = load(fixture("real/profiles/spin_fields.perf")).unwrap();
    let want = perf_threads("real/profiles/spin_fields.perf");
    assert_eq!(want, BTreeSet::from([(611, 611), (611, 615)]));
    assert_eq!(model_threads(&fields), want);
    assert_eq!(fields.processes().len(), 1);
    // Named after its main thread's command, as perf and Perfetto name it.
    let name = fields.processes()[0].name.map(|n| fields.str(n));
    assert_eq!(name, Some("spin"));
    for th in fields.threads() {
        assert_eq!(th.name.map(|n| fields.str(n)), Some("spin"));
    }
    let plain = load(fixture("real/profiles/spin.perf")).unwrap();
    let want = perf_threads("real/profiles/spin.perf");
    assert_eq!(want, BTreeSet::from([(611, 611), (615, 615)]));
    assert_eq!(model_threads(&plain), want);
    assert_eq!(plain.processes().len(), 2);
}

/// Stacks over time on a real perf profile: at every depth the boxes cover each sample
/// that is that deep exactly once, with the frame the sample's stack holds there.
#[test]
fn a_real_profiles_stack_lanes_cover_each_sample_once() {
    for rel in ["real/profiles/spin.perf", "real/profiles/work.cpuprofile"] {
        let t = load(fixture(rel)).unwrap();
        for st in t.samples() {
            let lanes = st.stack_lanes(t.frames());
            for (d, lane) in lanes.iter().enumerate() {
                let mut covered = 0;
                let at = |s: usize| trace_model::frame_at_depth(t.frames(), st.frame[s], d);
                for i in 0..lane.len() {
                    let r = st.samples_in(lane.start[i], lane.end(i));
                    if i > 0 {
                        assert!(lane.start[i] >= lane.end(i - 1), "{rel}: overlap at {d}");
                        // Boxes that touch hold other frames: consecutive samples with one
                        // frame there are one box.
                        if lane.start[i] == lane.end(i - 1) {
                            assert_ne!(at(r.start - 1), at(r.start), "{rel}: split at {d}");
                        }
                    }
                    assert!(!r.is_empty(), "{rel}: an empty box");
                    for s in r {
                        let f = at(s);
                        assert_eq!(f.map(|f| t.frames()[f as usize].name), Some(lane.name[i]));
                        covered += 1;
                    }
                }
                let deep = (0..st.ts.len()).filter(|&s| at(s).is_some()).count();
                assert_eq!(covered, deep, "{rel}: depth {d}");
            }
        }
    }
}

/// The statistics table's rows (the viewer's and the page's panel) of a real `perf
/// record -g`: per function, its samples, total and self weight in the profile's unit,
/// each as a plain reading of the `perf script` text counts them (self: the weight of the
/// samples whose first frame it is; total: of those whose stack holds it, once each).
#[test]
fn a_profiles_table_stats_are_its_functions_weights() {
    let text = std::fs::read_to_string(fixture("real/profiles/spin.perf")).unwrap();
    let mut want: std::collections::BTreeMap<String, (u64, i64, i64)> = Default::default();
    for record in text.split("\n\n").filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines().filter(|l| !l.starts_with('#'));
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        // `comm tid secs: period event:`
        let period: i64 = header[header.len() - 2].parse().unwrap();
        let names: Vec<String> = lines
            .map(|l| {
                let sym = l.trim().split_once(' ').unwrap().1;
                let sym = sym.rsplit_once(" (").map_or(sym, |s| s.0);
                sym.split_once("+0x").map_or(sym, |s| s.0).to_string()
            })
            .collect();
        let mut seen = BTreeSet::new();
        for (i, n) in names.iter().enumerate() {
            let e = want.entry(n.clone()).or_default();
            if seen.insert(n.clone()) {
                e.0 += 1;
                e.1 += period;
            }
            if i == 0 {
                e.2 += period;
            }
        }
    }
    let t = load(fixture("real/profiles/spin.perf")).unwrap();
    let rows = t.table_stats(&Default::default());
    let got: std::collections::BTreeMap<String, (u64, i64, i64)> = (rows.iter())
        .map(|r| (t.str(r.name).to_string(), (r.count, r.total_ns, r.self_ns)))
        .collect();
    assert!(want.len() > 5 && want["leaf"].2 > 0, "{want:?}");
    assert_eq!(got, want);
    // Largest total first.
    assert!(rows.windows(2).all(|w| w[0].total_ns >= w[1].total_ns));
}

/// A stack's frames: (name, file, line).
type Stack = Vec<(String, String, u32)>;

/// A `perf script` text whose records end in stacks seen before, under other callers, with
/// frames printed at other addresses (other lines, the same frame) and with other source
/// lines (the same line, another frame), and now and then a record with its frame on the
/// header line; and the same stacks, each as a plain reading of its record gives them
/// (name, file, line), innermost first.
fn perf_with_shared_stacks() -> (String, Vec<Stack>) {
    let mut state = 7u64;
    let mut rand = |n: u64| {
        state = (state.wrapping_mul(6_364_136_223_846_793_005)).wrapping_add(1);
        (state >> 33) % n
    };
    let stacks: Vec<Vec<u64>> = (0..40)
        .map(|_| (0..2 + rand(7)).map(|_| rand(12)).collect())
        .collect();
    let (mut text, mut want) = (String::new(), Vec::new());
    for i in 0..6000u64 {
        let ts = format!("{}.{:06}", 1 + i / 1000, i % 1000 * 1000);
        if i % 50 == 7 {
            text += &format!("prog 9 {ts}: 1 cycles: 4010 f1+0x2 (/bin/x)\n\n");
            want.push(vec![("f1".into(), "/bin/x".into(), 0)]);
            continue;
        }
        text += &format!("prog 9 {ts}: 1 cycles:\n");
        let mut frames = Vec::new();
        for &f in stacks[rand(40) as usize].iter().rev() {
            let addr = 0x4000 + f * 0x100 + rand(2) * 4;
            text += &format!("\t{addr:x} f{f}+0x{:x} (/bin/x)\n", addr & 0xff);
            if f == 3 {
                let line = 30 + rand(2) as u32;
                text += &format!("\t  f.c:{line}\n");
                frames.push((format!("f{f}"), "f.c".to_string(), line));
            } else {
                frames.push((format!("f{f}"), "/bin/x".to_string(), 0));
            }
        }
        text += "\n";
        want.push(frames);
    }
    (text, want)
}

/// Each sample's stack in the model, innermost first, in file order (one thread); and
/// checks that no two frames are the same frame.
fn sample_stacks(t: &Trace) -> Vec<Stack> {
    assert_eq!(t.samples().len(), 1);
    let fr = t.frames().iter();
    let distinct: BTreeSet<_> = fr.map(|f| (f.name, f.file, f.line, f.parent)).collect();
    assert_eq!(distinct.len(), t.frames().len(), "a frame twice");
    let mut out = Vec::new();
    for &leaf in &t.samples()[0].frame {
        let mut stack = Vec::new();
        let mut f = leaf;
        while f != trace_model::NO_FRAME {
            let fr = &t.frames()[f as usize];
            stack.push((t.str(fr.name).into(), t.str(fr.file).into(), fr.line));
            f = fr.parent;
        }
        out.push(stack);
    }
    out
}

/// `perf script`'s records name their stacks by a call tree of their lines, kept across a
/// stream's runs; a sample's stack is taken from the deepest node seen before. Whole and
/// streamed in runs of a few records, every sample's stack is its record's frames.
#[test]
fn perf_samples_stacks_are_their_records_frames_whole_and_streamed() {
    let (text, want) = perf_with_shared_stacks();
    let whole = trace_model::load_bytes(text.as_bytes()).unwrap();
    assert_eq!(sample_stacks(&whole), want);
    for target in [300, 4096] {
        let mut load = trace_model::LoadStream::with_target(text.as_bytes(), target).unwrap();
        for p in text.as_bytes().chunks(1000) {
            load.push(p).unwrap();
        }
        let t = load.finish().unwrap().expect("in order");
        assert_eq!(sample_stacks(&t), want, "runs of {target} bytes");
    }
}
