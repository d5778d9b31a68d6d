//! Loading decodes chunks in parallel, each into its own builder, and merges them. The
//! result must equal the sequential, buffered builder's on inputs large enough to be cut into
//! many chunks, including B/E pairs split across chunks, and must not depend on the number
//! of threads. The stepped load a browser runs (`LoadSteps`) must give the same result.

use crate::common::{buffered, with_threads};
use spall_format::synth::Synth;
use spall_format::{DiagnosticKind, CHUNK_BYTES};
use trace_model::{load_bytes, LoadSteps, LoadStream, ModelWarning, Trace};

/// Everything a reader sees, as text: spans with names, categories, arguments and flags;
/// threads and processes with their names; instants, counters, flows; warning counts.
fn dump(t: &Trace) -> Vec<String> {
    let mut out = Vec::new();
    for p in t.processes() {
        out.push(format!(
            "process {:?} {:?} {:?}",
            t.ext_id(p.pid),
            p.name.map(|n| t.str(n)),
            p.threads.len()
        ));
    }
    for th in t.threads() {
        out.push(format!(
            "thread {} {:?} lanes {}",
            t.ext_id(th.tid),
            th.name.map(|n| t.str(n)),
            th.lanes.len()
        ));
        for (d, l) in th.lanes.iter().enumerate() {
            for i in 0..l.len() {
                out.push(format!(
                    "{d} {} {} {} {} {:?} {}",
                    l.start[i],
                    l.dur[i],
                    t.str(l.name[i]),
                    t.str(l.cat[i]),
                    t.args().get(l.args[i]),
                    l.flags[i]
                ));
            }
        }
    }
    for i in t.instants() {
        out.push(format!("instant {} {} {}", i.ts, t.str(i.name), i.thread));
    }
    for c in t.counters() {
        out.push(format!(
            "counter {} {:?} {:?}",
            t.str(c.name),
            c.ts,
            c.values
        ));
    }
    for f in t.flows() {
        out.push(format!("flow {} {}", t.str(f.id), f.points.len()));
    }
    for (k, n) in t.diagnostics().counts() {
        out.push(format!("warning {} {n}", k.name()));
    }
    out.push(format!("range {} {}", t.start_ns(), t.end_ns()));
    out
}

/// The load a browser runs: a step at a time, on one thread.
fn stepped(bytes: &[u8]) -> Trace {
    let mut load = LoadSteps::new(bytes.to_vec(), &Default::default());
    let mut steps = 0;
    while !load.step().unwrap() {
        steps += 1;
    }
    if bytes.len() > 3 * CHUNK_BYTES {
        assert!(steps > 3, "{steps} steps");
    }
    load.finish().unwrap()
}

fn assert_same(a: &Trace, b: &Trace, what: &str) {
    let (a, b) = (dump(a), dump(b));
    assert_eq!(a.len(), b.len(), "{what}: lines");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "{what}: line {i}");
    }
}

#[test]
fn generated_json_and_spall_equal_buffered() {
    let synth = Synth {
        spans: 150_000,
        exotic_names: true,
        ..Synth::default()
    };
    let mut json = Vec::new();
    synth.write_json(&mut json, true).unwrap();
    let mut spall = Vec::new();
    Synth {
        spans: 600_000,
        ..synth
    }
    .write_spall(&mut spall)
    .unwrap();
    for (what, bytes) in [("json", &json), ("spall", &spall)] {
        assert!(
            bytes.len() > 3 * CHUNK_BYTES,
            "{what}: {} bytes",
            bytes.len()
        );
        let par = load_bytes(bytes).unwrap();
        assert!(par.span_count() > 100_000);
        assert_same(&par, &buffered(bytes), what);
        let one = with_threads(1, || load_bytes(bytes).unwrap());
        assert_same(&one, &par, &format!("{what}, 1 thread"));
        assert_same(&stepped(bytes), &par, &format!("{what}, stepped"));
    }
}

