//! Hand-built packets: the decoder's mapping, and hostile input.

use crate::{decode, Collect, Format, Phase, RawEvent, RawId, WarningKind};

/// A message under construction.
#[derive(Clone, Default)]
pub(crate) struct M(pub Vec<u8>);

pub(super) fn put_varint(out: &mut Vec<u8>, v: u64) {
    crate::synth_proto::varint(v, out);
}

impl M {
    pub fn v(mut self, field: u32, v: u64) -> M {
        put_varint(&mut self.0, (field as u64) << 3);
        put_varint(&mut self.0, v);
        self
    }
    pub fn fixed(mut self, field: u32, v: u64) -> M {
        put_varint(&mut self.0, (field as u64) << 3 | 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn b(mut self, field: u32, b: &[u8]) -> M {
        put_varint(&mut self.0, (field as u64) << 3 | 2);
        put_varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    pub fn s(self, field: u32, s: &str) -> M {
        self.b(field, s.as_bytes())
    }
    pub fn m(self, field: u32, m: M) -> M {
        self.b(field, &m.0)
    }
}

pub(super) fn trace(packets: &[M]) -> Vec<u8> {
    packets
        .iter()
        .fold(M::default(), |t, p| t.m(1, p.clone()))
        .0
}

pub(super) fn run(b: &[u8]) -> (Vec<RawEvent<'static>>, crate::Summary) {
    let mut c = Collect::default();
    let s = decode(b, &mut c).expect("decodes");
    (c.0, s)
}

pub(super) fn not_meta<'e>(evs: &'e [RawEvent<'static>]) -> Vec<&'e RawEvent<'static>> {
    evs.iter().filter(|e| e.ph != Phase::METADATA).collect()
}

pub(super) const SEQ: u32 = 7;

pub(super) fn thread_track(uuid: u64, pid: u64, tid: u64, name: &str) -> M {
    M::default().v(10, SEQ as u64).m(
        60,
        M::default()
            .v(1, uuid)
            .m(4, M::default().v(1, pid).v(2, tid).s(5, name)),
    )
}

pub(super) fn event(ts: u64, te: M) -> M {
    M::default().v(8, ts).v(10, SEQ as u64).m(11, te)
}

#[test]
fn slices_instants_names_on_a_thread_track() {
    let b = trace(&[
        thread_track(1, 10, 11, "worker"),
        event(
            100,
            M::default().v(9, 1).v(11, 1).s(23, "outer").s(22, "cat"),
        ),
        event(150, M::default().v(9, 3).v(11, 1).s(23, "tick")),
        event(200, M::default().v(9, 2).v(11, 1)),
    ]);
    let (evs, s) = run(&b);
    assert_eq!(s.format, Format::Proto);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let name = evs.iter().find(|e| e.name == "thread_name").unwrap();
    assert_eq!(name.args.raw(), Some(r#"{"name":"worker"}"#));
    let e = not_meta(&evs);
    assert_eq!(e.len(), 3);
    assert_eq!(
        (e[0].ph, &*e[0].name, &*e[0].cat, e[0].ts),
        (Phase::BEGIN, "outer", "cat", 100)
    );
    assert_eq!(
        (e[0].pid.clone(), e[0].tid.clone()),
        (RawId::Num(10), RawId::Num(11))
    );
    assert_eq!((e[1].ph, e[1].scope), (Phase::INSTANT, Some(b't')));
    assert_eq!((e[2].ph, e[2].ts), (Phase::END, 200));
}

/// Chrome's legacy events on track 0: an instant is global, a mark (`navigationStart`)
/// stays on the sequence's thread, with its phase as an arg.
#[test]
fn legacy_marks_on_track_zero_stay_on_their_thread() {
    let legacy = |ph: u64, name: &str| {
        M::default()
            .v(11, 0)
            .s(23, name)
            .m(6, M::default().v(2, ph))
    };
    let b = trace(&[
        thread_track(1, 10, 11, "main"),
        M::default()
            .v(10, SEQ as u64)
            .m(59, M::default().m(11, M::default().v(11, 1))),
        event(100, legacy(b'R' as u64, "navigationStart")),
        event(200, legacy(b'I' as u64, "global")),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let e = not_meta(&evs);
    let got: Vec<(&str, Option<u8>, RawId<'_>)> = e
        .iter()
        .map(|e| (&*e.name, e.scope, e.tid.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("navigationStart", None, RawId::Num(11)),
            ("global", Some(b'g'), RawId::Num(11))
        ]
    );
    // A mark keeps its phase as an arg, as trace_processor keeps it; an instant does not.
    assert_eq!(e[0].args.raw(), Some(r#"{"legacy_event":{"phase":"R"}}"#));
    assert_eq!(e[1].args.raw(), None);
}

/// Chrome repeats a process's descriptor on every sequence, some with an empty name: the
/// name given once stays.
#[test]
fn an_empty_process_name_names_nothing() {
    let process = |name: &str| {
        M::default().v(10, SEQ as u64).m(
            60,
            M::default().v(1, 9).m(3, M::default().v(1, 10).s(6, name)),
        )
    };
    let b = trace(&[
        process("Browser"),
        process(""),
        thread_track(1, 10, 11, "main"),
        event(100, M::default().v(9, 3).v(11, 1).s(23, "tick")),
    ]);
    let (evs, _) = run(&b);
    let names: Vec<_> = evs
        .iter()
        .filter(|e| e.name == "process_name")
        .map(|e| e.args.raw())
        .collect();
    assert_eq!(names, [Some(r#"{"name":"Browser"}"#)]);
}

#[test]
fn truncated_mid_packet_keeps_the_complete_ones() {
    let packets = [
        thread_track(1, 10, 11, "t"),
        event(100, M::default().v(9, 3).v(11, 1).s(23, "a")),
        event(200, M::default().v(9, 3).v(11, 1).s(23, "b")),
    ];
    let b = trace(&packets);
    let ends: Vec<usize> = (1..=packets.len())
        .map(|n| trace(&packets[..n]).len())
        .collect();
    for cut in 1..b.len() {
        let mut c = Collect::default();
        // Never a panic; a cut inside a packet is always warned about. The first bytes
        // alone (a tag and a length) are not recognisably a trace.
        let Ok(s) = decode(&b[..cut], &mut c) else {
            assert!(cut < 4, "cut at {cut}");
            continue;
        };
        assert_eq!(
            s.diagnostics.count(WarningKind::ProtoTruncated),
            u64::from(!ends.contains(&cut)),
            "cut at {cut}"
        );
    }
    let cut = b.len() - 3;
    let (evs, s) = run(&b[..cut]);
    assert_eq!(not_meta(&evs).len(), 1);
    assert_eq!(s.diagnostics.count(WarningKind::ProtoTruncated), 1);
}

fn interned(seq: u32, flags: u64, names: &[(u64, &str)]) -> M {
    let mut i = M::default();
    for &(iid, n) in names {
        i = i.m(2, M::default().v(1, iid).s(2, n));
    }
    M::default().v(10, seq as u64).v(13, flags).m(12, i)
}

#[test]
fn interning_resets_and_lost_state_skips_events() {
    let b = trace(&[
        thread_track(1, 10, 11, "t"),
        interned(SEQ, 1, &[(1, "first")]),
        event(100, M::default().v(9, 3).v(11, 1).v(10, 1)),
        // A reset redefines iid 1.
        interned(SEQ, 1, &[(1, "second")]),
        event(200, M::default().v(9, 3).v(11, 1).v(10, 1)),
        // iid 2 was never defined: the event is kept, its name empty, and counted.
        event(300, M::default().v(9, 3).v(11, 1).v(10, 2)),
        // Packets were lost: events needing the state are skipped until the next reset.
        M::default().v(10, SEQ as u64).v(42, 1),
        event(400, M::default().v(9, 3).v(11, 1).v(10, 1)).v(13, 2),
        event(450, M::default().v(9, 3).v(11, 1).v(10, 1)).v(13, 2),
        interned(SEQ, 1, &[(1, "third")]),
        event(500, M::default().v(9, 3).v(11, 1).v(10, 1)).v(13, 2),
    ]);
    let (evs, s) = run(&b);
    let got: Vec<(String, i64)> = not_meta(&evs)
        .iter()
        .map(|e| (e.name.to_string(), e.ts))
        .collect();
    let want = [("first", 100), ("second", 200), ("", 300), ("third", 500)];
    let want: Vec<(String, i64)> = want.iter().map(|(n, t)| (n.to_string(), *t)).collect();
    assert_eq!(got, want);
    assert_eq!(s.diagnostics.count(WarningKind::ProtoUndefinedIid), 1);
    assert_eq!(
        s.diagnostics.count(WarningKind::ProtoIncrementalStateLost),
        2
    );
}

#[test]
fn async_tracks_pair_ends_with_their_begins_and_count_strays() {
    let process = M::default().m(
        60,
        M::default()
            .v(1, 5)
            .m(3, M::default().v(1, 10).s(6, "proc")),
    );
    let async_track = M::default().m(60, M::default().v(1, 6).v(5, 5).s(2, "requests"));
    let b = trace(&[
        process,
        async_track,
        event(100, M::default().v(9, 1).v(11, 6).s(23, "req").s(22, "net")),
        event(150, M::default().v(9, 1).v(11, 6).s(23, "inner")),
        event(160, M::default().v(9, 2).v(11, 6)),
        event(200, M::default().v(9, 2).v(11, 6)),
        event(300, M::default().v(9, 2).v(11, 6)),
    ]);
    let (evs, s) = run(&b);
    let pname = evs.iter().find(|e| e.name == "process_name").unwrap();
    assert_eq!(pname.args.raw(), Some(r#"{"name":"proc"}"#));
    let e = not_meta(&evs);
    let got: Vec<_> = e
        .iter()
        .map(|e| {
            (
                e.ph,
                e.name.to_string(),
                e.cat.to_string(),
                // A process's track: its id is process-local, as trace_processor's track.
                match &e.id2 {
                    Some(crate::event::Id2::Local(id)) if e.id.is_none() => id.to_string(),
                    _ => String::new(),
                },
            )
        })
        .collect();
    let row = |ph, n: &str, c: &str| (ph, n.to_string(), c.to_string(), "6".to_string());
    assert_eq!(
        got,
        [
            row(Phase::ASYNC_BEGIN, "req", "net"),
            row(Phase::ASYNC_BEGIN, "inner", ""),
            row(Phase::ASYNC_END, "inner", ""),
            row(Phase::ASYNC_END, "req", "net"),
        ]
    );
    assert_eq!(e[0].pid, crate::RawId::Num(10));
    assert_eq!(s.diagnostics.count(WarningKind::ProtoUnmatchedEnd), 1);
}

#[test]
fn flows_counters_and_annotations() {
    let counter_track = M::default().m(
        60,
        M::default()
            .v(1, 9)
            .s(2, "mem")
            .m(8, M::default().v(4, 1024)),
    );
    let nested = M::default()
        .s(10, "obj")
        .m(11, M::default().s(10, "a").v(4, (-3i64) as u64))
        .m(
            11,
            M::default()
                .s(10, "list")
                .m(12, M::default().s(6, "x"))
                .m(12, M::default().v(2, 1)),
        );
    let b = trace(&[
        thread_track(1, 10, 11, "t"),
        counter_track,
        // Flow 77 leaves the first slice (fixed64, packed) and ends in the second
        // (terminating, one fixed64 field).
        event(
            100,
            M::default()
                .v(9, 1)
                .v(11, 1)
                .s(23, "a")
                .b(47, &77u64.to_le_bytes())
                .m(4, nested),
        ),
        event(110, M::default().v(9, 2).v(11, 1)),
        event(120, M::default().v(9, 1).v(11, 1).s(23, "b").fixed(48, 77)),
        event(130, M::default().v(9, 2).v(11, 1)),
        event(140, M::default().v(9, 4).v(11, 9).v(30, 3)),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let e = not_meta(&evs);
    // Which point starts the flow is left to time order in the model, so the first slice
    // is a step too: sequences decoded apart share no flow state.
    assert_eq!(
        (e[0].bind_id.as_deref(), e[0].flow_out, e[0].flow_in),
        (Some("77"), true, true)
    );
    assert_eq!(
        e[0].args.raw(),
        Some(r#"{"debug":{"obj":{"a":-3,"list":["x",true]}}}"#)
    );
    assert_eq!(
        (e[2].bind_id.as_deref(), e[2].flow_out, e[2].flow_in),
        (Some("77"), false, true)
    );
    let c = e.last().unwrap();
    assert_eq!(
        (c.ph, &*c.name, c.args.raw()),
        (Phase::COUNTER, "mem", Some(r#"{"value":3072}"#))
    );
}

#[test]
fn hostile_packets_are_counted_never_a_panic() {
    // Wrong wire types for known fields, an eleven-byte varint inside a packet, a length
    // past its packet's end, nesting past the limit, a track uuid nobody defined.
    let mut deep = M::default().s(10, "leaf").v(4, 1);
    for _ in 0..100 {
        deep = M::default().s(10, "d").m(11, deep);
    }
    let mut bad_varint = M::default().v(10, 1).0;
    bad_varint.extend_from_slice(&[0x40]);
    bad_varint.extend_from_slice(&[0xff; 10]);
    bad_varint.push(1);
    let b = trace(&[
        M::default().v(10, 1).v(11, 5),
        M(bad_varint),
        M(vec![0x5a, 0x20, 0x08]),
        event(10, M::default().v(9, 3).s(23, "deep").m(4, deep)),
        event(20, M::default().v(9, 1).v(11, 12345).s(23, "lost")),
        event(30, M::default().v(9, 2).v(11, 12345)),
    ]);
    let (evs, s) = run(&b);
    let d = &s.diagnostics;
    assert_eq!(d.count(WarningKind::ProtoWrongWireType), 1);
    assert_eq!(d.count(WarningKind::ProtoMalformed), 2, "{d:?}");
    assert_eq!(d.count(WarningKind::ProtoDeepNesting), 1);
    assert_eq!(d.count(WarningKind::ProtoUnknownTrack), 1);
    assert_eq!(not_meta(&evs).len(), 3);
    // Every prefix and every single-byte corruption decodes or fails cleanly.
    for i in 0..b.len() {
        let _ = decode(&b[..i], &mut Collect::default());
        let mut c = b.clone();
        c[i] ^= 0xff;
        let _ = decode(&c, &mut Collect::default());
    }
}

#[test]
fn clocks_convert_to_boottime_and_incremental_clocks_add_up() {
    // A snapshot: MONOTONIC (3) 1000 is BOOTTIME 51000; sequence clock 64 is incremental,
    // in microseconds, read as 10 beside BOOTTIME 60000.
    let clocks = M::default()
        .m(1, M::default().v(1, 3).v(2, 1000))
        .m(1, M::default().v(1, 6).v(2, 51_000));
    let inc = M::default()
        .m(1, M::default().v(1, 64).v(2, 10).v(3, 1).v(4, 1000))
        .m(1, M::default().v(1, 6).v(2, 60_000));
    let b = trace(&[
        thread_track(1, 10, 11, "t"),
        M::default().m(6, clocks),
        M::default().v(10, SEQ as u64).v(13, 1).m(6, inc),
        event(1500, M::default().v(9, 3).v(11, 1).s(23, "mono")).v(58, 3),
        event(5, M::default().v(9, 3).v(11, 1).s(23, "inc1")).v(58, 64),
        // A descriptor's time moves the incremental clock too, as in trace_processor.
        thread_track(2, 10, 12, "u").v(8, 4).v(58, 64),
        event(2, M::default().v(9, 3).v(11, 1).s(23, "inc2")).v(58, 64),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let got: Vec<(String, i64)> = not_meta(&evs)
        .iter()
        .map(|e| (e.name.to_string(), e.ts))
        .collect();
    let want = [("mono", 51_500), ("inc1", 65_000), ("inc2", 71_000)];
    assert_eq!(got, want.map(|(n, t)| (n.to_string(), t)));
}

#[test]
fn every_cut_and_byte_flip_of_a_generated_trace_is_survived() {
    let b = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/proto/tracks.pftrace"
    ));
    let (evs, _) = run(b);
    assert!(not_meta(&evs).len() > 20);
    for i in 0..b.len() {
        let _ = decode(&b[..i], &mut Collect::default());
        for x in [0x80u8, 0xff, 0x07] {
            let mut c = b.to_vec();
            c[i] ^= x;
            let _ = decode(&c, &mut Collect::default());
        }
    }
}

fn zlib(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(b).unwrap();
    z.finish().unwrap()
}

#[test]
fn compressed_packets_decode_in_place_and_never_inflate_past_the_limit() {
    let inner = trace(&[
        thread_track(1, 10, 11, "t"),
        event(100, M::default().v(9, 3).v(11, 1).s(23, "in")),
    ]);
    let b = trace(&[
        M::default().b(50, &zlib(&inner)),
        event(200, M::default().v(9, 3).v(11, 1).s(23, "out")),
        // Packets cut short inside a bundle: counted, and the bundle's others kept.
        M::default().b(50, &zlib(&inner[..inner.len() - 2])),
    ]);
    let (evs, s) = run(&b);
    let names: Vec<_> = not_meta(&evs).iter().map(|e| (&*e.name, e.ts)).collect();
    assert_eq!(names, [("in", 100), ("out", 200)]);
    assert_eq!(s.diagnostics.count(WarningKind::ProtoTruncated), 1);
    assert_eq!(evs.iter().filter(|e| e.name == "thread_name").count(), 1);

    // A bomb: a megabyte of zeros per bundle, against a limit of 1.5 megabytes.
    let mut d = crate::Diagnostics::default();
    let bomb = zlib(&vec![0; 1 << 20]);
    let list = [(&bomb[..], 0), (&bomb[..], 1), (&bomb[..], 2)];
    let out = super::compressed::inflate(&list, 3 << 19, &mut d);
    let sizes: Vec<_> = out.iter().map(|x| x.bytes.len()).collect();
    assert_eq!(sizes, [1 << 20, 0, 0]);
    assert_eq!(d.count(WarningKind::ProtoMalformed), 2);
    // The same through the decoder: `--max-decompressed` bounds bundles as it bounds gzip.
    let b = trace(&[M::default().b(50, &zlib(&inner)), M::default().b(50, &bomb)]);
    for parallel in [false, true] {
        let opts = crate::DecodeOptions {
            max_decompressed: 1 << 19,
            ..crate::DecodeOptions::default()
        };
        let s = if parallel {
            crate::decode_parallel(&b, &opts, Collect::default, &|_, _| {})
                .unwrap()
                .0
        } else {
            crate::decode_with(&b, &opts, &mut Collect::default()).unwrap()
        };
        assert_eq!(
            s.diagnostics.count(WarningKind::ProtoMalformed),
            1,
            "{parallel}"
        );
    }
    let b = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/proto/compressed.pftrace"
    ))
    .unwrap();
    for i in 0..b.len() {
        let _ = decode(&b[..i], &mut Collect::default());
        let mut c = b.clone();
        c[i] ^= 0x55;
        let _ = decode(&c, &mut Collect::default());
    }
}

#[test]
fn every_flow_of_a_slice_is_bound_to_it() {
    // A slice carrying two flows: the second is the slice's as the first is (flow v2), not
    // the enclosing slice's, which may be a child beginning with it; an instant's flow
    // stays a point for the enclosing slice.
    let ids: Vec<u8> = [77u64, 78].iter().flat_map(|i| i.to_le_bytes()).collect();
    let b = trace(&[
        thread_track(1, 10, 11, "t"),
        event(100, M::default().v(9, 1).v(11, 1).s(23, "a").b(47, &ids)),
        event(100, M::default().v(9, 3).v(11, 1).s(23, "i").fixed(47, 79)),
        event(110, M::default().v(9, 2).v(11, 1)),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let e = not_meta(&evs);
    let flow = |e: &crate::RawEvent<'_>| {
        (
            e.id.as_deref().map(str::to_string),
            e.bind_id.as_deref().map(str::to_string),
            e.flow_in,
            e.flow_out,
        )
    };
    assert_eq!(
        (e[0].ph, flow(e[0])),
        (Phase::BEGIN, (None, Some("77".into()), true, true))
    );
    assert_eq!(flow(e[1]), (None, Some("78".into()), true, true));
    assert_eq!(&*e[1].name, "a");
    assert_eq!(flow(e[3]), (Some("79".into()), None, false, false));
}

/// The fast readers (`fast`) and the general field walk give the same events, in the same
/// order, and the same warnings: on the generated fixtures, real Chromium traces and
/// packets that stray from the usual one field by field.
/// Debug annotations, two or one to a slice: each scalar type, an interned or inline name,
/// an undefined name or string, text that is not UTF-8, a value twice, no value, a wrong
/// wire type, a dictionary, legacy JSON, an unknown field, a broken varint.
fn annotations() -> Vec<Vec<M>> {
    let a = |name_iid: u64| M::default().v(1, name_iid);
    vec![
        vec![a(1).v(2, 1), a(3).v(3, 4096)],
        vec![a(1).v(4, u64::MAX), a(1).fixed(5, 1.5f64.to_bits())],
        vec![a(1).s(6, "a\nb"), a(1).v(17, 1)],
        vec![a(1).v(7, 0x7f00), a(2).v(3, 1)],
        vec![a(9).v(3, 1), a(1).v(17, 9)],
        vec![a(1).b(6, b"\xff"), a(1).v(17, 2)],
        vec![a(1).v(3, 1).v(4, 2), a(1)],
        vec![a(1).v(6, 3), M::default().s(10, "inline").v(3, 5)],
        vec![M::default().v(3, 8), a(1).fixed(5, f64::NAN.to_bits())],
        vec![a(1).m(11, a(3).v(3, 1))],
        vec![a(1).s(9, "{\"a\":1}"), a(1).b(3, &[1])],
        vec![a(1).v(3, 1).v(900, 1), a(1).b(4, &[0x80])],
    ]
}

#[test]
fn the_fast_readers_decode_as_the_general_walk_does() {
    use super::base::with_general_only;
    use super::fast::{FAST_READS, USUAL_SLICES};
    let ev = |ts: u64, te: M| event(ts, te).v(13, 2);
    let stray = [
        thread_track(1, 10, 11, "t"),
        M::default().v(10, SEQ as u64).v(13, 1).m(
            12,
            M::default()
                .m(2, M::default().v(1, 1).s(2, "a"))
                .m(2, M::default().v(1, 2).s(2, "b"))
                .m(1, M::default().v(1, 1).s(2, "cat"))
                // Annotation names (one not UTF-8, one to escape) and string values.
                .m(3, M::default().v(1, 1).s(2, "size"))
                .m(3, M::default().v(1, 2).b(2, b"bad\xff"))
                .m(3, M::default().v(1, 3).s(2, "q\"uote"))
                .m(29, M::default().v(1, 1).s(2, "interned"))
                .m(29, M::default().v(1, 2).b(2, b"\xfe")),
        ),
        // A counter track, and the sequence's defaults: extra counter values go on it.
        M::default().m(60, M::default().v(1, 9).s(2, "mem").m(8, M::default())),
        M::default()
            .v(10, SEQ as u64)
            .m(59, M::default().m(11, M::default().v(11, 1).b(31, &[9]))),
        // Packed category ids, a sideband field, extra counter values (one and packed).
        ev(100, M::default().v(9, 1).v(10, 1).b(3, &[1, 1]).v(12, 5)).v(79, 4),
        ev(110, M::default().v(9, 1).v(10, 2).b(12, &[7, 8]).v(11, 1)),
        // A typed field (Chrome's keyed service), broken; a field no reader takes.
        ev(
            115,
            M::default().v(9, 3).v(10, 1).b(26, &[0x08, 0x80]).v(900, 1),
        ),
        // An undefined name, then category; a name inline; a broken varint.
        ev(120, M::default().v(9, 2).v(10, 9)),
        ev(130, M::default().v(9, 2).v(3, 9)),
        ev(140, M::default().v(9, 3).s(23, "inline")),
        ev(150, M::default().v(9, 3).b(12, &[0x80])),
        // A delta in microseconds, no packet timestamp; an unmodelled packet field.
        M::default()
            .v(10, SEQ as u64)
            .m(11, M::default().v(9, 3).v(1, 7).v(10, 1)),
        ev(160, M::default().v(9, 3).v(10, 1)).v(7, 1),
        // The usual thread slice (`usual`): a name and a category, then an annotation,
        // an end on track 0 (the sequence's), a broken annotation; two categories, a
        // flow, which it leaves to the others.
        ev(170, M::default().v(9, 1).v(10, 1).v(3, 1)),
        ev(
            172,
            (M::default().v(9, 1).v(10, 2).b(3, &[1])).m(4, M::default().s(10, "k").v(4, 7)),
        ),
        ev(174, M::default().v(9, 2).v(11, 0)),
        ev(176, M::default().v(9, 2).b(4, &[0x08])),
        ev(178, M::default().v(9, 1).v(10, 1).b(3, &[1, 1])),
        ev(180, M::default().v(9, 2).v(36, 5).v(10, 1)),
        // Extra counter values on the sequence's default track, one and packed.
        ev(182, M::default().v(9, 1).v(10, 2).v(12, 5).v(3, 1)),
        ev(184, M::default().v(9, 2).b(12, &[7, 8])),
        // Instants: on the thread, on track 0 (global), with an annotation and a counter.
        ev(186, M::default().v(9, 3).v(10, 1).v(3, 1)),
        ev(188, M::default().v(9, 3).v(10, 2).v(11, 0)),
        ev(
            190,
            (M::default().v(9, 3).v(12, 3)).m(4, M::default().s(10, "k").v(2, 1)),
        ),
    ];
    // Slices' begins with annotations (`annot::simple` and the general walk).
    let annotated = annotations().into_iter().enumerate().map(|(i, list)| {
        let te = list
            .into_iter()
            .fold(M::default().v(9, 1).v(10, 1), |te, a| te.m(4, a));
        ev(200 + 2 * i as u64, te)
    });
    let stray = trace(&stray.into_iter().chain(annotated).collect::<Vec<_>>());
    let mut inputs = vec![("stray".to_string(), stray)];
    for name in [
        "proto/tracks.pftrace",
        "proto/clocks.pftrace",
        "proto/interning.pftrace",
        "proto/locations.pftrace",
        "proto/compressed.pftrace",
        "real/chromium148_startup.pftrace.gz",
        "real/chromium156_script_timeline.pftrace.gz",
    ] {
        let mut b = spall_test_support::fixture_bytes(name);
        if b.starts_with(&[0x1f, 0x8b]) {
            let mut d = crate::diag::Diagnostics::default();
            b = crate::gunzip(&b, u64::MAX, &mut d).unwrap();
        }
        inputs.push((name.to_string(), b));
    }
    for (name, b) in inputs {
        FAST_READS.with(|n| n.set(0));
        USUAL_SLICES.with(|n| n.set(0));
        let (fast, fs) = run(&b);
        let taken = FAST_READS.with(|n| n.get());
        let usual = USUAL_SLICES.with(|n| n.get());
        let (general, gs) = with_general_only(|| run(&b));
        assert!(taken > 0, "{name}: no TrackEvent read the fast way");
        let with_usual = ["stray", "interning", "chromium"];
        assert!(
            usual > 0 || !with_usual.iter().any(|u| name.contains(u)),
            "{name}: no thread slice taken the usual way"
        );
        assert_eq!(fast.len(), general.len(), "{name}");
        for (i, (f, g)) in fast.iter().zip(&general).enumerate() {
            assert_eq!(f, g, "{name}: event {i}");
        }
        assert_eq!(fs.diagnostics, gs.diagnostics, "{name}");
        assert_eq!(fs.events, gs.events, "{name}");
    }
}

/// A thread slice's name and category keys each stand for one text in a whole decode into
/// one sink (every sequence, every part, an iid redefined after a reset), and interned
/// names have them: a sink may look a key up once instead of the text each time.
#[test]
fn a_key_stands_for_one_text_in_a_decode() {
    #[derive(Default)]
    struct Keys(std::collections::HashMap<u32, String>, u64);
    impl crate::EventSink for Keys {
        fn event(&mut self, _: &RawEvent<'_>) {}
        fn thread_slice(&mut self, s: &crate::ThreadSlice<'_>) {
            for (k, text) in [(s.name_key, s.name), (s.cat_key, s.cat)] {
                if k != 0 {
                    self.1 += 1;
                    let first = self.0.entry(k).or_insert_with(|| text.to_string());
                    assert_eq!(first, text, "key {k} at byte {}", s.offset);
                }
            }
        }
    }
    for name in [
        "proto/interning.pftrace",
        "real/chromium148_startup.pftrace.gz",
        // Several parts (sequences past `PART_BYTES`), decoded one after the other.
        "real/chromium148_script_all.pftrace.gz",
    ] {
        let mut b = spall_test_support::fixture_bytes(name);
        if b.starts_with(&[0x1f, 0x8b]) {
            let mut d = crate::diag::Diagnostics::default();
            b = crate::gunzip(&b, u64::MAX, &mut d).unwrap();
        }
        let mut keys = Keys::default();
        decode(&b, &mut keys).expect("decodes");
        assert!(keys.1 > 0, "{name}: no keyed name");
        let parts = {
            let mut d = crate::diag::Diagnostics::default();
            super::parts::plan(&super::scan::scan(&b, &[], &mut d).unwrap()).len()
        };
        assert!(
            parts > 1 || !name.contains("script_all"),
            "{name}: {parts} part"
        );
    }
}

/// A compact_sched block in a trace whose clock is not ftrace's (BOOTTIME): its switches and
/// wakings are merged by their times as read, and handed out in the trace clock.
#[test]
fn compact_sched_times_convert_to_the_trace_clock() {
    #[derive(Default)]
    struct Scheds(Vec<(i64, bool)>);
    impl crate::EventSink for Scheds {
        fn event(&mut self, _: &RawEvent<'_>) {}
        fn sched(&mut self, s: &crate::RawSched<'_>) {
            self.0
                .push((s.ts, s.kind == crate::SchedKind::CompactWaking));
        }
    }
    // MONOTONIC (3) 1000 is BOOTTIME 51000, and MONOTONIC is the trace's clock.
    let clocks = M::default()
        .m(1, M::default().v(1, 3).v(2, 1000))
        .m(1, M::default().v(1, 6).v(2, 51_000))
        .v(2, 3);
    let mut b = trace(&[M::default().m(6, clocks)]);
    b.extend(spall_test_support::compact_sched_trace(
        0,
        &["a"],
        &[
            (1, &[52_000, 500]),
            (2, &[1, 0]),
            (3, &[10, 11]),
            (4, &[120, 120]),
            (6, &[0, 0]),
            (7, &[52_100]),
            (8, &[12]),
            (9, &[0]),
            (10, &[120]),
            (11, &[0]),
        ],
    ));
    let mut s = Scheds::default();
    let summary = decode(&b, &mut s).expect("decodes");
    assert!(summary.diagnostics.is_empty(), "{:?}", summary.diagnostics);
    assert_eq!(s.0, [(2000, false), (2100, true), (2500, false)]);
}
