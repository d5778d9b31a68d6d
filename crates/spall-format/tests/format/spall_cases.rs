//! `.spall` records the reference viewer rejects, and the writer's round trip.

use crate::common::*;
use spall_format::{Args, Phase, RawEvent, RawId, SpallWriter, WarningKind};

fn header(version: u64, unit: f64) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&0x0BAD_F00Du64.to_le_bytes());
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&unit.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes());
    h
}

fn v3_buffer(pid: u32, tid: u32, events: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(events.len() as u32).to_le_bytes());
    b.extend_from_slice(&tid.to_le_bytes());
    b.extend_from_slice(&pid.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b.extend_from_slice(events);
    b
}

fn v3_begin(t: u64, name: &[u8], args: &[u8]) -> Vec<u8> {
    let mut e = vec![3];
    e.extend_from_slice(&t.to_le_bytes());
    e.push(name.len() as u8);
    e.push(args.len() as u8);
    e.extend_from_slice(name);
    e.extend_from_slice(args);
    e
}

fn v3_end(t: u64) -> Vec<u8> {
    let mut e = vec![4];
    e.extend_from_slice(&t.to_le_bytes());
    e
}

#[test]
fn v3_names_nul_padding_utf8_and_pad_skip() {
    let mut ev = Vec::new();
    ev.extend([8, 4]);
    ev.extend(b"game");
    ev.extend([9, 5]);
    ev.extend(b"main\0");
    ev.extend(v3_begin(10, b"frame\0", b"n=1"));
    ev.extend([7, 3, 0, 0, 0, 0xaa, 0xbb, 0xcc]); // pad skip of 3 bytes
    ev.extend(v3_begin(11, &[b'b', 0xff], b""));
    ev.extend(v3_end(12));
    ev.extend(v3_end(20));
    let mut file = header(3, 2.0); // 2 ns per tick
    file.extend(v3_buffer(5, 6, &ev));
    let (events, summary) = decode_all(&file);
    assert_eq!(warnings(&summary), counts(&[("invalid_utf8", 1)]));
    let m: Vec<_> = events
        .iter()
        .map(|e| (e.ph, e.name.to_string(), e.ts))
        .collect();
    assert_eq!(
        m,
        [
            (Phase::METADATA, "process_name".into(), 0),
            (Phase::METADATA, "thread_name".into(), 0),
            (Phase::BEGIN, "frame".into(), 20),
            (Phase::BEGIN, "b\u{FFFD}".into(), 22),
            (Phase::END, "".into(), 24),
            (Phase::END, "".into(), 40),
        ]
    );
    assert_eq!(events[0].args.to_json().unwrap()["name"], "game");
    assert_eq!(events[1].args.to_json().unwrap()["name"], "main");
    assert_eq!(events[2].args, Args::Text("n=1".into()));
    assert!(events
        .iter()
        .all(|e| e.pid == RawId::Num(5) && e.tid == RawId::Num(6)));
}

#[test]
fn v3_types_without_layout_skip_their_buffer_only() {
    for t in [1u8, 2, 6, 0, 200] {
        let mut bad = v3_begin(1, b"a", b"");
        bad.push(t);
        bad.extend([1, 2, 3, 4, 5]);
        let mut file = header(3, 1.0);
        file.extend(v3_buffer(1, 1, &bad));
        file.extend(v3_buffer(
            1,
            2,
            &[v3_begin(5, b"kept", b""), v3_end(6)].concat(),
        ));
        let (events, summary) = decode_all(&file);
        let names: Vec<_> = events.iter().map(|e| e.name.to_string()).collect();
        assert_eq!(names, ["a", "kept", ""], "type {t}");
        assert_eq!(
            summary
                .diagnostics
                .count(WarningKind::SpallUnsupportedEvent),
            1
        );
        let w = &summary.diagnostics.examples()[0];
        assert_eq!(w.offset, 32 + 20 + 12, "type {t}");
        assert!(w.message.contains("6 bytes"), "{}", w.message);
    }
}