/// One thread opens 60,000 nested B events, then closes them: every E lands in a later chunk
/// than its B. Some E names do not match, some E events have no B, the last B events never
/// close, and other threads, instants, counters and metadata are interleaved.
#[test]
fn begin_end_pairs_across_chunks() {
    let pad = "x".repeat(120);
    let mut s = String::from("[\n");
    let n = 60_000;
    for i in 0..n {
        s.push_str(&format!(
            "{{\"name\":\"b{i}{pad}\",\"ph\":\"B\",\"ts\":{i},\"pid\":1,\"tid\":1}},\n"
        ));
        if i % 997 == 0 {
            s.push_str(&format!(
                "{{\"name\":\"x{i}\",\"ph\":\"X\",\"ts\":{i},\"dur\":3,\"pid\":1,\"tid\":{}}},\n",
                2 + i % 3
            ));
            s.push_str(&format!(
                "{{\"name\":\"c\",\"ph\":\"C\",\"ts\":{i},\"pid\":1,\"tid\":1,\"args\":{{\"v\":{i}}}}},\n"
            ));
            s.push_str(&format!(
                "{{\"name\":\"i{i}\",\"ph\":\"i\",\"ts\":{i},\"pid\":2,\"tid\":\"main\"}},\n"
            ));
        }
    }
    s.push_str("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"deep\"}},\n");
    for i in (50..n).rev() {
        let name = if i % 101 == 0 {
            "wrong".to_string()
        } else {
            format!("b{i}{pad}")
        };
        // Runs of E events at one timestamp, as sampling converters write them.
        let ts = 2 * n - i / 4 * 4;
        s.push_str(&format!(
            "{{\"name\":\"{name}\",\"ph\":\"E\",\"ts\":{ts},\"pid\":1,\"tid\":1}},\n"
        ));
    }
    s.push_str("{\"name\":\"stray\",\"ph\":\"E\",\"ts\":999999999,\"pid\":1,\"tid\":3},\n");
    s.push_str("{\"name\":\"end\",\"ph\":\"i\",\"ts\":999999999,\"pid\":1,\"tid\":1}]\n");
    let bytes = s.into_bytes();
    assert!(bytes.len() > 2 * CHUNK_BYTES, "{} bytes", bytes.len());
    let par = load_bytes(&bytes).unwrap();
    let seq = buffered(&bytes);
    assert_eq!(par.threads()[0].lanes.len(), n as usize);
    assert_same(&par, &seq, "deep");
    let one = with_threads(1, || load_bytes(&bytes).unwrap());
    assert_same(&one, &par, "deep, 1 thread");
    assert_same(&stepped(&bytes), &par, "deep, stepped");
}

/// B/E events that go back in time on a thread: the stepped load, like the parallel one,
/// falls back to one buffered decode, and gzip is decompressed in steps first.
#[test]
fn stepped_load_falls_back_and_reads_gzip() {
    use std::io::Write;
    let mut s = String::from("[\n");
    let pad = "y".repeat(100);
    for i in 0..120_000u64 {
        // Every 1000th pair is written late, at an earlier time than the events before it.
        let ts = if i % 1000 == 999 { i - 500 } else { i } * 10;
        s.push_str(&format!(
            "{{\"name\":\"s{pad}\",\"ph\":\"B\",\"ts\":{ts},\"pid\":1,\"tid\":{}}},\n",
            i % 3
        ));
        s.push_str(&format!(
            "{{\"name\":\"s{pad}\",\"ph\":\"E\",\"ts\":{},\"pid\":1,\"tid\":{}}},\n",
            ts + 5,
            i % 3
        ));
    }
    s.push_str("{\"name\":\"end\",\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":1}]");
    let bytes = s.into_bytes();
    assert!(bytes.len() > 3 * CHUNK_BYTES);
    let par = load_bytes(&bytes).unwrap();
    assert_eq!(par.span_count(), 120_000);
    assert_same(&stepped(&bytes), &par, "back in time, stepped");
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&bytes).unwrap();
    let z = z.finish().unwrap();
    assert_same(&stepped(&z), &par, "gzip, stepped");
}

