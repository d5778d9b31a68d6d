//! A `.spall` (version 1 or 3) or JSON file loaded as its bytes arrive (`LoadStream`, a browser's worker reading
//! the file in chunks) must give the trace `load_bytes` gives, whatever the chunks, and the
//! trace must come back whole through `to_transfer` / `from_transfer`.

use std::io::Write;

use spall_format::synth::Synth;
use spall_format::{EventSink, RawEvent, RawId, CHUNK_BYTES};
use trace_model::{load_bytes, LoadStream, Trace};

fn streamed(bytes: &[u8], piece: usize) -> Trace {
    assert!(LoadStream::accepts(bytes));
    let mut load = LoadStream::new(bytes).unwrap();
    for p in bytes.chunks(piece) {
        load.push(p).unwrap();
    }
    let (read, _) = load.progress();
    assert_eq!(read, bytes.len() as u64);
    load.finish().unwrap().expect("in order")
}

#[test]
fn streamed_spall_is_load_bytes_trace_in_any_pieces() {
    let mut spall = Vec::new();
    Synth {
        spans: 300_000,
        exotic_names: true,
        ..Synth::default()
    }
    .write_spall(&mut spall)
    .unwrap();
    assert!(spall.len() > 2 * CHUNK_BYTES, "{} bytes", spall.len());
    let want = load_bytes(&spall).unwrap().to_transfer();
    // A File read in 8 MB slices, a network's small odd pieces, and a cut inside a header.
    for piece in [8 << 20, 65_521, 4_099] {
        let got = streamed(&spall, piece).to_transfer();
        assert!(got == want, "pieces of {piece} bytes: the traces differ");
    }
    // Cut short: the partial last buffer is warned about as load_bytes does.
    let cut = &spall[..spall.len() - 1_000];
    let got = streamed(cut, 1 << 20);
    assert!(got.to_transfer() == load_bytes(cut).unwrap().to_transfer());
    assert!(got.decode_summary().diagnostics.total() > 0);
}

#[test]
fn spall_version_3_and_json_gzipped_or_not_are_streamed() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#;
    assert!(LoadStream::accepts(json));
    assert!(LoadStream::accepts(b"\xEF\xBB\xBF {"));
    assert!(!LoadStream::accepts(b"x["));
    assert!(!LoadStream::accepts(b"  "));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(json).unwrap();
    let gz = gz.finish().unwrap();
    assert!(LoadStream::accepts(&gz));
    let mut twice = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    twice.write_all(&gz).unwrap();
    assert!(!LoadStream::accepts(&twice.finish().unwrap()));
    let v1 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/spall/crux_v1.spall"
    ))
    .unwrap();
    assert!(LoadStream::accepts(&v1));
    assert!(!LoadStream::accepts(&v1[..10]));
}

/// A `.spall` version 1 file of `v3`'s Begins and Ends (one tick a nanosecond).
fn as_version_1(v3: &[u8]) -> Vec<u8> {
    let mut evs = spall_format::Collect::default();
    spall_format::decode(v3, &mut evs).unwrap();
    let mut b = Vec::new();
    for w in [spall_format::spall::MAGIC, 1, 0.001f64.to_bits(), 0] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    for ev in &evs.0 {
        let (RawId::Num(pid), RawId::Num(tid)) = (&ev.pid, &ev.tid) else {
            continue;
        };
        let ids = |b: &mut Vec<u8>| {
            b.extend_from_slice(&(*pid as u32).to_le_bytes());
            b.extend_from_slice(&(*tid as u32).to_le_bytes());
            b.extend_from_slice(&(ev.ts as f64).to_le_bytes());
        };
        match ev.ph.0 {
            b'B' => {
                let args = match &ev.args {
                    spall_format::Args::Text(t) => t.as_bytes(),
                    _ => &[],
                };
                b.extend_from_slice(&[3, 0]);
                ids(&mut b);
                b.extend_from_slice(&[ev.name.len() as u8, args.len() as u8]);
                b.extend_from_slice(ev.name.as_bytes());
                b.extend_from_slice(args);
            }
            b'E' => {
                b.push(4);
                ids(&mut b);
            }
            _ => {}
        }
    }
    b
}