#[test]
fn v3_buffer_claiming_gigabytes_keeps_its_complete_events() {
    let mut ev = v3_begin(1, b"a", b"");
    ev.extend(v3_end(2));
    let mut file = header(3, 1.0);
    let mut buf = v3_buffer(1, 1, &ev);
    buf[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    file.extend(buf);
    let (events, summary) = decode_all(&file);
    assert_eq!(events.len(), 2);
    assert_eq!(warnings(&summary), counts(&[("spall_truncated_buffer", 1)]));
}

#[test]
fn v1_bad_timestamps_and_unknown_types() {
    let mut file = header(1, 1.0);
    let begin = |t: f64, name: &[u8]| {
        let mut e = vec![3, 0];
        e.extend_from_slice(&1u32.to_le_bytes());
        e.extend_from_slice(&2u32.to_le_bytes());
        e.extend_from_slice(&t.to_le_bytes());
        e.push(name.len() as u8);
        e.push(0);
        e.extend_from_slice(name);
        e
    };
    file.extend(begin(1.5, b"ok"));
    file.extend(begin(f64::NAN, b"nan"));
    file.extend(begin(f64::INFINITY, b"inf"));
    file.extend(begin(-2.0, b"negative"));
    file.extend(begin(1e30, b"huge"));
    file.extend([5, 9, 9, 9]); // an instant: no known layout
    file.extend(begin(3.0, b"unreachable"));
    let (events, summary) = decode_all(&file);
    let got: Vec<_> = events.iter().map(|e| (e.name.to_string(), e.ts)).collect();
    assert_eq!(
        got,
        [("ok".to_string(), 1500), ("negative".to_string(), -2000)]
    );
    assert_eq!(
        warnings(&summary),
        counts(&[("spall_bad_timestamp", 3), ("spall_unsupported_event", 1)])
    );
}

#[test]
fn writer_round_trip_gives_back_identical_events() {
    let words = [
        "render",
        "update \"quoted\"",
        "naïve",
        "日本語",
        "a\\b",
        "",
        "x\u{1F600}",
    ];
    let mut rng = spall_format::synth::Rng(7);
    let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap();
    let mut expected: Vec<RawEvent<'static>> = Vec::new();
    let mut depth = [0u32; 4];
    let mut now = [1_000u64; 4];
    for t in 0..4u32 {
        w.name_thread(9, t, &format!("worker {t}")).unwrap();
    }
    // Enough events to need several 1 MiB buffers per thread.
    for _ in 0..400_000 {
        let t = (rng.next_u64() % 4) as usize;
        now[t] += rng.next_u64() % 1000;
        if rng.next_u64().is_multiple_of(10) {
            w.instant(9, t as u32, now[t], "tick", "frame=1").unwrap();
            expected.push(RawEvent {
                ph: Phase::INSTANT,
                name: "tick".into(),
                ts: now[t] as i64,
                pid: RawId::Num(9),
                tid: RawId::Num(t as i64),
                args: Args::Text("frame=1".into()),
                ..Default::default()
            });
        } else if depth[t] > 0 && rng.next_u64().is_multiple_of(2) {
            w.end(9, t as u32, now[t]).unwrap();
            depth[t] -= 1;
            expected.push(RawEvent {
                ph: Phase::END,
                ts: now[t] as i64,
                pid: RawId::Num(9),
                tid: RawId::Num(t as i64),
                ..Default::default()
            });
        } else {
            let name = words[(rng.next_u64() % words.len() as u64) as usize];
            let args = if rng.next_u64().is_multiple_of(3) {
                "k=v"
            } else {
                ""
            };
            w.begin(9, t as u32, now[t], name, args).unwrap();
            depth[t] += 1;
            expected.push(RawEvent {
                ph: Phase::BEGIN,
                name: name.to_string().into(),
                ts: now[t] as i64,
                pid: RawId::Num(9),
                tid: RawId::Num(t as i64),
                args: if args.is_empty() {
                    Args::None
                } else {
                    Args::Text(args.into())
                },
                ..Default::default()
            });
        }
    }
    let bytes = w.finish().unwrap();
    let (events, summary) = decode_all(&bytes);
    assert!(summary.diagnostics.is_empty());
    // Events come back grouped by buffer; within each thread, order and content are identical.
    for t in 0..4i64 {
        let per = |v: &[RawEvent<'static>]| -> Vec<RawEvent<'static>> {
            v.iter()
                .filter(|e| e.tid == RawId::Num(t) && e.ph != Phase::METADATA)
                .map(|e| RawEvent {
                    offset: 0,
                    ..e.clone()
                })
                .collect()
        };
        assert_eq!(per(&events), per(&expected), "thread {t}");
    }
    // Several buffers were needed, none larger than 1 MiB.
    let mut p = 32;
    let mut buffers = 0;
    while p < bytes.len() {
        let size = u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
        assert!(size + 20 <= 1 << 20);
        p += 20 + size;
        buffers += 1;
    }
    assert!(buffers >= 8, "{buffers}");
}

#[test]
fn writer_cuts_long_names_at_a_char_boundary_and_counts_them() {
    let long = "é".repeat(200); // 400 bytes
    let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap();
    w.begin(1, 1, 5, &long, "").unwrap();
    assert_eq!(w.truncated_strings(), 1);
    let bytes = w.finish().unwrap();
    let (events, summary) = decode_all(&bytes);
    assert!(summary.diagnostics.is_empty());
    assert_eq!(events[0].name.len(), 254);
    assert!(long.starts_with(events[0].name.as_ref()));
}

#[test]
fn writer_flushes_on_drop() {
    let mut out = Vec::new();
    {
        let mut w = SpallWriter::new(&mut out, 1.0).unwrap();
        w.begin(1, 1, 5, "dropped", "").unwrap();
    }
    let (events, _) = decode_all(&out);
    assert_eq!(events[0].name, "dropped");
}