/// A load that would not fit is refused before its first event, naming the limit.
#[test]
fn stepped_load_checks_memory_first() {
    let mut json = Vec::new();
    Synth {
        spans: 50_000,
        ..Synth::default()
    }
    .write_json(&mut json, false)
    .unwrap();
    let opts = trace_model::DecodeOptions {
        max_memory: trace_model::MemoryLimit::Bytes(1 << 20),
        ..Default::default()
    };
    let mut load = LoadSteps::new(json, &opts);
    let e = load.step().unwrap_err();
    assert!(e.to_string().contains("memory"), "{e}");
}

/// `.spall` v3 Begin and End events go straight into lanes by their stack depth; the lanes
/// must be `nest`'s (the buffered builder's) in every case where the two could differ:
/// zero-length spans (alone, nested in each other, at the end or start of a longer span,
/// before a span that starts at the same time), Ends with no Begin, Begins never closed,
/// and stacks that cross chunks, on several threads whose buffers interleave.
#[test]
fn spall_stacks_equal_nesting() {
    use spall_format::synth::Rng;
    use spall_format::SpallWriter;
    let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap();
    let mut rng = Rng(7);
    let pad = "p".repeat(60);
    let threads = 5u32;
    let mut now = vec![100u64; threads as usize];
    let mut depth = vec![0u32; threads as usize];
    let mut spans = 0;
    for _ in 0..9_000 {
        let t = rng.below(threads as u64) as u32;
        let (i, tid) = (t as usize, 10 + t);
        // Time stands still half the time, so zero-length spans and equal times are common.
        for _ in 0..50 {
            now[i] += rng.below(2) * rng.below(5);
            match rng.below(10) {
                0..=4 if depth[i] < 40 => {
                    let name = format!("s{}{pad}", rng.below(50));
                    let args = if rng.below(4) == 0 { "a=1" } else { "" };
                    w.begin(1, tid, now[i], &name, args).unwrap();
                    depth[i] += 1;
                }
                // Now and then an End with no Begin open on its thread.
                5 if depth[i] == 0 && rng.below(3) == 0 => w.end(1, tid, now[i]).unwrap(),
                _ if depth[i] > 0 => {
                    w.end(1, tid, now[i]).unwrap();
                    depth[i] -= 1;
                    spans += 1;
                }
                _ => {}
            }
        }
    }
    let bytes = w.finish().unwrap();
    assert!(bytes.len() > 3 * CHUNK_BYTES, "{} bytes", bytes.len());
    assert!(spans > 50_000, "{spans} spans");
    assert!(depth.iter().any(|&d| d > 0), "some Begins stay open");
    let par = load_bytes(&bytes).unwrap();
    let zeros = par
        .threads()
        .iter()
        .flat_map(|t| &t.lanes)
        .flat_map(|l| &l.dur)
        .filter(|&&d| d == 0)
        .count();
    assert!(zeros > 5_000, "{zeros} zero-length spans");
    assert_same(&par, &buffered(&bytes), "spall stacks");
    let one = with_threads(1, || load_bytes(&bytes).unwrap());
    assert_same(&one, &par, "spall stacks, 1 thread");
    assert_same(&stepped(&bytes), &par, "spall stacks, stepped");
}

