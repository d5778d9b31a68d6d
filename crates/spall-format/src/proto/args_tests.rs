//! Protobuf events' arguments: Chrome's tasks' source locations and typed fields, as
//! trace_processor keys them.

use super::tests::{event, not_meta, put_varint, run, thread_track, trace, M, SEQ};
use crate::WarningKind;

/// The sequence's first packet: its state cleared, then `interned`.
fn cleared_with(interned: M) -> M {
    M::default().v(10, SEQ as u64).v(13, 1).m(12, interned)
}

/// Chrome's tasks say where they were posted from: an interned location, written under
/// `task.posted_from` as trace_processor keys it.
#[test]
fn a_task_keeps_where_it_was_posted_from() {
    let location = M::default()
        .v(1, 5)
        .s(2, "base/task.cc")
        .s(3, "Post")
        .v(4, 42);
    let b = trace(&[
        thread_track(1, 10, 11, "main"),
        cleared_with(M::default().m(4, location)),
        event(
            100,
            M::default()
                .v(9, 3)
                .v(11, 1)
                .s(23, "RunTask")
                .m(5, M::default().v(1, 5)),
        ),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let e = not_meta(&evs);
    assert_eq!(
        e[0].args.raw(),
        Some(
            r#"{"task":{"posted_from":{"file_name":"base/task.cc","function_name":"Post","line_number":{"\u0000u":42}}}}"#
        )
    );
}

/// An interned location's text is kept from its first use: each use writes the same
/// (backslashes as slashes), and one whose text is not UTF-8 is warned about at each use.
#[test]
fn interned_locations_write_alike_at_each_use() {
    let windows = M::default()
        .v(1, 5)
        .s(2, "base\\task.cc")
        .s(3, "Post")
        .v(4, 7);
    let broken = M::default().v(1, 6).s(2, "a.cc").b(3, b"F\xff").v(4, 1);
    let task = |ts, iid| {
        event(
            ts,
            M::default()
                .v(9, 3)
                .v(11, 1)
                .s(23, "RunTask")
                .m(5, M::default().v(1, iid)),
        )
    };
    let b = trace(&[
        thread_track(1, 10, 11, "main"),
        cleared_with(M::default().m(4, windows).m(4, broken)),
        task(100, 5),
        task(110, 6),
        task(120, 5),
        task(130, 6),
    ]);
    let (evs, s) = run(&b);
    let e = not_meta(&evs);
    let args: Vec<&str> = e.iter().map(|e| e.args.raw().unwrap()).collect();
    let posted = |file: &str, function: &str, line: u32| {
        format!(
            "{{\"task\":{{\"posted_from\":{{\"file_name\":\"{file}\",\"function_name\":\"{function}\",\"line_number\":{{\"\\u0000u\":{line}}}}}}}}}"
        )
    };
    assert_eq!(args[0], posted("base/task.cc", "Post", 7));
    assert_eq!(args[2], args[0]);
    assert_eq!(args[1], posted("a.cc", "F\u{fffd}", 1));
    assert_eq!(args[3], args[1]);
    assert_eq!(s.diagnostics.count(WarningKind::InvalidUtf8), 2);
}

/// Chrome's typed fields become args as trace_processor reflects them: nested messages as
/// objects, enums by name, repeated fields (packed or not) as arrays, the last of a repeated
/// singular field, a Mojo method's interned native symbol in place of its iid, unsigned
/// values tagged `uint`, and Chrome's own extensions (`chrome_task_annotator`, field 1002).
#[test]
fn chrome_typed_fields_are_args() {
    let symbol = M::default().v(1, 3).v(2, 7).v(3, 4096);
    let mut packed = Vec::new();
    for pid in [3u64, 4] {
        put_varint(&mut packed, pid);
    }
    let b = trace(&[
        thread_track(1, 10, 11, "main"),
        cleared_with(M::default().m(28, symbol)),
        event(
            100,
            M::default()
                .v(9, 3)
                .v(11, 1)
                .s(23, "Receive")
                .m(
                    38,
                    M::default()
                        .s(3, "IPC.mojom.Channel")
                        .v(2, 1)
                        .v(2, 99)
                        .v(4, 3)
                        .v(6, 8),
                )
                .m(32, M::default().v(1, 3).v(2, 77))
                .m(49, M::default().v(1, 1).v(1, 2).b(1, &packed))
                .m(1002, M::default().v(2, 855).v(3, 2)),
        ),
        event(
            200,
            M::default()
                .v(9, 3)
                .v(11, 1)
                .s(23, "Unknown")
                .m(38, M::default().v(4, 9)),
        ),
        // More fields than a message keeps on the stack (`typed::KEPT`): a repeated field
        // and a singular one given many times, among unknown fields.
        event(
            300,
            M::default().v(9, 3).v(11, 1).s(23, "Many").m(
                49,
                (1..=20).fold(M::default(), |m, pid| m.v(1, pid).v(99, 0)),
            ),
        ),
        event(
            400,
            M::default().v(9, 3).v(11, 1).s(23, "Last").m(
                32,
                (1..=20).fold(M::default(), |m, st| m.v(1, st % 4).v(2, st)),
            ),
        ),
    ]);
    let (evs, s) = run(&b);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let e = not_meta(&evs);
    let pids: Vec<String> = (1..=20).map(|p| p.to_string()).collect();
    assert_eq!(
        e[2].args.raw().unwrap(),
        format!(
            r#"{{"chrome_active_processes":{{"pid":[{}]}}}}"#,
            pids.join(",")
        )
    );
    assert_eq!(
        e[3].args.raw(),
        Some(r#"{"chrome_frame_reporter":{"state":"STATE_NO_UPDATE_DESIRED","reason":20}}"#)
    );
    assert_eq!(
        e[0].args.raw(),
        Some(concat!(
            r#"{"chrome_mojo_event_info":{"ipc_hash":{"\u0000u":99},"#,
            r#""mojo_interface_tag":"IPC.mojom.Channel","mojo_interface_method":{"native_symbol":"#,
            r#"{"mapping_id":{"\u0000u":7},"rel_pc":{"\u0000u":4096}}},"payload_size":{"\u0000u":8}},"#,
            r#""chrome_frame_reporter":{"state":"STATE_DROPPED","reason":77},"#,
            r#""chrome_active_processes":{"pid":[1,2,3,4]},"#,
            r#""chrome_task_annotator":{"task_delay_us":{"\u0000u":855},"delay_policy":"PRECISE"}}"#
        ))
    );
    // An iid the sequence never interned stays a number, under its own name.
    assert_eq!(
        e[1].args.raw(),
        Some(r#"{"chrome_mojo_event_info":{"mojo_interface_method_iid":{"\u0000u":9}}}"#)
    );
}
