//! System traces: Perfetto ftrace bundles (full events and compact_sched), process trees
//! and atrace markers, from the generated fixtures of `scripts/gen-systrace.py`; and
//! hostile ones (cut anywhere, impossible CPUs) that must warn and keep the rest.

use spall_format::{decode, EventSink, Phase, RawEvent, RawSched, SchedKind, WarningKind};

use crate::common::read_fixture;

#[derive(Default)]
struct Sys {
    sched: Vec<RawSched<'static>>,
    events: Vec<RawEvent<'static>>,
}

impl EventSink for Sys {
    fn event(&mut self, e: &RawEvent<'_>) {
        self.events.push(e.clone().into_owned());
    }
    fn sched(&mut self, s: &RawSched<'_>) {
        self.sched.push(s.clone().into_owned());
    }
}

fn gunzip(name: &str) -> Vec<u8> {
    let gz = read_fixture(&format!("systrace/{name}.pftrace.gz"));
    spall_format::gunzip(&gz, 1 << 30, &mut spall_format::Diagnostics::default()).unwrap()
}

fn kinds(s: &Sys, k: SchedKind) -> Vec<&RawSched<'static>> {
    s.sched.iter().filter(|r| r.kind == k).collect()
}

#[test]
fn full_events_read_with_their_fields() {
    let mut s = Sys::default();
    let sum = decode(&gunzip("events"), &mut s).unwrap();
    assert!(
        sum.diagnostics.is_empty(),
        "{:?}",
        sum.diagnostics.counts().collect::<Vec<_>>()
    );
    let sw = kinds(&s, SchedKind::Switch);
    assert_eq!(sw.len(), 10);
    let first = sw[0];
    assert_eq!(
        (first.ts, first.cpu, first.prev_tid, first.tid),
        (1000, 0, 0, 100)
    );
    assert_eq!(
        (&*first.comm, &*first.prev_comm, first.prio),
        ("app", "swapper/0", 120)
    );
    let waking = kinds(&s, SchedKind::Waking);
    assert_eq!(waking.len(), 3);
    assert_eq!(
        (waking[0].actor, waking[0].tid, &*waking[0].comm),
        (100, 101, "RenderThread")
    );
    assert_eq!(waking[1].flags, Some(0x10));
    let nt = kinds(&s, SchedKind::NewTask)[0];
    assert_eq!((nt.actor, nt.tid, nt.value), (100, 102, 0x10100));
    assert_eq!(&*kinds(&s, SchedKind::Rename)[0].comm, "pool-1");
    assert_eq!(kinds(&s, SchedKind::Wakeup).len(), 2);
    let freq = kinds(&s, SchedKind::CpuFrequency);
    assert_eq!((freq[1].cpu, freq[1].value), (1, 1_200_000));
    assert_eq!(kinds(&s, SchedKind::CpuIdle)[1].value, 4_294_967_295);
    assert_eq!(kinds(&s, SchedKind::KernelVersion)[0].value, 6001);
    assert_eq!(kinds(&s, SchedKind::BlockedReason)[0].value, 1);
    // Atrace markers: thread spans (an `E` with no tgid joins its `B`'s process), a
    // process counter, an async pair and an instant; names from the process tree.
    let phases: Vec<(Phase, &str, String)> = (s.events.iter())
        .filter(|e| e.ph != Phase::METADATA)
        .map(|e| (e.ph, &*e.name, e.pid.to_string()))
        .collect();
    assert_eq!(phases.len(), 8, "{phases:?}");
    assert!(phases.contains(&(Phase::BEGIN, "doFrame", "100".into())));
    assert!(phases.contains(&(Phase::COUNTER, "queue", "100".into())));
    assert!(phases.contains(&(Phase::ASYNC_BEGIN, "load", "100".into())));
    let names: Vec<String> = (s.events.iter())
        .filter(|e| e.ph == Phase::METADATA)
        .map(|e| format!("{} {} {}", e.name, e.pid, e.args.raw().unwrap_or("")))
        .collect();
    assert!(names.contains(&"process_name 100 {\"name\":\"/system/bin/app\"}".to_string()));
    assert!(names.contains(&"thread_name 100 {\"name\":\"RenderThread\"}".to_string()));
}

#[test]
fn compact_sched_deltas_and_intern_table() {
    let mut s = Sys::default();
    decode(&gunzip("compact"), &mut s).unwrap();
    let sw: Vec<(i64, u32, i64, i64, String)> = kinds(&s, SchedKind::CompactSwitch)
        .iter()
        .map(|r| (r.ts, r.cpu, r.tid, r.prev_state, r.comm.to_string()))
        .collect();
    assert_eq!(sw.len(), 8);
    assert_eq!(sw[0], (1000, 0, 100, 0, "app".into()));
    assert_eq!(sw[1], (3000, 0, 0, 1, "swapper/0".into()));
    assert_eq!(sw[4], (6000, 1, 100, 0, "app".into()));
    assert_eq!(sw[6], (7000, 0, 0, 0x800, "swapper/0".into()));
    let wk = kinds(&s, SchedKind::CompactWaking);
    assert_eq!(wk.len(), 4);
    assert_eq!(
        (wk[1].ts, wk[1].tid, wk[1].value, wk[1].flags),
        (5800, 100, 1, Some(0x10))
    );
}

