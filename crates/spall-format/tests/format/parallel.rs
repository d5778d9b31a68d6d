//! The parallel decoder, and the stepped one a browser uses, give exactly the events and
//! warnings of the sequential one: their sinks, replayed in order, are the sequential event
//! stream.

use crate::common::{decode_all, warnings};
use spall_format::synth::Synth;
use spall_format::{decode_parallel, Collect, DecodeOptions, RawEvent, Steps, CHUNK_BYTES};

fn parallel(bytes: &[u8]) -> (Vec<RawEvent<'static>>, spall_format::Summary, usize) {
    let (summary, sinks) = decode_parallel(
        bytes,
        &DecodeOptions::default(),
        Collect::default,
        &|_, _| {},
    )
    .expect("decodes");
    let n = sinks.len();
    (sinks.into_iter().flat_map(|c| c.0).collect(), summary, n)
}

/// Decodes in steps, checking progress only moves forward; returns the events, the summary
/// and the number of steps and sinks.
fn stepped(bytes: &[u8]) -> (Vec<RawEvent<'static>>, spall_format::Summary, usize, usize) {
    let mut steps = Steps::new(bytes.to_vec(), &DecodeOptions::default(), Collect::default);
    let (mut n, mut last) = (0, (0, 0));
    while !steps.step().expect("decodes") {
        n += 1;
        let (done, total) = steps.progress();
        assert!(done <= total, "{done} of {total}");
        if !steps.decompressing() && last.1 == total {
            assert!(
                done >= last.0,
                "progress went back from {} to {done}",
                last.0
            );
        }
        last = (done, total);
    }
    let out = steps.finish().expect("finished");
    assert_eq!(out.input.bytes().len() as u64, out.summary.decoded_bytes);
    let sinks = out.sinks.len();
    let events = out.sinks.into_iter().flat_map(|c| c.0).collect();
    (events, out.summary, n + 1, sinks)
}