#[test]
fn streamed_spall_version_1_is_load_bytes_trace() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/spall");
    // The real engine's v3 file written as version 1 (spall-web's own format): a thread's
    // Begins and Ends fall in different runs of 4 kB.
    let v1 = as_version_1(&std::fs::read(format!("{fixtures}/odingengine_v3.spall")).unwrap());
    assert!(LoadStream::accepts(&v1));
    let want = load_bytes(&v1).unwrap();
    assert_eq!(want.span_count(), 91_542);
    let want = want.to_transfer();
    for (piece, target) in [(8 << 20, CHUNK_BYTES), (65_521, 4_096), (4_099, 1)] {
        let mut load = LoadStream::with_target(&v1, target).unwrap();
        for p in v1.chunks(piece) {
            load.push(p).unwrap();
        }
        let got = load.finish().unwrap().expect("in order").to_transfer();
        assert!(
            got == want,
            "pieces of {piece}, runs of {target}: the traces differ"
        );
    }
    // A real version 1 file whose one thread's clock goes back 8 times: paired again from
    // its stacks, as load_bytes pairs it, each byte decoded once.
    let crux = std::fs::read(format!("{fixtures}/crux_v1.spall")).unwrap();
    let mut load = LoadStream::new(&crux).unwrap();
    load.push(&crux).unwrap();
    let got = load.finish().unwrap().expect("no second decode");
    let want = load_bytes(&crux).unwrap();
    assert_eq!(want.decode_summary().parsed_bytes, crux.len() as u64);
    assert!(got.to_transfer() == want.to_transfer());
}

/// `bytes` streamed in pieces of `piece` bytes, runs of `target` (`None`: decode again).
fn streamed_json(bytes: &[u8], piece: usize, target: usize) -> Option<Trace> {
    assert!(LoadStream::accepts(bytes));
    let mut load = LoadStream::with_target(bytes, target).unwrap();
    for p in bytes.chunks(piece.max(1)) {
        load.push(p).unwrap();
    }
    load.finish().unwrap()
}

fn json_fixtures() -> Vec<(String, Vec<u8>)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
    let mut out = Vec::new();
    for dir in ["edge", "fuzz", "real"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        out.extend(
            paths
                .into_iter()
                .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap())),
        );
    }
    out
}

/// `want`, or `None` when the file needs the buffered decode (B/E going back in time),
/// which a stream cannot do: then a single run must say so too.
fn check(name: &str, bytes: &[u8], got: Option<Trace>, want: &[u8], what: &str) {
    match got {
        Some(got) => assert!(
            got.to_transfer() == want,
            "{name}, {what}: the traces differ"
        ),
        None => assert!(
            streamed_json(bytes, bytes.len(), usize::MAX / 4).is_none(),
            "{name}, {what}: decode again, where one run does not"
        ),
    }
}

#[test]
fn streamed_json_is_load_bytes_trace_at_every_cut() {
    let mut small = 0;
    for (name, bytes) in json_fixtures().into_iter().filter(|f| f.1.len() < 4_000) {
        let want = load_bytes(&bytes).unwrap().to_transfer();
        for cut in 0..=bytes.len() {
            let mut load = LoadStream::new(&bytes).unwrap();
            load.push(&bytes[..cut]).unwrap();
            load.push(&bytes[cut..]).unwrap();
            let got = load.finish().unwrap();
            check(&name, &bytes, got, &want, &format!("cut at {cut}"));
        }
        small += 1;
    }
    assert!(small > 15, "{small} small JSON fixtures");
}