#[test]
fn hostile_inputs_warn_and_keep_the_rest() {
    let mut s = Sys::default();
    let sum = decode(&gunzip("hostile"), &mut s).unwrap();
    assert_eq!(
        sum.diagnostics.count(WarningKind::FtraceMalformed),
        1,
        "the broken marker"
    );
    assert!(kinds(&s, SchedKind::Switch)
        .iter()
        .any(|r| r.cpu == 4_000_000_000));
    assert!(kinds(&s, SchedKind::CpuFrequency)
        .iter()
        .any(|r| r.cpu == 3_000_000_000));
}

#[test]
fn a_trace_cut_anywhere_keeps_what_came_before() {
    let bytes = gunzip("events");
    let mut whole = Sys::default();
    decode(&bytes, &mut whole).unwrap();
    let mut last = 0;
    for cut in (8..bytes.len()).step_by(7) {
        let mut s = Sys::default();
        let Ok(sum) = decode(&bytes[..cut], &mut s) else {
            continue;
        };
        assert!(s.sched.len() <= whole.sched.len());
        if cut < bytes.len() {
            assert!(sum.diagnostics.total() > 0, "a cut at {cut} went unnoticed");
        }
        last = last.max(s.sched.len());
    }
    assert!(last > whole.sched.len() / 2);
}

#[test]
fn ftrace_text_and_systrace_pages_read_alike() {
    let text = read_fixture("systrace/events.trace");
    let html = read_fixture("systrace/events.html");
    let (mut a, mut b) = (Sys::default(), Sys::default());
    let sa = decode(&text, &mut a).unwrap();
    let sb = decode(&html, &mut b).unwrap();
    assert_eq!(
        (sa.format.name(), sb.format.name()),
        ("systrace", "systrace")
    );
    assert!(
        sa.diagnostics.is_empty(),
        "{:?}",
        sa.diagnostics.counts().collect::<Vec<_>>()
    );
    // The page's records are the text's (offsets aside: the page's count from its start).
    let no_offsets = |s: &Sys| -> Vec<RawSched<'static>> {
        (s.sched.iter())
            .map(|r| RawSched {
                offset: 0,
                ..r.clone()
            })
            .collect()
    };
    assert_eq!(no_offsets(&a), no_offsets(&b));
    // The same records as the protobuf file's, but for the text's microseconds.
    let mut p = Sys::default();
    decode(&gunzip("events"), &mut p).unwrap();
    // A blocked reason's caller: an address in the protobuf, a symbol in the text.
    let comm = |r: &RawSched<'_>| match r.kind {
        SchedKind::BlockedReason => String::new(),
        _ => r.comm.to_string(),
    };
    let key = |r: &RawSched<'_>| (r.kind, r.ts, r.cpu, r.tid, comm(r));
    let pk: Vec<_> = (p.sched.iter())
        // Text has no new tasks: trace_processor's text reader skips them, and so does ours.
        .filter(|r| {
            !matches!(
                r.kind,
                SchedKind::KernelVersion | SchedKind::ThreadGroup | SchedKind::NewTask
            )
        })
        .map(|r| (r.kind, r.ts * 1000, r.cpu, r.tid, comm(r)))
        .collect();
    let tk: Vec<_> = (a.sched.iter())
        .filter(|r| r.kind != SchedKind::ThreadGroup)
        .map(key)
        .collect();
    let mut pk_sorted = pk.clone();
    pk_sorted.sort_by_key(|k| (k.1, k.2));
    let mut tk_sorted = tk.clone();
    tk_sorted.sort_by_key(|k| (k.1, k.2));
    assert_eq!(tk_sorted, pk_sorted);
    let sw: Vec<_> = kinds(&a, SchedKind::Switch)
        .iter()
        .map(|r| r.prev_state)
        .collect();
    assert_eq!(sw, [0, 0, 1, 0, 1, 0, 0, 0x800, 2, 0x402]);
    let markers: Vec<_> = (a.events.iter())
        .map(|e| (e.ph, e.name.to_string()))
        .collect();
    assert_eq!(markers.len(), 8);
}