fn same(bytes: &[u8], what: &str) -> usize {
    let (seq, s1) = decode_all(bytes);
    let (par, s2, chunks) = parallel(bytes);
    assert_eq!(seq.len(), par.len(), "{what}: event count");
    for (i, (a, b)) in seq.iter().zip(&par).enumerate() {
        assert_eq!(a, b, "{what}: event {i}");
    }
    assert_eq!(s1.events, s2.events, "{what}");
    assert_eq!(warnings(&s1), warnings(&s2), "{what}");
    assert_eq!(s1.json, s2.json, "{what}");
    let (st, s3, n, _) = stepped(bytes);
    assert_eq!(seq.len(), st.len(), "{what}: stepped event count");
    for (i, (a, b)) in seq.iter().zip(&st).enumerate() {
        assert_eq!(a, b, "{what}: stepped event {i}");
    }
    assert_eq!(
        (s1.events, s1.format, s1.gzip, s1.decoded_bytes),
        (s3.events, s3.format, s3.gzip, s3.decoded_bytes),
        "{what}: stepped"
    );
    assert_eq!(warnings(&s1), warnings(&s3), "{what}: stepped");
    assert_eq!(s1.json, s3.json, "{what}: stepped");
    assert_eq!(s1.spall, s3.spall, "{what}: stepped");
    if chunks > 1 {
        assert!(n > 3, "{what}: {n} steps");
    }
    chunks
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_in_steps_equals_sequential() {
    let mut b = Vec::new();
    synth(150_000).write_json(&mut b, true).unwrap();
    let z = gzip(&b);
    same(&z, "gzip");
    same(&gzip(&z), "gzip twice");
    same(&z[..z.len() / 2], "gzip cut in half");
    let mut s = Vec::new();
    synth(1000).write_spall_v1(&mut s).unwrap();
    same(&gzip(&s), "gzip .spall v1");
}

#[test]
fn hostile_inputs_in_steps_fail_as_sequential() {
    for bad in [
        &b"\x1f\x8b\x08 not gzip at all"[..],
        b"",
        b"<html>not a trace</html>",
        &[0x0D, 0xF0, 0xAD, 0x0B, 0, 0, 0, 0, 9, 9][..],
    ] {
        let seq = spall_format::decode(bad, &mut Collect::default()).map(|s| s.events);
        let mut steps = Steps::new(bad.to_vec(), &DecodeOptions::default(), Collect::default);
        let st = loop {
            match steps.step() {
                Ok(false) => continue,
                Ok(true) => break steps.finish().map(|d| d.summary.events),
                Err(e) => break Err(e),
            }
        };
        assert_eq!(
            seq.as_ref().map_err(|e| e.to_string()),
            st.as_ref().map_err(|e| e.to_string()),
            "{bad:?}"
        );
    }
}

fn synth(spans: u64) -> Synth {
    Synth {
        spans,
        exotic_names: true,
        ..Synth::default()
    }
}

#[test]
fn spall_v3_chunks_equal_sequential() {
    let mut b = Vec::new();
    synth(600_000).write_spall(&mut b).unwrap();
    assert!(b.len() > 3 * CHUNK_BYTES, "{} bytes", b.len());
    assert!(same(&b, "whole") > 3);
    // Cut inside a buffer: the last chunk reports the truncation, once.
    let cut = b.len() - 12_345;
    same(&b[..cut], "truncated");
}

#[test]
fn json_chunks_equal_sequential() {
    let mut b = Vec::new();
    synth(150_000).write_json(&mut b, true).unwrap();
    assert!(b.len() > 3 * CHUNK_BYTES, "{} bytes", b.len());
    assert!(same(&b, "whole") > 3);
    same(&b[..b.len() - 777], "truncated");
}

/// Strings full of `}, {` make chunk-start guesses land inside strings; the decoder must
/// notice and still produce the sequential result. Also: leniencies near chunk edges.
#[test]
fn json_wrong_guesses_and_leniencies() {
    let mut s = String::from("{\"otherData\": {\"a\": [{}, {}]}, \"traceEvents\": [\n");
    let mut i = 0u64;
    while s.len() < 3 * CHUNK_BYTES {
        // Padding first: a guess that lands in it finds the `{` inside the string.
        let pad = if i.is_multiple_of(3) {
            "pad ".repeat(250)
        } else {
            String::new()
        };
        let name = format!(r#"{pad}}}, {{\"ph\": 1}}, {{"#);
        s.push_str(&format!(
            "{{\"name\": \"{name}{i}\", \"ph\": \"X\", \"ts\": {i}, \"dur\": 1, \"pid\": 1, \"tid\": {}, \"args\": {{\"s\": \"}},\\n{{\"}}}},\n",
            i % 5
        ));
        if i.is_multiple_of(10_007) {
            s.push_str(",\n"); // a doubled comma
        }
        if i.is_multiple_of(20_011) {
            s.push_str("17,\n"); // not an object
        }
        i += 1;
    }
    s.push_str("{\"name\": \"last\", \"ph\": \"i\", \"ts\": 1, \"pid\": 1, \"tid\": 1}\n],\n");
    s.push_str("\"metadata\": [{\"x\": 1}, {\"y\": 2}], \"displayTimeUnit\": \"ns\"}");
    let b = s.into_bytes();
    // A wrong guess costs its chunk a second parse, not the parallelism of what follows:
    // every chunk still gets a sink of its own.
    let chunks = same(&b, "whole");
    assert!(chunks >= 4, "{chunks} sinks");
    same(&b[..b.len() - 100], "cut after the array");
    same(&b[..2 * CHUNK_BYTES + 5], "cut in the middle");
    // Invalid UTF-8 in one event: the whole input takes the repairing path.
    let mut bad = b.clone();
    let at = bad.len() / 2
        + bad[bad.len() / 2..]
            .iter()
            .position(|&c| c == b'n')
            .unwrap();
    bad[at] = 0xFF;
    same(&bad, "invalid UTF-8");
}

#[test]
fn small_inputs_use_one_sink() {
    let b = br#"[{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]"#;
    let (events, summary, chunks) = parallel(b);
    assert_eq!((events.len(), summary.events, chunks), (1, 1, 1));
}
