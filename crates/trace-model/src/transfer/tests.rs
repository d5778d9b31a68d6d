//! Round trips of every fixture, whole and in pieces, and damaged buffers.

use super::*;

/// Every field, as text (the string table by its strings, not its hash slots).
fn fields(t: &Trace) -> Vec<String> {
    let strings: Vec<&str> = t.strings.iter().map(|(_, s)| s).collect();
    let args: Vec<_> = (1..=t.args.count())
        .map(|i| t.args.get(ArgsId(i)))
        .collect();
    vec![
        format!("{strings:?}"),
        format!("{args:?}"),
        format!("{:?}", t.processes),
        format!("{:?}", t.threads),
        format!("{:?}", t.instants),
        format!("{:?}", t.counters),
        format!("{:?}", t.flows),
        format!("{:?}", t.async_events),
        format!("{:?}", t.metadata),
        format!("{:?}", t.async_slices),
        format!("{:?}", t.async_tracks),
        format!("{:?}", t.flow_links),
        format!("{:?}", t.flow_links_by_to),
        format!("{:?}", t.samples),
        format!("{:?}", t.frames),
        format!("{} {}", t.start_ns, t.end_ns),
        format!("{:?}", t.diagnostics),
        format!("{:?}", t.decode),
        format!("{:?}", t.sched),
        perfetto(t),
    ]
}

/// trace_processor's view, which the transfer does not carry: the trace that arrives
/// computes its own, and it must be the sender's.
fn perfetto(t: &Trace) -> String {
    let v = t.perfetto();
    let spans: Vec<_> = (0..v.span_slices()).map(|id| v.model_span(id)).collect();
    format!(
        "{spans:?} {:?} {:?} {:?} {:?}",
        v.rows(),
        v.tracks(),
        v.added_main_threads(),
        v.flows(t)
    )
}

/// `t` through a transfer in pieces, filled `budget` bytes a step.
fn in_pieces(t: &Trace, budget: usize) -> Result<Trace, TransferError> {
    let mut cols = MemoryColumns::default();
    let head = t.to_transfer_pieces(&mut cols);
    let mut tin = TraceIn::new(&head, cols.lens())?;
    assert_eq!(tin.left(), [0; 3], "the trace's columns in the streams");
    while !tin.fill(&mut cols, budget)? {}
    assert!(cols.at_end());
    Ok(tin.finish().expect("filled"))
}

#[test]
fn every_kind_of_trace_comes_back_the_same() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let (mut todo, mut files) = (vec![std::path::PathBuf::from(dir)], Vec::new());
    while let Some(p) = todo.pop() {
        if p.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        } else {
            files.push(p);
        }
    }
    let loaded = spall_test_support::on_every_core(&files, |p| comes_back_the_same(p));
    let seen = loaded.into_iter().filter(|&l| l).count();
    assert!(seen >= 20, "only {seen} fixtures loaded");
}

/// Whether `p` loads; if it does, it comes back from its transfer whole and in pieces.
fn comes_back_the_same(p: &std::path::Path) -> bool {
    let Ok(t) = crate::load_bytes(&std::fs::read(p).unwrap()) else {
        return false;
    };
    let back = Trace::from_transfer(&t.to_transfer()).unwrap();
    assert_eq!(fields(&t), fields(&back), "{}", p.display());
    // In pieces: steps that end inside columns, and one step for all.
    for budget in [1 << 16, usize::MAX / 2] {
        let back = in_pieces(&t, budget).unwrap();
        assert_eq!(fields(&t), fields(&back), "{} by {budget}", p.display());
    }
    true
}

#[test]
fn damaged_pieces_are_an_error() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":1}},
        {"ph":"X","name":"b","ts":1,"dur":1,"pid":1,"tid":1}]"#;
    let t = crate::load_bytes(json).unwrap();
    let mut cols = MemoryColumns::default();
    let head = t.to_transfer_pieces(&mut cols);
    // A head cut anywhere, or streams shorter than it says: an error.
    for n in 0..head.len() {
        assert!(TraceIn::new(&head[..n], cols.lens()).is_err(), "cut at {n}");
    }
    // (Its flags are all 0: a column of zeros, in no stream.)
    assert_eq!(cols.u8s.len(), 0);
    for (i, short) in [[1, 0, 0], [0, 1, 0]].into_iter().enumerate() {
        let lens = [0, 1, 2].map(|s| cols.lens()[s] - short[s]);
        assert!(TraceIn::new(&head, lens).is_err(), "stream {i} short");
    }
    // A name out of range is found by the fill; so is a stream that runs short.
    let mut bad = cols.clone();
    bad.u32s[0] = 1000;
    let mut tin = TraceIn::new(&head, bad.lens()).unwrap();
    assert!(tin.fill(&mut bad, 1 << 20).is_err());
    let mut short = cols.clone();
    short.i64s.pop();
    let mut tin = TraceIn::new(&head, cols.lens()).unwrap();
    assert!(tin.fill(&mut short, 1 << 20).is_err());
    assert!(TraceIn::new(&head, cols.lens()).unwrap().finish().is_none());
}

#[test]
fn a_damaged_buffer_is_an_error() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":1}},
        {"ph":"s","id":1,"name":"f","ts":1,"pid":1,"tid":1},
        {"ph":"f","bp":"e","id":1,"name":"f","ts":2,"pid":1,"tid":1}]"#;
    let bytes = crate::load_bytes(json).unwrap().to_transfer();
    // Cut anywhere: an error. Any one byte changed: an error or a trace, never a panic.
    for n in 0..bytes.len() {
        assert!(Trace::from_transfer(&bytes[..n]).is_err(), "cut at {n}");
        for flip in [0x01, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[n] ^= flip;
            let _ = Trace::from_transfer(&b);
        }
    }
}

