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

use std::borrow::Cow;

use serde_json::Value;
use std::collections::HashMap;

use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{EventSink, RawId};

/// Whether a JSON object (its text after `{`) looks like a `.cpuprofile`.
pub(crate) fn looks_like(after_brace: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(after_brace, k).is_some();
    has(b"\"callFrame\"") || (has(b"\"head\"") && has(b"\"functionName\""))
}

/// One call-tree node.
struct Node<'a> {
    parent: Option<i64>,
    frame: RawFrame<'a>,
}

/// What a reading of the file gives: the call tree, and the samples with their times.
struct Parsed<'a> {
    nodes: HashMap<i64, Node<'a>>,
    times: Vec<i64>,
    samples: Vec<i64>,
    end_ns: Option<i64>,
    title: Option<Cow<'a, str>>,
}

/// The current form, read straight into the fields it needs: a node is about 100 bytes
/// here against over a kilobyte as a JSON tree (a 242 MB profile of 1.3M nodes took 3.1
/// GB). Any field of another type fails it, and the file is read as a tree instead, which
/// skips what it cannot use one value at a time.
#[derive(serde::Deserialize)]
struct Fast<'a> {
    #[serde(borrow)]
    nodes: Vec<FastNode<'a>>,
    #[serde(rename = "startTime")]
    start_time: Option<f64>,
    #[serde(rename = "endTime")]
    end_time: Option<f64>,
    #[serde(default)]
    samples: Vec<i64>,
    #[serde(rename = "timeDeltas")]
    time_deltas: Option<Vec<f64>>,
    timestamps: Option<Vec<f64>>,
    #[serde(borrow)]
    title: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct FastNode<'a> {
    id: i64,
    #[serde(rename = "callFrame", borrow)]
    call_frame: Option<FastFrame<'a>>,
    #[serde(default)]
    children: Vec<i64>,
    parent: Option<i64>,
}

#[derive(serde::Deserialize)]
struct FastFrame<'a> {
    #[serde(rename = "functionName", borrow)]
    function_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    url: Option<Cow<'a, str>>,
    #[serde(rename = "lineNumber")]
    line_number: Option<i64>,
}

/// Decodes the profile into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    if let Ok(f) = serde_json::from_slice::<Fast<'_>>(b) {
        let p = parsed_fast(f, diags);
        return Ok(emit(p, sink, diags));
    }
    let v: Value = serde_json::from_slice(b)
        .map_err(|e| bad(format!("a .cpuprofile that is not valid JSON: {e}"), 0))?;
    let p = parsed_tree(&v, diags)?;
    Ok(emit(p, sink, diags))
}

fn parsed_fast<'a>(f: Fast<'a>, diags: &mut Diagnostics) -> Parsed<'a> {
    let mut nodes: HashMap<i64, Node<'a>> = HashMap::with_capacity(f.nodes.len());
    let mut children = Vec::new();
    for n in f.nodes {
        let cf = n.call_frame.unwrap_or(FastFrame {
            function_name: None,
            url: None,
            line_number: None,
        });
        let frame = frame(cf.function_name, cf.url, cf.line_number);
        let parent = n.parent;
        nodes.insert(n.id, Node { parent, frame });
        if !n.children.is_empty() {
            children.push((n.id, n.children));
        }
    }
    // Parents from the children lists (the older files give no `parent`).
    for (id, kids) in children {
        for c in kids {
            if let Some(child) = nodes.get_mut(&c) {
                child.parent = Some(id);
            }
        }
    }
    let stamps = f.timestamps.map(|t| t.into_iter());
    let deltas = f.time_deltas.map(|d| d.into_iter());
    let times = sample_times(stamps, f.start_time.unwrap_or(0.0), deltas, diags);
    Parsed {
        nodes,
        times,
        samples: f.samples,
        end_ns: f.end_time.map(|e| (e * 1000.0).round() as i64),
        title: f.title,
    }
}

