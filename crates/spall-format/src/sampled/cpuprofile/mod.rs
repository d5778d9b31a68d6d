//! V8's `.cpuprofile` (Node's `--cpu-prof`, Chrome DevTools' "Save profile"): a call tree of
//! nodes and the node each sample hit.
//!
//! The current form is `{nodes: [{id, callFrame: {functionName, url, lineNumber},
//! children, parent}], startTime, endTime, samples: [node id], timeDeltas: [µs]}`: a
//! sample's time is `startTime` plus the running sum of the deltas. The older form holds
//! the tree under `head` (each node its own `functionName`, `url`, `lineNumber`), with
//! `startTime`/`endTime` in seconds and absolute `timestamps` in µs, as DevTools reads it.
//!
//! Samples are put in time order (V8 may write them slightly out of it). Each weighs the
//! time to the next sample, the last one the time to `endTime`, as DevTools and speedscope
//! count self time: the weights add up to the profile's sampled time, in nanoseconds. V8's
//! `(root)` node is left out of stacks; `lineNumber` is 0-based in the file and 1-based in
//! the frame.

mod cursor;
mod stream;
mod tree;

use serde_json::Value;

pub(crate) use stream::Reader;
use tree::{emit, parsed_fast, parsed_tree, Fast};

use super::bad;
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::EventSink;

/// Whether a JSON object (its text after `{`) looks like a `.cpuprofile`.
pub(crate) fn looks_like(after_brace: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(after_brace, k).is_some();
    has(b"\"callFrame\"") || (has(b"\"head\"") && has(b"\"functionName\""))
}

/// Decodes the profile into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    let mut r = stream::Reader::default();
    if r.push(b).is_ok() {
        if let Some(n) = r.finish(sink, diags) {
            return Ok(n);
        }
    }
    if let Ok(f) = serde_json::from_slice::<Fast<'_>>(b) {
        let p = parsed_fast(f, diags);
        return Ok(emit(p, sink, diags));
    }
    let v: Value = serde_json::from_slice(b)
        .map_err(|e| bad(format!("a .cpuprofile that is not valid JSON: {e}"), 0))?;
    let p = parsed_tree(&v, diags)?;
    Ok(emit(p, sink, diags))
}

#[cfg(test)]
mod tests {
    use super::tree::MAX_DEPTH;
    use super::*;
    use crate::sampled::tests::Samples;
    use crate::SampleUnit;

    fn read(text: &str) -> (Samples, Diagnostics) {
        Samples::read(decode, text)
    }