#[test]
fn scheduling_data_out_of_its_tables_is_an_error() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/systrace");
    let bytes = std::fs::read(format!("{dir}/events.pftrace.gz")).unwrap();
    let t = crate::load_bytes(&bytes).unwrap();
    assert!(t.sched().is_some_and(|s| !s.states.is_empty()));
    let damaged: [fn(&mut crate::sched::SchedData); 5] = [
        |s| s.slices[0].thread = 1 << 20,
        |s| s.cpu_at[1] = s.cpu_at[0],
        |s| {
            s.slice_cpus.pop();
        },
        |s| {
            // A runnable state's waker.
            let rows = &mut s.states.rows;
            let r = (rows.iter()).position(|x| x.state() == crate::sched::TaskState::RUNNABLE);
            rows[r.unwrap()].set_other(Some(1 << 20))
        },
        // A switched-out state's blocked function (kept beside its slice), past the strings.
        |s| s.states.ended_other[0] = 1 << 29,
    ];
    for (i, damage) in damaged.into_iter().enumerate() {
        let mut bad = crate::load_bytes(&bytes).unwrap();
        damage(bad.sched.as_deref_mut().unwrap());
        assert!(
            Trace::from_transfer(&bad.to_transfer()).is_err(),
            "damage {i}"
        );
    }
    // Cut anywhere in the scheduling data (the buffer's end): an error.
    let whole = t.to_transfer();
    for n in whole.len().saturating_sub(2000)..whole.len() {
        assert!(Trace::from_transfer(&whole[..n]).is_err(), "cut at {n}");
    }
}

/// A `.spall` trace's spans have no category, and here no arguments or flags: in pieces
/// those columns cross as their lengths alone (9 of a span's 29 bytes), and the trace
/// comes back the same.
#[test]
fn columns_of_zeros_cross_as_their_length() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/spall");
    let t =
        crate::load_bytes(&std::fs::read(format!("{dir}/odingengine_v3.spall")).unwrap()).unwrap();
    let lanes = || t.threads.iter().flat_map(|th| &th.lanes);
    let spans: usize = lanes().map(|l| l.len()).sum();
    assert!(spans > 10_000, "{spans} spans");
    let mut cols = MemoryColumns::default();
    t.to_transfer_pieces(&mut cols);
    // Every lane's names cross; no category does; arguments and flags only where a
    // lane has some.
    let named = |f: &dyn Fn(&crate::span::Lane) -> bool| -> usize {
        lanes().filter(|l| f(l)).map(|l| l.len()).sum()
    };
    let args = named(&|l| l.args.iter().any(|a| *a != ArgsId::NONE));
    let flagged = named(&|l| l.flags.iter().any(|&f| f != 0));
    assert!(lanes().all(|l| l.cat.iter().all(|c| *c == StrId::EMPTY)));
    assert_eq!(
        cols.u32s.len(),
        spans + args,
        "names, and arguments where a lane has some"
    );
    assert_eq!(cols.u8s.len(), flagged, "flags where a lane has some");
    for budget in [1 << 12, usize::MAX / 2] {
        assert_eq!(
            fields(&t),
            fields(&in_pieces(&t, budget).unwrap()),
            "by {budget}"
        );
    }
}

/// A column of zeros longer than a few times the streams' values is damage, not an
/// allocation.
#[test]
fn a_long_column_of_zeros_is_an_error() {
    let mut w = TransferWriter::with_capacity(16);
    w.u64(bytes::ZERO_COL | (1 << 40));
    let head = w.into_bytes();
    let mut r = TransferReader::with_pieces(&head, [10, 10, 10]);
    assert!(r.col_u32s_by(StrId).is_err());
    let mut r = TransferReader::with_pieces(&head[..], [1 << 40, 0, 0]);
    assert_eq!(r.col_u32s_by(StrId).map(|v| v.len()), Ok(0));
    assert_eq!(r.col_lens(), Some(&[1u64 << 40][..]));
    assert_eq!(r.col_zeros(), [true]);
}

/// A head in pieces with any one byte changed (a length's top bit among them: a column of
/// zeros where there was none) is an error or a trace, never a panic.
#[test]
fn a_changed_head_in_pieces_never_panics() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":1}},
        {"ph":"B","name":"b","ts":1,"pid":1,"tid":1}]"#;
    let t = crate::load_bytes(json).unwrap();
    let mut cols = MemoryColumns::default();
    let head = t.to_transfer_pieces(&mut cols);
    for n in 0..head.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = head.clone();
            bad[n] ^= flip;
            let mut src = cols.clone();
            if let Ok(mut tin) = TraceIn::new(&bad, src.lens()) {
                while let Ok(false) = tin.fill(&mut src, 1 << 10) {}
            }
        }
    }
}

/// A frame table where a frame's caller comes after it (no table is built so) is an
/// error: the stack lanes take each frame's caller to be before it.
#[test]
fn a_frame_before_its_caller_is_an_error() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real/profiles"
    );
    let t = crate::load(format!("{dir}/spin.perf")).unwrap();
    assert!(Trace::from_transfer(&t.to_transfer()).is_ok());
    let mut bad = crate::load(format!("{dir}/spin.perf")).unwrap();
    let f = (bad.frames.iter()).position(|f| f.parent != crate::NO_FRAME);
    let f = f.unwrap();
    bad.frames[f].parent = f as u32;
    assert!(Trace::from_transfer(&bad.to_transfer()).is_err());
}