/// Any form, read as a JSON tree.
fn parsed_tree<'a>(v: &'a Value, diags: &mut Diagnostics) -> Result<Parsed<'a>, Error> {
    let mut nodes: HashMap<i64, Node<'_>> = HashMap::new();
    let legacy = v.get("head").is_some() && v.get("nodes").is_none();
    if legacy {
        add_tree(&v["head"], None, &mut nodes, diags);
    } else {
        let list = v.get("nodes").and_then(Value::as_array);
        let list = list.ok_or_else(|| bad("a .cpuprofile with no nodes array", 0))?;
        for n in list {
            add_node(
                n,
                n.get("callFrame").unwrap_or(&Value::Null),
                &mut nodes,
                diags,
            );
        }
        for n in list {
            let Some(id) = n.get("id").and_then(Value::as_i64) else {
                continue;
            };
            for c in ids(n.get("children")) {
                if let Some(child) = nodes.get_mut(&c) {
                    child.parent = Some(id);
                }
            }
        }
    }
    let stamps =
        (v.get("timestamps").and_then(Value::as_array)).map(|t| t.iter().filter_map(Value::as_f64));
    let start = v.get("startTime").and_then(Value::as_f64).unwrap_or(0.0);
    let start = if legacy { start * 1e6 } else { start };
    let deltas = (v.get("timeDeltas").and_then(Value::as_array))
        .map(|d| d.iter().map(|d| d.as_f64().unwrap_or(0.0)));
    let times = sample_times(stamps, start, deltas, diags);
    Ok(Parsed {
        nodes,
        times,
        samples: ids(v.get("samples")).collect(),
        end_ns: end_time(v, legacy),
        title: v.get("title").and_then(Value::as_str).map(Cow::Borrowed),
    })
}

/// Hands the samples over in time order; their number.
fn emit<S: EventSink>(p: Parsed<'_>, sink: &mut S, diags: &mut Diagnostics) -> u64 {
    let Parsed {
        nodes,
        times,
        samples,
        end_ns,
        title,
    } = p;
    if samples.len() != times.len() {
        warn(diags, 0, || {
            format!(
                "{} samples but {} times: the extra ones were dropped",
                samples.len(),
                times.len()
            )
        });
    }
    let mut order: Vec<(i64, i64)> = times.into_iter().zip(samples).collect();
    order.sort_by_key(|s| s.0);
    let mut stack: Vec<RawFrame<'_>> = Vec::new();
    let mut missing = 0u64;
    for (i, &(ts, node)) in order.iter().enumerate() {
        let next = order.get(i + 1).map_or(end_ns.unwrap_or(ts), |n| n.0);
        // Consecutive samples of one node (a loop) share their stack.
        let same = i > 0 && order[i - 1].1 == node;
        if !same && !walk(node, &nodes, &mut stack) {
            missing += 1;
        }
        sink.sample(&RawSample {
            pid: RawId::Num(0),
            tid: RawId::Num(0),
            thread_name: title.as_deref().map(Cow::Borrowed),
            kind: Cow::Borrowed("cpu"),
            unit: SampleUnit::Nanoseconds,
            ts: Some(ts),
            weight: next.saturating_sub(ts).max(0),
            stack: &stack,
            args: crate::event::Args::None,
            same_stack: false,
            cpu: None,
            offset: 0,
        });
    }
    if missing > 0 {
        diags.warn_n(crate::WarningKind::ProfileMalformed, missing, 0, || {
            "samples of node ids the tree does not hold, or whose parents loop or go deeper than 1024: their stacks were cut there".into()
        });
    }
    order.len() as u64
}

/// A node's frame: `(anonymous)` for an empty name, the line 1-based, only with a url.
fn frame<'a>(
    name: Option<Cow<'a, str>>,
    url: Option<Cow<'a, str>>,
    line: Option<i64>,
) -> RawFrame<'a> {
    let name = name
        .filter(|s| !s.is_empty())
        .unwrap_or(Cow::Borrowed("(anonymous)"));
    let url = url.filter(|s| !s.is_empty());
    let line = line
        .filter(|&l| l >= 0)
        .and_then(|l| u32::try_from(l + 1).ok());
    RawFrame {
        name,
        line: url.as_ref().and(line),
        file: url,
    }
}

/// The numbers of a JSON array (others skipped).
fn ids(v: Option<&Value>) -> impl Iterator<Item = i64> + '_ {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
}