/// A file larger than two runs, so that `load_bytes` decodes it in parallel chunks: the
/// synthetic one, and the corpus's JSON files one after another in one event array.
fn large_json() -> Vec<(String, Vec<u8>)> {
    let mut json = Vec::new();
    Synth {
        spans: 150_000,
        exotic_names: true,
        ..Synth::default()
    }
    .write_json(&mut json, true)
    .unwrap();
    // The corpus's events five times over, so it is cut in chunks too, each file's
    // processes renumbered so that no two files share a thread; not the files whose B/E
    // events go back in time (loaded with a second, buffered decode, which no stream does).
    let mut w = spall_format::JsonWriter::new(Vec::new()).unwrap();
    let mut pid = 0;
    for _ in 0..5 {
        for (_, bytes) in json_fixtures() {
            if streamed_json(&bytes, bytes.len(), usize::MAX / 4).is_none() {
                continue;
            }
            pid += 1;
            let _ = spall_format::decode(&bytes, &mut |e: &RawEvent<'_>| {
                let own = match &e.pid {
                    RawId::Num(n) => pid * 1_000_000 + n,
                    RawId::Str(_) => pid * 1_000_000,
                };
                w.event(&RawEvent {
                    pid: RawId::Num(own),
                    ..e.clone()
                });
            });
        }
    }
    let extra = [("otherData", r#"{"a": [1, "]"]}"#), ("stackFrames", "{}")];
    let (all, _) = w.finish(&extra).unwrap();
    assert!(all.len() > 2 * CHUNK_BYTES, "{} bytes", all.len());
    vec![("synthetic".to_string(), json), ("corpus".to_string(), all)]
}
#[test]
fn streamed_json_is_load_bytes_trace_in_any_pieces() {
    let mut files = large_json();
    files.extend(json_fixtures().into_iter().filter(|f| f.1.len() >= 8_000));
    for (name, bytes) in files {
        let want = load_bytes(&bytes).unwrap().to_transfer();
        // A file under two runs is decoded whole at the end: one piece size is enough.
        let pieces: &[usize] = if bytes.len() > 2 * CHUNK_BYTES {
            &[8 << 20, 4_099]
        } else {
            &[4_099]
        };
        for &piece in pieces {
            let got = streamed_json(&bytes, piece, CHUNK_BYTES);
            if bytes.len() > 2 * CHUNK_BYTES {
                assert!(got.is_some(), "{name}: decode again");
            }
            check(
                &name,
                &bytes,
                got,
                &want,
                &format!("pieces of {piece} bytes"),
            );
        }
        // The web page's test (`?chunk=4099`): slices and runs of 4,099 bytes. Runs other
        // than the parallel decoder's may merge B/E warnings differently, never the spans.
        if let Some(got) = streamed_json(&bytes, 4_099, 4_099) {
            let spans = load_bytes(&bytes).unwrap().span_count();
            assert_eq!(got.span_count(), spans, "{name}: runs of 4,099 bytes");
        }
    }
}

#[test]
fn streamed_gzip_is_load_bytes_trace() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/real");
    let mut files = Vec::new();
    for name in [
        "bazel_profile_with_queuing.json.gz",
        "pytorch_kineto_trace_diff_test.json.gz",
    ] {
        files.push((
            name.to_string(),
            std::fs::read(format!("{root}/{name}")).unwrap(),
        ));
    }
    let (name, json) = large_json().swap_remove(0);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&json).unwrap();
    files.push((name, gz.finish().unwrap()));
    for (name, bytes) in files {
        let want = load_bytes(&bytes).unwrap().to_transfer();
        let got = streamed_json(&bytes, 4_099, CHUNK_BYTES).expect("in order");
        assert!(got.to_transfer() == want, "{name}: the traces differ");
    }
}