/// A real `.spall` file (940 zero-length spans among 91,542), written out again five
/// times one after another in time, so its stacks cross chunks.
#[test]
fn real_spall_file_across_chunks_equals_nesting() {
    use spall_format::{Collect, Phase, RawId, SpallWriter};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/spall/odingengine_v3.spall"
    );
    let real = std::fs::read(path).unwrap();
    assert_same(&load_bytes(&real).unwrap(), &buffered(&real), "odingengine");
    let mut events = Collect::default();
    spall_format::decode(&real, &mut events).unwrap();
    let span = events.0.iter().map(|e| e.ts).max().unwrap() + 1;
    let id = |r: &RawId<'_>| match r {
        RawId::Num(n) => *n as u32,
        RawId::Str(_) => unreachable!(".spall ids are numbers"),
    };
    let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap();
    for copy in 0..5 {
        for e in &events.0 {
            let (pid, tid, ts) = (id(&e.pid), id(&e.tid), (e.ts + copy * span) as u64);
            match e.ph {
                Phase::BEGIN => {
                    let args = e.args.raw().unwrap_or("");
                    w.begin(pid, tid, ts, &e.name, args).unwrap();
                }
                Phase::END => w.end(pid, tid, ts).unwrap(),
                _ => {}
            }
        }
    }
    let bytes = w.finish().unwrap();
    assert!(bytes.len() > 2 * CHUNK_BYTES, "{} bytes", bytes.len());
    let par = load_bytes(&bytes).unwrap();
    assert_eq!(par.span_count(), 5 * 91_542);
    assert_same(&par, &buffered(&bytes), "odingengine x5");
}