/// A node with its frame fields in `cf`.
fn add_node<'a>(
    n: &'a Value,
    cf: &'a Value,
    nodes: &mut HashMap<i64, Node<'a>>,
    diags: &mut Diagnostics,
) -> Option<i64> {
    let Some(id) = n.get("id").and_then(Value::as_i64) else {
        warn(diags, 0, || "a .cpuprofile node with no id; skipped".into());
        return None;
    };
    let text = |k: &str| cf.get(k).and_then(Value::as_str).map(Cow::Borrowed);
    let line = cf.get("lineNumber").and_then(Value::as_i64);
    let frame = frame(text("functionName"), text("url"), line);
    let parent = n.get("parent").and_then(Value::as_i64);
    nodes.insert(id, Node { parent, frame });
    Some(id)
}

/// The older form's tree under `head`, iteratively (trees can be deep).
fn add_tree<'a>(
    head: &'a Value,
    parent: Option<i64>,
    nodes: &mut HashMap<i64, Node<'a>>,
    diags: &mut Diagnostics,
) {
    let mut todo = vec![(head, parent)];
    while let Some((n, parent)) = todo.pop() {
        let Some(id) = add_node(n, n, nodes, diags) else {
            continue;
        };
        if let Some(node) = nodes.get_mut(&id) {
            node.parent = parent;
        }
        for c in n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            todo.push((c, Some(id)));
        }
    }
}

/// Each sample's time in ns: the absolute `timestamps` (µs) where there are some, else
/// `start` (µs) plus the running sum of the deltas.
fn sample_times(
    stamps: Option<impl Iterator<Item = f64>>,
    start: f64,
    deltas: Option<impl Iterator<Item = f64>>,
    diags: &mut Diagnostics,
) -> Vec<i64> {
    let us = |x: f64| (x * 1000.0).round() as i64;
    if let Some(ts) = stamps {
        return ts.map(us).collect();
    }
    let Some(deltas) = deltas else {
        warn(diags, 0, || {
            "a .cpuprofile with no timeDeltas: its samples have no times".into()
        });
        return Vec::new();
    };
    let mut clock = start;
    deltas
        .map(|d| {
            clock += d;
            us(clock)
        })
        .collect()
}

/// `endTime` in ns (seconds in the older form).
fn end_time(v: &Value, legacy: bool) -> Option<i64> {
    let e = v.get("endTime").and_then(Value::as_f64)?;
    Some(if legacy { e * 1e9 } else { e * 1000.0 }.round() as i64)
}

/// The deepest stack kept: V8 records at most 255 frames a sample, and a deeper chain of
/// nodes (only a hostile file has one) would cost its depth for every sample of it.
const MAX_DEPTH: usize = 1024;

/// The stack of `node` into `out`, outermost first, `(root)` left out; false if a node was
/// missing, the parents looped or went deeper than [`MAX_DEPTH`] (the innermost frames
/// are kept).
fn walk<'a>(node: i64, nodes: &HashMap<i64, Node<'a>>, out: &mut Vec<RawFrame<'a>>) -> bool {
    out.clear();
    let mut at = Some(node);
    while let Some(id) = at {
        let Some(n) = nodes.get(&id) else {
            out.reverse();
            return false;
        };
        if out.len() >= MAX_DEPTH {
            out.reverse();
            return false;
        }
        if !(n.parent.is_none() && n.frame.name == "(root)") {
            out.push(n.frame.clone());
        }
        at = n.parent;
    }
    out.reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampled::tests::Samples;

    fn read(text: &str) -> (Samples, Diagnostics) {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        decode(text.as_bytes(), &mut s, &mut d).unwrap();
        (s, d)
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
    fn both_readings_agree() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real/profiles/work.cpuprofile"
        );
        let real = std::fs::read(path).unwrap();
        let escaped = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"a\"b","url":"x\u0041.js","lineNumber":3}},
            {"id":2,"children":[1]}],"samples":[1,2,9],"timeDeltas":[5,5]}"#;
        for b in [&real[..], &escaped[..]] {
            assert!(serde_json::from_slice::<Fast<'_>>(b).is_ok());
            let (fast, fd) = read(std::str::from_utf8(b).unwrap());
            let v: Value = serde_json::from_slice(b).unwrap();
            let (mut tree, mut td) = (Samples::default(), Diagnostics::default());
            let p = parsed_tree(&v, &mut td).unwrap();
            emit(p, &mut tree, &mut td);
            assert!(fast.0.len() >= 2);
            assert_eq!(fast.0, tree.0);
            assert_eq!(format!("{fd:?}"), format!("{td:?}"));
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