/// A `B` and `E` of one time pair in file order until some event goes back in time; from
/// then on trace_processor takes the `E` first. A stream in many runs must see where that
/// starts across runs (here in the first run, the ties in later ones) and pair the thread
/// again, from the events it kept, without the file.
#[test]
fn zero_length_pairs_pair_again_only_after_time_went_back() {
    let json = |back: bool| {
        let mut ev = vec![r#"{"ph":"X","name":"x","ts":50,"dur":1,"pid":1,"tid":2}"#.to_string()];
        if back {
            ev.push(r#"{"ph":"X","name":"y","ts":0,"dur":1,"pid":1,"tid":2}"#.to_string());
        }
        for i in 0..2_000 {
            let t = 100 + 5 * i;
            ev.push(format!(
                r#"{{"ph":"B","name":"f","ts":{t},"pid":1,"tid":1}},{{"ph":"B","name":"g","ts":{},"pid":1,"tid":1}},{{"ph":"E","ts":{},"pid":1,"tid":1}},{{"ph":"E","ts":{},"pid":1,"tid":1}}"#,
                t + 1,
                t + 1,
                t + 3
            ));
        }
        format!("[{}]", ev.join(",")).into_bytes()
    };
    let target = 16 << 10;
    let in_order = json(false);
    assert!(in_order.len() > 4 * target);
    let got = streamed_json(&in_order, 4_096, target).expect("no need to decode again");
    assert!(got.to_transfer() == load_bytes(&in_order).unwrap().to_transfer());
    assert_eq!(got.max_depth(), 2);
    let back = json(true);
    let got = streamed_json(&back, 4_096, target).expect("paired again from kept events");
    // `f` ends where `g` begins: trace_processor's answer, and the buffered builder's.
    assert_eq!(got.max_depth(), 1);
    assert!(got.to_transfer() == crate::common::buffered(&back).to_transfer());
    assert_eq!(got.decode_summary().parsed_bytes, back.len() as u64);
}

/// speedscope's format: a sampled profile in time and an evented one.
fn speedscope_file() -> String {
    let mut ss = String::from(
        r#"{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"main","file":"a.c","line":3},{"name":"f"},{"name":"g"}]},"profiles":[{"type":"sampled","name":"cpu","unit":"milliseconds","startValue":0,"endValue":1,"samples":["#,
    );
    let stacks: Vec<_> = (0..200).map(|i| format!("[0,{}]", 1 + i % 2)).collect();
    let weights: Vec<_> = (0..200).map(|i| (1 + i % 3).to_string()).collect();
    ss += &format!(
        r#"{}],"weights":[{}]}},{{"type":"evented","name":"ev","unit":"none","startValue":0,"endValue":9,"events":[{{"type":"O","frame":0,"at":0}},{{"type":"O","frame":2,"at":1}},{{"type":"C","frame":2,"at":4}},{{"type":"C","frame":0,"at":9}}]}}]}}"#,
        stacks.join(","),
        weights.join(",")
    );
    ss
}

/// A speedscope file loaded natively (walked, as the page's stream walks it, never parsed
/// whole) is the trace of the file parsed whole, into one builder; so are odd ones, and
/// those the walk gives up on (decoded whole again).
#[test]
fn walked_speedscope_is_the_whole_parse() {
    let ss = speedscope_file();
    let odd = [
        ss.clone(),
        // Weights before samples, an unknown unit, a frame index past the frames.
        r#"{"shared":{"frames":[{"name":"a"},{"name":"b","file":"x.py","line":2}]},"profiles":[{"weights":[1,2,3],"samples":[[0],[0,1],[0,7]],"type":"sampled","unit":"seconds","name":"p"},{"type":"sampled","unit":"parsecs","samples":[[1]],"weights":[4]}]}"#.into(),
        // Given up: profiles before the frames, a duplicate key.
        r#"{"profiles":[{"type":"sampled","unit":"none","samples":[[0]],"weights":[1]}],"shared":{"frames":[{"name":"a"}]}}"#.into(),
        r#"{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","unit":"none","samples":[[0]],"weights":[1]}],"profiles":[{"type":"sampled","unit":"none","samples":[[0],[0]],"weights":[1,5]}]}"#.into(),
    ];
    for b in odd {
        let walked = load_bytes(b.as_bytes()).unwrap();
        assert!(!walked.samples().is_empty(), "{b}");
        let mut whole = trace_model::TraceBuilder::new();
        let sum = spall_format::decode(b.as_bytes(), &mut whole).unwrap();
        let whole = whole.finish(sum);
        assert!(walked.to_transfer() == whole.to_transfer(), "{b}");
    }
}

/// `perf script` text, collapsed stacks and node's `.cpuprofile` (as a browser's worker
/// reads them: in slices, gzipped or not) stream, and give `load_bytes`'s trace: the same
/// samples, stacks, threads and untimed layout, however the file is cut. pprof, Gecko and
/// speedscope's format stream too (gzip undone as the pieces arrive) and give it too,
/// their summary (gzip, sizes) included.
#[test]
fn streamed_text_profiles_are_load_bytes_trace() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real/profiles"
    );
    let read = |name: &str| std::fs::read(format!("{root}/{name}")).unwrap();
    let mut files = vec![
        ("spin.perf".to_string(), read("spin.perf")),
        ("spin_fields.perf".to_string(), read("spin_fields.perf")),
        (
            "demangle_rust.perf.gz".to_string(),
            read("demangle_rust.perf.gz"),
        ),
        ("work.cpuprofile".to_string(), read("work.cpuprofile")),
        ("go_cpu.pb.gz".to_string(), read("go_cpu.pb.gz")),
        ("go_heap.pb.gz".to_string(), read("go_heap.pb.gz")),
        (
            "firefox_page.json.gz".to_string(),
            read("firefox_page.json.gz"),
        ),
    ];
    let plain = |gz: &[u8]| {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut out).unwrap();
        out
    };
    files.push(("go_cpu.pb".to_string(), plain(&read("go_cpu.pb.gz"))));
    files.push(("speedscope".to_string(), speedscope_file().into_bytes()));
    // Folded stacks, CRLF and comments: untimed samples laid out end to end by weight.
    let mut folded = String::from("# folded\r\n");
    for i in 0..3_000 {
        folded.push_str(&format!("main;f{};g{} {}\r\n", i % 7, i % 13, 1 + i % 5));
    }
    files.push(("folded".to_string(), folded.into_bytes()));
    for (name, bytes) in files {
        let want = load_bytes(&bytes).unwrap();
        let samples: usize = want.samples().iter().map(|t| t.ts.len()).sum();
        assert!(samples > 30, "{name}: {samples} samples");
        let want = want.to_transfer();
        for (piece, target) in [(8 << 20, CHUNK_BYTES), (4_099, 4_099), (333, 1_000)] {
            let got = streamed_json(&bytes, piece, target).expect("no need to decode again");
            assert!(
                got.to_transfer() == want,
                "{name}: pieces of {piece}, runs of {target}"
            );
        }
    }
}
