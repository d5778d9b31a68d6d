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

use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{EventSink, RawId};
use crate::proto::hash::IdMap;

/// Whether a JSON object (its text after `{`) looks like a `.cpuprofile`.
pub(crate) fn looks_like(after_brace: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(after_brace, k).is_some();
    has(b"\"callFrame\"") || (has(b"\"head\"") && has(b"\"functionName\""))
}

/// One call-tree node.
pub(super) struct Node<'a> {
    pub(super) id: i64,
    pub(super) parent: Option<i64>,
    pub(super) frame: RawFrame<'a>,
}

/// What a reading of the file gives: the call tree, and the samples with their times.
pub(super) struct Parsed<'a> {
    /// In file order; of two nodes with one id, the later one counts.
    pub(super) nodes: Vec<Node<'a>>,
    /// `(parent, child)` ids from the nodes' `children` lists, in file order: they set the
    /// children's parents once every node is in.
    pub(super) children: Vec<(i64, i64)>,
    pub(super) times: Vec<i64>,
    pub(super) samples: Vec<i64>,
    pub(super) end_ns: Option<i64>,
    pub(super) title: Option<Cow<'a, str>>,
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
    let mut r = super::cpuprofile_stream::Reader::default();
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

fn parsed_fast<'a>(f: Fast<'a>, diags: &mut Diagnostics) -> Parsed<'a> {
    let mut nodes = Vec::with_capacity(f.nodes.len());
    let mut children = Vec::new();
    for n in f.nodes {
        let cf = n.call_frame.unwrap_or(FastFrame {
            function_name: None,
            url: None,
            line_number: None,
        });
        let frame = frame(cf.function_name, cf.url, cf.line_number);
        let (id, parent) = (n.id, n.parent);
        nodes.push(Node { id, parent, frame });
        children.extend(n.children.into_iter().map(|c| (id, c)));
    }
    let stamps = f.timestamps.map(|t| t.into_iter());
    let deltas = f.time_deltas.map(|d| d.into_iter());
    let times = sample_times(stamps, f.start_time.unwrap_or(0.0), deltas, diags);
    Parsed {
        nodes,
        children,
        times,
        samples: f.samples,
        end_ns: f.end_time.map(|e| (e * 1000.0).round() as i64),
        title: f.title,
    }
}

/// Any form, read as a JSON tree.
fn parsed_tree<'a>(v: &'a Value, diags: &mut Diagnostics) -> Result<Parsed<'a>, Error> {
    let mut nodes = Vec::new();
    let mut children = Vec::new();
    let legacy = v.get("head").is_some() && v.get("nodes").is_none();
    if legacy {
        add_tree(&v["head"], None, &mut nodes, diags);
    } else {
        let list = v.get("nodes").and_then(Value::as_array);
        let list = list.ok_or_else(|| bad("a .cpuprofile with no nodes array", 0))?;
        for n in list {
            let cf = n.get("callFrame").unwrap_or(&Value::Null);
            let Some(id) = add_node(n, cf, &mut nodes, diags) else {
                continue;
            };
            children.extend(ids(n.get("children")).map(|c| (id, c)));
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
        children,
        times,
        samples: ids(v.get("samples")).collect(),
        end_ns: end_time(v, legacy),
        title: v.get("title").and_then(Value::as_str).map(Cow::Borrowed),
    })
}

/// Hands the samples over in time order; their number.
pub(super) fn emit<S: EventSink>(p: Parsed<'_>, sink: &mut S, diags: &mut Diagnostics) -> u64 {
    let Parsed {
        nodes,
        children,
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
    let tree = Tree::new(nodes, children);
    let mut order: Vec<(i64, i64)> = times.into_iter().zip(samples).collect();
    order.sort_by_key(|s| s.0);
    let mut stack: Vec<RawFrame<'_>> = Vec::new();
    // The stack's nodes, when it is the node's whole stack.
    let mut path: Vec<u32> = Vec::new();
    let mut missing = 0u64;
    for (i, &(ts, node)) in order.iter().enumerate() {
        let next = order.get(i + 1).map_or(end_ns.unwrap_or(ts), |n| n.0);
        // Consecutive samples of one node (a loop) share their stack.
        let same = i > 0 && order[i - 1].1 == node;
        if !same && !tree.walk(node, &mut stack, &mut path) {
            missing += 1;
            path.clear();
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
            nodes: &path,
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
pub(super) fn frame<'a>(
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
    nodes: &mut Vec<Node<'a>>,
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
    nodes.push(Node { id, parent, frame });
    Some(id)
}

/// The older form's tree under `head`, iteratively (trees can be deep).
fn add_tree<'a>(
    head: &'a Value,
    parent: Option<i64>,
    nodes: &mut Vec<Node<'a>>,
    diags: &mut Diagnostics,
) {
    let mut todo = vec![(head, parent)];
    while let Some((n, parent)) = todo.pop() {
        let Some(id) = add_node(n, n, nodes, diags) else {
            continue;
        };
        if let Some(node) = nodes.last_mut() {
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
pub(super) fn sample_times(
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

/// The call tree by index: each node's parent's index, found once rather than by id for
/// every frame of every sample.
struct Tree<'a> {
    nodes: Vec<Node<'a>>,
    /// Node id to index (of two nodes with one id, the later).
    index: IdMap<i64, u32>,
    /// Per node, its parent's index, [`TOP`] or [`LOST`].
    up: Vec<u32>,
}

/// No parent: the outermost node.
const TOP: u32 = u32::MAX;
/// A parent id the tree does not hold.
const LOST: u32 = u32::MAX - 1;

impl<'a> Tree<'a> {
    fn new(mut nodes: Vec<Node<'a>>, children: Vec<(i64, i64)>) -> Self {
        let mut index = IdMap::with_capacity_and_hasher(nodes.len(), Default::default());
        for (i, n) in nodes.iter().enumerate() {
            index.insert(n.id, i as u32);
        }
        // Parents from the children lists (the older files give no `parent`).
        for (parent, child) in children {
            if let Some(&i) = index.get(&child) {
                nodes[i as usize].parent = Some(parent);
            }
        }
        let up = (nodes.iter())
            .map(|n| {
                n.parent
                    .map_or(TOP, |p| index.get(&p).copied().unwrap_or(LOST))
            })
            .collect();
        Tree { nodes, index, up }
    }

    /// The stack of node `id` into `out` and its nodes' indices into `path`, outermost
    /// first, `(root)` left out; false if a node was missing, the parents looped or went
    /// deeper than [`MAX_DEPTH`] (the innermost frames are kept).
    fn walk(&self, id: i64, out: &mut Vec<RawFrame<'a>>, path: &mut Vec<u32>) -> bool {
        out.clear();
        path.clear();
        let mut at = self.index.get(&id).copied().unwrap_or(LOST);
        let whole = loop {
            if at == TOP {
                break true;
            }
            if at == LOST || out.len() >= MAX_DEPTH {
                break false;
            }
            let n = &self.nodes[at as usize];
            let i = at;
            at = self.up[at as usize];
            if !(at == TOP && n.frame.name == "(root)") {
                out.push(n.frame.clone());
                path.push(i);
            }
        };
        out.reverse();
        path.reverse();
        whole
    }
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
        for b in [&real[..], &escaped[..], &odd[..]] {
            let f = serde_json::from_slice::<Fast<'_>>(b).unwrap();
            let (mut fast, mut fd) = (Samples::default(), Diagnostics::default());
            let p = parsed_fast(f, &mut fd);
            emit(p, &mut fast, &mut fd);
            let mut r = super::super::cpuprofile_stream::Reader::default();
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