    #[test]
    fn nodes_samples_and_time_deltas() {
        let (s, d) = read(
            r#"{"nodes":[
              {"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2]},
              {"id":2,"callFrame":{"functionName":"main","url":"file:///a.js","lineNumber":9},"children":[3]},
              {"id":3,"callFrame":{"functionName":"","url":"file:///a.js","lineNumber":2}}],
             "startTime":1000,"endTime":1100,"samples":[2,3,3],"timeDeltas":[10,20,30]}"#,
        );
        assert_eq!(d.total(), 0);
        assert_eq!(
            s.stacks(),
            vec![
                ("main".into(), 20_000),
                ("main;(anonymous)".into(), 30_000),
                ("main;(anonymous)".into(), 40_000)
            ]
        );
        assert_eq!(
            s.0.iter().map(|x| x.ts.unwrap()).collect::<Vec<_>>(),
            vec![1_010_000, 1_030_000, 1_060_000]
        );
        assert_eq!(
            s.0[0].stack[0],
            ("main".into(), Some("file:///a.js".into()), Some(10))
        );
        assert_eq!(s.0[0].unit, SampleUnit::Nanoseconds);
    }

    /// The fast reading of node's real profile (and of the tests' own) is the tree's.
    #[test]
    fn all_readings_agree() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/profiles/work.cpuprofile"
        );
        let real = std::fs::read(path).unwrap();
        let escaped = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"a\"b","url":"x\u0041.js","lineNumber":3}},
            {"id":2,"children":[1]}],"samples":[1,2,9],"timeDeltas":[5,5]}"#;
        // Duplicate ids, a parent loop, floats, nulls, unknown fields, absolute times.
        let odd = br#"{"nodes":[{"id":7,"callFrame":{"functionName":"(root)","x":{"y":[1]}}},
            {"id":8,"parent":7,"callFrame":{"functionName":"f","url":null}},{"id":8,"parent":7,
            "callFrame":{"functionName":"g","lineNumber":null}},{"id":4,"parent":5},{"id":5,"parent":4}],
            "samples":[8,4,8,6],"timestamps":[5,3.25,1e1],"timeDeltas":null,"startTime":-0,"endTime":2.5}"#;
        // V8's layout of a call frame (read by one comparison a key), and near misses.
        let v8 = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2,3,4]},
            {"id":6,"callFrame":{"functionName":"m","scriptId":"1","url":"w.js","lineNumber":1,"columnNumber":2},"hitCount":2,"positionTicks":[{"line":3,"ticks":1},{"line":4,"ticks":1}]},
            {"id":7,"callFrame":{"functionName":"n","scriptId":"1","url":"w.js","lineNumber":1,"columnNumber":2},"hitCount":1.5,"children":[6]},
            {"id":2,"callFrame":{"functionName":"a\"b","scriptId":"1","url":"u\u0041.js","lineNumber":12,"columnNumber":0}},
            {"id":3,"callFrame":{"functionName":"c","scriptId":"1","url":"w.js","lineNumber":3,"columnNumber":1.5},"children":[5]},
            {"id":4,"callFrame":{"functionName":"d","scriptId":"1","url":"w.js","lineNumber":null,"columnNumber":2}},
            {"id":5,"callFrame":{"functionName":"e","scriptId":"1","url":"w.js","lineNumber":40,"columnNumber":2,"x":1},"children":[12345678,1234567]},
            {"id":12345678,"callFrame":{"functionName":"a_long_function_name\"quoted\"","scriptId":"1\u00e9\"","url":"file:///a/long/path/to/a/script.js","lineNumber":1234567,"columnNumber":123456789012}},
            {"id":1234567,"callFrame":{"functionName":"función_número_uno_ü","scriptId":"script_ñ_42","url":"file:///a/long/path/ñ.js","lineNumber":7654321,"columnNumber":12345678}}],
            "samples":[2,3,4,5,2,6,7,12345678,1234567],"timeDeltas":[0,7,-0,12,3,1,1,1234567,12345678]}"#
            .as_bytes();
        for b in [&real[..], &escaped[..], &odd[..], v8] {
            let f = serde_json::from_slice::<Fast<'_>>(b).unwrap();
            let (mut fast, mut fd) = (Samples::default(), Diagnostics::default());
            let p = parsed_fast(f, &mut fd);
            emit(p, &mut fast, &mut fd);
            let mut r = super::stream::Reader::default();
            let (mut read, mut rd) = (Samples::default(), Diagnostics::default());
            r.push(b).unwrap();
            r.finish(&mut read, &mut rd)
                .expect("the streamed reader takes it");
            let v: Value = serde_json::from_slice(b).unwrap();
            let (mut tree, mut td) = (Samples::default(), Diagnostics::default());
            let p = parsed_tree(&v, &mut td).unwrap();
            emit(p, &mut tree, &mut td);
            assert!(fast.0.len() >= 2);
            assert_eq!(fast.0, tree.0);
            assert_eq!(read.0, tree.0);
            assert_eq!(format!("{fd:?}"), format!("{td:?}"));
            assert_eq!(format!("{rd:?}"), format!("{td:?}"));
        }
    }

    #[test]
    fn out_of_order_samples_are_sorted() {
        let (s, _) = read(
            r#"{"nodes":[{"id":1,"callFrame":{"functionName":"a"}},{"id":2,"callFrame":{"functionName":"b"}}],
             "startTime":0,"endTime":100,"samples":[1,2],"timeDeltas":[50,-10]}"#,
        );
        assert_eq!(s.stacks(), vec![("b".into(), 10_000), ("a".into(), 50_000)]);
    }

    #[test]
    fn the_older_head_form() {
        let (s, d) = read(
            r#"{"head":{"functionName":"(root)","id":1,"children":[
                {"functionName":"main","url":"x.js","lineNumber":4,"id":2,"children":[
                  {"functionName":"f","id":3,"children":[]}]}]},
             "startTime":1.0,"endTime":1.003,"samples":[2,3],"timestamps":[1000000,1001000]}"#,
        );
        assert_eq!(d.total(), 0);
        assert_eq!(
            s.stacks(),
            vec![("main".into(), 1_000_000), ("main;f".into(), 2_000_000)]
        );
    }

    #[test]
    fn hostile_profiles() {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        assert!(decode(b"{\"nodes\":[", &mut s, &mut d).is_err());
        assert!(decode(b"{\"nodes\":5}", &mut s, &mut d).is_err());
        // A parent loop, a missing node, more samples than deltas.
        let (s, d) = read(
            r#"{"nodes":[{"id":1,"parent":2,"callFrame":{"functionName":"a"}},
                        {"id":2,"parent":1,"callFrame":{"functionName":"b"}}],
             "samples":[1,7,1],"timeDeltas":[1,1]}"#,
        );
        assert_eq!(s.0.len(), 2);
        // The extra sample, and each sample whose stack broke.
        assert_eq!(d.total(), 3);
        // A chain of nodes deeper than any V8 stack is cut to its innermost frames.
        let nodes: Vec<String> = (1..=3000)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"parent":{},"callFrame":{{"functionName":"f{i}"}}}}"#,
                    i - 1
                )
            })
            .collect();
        let deep = format!(
            r#"{{"nodes":[{}],"samples":[3000,3000],"timeDeltas":[1,1]}}"#,
            nodes.join(",")
        );
        let (s, d) = read(&deep);
        assert_eq!(s.0[0].stack.len(), MAX_DEPTH);
        assert_eq!(s.0[1].stack.last().unwrap().0, "f3000");
        assert_eq!(d.total(), 1);
    }
}