/// The records of `s` without their offsets (which count from different starts in
/// different wrappings of the same text).
fn no_offsets(s: &Sys) -> Vec<RawSched<'static>> {
    (s.sched.iter())
        .map(|r| RawSched {
            offset: 0,
            ..r.clone()
        })
        .collect()
}

fn plain_text() -> Sys {
    let mut s = Sys::default();
    decode(&read_fixture("systrace/events.trace"), &mut s).unwrap();
    s
}

#[test]
fn compressed_atrace_output_reads_as_its_text() {
    let text = plain_text();
    let z = read_fixture("systrace/events.ctrace");
    let mut s = Sys::default();
    let sum = decode(&z, &mut s).unwrap();
    assert_eq!(sum.format.name(), "systrace");
    assert!(sum.diagnostics.is_empty(), "{:?}", sum.diagnostics);
    assert_eq!(no_offsets(&s), no_offsets(&text));
    assert_eq!(s.events.len(), text.events.len());
    // `adb shell` through a terminal doubles every line end, inside the zlib stream too.
    let mut crlf = Vec::new();
    for &c in &z {
        if c == b'\n' {
            crlf.push(b'\r');
        }
        crlf.push(c);
    }
    let mut s = Sys::default();
    let sum = decode(&crlf, &mut s).unwrap();
    assert!(sum.diagnostics.is_empty(), "{:?}", sum.diagnostics);
    assert_eq!(no_offsets(&s), no_offsets(&text));
    // Cut: what inflated before the cut, and a warning.
    let mut s = Sys::default();
    let sum = decode(&z[..z.len() * 2 / 3], &mut s).unwrap();
    assert!(sum.diagnostics.count(WarningKind::FtraceMalformed) >= 1);
    assert!(!s.sched.is_empty() && s.sched.len() < text.sched.len());
    // Uncompressed atrace output (`atrace` without -z) has the same `TRACE:` line.
    let plain = [
        &b"capturing trace... done\nTRACE:\n"[..],
        &read_fixture("systrace/events.trace"),
    ]
    .concat();
    let mut s = Sys::default();
    assert!(decode(&plain, &mut s).unwrap().diagnostics.is_empty());
    assert_eq!(no_offsets(&s), no_offsets(&text));
}