/// A span whose `B` and `E` both carry arguments holds both sets merged (an `E` key wins,
/// as in trace_processor and Chrome's trace viewer), whether the pair is in one chunk or
/// its `E` is chunks after its `B`; a `B` without arguments takes its `E`'s.
#[test]
fn end_arguments_merge_into_the_begins() {
    let mut s = String::from("[\n");
    s.push_str("{\"name\":\"outer\",\"ph\":\"B\",\"ts\":0,\"pid\":1,\"tid\":1,\"args\":{\"a\":1,\"kept\":\"b\"}},\n");
    s.push_str(
        "{\"name\":\"near\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":{\"x\":1}},\n",
    );
    s.push_str(
        "{\"name\":\"near\",\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":1,\"args\":{\"y\":[2]}},\n",
    );
    s.push_str("{\"name\":\"bare\",\"ph\":\"B\",\"ts\":3,\"pid\":1,\"tid\":1},\n");
    s.push_str("{\"name\":\"bare\",\"ph\":\"E\",\"ts\":4,\"pid\":1,\"tid\":1,\"args\":{\"only\":\"end\"}},\n");
    let pad = "z".repeat(200);
    for i in 0..3 * CHUNK_BYTES as u64 / 100 {
        s.push_str(&format!(
            "{{\"name\":\"i{pad}\",\"ph\":\"i\",\"ts\":{},\"pid\":1,\"tid\":2}},\n",
            10 + i
        ));
    }
    s.push_str("{\"name\":\"outer\",\"ph\":\"E\",\"ts\":99999999,\"pid\":1,\"tid\":1,\"args\":{\"a\":2,\"e\":true}}]\n");
    let bytes = s.into_bytes();
    assert!(bytes.len() > 3 * CHUNK_BYTES);
    let args = |t: &Trace, name: &str| -> serde_json::Value {
        let th = &t.threads()[0];
        let mut l = th
            .lanes
            .iter()
            .flat_map(|l| (0..l.len()).map(move |i| (l, i)));
        let (l, i) = l.find(|(l, i)| t.str(l.name[*i]) == name).unwrap();
        t.args().json(l.args[i]).unwrap()
    };
    let par = load_bytes(&bytes).unwrap();
    let want = serde_json::json!({"a": 2, "kept": "b", "e": true});
    assert_eq!(args(&par, "outer"), want, "across chunks");
    assert_eq!(args(&par, "near"), serde_json::json!({"x": 1, "y": [2]}));
    assert_eq!(args(&par, "bare"), serde_json::json!({"only": "end"}));
    let seq = buffered(&bytes);
    assert_eq!(args(&seq, "outer"), want, "buffered");
    assert_same(&seq, &par, "end arguments");
    assert_same(&stepped(&bytes), &par, "end arguments, stepped");
}

/// A file that trace_processor pairs otherwise on several threads, in several chunks: `E`
/// events of another name (it ignores them, then ends their `B` where the `X` it started
/// in ends), zero-length `B`/`E` pairs after time went back (it takes the `E` first), `B`
/// and `E` events that go back in time on a thread, arguments on both ends, an `E` with no
/// `B`, a `B` open across chunks; beside them threads that pair as they stream. Each load
/// (parallel, on one thread, stepped, streamed in pieces) decodes each byte once, and
/// gives the buffered builder's trace: every span, lane, argument and warning, in order.
#[test]
fn misplaced_ends_pair_again_without_a_second_decode() {
    let pad = "p".repeat(40);
    let mut ev: Vec<String> = Vec::new();
    let mut push = |e: String| ev.push(e);
    let n = 6_000u64;
    push(r#"{"ph":"B","name":"outer","ts":5,"pid":1,"tid":3,"args":{"o":1}}"#.into());
    for i in 0..n {
        let t = 100 + 20 * i;
        for k in 1..=6u64 {
            let be = |ph: &str, name: &str, ts: u64, args: &str| {
                let pad = if name.is_empty() { "" } else { &pad };
                format!(r#"{{"ph":"{ph}","name":"{name}{pad}","ts":{ts},"pid":1,"tid":{k}{args}}}"#)
            };
            if k <= 3 && i % 97 == k * 7 {
                // An `X`, a `B` inside it, and an `E` of another name: misplaced.
                push(format!(
                    r#"{{"ph":"X","name":"x","ts":{t},"dur":6,"pid":1,"tid":{k}}}"#
                ));
                push(be("B", "c", t + 1, r#","args":{"b":1}"#));
                push(be("E", "zz", t + 2, ""));
                push(format!(
                    r#"{{"ph":"i","name":"mark","ts":{},"pid":1,"tid":{k}}}"#,
                    t + 8
                ));
                continue;
            }
            if k == 6 && (i == n / 2 || i == 3 * n / 4) {
                // Late: a pair written after later ones, on one thread.
                push(be("B", "late", t - 500, ""));
                push(be("E", "late", t - 490, ""));
            }
            push(be(
                "B",
                "a",
                t,
                if i % 5 == 0 { r#","args":{"x":1}"# } else { "" },
            ));
            push(be("B", "b", t + 1, ""));
            if k == 4 {
                // Zero-length pairs: the `E` first after time went back.
                push(be("B", "z", t + 2, ""));
                push(be("E", "", t + 2, ""));
            }
            push(be("E", "", t + 3, r#","args":{"e":2}"#));
            push(be(
                "E",
                "a",
                t + 4,
                if i % 3 == 0 { r#","args":{"x":3}"# } else { "" },
            ));
            if k == 2 && i % 1_000 == 1 {
                push(be("E", "stray", t + 5, ""));
            }
        }
        // `X` events only, children first.
        push(format!(
            r#"{{"ph":"X","name":"child","ts":{},"dur":2,"pid":1,"tid":7}}"#,
            t + 1
        ));
        push(format!(
            r#"{{"ph":"X","name":"parent","ts":{t},"dur":9,"pid":1,"tid":7}}"#
        ));
        if i % 100 == 0 {
            push(format!(
                r#"{{"ph":"C","name":"c","ts":{t},"pid":1,"tid":1,"args":{{"v":{i}}}}}"#
            ));
        }
    }
    push(r#"{"ph":"E","name":"outer","ts":999999,"pid":1,"tid":3,"args":{"o":2}}"#.into());
    push(r#"{"ph":"M","name":"thread_name","pid":1,"tid":4,"args":{"name":"ties"}}"#.into());
    let bytes = format!("[{}]", ev.join(",\n")).into_bytes();
    assert!(bytes.len() > 3 * CHUNK_BYTES, "{} bytes", bytes.len());

    let want = buffered(&bytes);
    let d = want.diagnostics();
    for k in [ModelWarning::MisplacedEnd, ModelWarning::EndWithoutBegin] {
        assert!(d.count(k) > 0, "{k:?}: {:?}", d.examples());
    }
    let warnings = |t: &Trace| -> Vec<String> {
        (t.diagnostics().examples().iter())
            .map(|w| format!("{:?} {} {}", w.kind, w.offset, w.message))
            .collect()
    };
    let check = |t: &Trace, what: &str| {
        let parsed = t.decode_summary().parsed_bytes;
        assert_eq!(parsed, bytes.len() as u64, "{what}: bytes decoded");
        assert_same(t, &want, what);
        assert_eq!(warnings(t), warnings(&want), "{what}: warnings");
    };
    check(&load_bytes(&bytes).unwrap(), "parallel");
    check(&with_threads(1, || load_bytes(&bytes).unwrap()), "1 thread");
    check(&stepped(&bytes), "stepped");
    for piece in [1 << 20, 65_521] {
        let mut load = LoadStream::with_target(&bytes, CHUNK_BYTES / 4).unwrap();
        for p in bytes.chunks(piece) {
            load.push(p).unwrap();
        }
        let t = load.finish().unwrap().expect("no second decode");
        check(&t, &format!("streamed in pieces of {piece}"));
    }
}

/// A `.spall` file whose threads go back in time now and then, within a buffer and from
/// one buffer to the next (zero-length spans, Ends with no Begin, Begins left open, equal
/// times, beside threads that go forward), as version 3 and as version 1 (no buffers):
/// each load (parallel, on one thread, stepped, streamed in many runs) decodes each byte
/// once and gives the buffered builder's trace and warnings.
#[test]
fn spall_steps_back_in_time_without_a_second_decode() {
    use spall_format::synth::Rng;
    use spall_format::SpallWriter;
    let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap();
    // The same events as version 1: a header, then Begin (3) and End (4) records.
    let mut v1 = Vec::new();
    v1.extend_from_slice(&spall_format::spall::MAGIC.to_le_bytes());
    v1.extend_from_slice(&1u64.to_le_bytes());
    v1.extend_from_slice(&0.001f64.to_le_bytes());
    v1.extend_from_slice(&[0; 8]);
    let mut v1_event = |ty: u8, tid: u32, ts: u64, text: Option<(&str, &str)>| {
        v1.extend_from_slice(&[ty, 0][..if text.is_some() { 2 } else { 1 }]);
        v1.extend_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&tid.to_le_bytes());
        v1.extend_from_slice(&(ts as f64).to_le_bytes());
        if let Some((name, args)) = text {
            v1.extend_from_slice(&[name.len() as u8, args.len() as u8]);
            v1.extend_from_slice(name.as_bytes());
            v1.extend_from_slice(args.as_bytes());
        }
    };
    let mut rng = Rng(11);
    let threads = 4u32;
    let mut now = vec![1_000u64; threads as usize];
    let mut depth = vec![0u32; threads as usize];
    for round in 0..600 {
        let t = rng.below(threads as u64) as u32;
        let (i, tid) = (t as usize, 10 + t);
        // Threads 0 and 1 step back now and then; 2 and 3 go forward.
        if t < 2 && rng.below(4) == 0 {
            now[i] -= rng.below(60).min(now[i]);
        }
        for _ in 0..30 {
            now[i] += rng.below(2) * rng.below(5);
            match rng.below(10) {
                0..=4 if depth[i] < 12 => {
                    let args = if rng.below(4) == 0 { "a=1" } else { "" };
                    let name = format!("s{}", rng.below(20));
                    w.begin(1, tid, now[i], &name, args).unwrap();
                    v1_event(3, tid, now[i], Some((&name, args)));
                    depth[i] += 1;
                }
                5 if depth[i] == 0 && rng.below(3) == 0 => {
                    w.end(1, tid, now[i]).unwrap();
                    v1_event(4, tid, now[i], None);
                }
                _ if depth[i] > 0 => {
                    w.end(1, tid, now[i]).unwrap();
                    v1_event(4, tid, now[i], None);
                    depth[i] -= 1;
                }
                _ => {}
            }
        }
        if round % 7 == 0 {
            // Small buffers: steps back across buffers, and many runs to stream.
            w.flush().unwrap();
        }
    }
    for (version, bytes) in [(3, w.finish().unwrap()), (1, v1)] {
        let want = buffered(&bytes);
        let d = want.diagnostics();
        for k in [ModelWarning::EndWithoutBegin, ModelWarning::UnclosedBegin] {
            assert!(d.count(k) > 0, "v{version} {k:?}: {:?}", d.examples());
        }
        let check = |t: &Trace, what: &str| {
            let what = format!("v{version}, {what}");
            let parsed = t.decode_summary().parsed_bytes;
            assert_eq!(parsed, bytes.len() as u64, "{what}: bytes decoded");
            assert_same(t, &want, &what);
            // The same warnings; the offset of a positive span's events is not kept.
            let w = |t: &Trace| -> Vec<String> {
                (t.diagnostics().examples().iter())
                    .map(|w| format!("{:?} {}", w.kind, w.message))
                    .collect()
            };
            assert_eq!(w(t), w(&want), "{what}: warnings");
        };
        check(&load_bytes(&bytes).unwrap(), "parallel");
        check(&with_threads(1, || load_bytes(&bytes).unwrap()), "1 thread");
        check(&stepped(&bytes), "stepped");
        for target in [4_096, 30_000] {
            let mut load = LoadStream::with_target(&bytes, target).unwrap();
            for p in bytes.chunks(10_007) {
                load.push(p).unwrap();
            }
            let t = load.finish().unwrap().expect("no second decode");
            check(&t, &format!("streamed in runs of {target}"));
        }
    }
}

/// `perf script` text and collapsed stacks over two chunks are cut where records start and
/// decoded in parallel: the buffered builder's samples, stacks, threads and warnings (text
/// that is not UTF-8 warned once).
#[test]
fn text_profiles_in_parallel_equal_buffered() {
    let spin =
        std::fs::read_to_string(spall_test_support::fixture("real/profiles/spin.perf")).unwrap();
    let mut perf = Vec::new();
    for i in 0..(2 * CHUNK_BYTES / spin.len() + 2) {
        // Each copy a second later, one record's symbol not UTF-8.
        for line in spin.lines() {
            match line.split_once(" 2592.") {
                Some((a, t)) => perf.extend(format!("{a} {}.{t}\n", 2592 + i).bytes()),
                None if i == 7 && line.contains("heavy") => perf.extend(b"\t11b9 he\xffavy (x)\n"),
                None => perf.extend(format!("{line}\n").bytes()),
            }
        }
    }
    let mut folded = String::new();
    for i in 0..(2 * CHUNK_BYTES / 45 + 1_000) {
        folded.push_str(&format!(
            "main;run_{};parse_{};lex_the_input_text_{};read_{} {}\n",
            i % 5,
            i % 11,
            i % 17,
            i % 3,
            1 + i % 9
        ));
    }
    /// Counts samples.
    #[derive(Default)]
    struct Count(usize);
    impl spall_format::EventSink for Count {
        fn event(&mut self, _: &spall_format::RawEvent<'_>) {}
        fn sample(&mut self, _: &spall_format::RawSample<'_>) {
            self.0 += 1;
        }
    }
    for (what, bytes) in [("perf", perf), ("folded", folded.into_bytes())] {
        assert!(
            bytes.len() > 2 * CHUNK_BYTES,
            "{what}: {} bytes",
            bytes.len()
        );
        let (_, runs) =
            spall_format::decode_parallel(&bytes, &Default::default(), Count::default, &|_, _| {})
                .unwrap();
        assert!(runs.len() >= 2, "{what}: {} runs", runs.len());
        let par = load_bytes(&bytes).unwrap();
        let want = buffered(&bytes);
        let samples: usize = par.samples().iter().map(|t| t.ts.len()).sum();
        assert!(samples > 10_000);
        assert_eq!(runs.iter().map(|c| c.0).sum::<usize>(), samples, "{what}");
        assert!(
            par.to_transfer() == want.to_transfer(),
            "{what}: the traces differ"
        );
        let d = &par.decode_summary().diagnostics;
        assert_eq!(d.total(), u64::from(what == "perf"), "{what}: {d:?}");
    }
}
