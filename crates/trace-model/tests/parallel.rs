//! Loading decodes chunks in parallel, each into its own builder, and merges them. The
//! result must equal the sequential, buffered builder's on inputs large enough to be cut into
//! many chunks, including B/E pairs split across chunks, and must not depend on the number
//! of threads. The stepped load a browser runs (`LoadSteps`) must give the same result.

mod common;

use common::{buffered, with_threads};
use spall_format::synth::Synth;
use spall_format::{DiagnosticKind, CHUNK_BYTES};
use trace_model::{load_bytes, LoadSteps, Trace};

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