#[test]
fn a_systrace_page_names_processes_from_its_process_dump() {
    let text = plain_text();
    let mut s = Sys::default();
    let sum = decode(&read_fixture("systrace/android.html"), &mut s).unwrap();
    assert_eq!(sum.format.name(), "systrace");
    assert!(sum.diagnostics.is_empty(), "{:?}", sum.diagnostics);
    // The trace text came base64 gzip: the same records, after the dump's.
    let dump = s.sched.len() - text.sched.len();
    assert_eq!(no_offsets(&s)[dump..], no_offsets(&text)[..]);
    let groups: Vec<(i64, i64)> = s.sched[..dump]
        .iter()
        .map(|r| {
            assert_eq!(r.kind, SchedKind::ThreadGroup);
            (r.tid, r.value)
        })
        .collect();
    assert!(groups.contains(&(201, 200)) && groups.contains(&(102, 100)));
    let names: Vec<String> = (s.events.iter())
        .filter(|e| e.ph == Phase::METADATA)
        .map(|e| format!("{} {} {} {}", e.name, e.pid, e.tid, e.args.raw().unwrap()))
        .collect();
    assert!(names.contains(&r#"process_name 100 0 {"name":"com.example.app"}"#.to_string()));
    assert!(names.contains(&r#"process_name 200 0 {"name":"system_server"}"#.to_string()));
    // Thread names only where the text names none: the scheduler's comm wins, as in
    // trace_processor (the app's main thread stays "app", not "com.example.app").
    assert!(names.contains(&r#"thread_name 200 200 {"name":"system_server"}"#.to_string()));
    assert!(names.contains(&r#"thread_name 1 1 {"name":"init"}"#.to_string()));
    assert!(
        !names.iter().any(|n| n.starts_with("thread_name 100 100")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("thread_name 200 201")),
        "{names:?}"
    );
    // A dump line that breaks is counted, and the rest kept.
    let page = String::from_utf8(read_fixture("systrace/android.html")).unwrap();
    let broken = page.replacen("u0_a123        100   101", "u0_a123        x   101", 1);
    let mut b = Sys::default();
    let sum = decode(broken.as_bytes(), &mut b).unwrap();
    assert_eq!(sum.diagnostics.count(WarningKind::FtraceMalformed), 1);
    assert_eq!(b.sched.len(), s.sched.len() - 1);
}

#[test]
fn chrome_json_system_trace_events_join_the_spans() {
    let text = plain_text();
    let json = read_fixture("systrace/chrome-system.json");
    let mut s = Sys::default();
    let sum = decode(&json, &mut s).unwrap();
    assert_eq!(sum.format.name(), "json");
    assert!(sum.diagnostics.is_empty(), "{:?}", sum.diagnostics);
    assert_eq!(no_offsets(&s), no_offsets(&text));
    let names: Vec<&str> = s.events.iter().map(|e| &*e.name).collect();
    assert!(names.contains(&"Looper.dispatch") && names.contains(&"doFrame"));
    assert_eq!(sum.events as usize, s.events.len() + s.sched.len());
    // Streamed in small runs, with the text before the event array or after it.
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let before = format!(
        "{{\"systemTraceEvents\": {}, \"traceEvents\": {}}}",
        v["systemTraceEvents"], v["traceEvents"]
    );
    for bytes in [&json[..], before.as_bytes()] {
        let mut st = spall_format::JsonStream::with_target(64, Sys::default);
        for piece in bytes.chunks(50) {
            st.push(piece).unwrap();
        }
        let (sum, sinks) = st.finish().unwrap().unwrap();
        assert!(sum.diagnostics.is_empty(), "{:?}", sum.diagnostics);
        let sched: usize = sinks.iter().map(|k| k.sched.len()).sum();
        let events: usize = sinks.iter().map(|k| k.events.len()).sum();
        assert_eq!(sched, text.sched.len());
        assert_eq!(sum.events as usize, sched + events);
    }
    // Not a string: counted, the spans kept.
    let mut s = Sys::default();
    let sum = decode(
        br#"{"traceEvents": [], "systemTraceEvents": {"a": 1}}"#,
        &mut s,
    )
    .unwrap();
    assert_eq!(sum.diagnostics.count(WarningKind::FtraceMalformed), 1);
}

#[test]
fn compressed_text_stops_at_the_limit() {
    let z = read_fixture("systrace/events.ctrace");
    let opts = spall_format::DecodeOptions {
        max_decompressed: 1000,
        ..Default::default()
    };
    let mut s = Sys::default();
    let sum = spall_format::decode_with(&z, &opts, &mut s).unwrap();
    let why = format!("{:?}", sum.diagnostics);
    assert!(why.contains("inflates past 1000 bytes"), "{why}");
    // The lines of the first 1000 bytes (the header's, and a switch or so), the last cut.
    assert!(s.sched.len() < 5, "{}", s.sched.len());
}

/// A trace of one compact_sched bundle of CPU 2, each column packed as given.
fn compact_trace(cols: &[(u64, &[u64])]) -> Vec<u8> {
    spall_test_support::compact_sched_trace(2, &["app"], cols)
}

/// Packed columns of values 1 to 10 bytes long read as written, and the two kinds merged
/// by time, a switch first at a time both have, the rest of either kind after the other
/// ends.
#[test]
fn compact_columns_of_every_varint_width_merge_by_time() {
    let trace = compact_trace(&[
        (1, &[100, 200, 20_000, 1, 5]),
        (2, &[1, 0x800, 0x1_0000, u64::MAX, 0]),
        (3, &[5, 300, 70_000, 2_000_000_000, 7]),
        (4, &[120, 130, 0, 139, 120]),
        (6, &[0, 0, 0, 0, 0]),
        (7, &[300, 1, 19_999]),
        (8, &[6, 128, 16_384]),
        (9, &[0, 1 << 35, 1]),
        (10, &[100, 200, 120]),
        (11, &[0, 0, 0]),
        (12, &[0x10, 0, 0x18]),
    ]);
    let mut s = Sys::default();
    decode(&trace, &mut s).unwrap();
    let got: Vec<(i64, bool, i64, i64, i32, i64)> = (s.sched.iter())
        .map(|r| {
            let waking = r.kind == SchedKind::CompactWaking;
            let v = if waking { r.value } else { r.prev_state };
            (r.ts, waking, r.tid, v, r.prio, r.cpu.into())
        })
        .collect();
    let sw = |ts, tid, state, prio| (ts, false, tid, state, prio, 2);
    let wk = |ts, tid, target, prio| (ts, true, tid, target, prio, 2);
    assert_eq!(
        got,
        [
            sw(100, 5, 1, 120),
            sw(300, 300, 0x800, 130),
            wk(300, 6, 0, 100),
            wk(301, 128, (1u64 << 35) as u32 as i64, 200),
            sw(20_300, 70_000, 0x1_0000, 0),
            wk(20_300, 16_384, 1, 120),
            sw(20_301, 2_000_000_000, -1, 139),
            sw(20_306, 7, 0, 120),
        ]
    );
    let flags: Vec<Option<u32>> = (s.sched.iter())
        .filter(|r| r.kind == SchedKind::CompactWaking)
        .map(|r| r.flags)
        .collect();
    assert_eq!(flags, [Some(0x10), Some(0), Some(0x18)]);
    assert!(s.sched.iter().all(|r| r.comm == "app"));
}
