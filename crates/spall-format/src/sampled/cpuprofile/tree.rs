//! A `.cpuprofile` read whole: its call tree, the samples' times and weights, and the
//! samples with their stacks handed to the sink (shared with the streamed [`super::stream`]
//! reader).

use std::borrow::Cow;

use serde_json::Value;

use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{EventSink, RawId};
use crate::proto::hash::IdMap;
use crate::sampled::{bad, warn, RawFrame, RawSample, SampleUnit};

/// One call-tree node.
pub(super) struct Node {
    pub(super) id: i64,
    pub(super) parent: Option<i64>,
    /// Its frame's index in [`Parsed::frames`]: the streamed reader keeps each distinct
    /// frame once (a profile's hundreds of thousands of nodes are of a few hundred frames).
    pub(super) frame: u32,
}

/// What a reading of the file gives: the call tree, and the samples with their times.
pub(super) struct Parsed<'a> {
    /// In file order; of two nodes with one id, the later one counts.
    pub(super) nodes: Vec<Node>,
    /// The nodes' frames.
    pub(super) frames: Vec<RawFrame<'a>>,
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
pub(super) struct Fast<'a> {
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

pub(super) fn parsed_fast<'a>(f: Fast<'a>, diags: &mut Diagnostics) -> Parsed<'a> {
    let mut nodes = Vec::with_capacity(f.nodes.len());
    let mut frames = Vec::with_capacity(f.nodes.len());
    let mut children = Vec::new();
    for n in f.nodes {
        let cf = n.call_frame.unwrap_or(FastFrame {
            function_name: None,
            url: None,
            line_number: None,
        });
        let (id, parent) = (n.id, n.parent);
        nodes.push(Node {
            id,
            parent,
            frame: frames.len() as u32,
        });
        frames.push(frame(cf.function_name, cf.url, cf.line_number));
        children.extend(n.children.into_iter().map(|c| (id, c)));
    }
    let stamps = f.timestamps.map(|t| t.into_iter());
    let deltas = f.time_deltas.map(|d| d.into_iter());
    let times = sample_times(stamps, f.start_time.unwrap_or(0.0), deltas, diags);
    Parsed {
        nodes,
        frames,
        children,
        times,
        samples: f.samples,
        end_ns: f.end_time.map(|e| (e * 1000.0).round() as i64),
        title: f.title,
    }
}

/// Any form, read as a JSON tree.
pub(super) fn parsed_tree<'a>(v: &'a Value, diags: &mut Diagnostics) -> Result<Parsed<'a>, Error> {
    let (mut nodes, mut frames) = (Vec::new(), Vec::new());
    let mut children = Vec::new();
    let legacy = v.get("head").is_some() && v.get("nodes").is_none();
    if legacy {
        add_tree(&v["head"], None, &mut nodes, &mut frames, diags);
    } else {
        let list = v.get("nodes").and_then(Value::as_array);
        let list = list.ok_or_else(|| bad("a .cpuprofile with no nodes array", 0))?;
        for n in list {
            let cf = n.get("callFrame").unwrap_or(&Value::Null);
            let Some(id) = add_node(n, cf, &mut nodes, &mut frames, diags) else {
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
        frames,
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
        frames,
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
    let tree = Tree::new(nodes, frames, children);
    sink.tree_nodes(tree.nodes.len());
    let mut order: Vec<(i64, i64)> = times.into_iter().zip(samples).collect();
    order.sort_by_key(|s| s.0);
    let mut walk = Walk::new(tree.nodes.len());
    let mut missing = 0u64;
    for (i, &(ts, node)) in order.iter().enumerate() {
        let next = order.get(i + 1).map_or(end_ns.unwrap_or(ts), |n| n.0);
        // Consecutive samples of one node (a loop) share their stack.
        let same = i > 0 && order[i - 1].1 == node;
        if !same && !walk.to(&tree, node) {
            missing += 1;
        }
        let (stack, path) = (&walk.stack, &walk.path);
        sink.sample(&RawSample {
            pid: RawId::Num(0),
            tid: RawId::Num(0),
            thread_name: title.as_deref().map(Cow::Borrowed),
            kind: Cow::Borrowed("cpu"),
            unit: SampleUnit::Nanoseconds,
            ts: Some(ts),
            weight: next.saturating_sub(ts).max(0),
            stack,
            args: crate::event::Args::None,
            same_stack: false,
            same_outer: 0,
            nodes: path,
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
    nodes: &mut Vec<Node>,
    frames: &mut Vec<RawFrame<'a>>,
    diags: &mut Diagnostics,
) -> Option<i64> {
    let Some(id) = n.get("id").and_then(Value::as_i64) else {
        warn(diags, 0, || "a .cpuprofile node with no id; skipped".into());
        return None;
    };
    let text = |k: &str| cf.get(k).and_then(Value::as_str).map(Cow::Borrowed);
    let line = cf.get("lineNumber").and_then(Value::as_i64);
    let parent = n.get("parent").and_then(Value::as_i64);
    nodes.push(Node {
        id,
        parent,
        frame: frames.len() as u32,
    });
    frames.push(frame(text("functionName"), text("url"), line));
    Some(id)
}

/// The older form's tree under `head`, iteratively (trees can be deep).
fn add_tree<'a>(
    head: &'a Value,
    parent: Option<i64>,
    nodes: &mut Vec<Node>,
    frames: &mut Vec<RawFrame<'a>>,
    diags: &mut Diagnostics,
) {
    let mut todo = vec![(head, parent)];
    while let Some((n, parent)) = todo.pop() {
        let Some(id) = add_node(n, n, nodes, frames, diags) else {
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
pub(super) const MAX_DEPTH: usize = 1024;

/// The call tree by index: each node's parent's index, found once rather than by id for
/// every frame of every sample.
struct Tree<'a> {
    nodes: Vec<Node>,
    frames: Vec<RawFrame<'a>>,
    /// Node id to index (of two nodes with one id, the later).
    index: Index,
    /// Per node, its parent's index, [`TOP`] or [`LOST`].
    up: Vec<u32>,
}

/// Node ids to indices: a table where the ids are dense (V8 numbers its nodes 1..N, in
/// whatever order it writes them), which costs a third of a hash map's lookups (one per
/// node for its children, one for its parent, one per sample); a hash map otherwise.
enum Index {
    /// The index of id `min + k` at `k` ([`LOST`]: none).
    Dense {
        min: i64,
        table: Vec<u32>,
    },
    Map(IdMap<i64, u32>),
}

impl Index {
    fn new(nodes: &[Node]) -> Self {
        let (min, max) = (nodes.iter()).fold((i64::MAX, i64::MIN), |(lo, hi), n| {
            (lo.min(n.id), hi.max(n.id))
        });
        let span = (max as i128 - min as i128 + 1) as u128;
        if !nodes.is_empty() && span <= 2 * nodes.len() as u128 + 16 {
            let mut table = vec![LOST; span as usize];
            for (i, n) in nodes.iter().enumerate() {
                table[(n.id - min) as usize] = i as u32;
            }
            return Index::Dense { min, table };
        }
        Self::map(nodes)
    }

    fn map(nodes: &[Node]) -> Self {
        let mut map = IdMap::with_capacity_and_hasher(nodes.len(), Default::default());
        for (i, n) in nodes.iter().enumerate() {
            map.insert(n.id, i as u32);
        }
        Index::Map(map)
    }

    /// The index of node `id`, [`LOST`] where no node has it.
    fn get(&self, id: i64) -> u32 {
        match self {
            Index::Dense { min, table } => (id as i128 - *min as i128)
                .try_into()
                .ok()
                .and_then(|k: usize| table.get(k).copied())
                .unwrap_or(LOST),
            Index::Map(map) => map.get(&id).copied().unwrap_or(LOST),
        }
    }
}

/// A sample's stack as [`Tree::walk`] gives it, kept from one sample to the next: samples
/// in time order share most of their stack, so only the frames below the deepest node the
/// last stack also holds are read (a whole walk cost 14% of a 38 MB profile's load).
struct Walk<'a> {
    stack: Vec<RawFrame<'a>>,
    /// The stack's nodes when it is whole; empty after a walk that was not.
    path: Vec<u32>,
    /// Per node, its place in `path` ([`OFF`]: not in it).
    at: Vec<u32>,
    /// The nodes below the kept part of the stack, innermost first.
    fresh: Vec<u32>,
}

/// Not in the current path.
const OFF: u32 = u32::MAX;

impl<'a> Walk<'a> {
    fn new(nodes: usize) -> Self {
        Walk {
            stack: Vec::new(),
            path: Vec::new(),
            at: vec![OFF; nodes],
            fresh: Vec::new(),
        }
    }

    /// The stack of node `id`, as [`Tree::walk`] gives it; false where it does.
    fn to(&mut self, tree: &Tree<'a>, id: i64) -> bool {
        self.fresh.clear();
        let mut n = tree.index.get(id);
        // Up to a node of the current path, or the top.
        let keep = loop {
            if n == TOP {
                break 0;
            }
            if n == LOST || self.fresh.len() >= MAX_DEPTH {
                return self.whole(tree, id);
            }
            let up = tree.up[n as usize];
            if up == TOP && tree.is_root(n) {
                break 0;
            }
            match self.at[n as usize] {
                OFF => self.fresh.push(n),
                d => break d as usize + 1,
            }
            n = up;
        };
        // At the limit, the whole walk says (it counts a `(root)` node above too).
        if keep + self.fresh.len() >= MAX_DEPTH {
            return self.whole(tree, id);
        }
        for &n in &self.path[keep..] {
            self.at[n as usize] = OFF;
        }
        self.path.truncate(keep);
        self.stack.truncate(keep);
        for &n in self.fresh.iter().rev() {
            self.at[n as usize] = self.path.len() as u32;
            self.path.push(n);
            self.stack.push(tree.frame(n).clone());
        }
        true
    }

    /// The whole walk (a node missing, a loop, a chain too deep), after which no part of
    /// the stack is kept for the next.
    fn whole(&mut self, tree: &Tree<'a>, id: i64) -> bool {
        for &n in &self.path {
            self.at[n as usize] = OFF;
        }
        let whole = tree.walk(id, &mut self.stack, &mut self.path);
        if whole {
            for (d, &n) in self.path.iter().enumerate() {
                self.at[n as usize] = d as u32;
            }
        } else {
            self.path.clear();
        }
        whole
    }
}

/// No parent: the outermost node.
const TOP: u32 = u32::MAX;
/// A parent id the tree does not hold.
const LOST: u32 = u32::MAX - 1;

impl<'a> Tree<'a> {
    fn new(mut nodes: Vec<Node>, frames: Vec<RawFrame<'a>>, children: Vec<(i64, i64)>) -> Self {
        let index = Index::new(&nodes);
        // Parents from the children lists (the older files give no `parent`).
        for (parent, child) in children {
            match index.get(child) {
                LOST => {}
                i => nodes[i as usize].parent = Some(parent),
            }
        }
        let up = (nodes.iter())
            .map(|n| n.parent.map_or(TOP, |p| index.get(p)))
            .collect();
        Tree {
            nodes,
            frames,
            index,
            up,
        }
    }

    /// Node `n`'s frame.
    fn frame(&self, n: u32) -> &RawFrame<'a> {
        &self.frames[self.nodes[n as usize].frame as usize]
    }

    /// Whether node `n` is V8's `(root)` (left out of stacks where it is the outermost).
    fn is_root(&self, n: u32) -> bool {
        self.frame(n).name == "(root)"
    }

    /// The stack of node `id` into `out` and its nodes' indices into `path`, outermost
    /// first, `(root)` left out; false if a node was missing, the parents looped or went
    /// deeper than [`MAX_DEPTH`] (the innermost frames are kept).
    fn walk(&self, id: i64, out: &mut Vec<RawFrame<'a>>, path: &mut Vec<u32>) -> bool {
        out.clear();
        path.clear();
        let mut at = self.index.get(id);
        let whole = loop {
            if at == TOP {
                break true;
            }
            if at == LOST || out.len() >= MAX_DEPTH {
                break false;
            }
            let i = at;
            at = self.up[at as usize];
            if !(at == TOP && self.is_root(i)) {
                out.push(self.frame(i).clone());
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

    /// The table finds what the hash map finds, the later of two nodes with one id
    /// included, for ids inside, around and far outside its range; ids spread too widely
    /// get the map.
    #[test]
    fn the_dense_index_is_the_map() {
        let node = |id: i64| Node {
            id,
            parent: None,
            frame: 0,
        };
        // A permutation of -3..=96, and 40 again.
        let mut nodes: Vec<Node> = (0..100).map(|k| node((k * 37) % 100 - 3)).collect();
        nodes.push(node(40));
        let dense = Index::new(&nodes);
        assert!(matches!(dense, Index::Dense { .. }));
        let map = Index::map(&nodes);
        for id in (-20..120).chain([i64::MIN, i64::MAX, i64::MIN + 1]) {
            assert_eq!(dense.get(id), map.get(id), "id {id}");
        }
        assert_eq!(dense.get(40), 100);
        assert_eq!(dense.get(97), LOST);
        for wide in [[1, 1_000_000], [i64::MIN, i64::MAX]] {
            let nodes: Vec<Node> = wide.iter().map(|&i| node(i)).collect();
            let index = Index::new(&nodes);
            assert!(matches!(index, Index::Map(_)));
            assert_eq!((index.get(wide[0]), index.get(wide[1])), (0, 1));
        }
        let extreme = [node(i64::MAX - 1), node(i64::MAX)];
        let index = Index::new(&extreme);
        assert_eq!((index.get(i64::MAX), index.get(i64::MIN)), (1, LOST));
    }

    /// The kept walk gives each sample the whole walk's stack and nodes, and says alike
    /// whether it is whole: on a random tree under `(root)` with lost parents, a parent
    /// loop and chains around the depth limit, samples of random nodes and unknown ids.
    #[test]
    fn the_kept_walk_is_the_whole_walk() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        // Frame 0 is `(root)`; the others are shared by many nodes, as in V8's files.
        let named = |s: String| frame(Some(Cow::Owned(s)), None, None);
        let frames: Vec<RawFrame<'_>> = std::iter::once(named("(root)".into()))
            .chain((0..7).map(|k| named(format!("f{k}"))))
            .collect();
        let node = |id: i64, parent: Option<i64>| Node {
            id,
            parent,
            frame: 1 + id.rem_euclid(7) as u32,
        };
        let mut nodes = vec![Node {
            frame: 0,
            ..node(0, None)
        }];
        for id in 1..3000 {
            let parent = match rand(50) {
                0 => None,
                1 => Some(1_000_000 + id),
                _ => Some(rand(id as u64) as i64),
            };
            nodes.push(node(id, parent));
        }
        nodes.extend([node(5000, Some(5001)), node(5001, Some(5000))]);
        // Chains of 1022 to 1026 nodes under (root).
        for (k, len) in (1022..=1026).enumerate() {
            let base = 10_000 * (k as i64 + 1);
            nodes.extend(
                (0..len).map(|i| node(base + i, Some(if i == 0 { 0 } else { base + i - 1 }))),
            );
        }
        let ids: Vec<i64> = nodes.iter().map(|n| n.id).collect();
        let tree = Tree::new(nodes, frames, Vec::new());
        let mut walk = Walk::new(tree.nodes.len());
        let (mut stack, mut path) = (Vec::new(), Vec::new());
        for _ in 0..20_000 {
            let id = match rand(20) {
                0 => 777_777,
                _ => ids[rand(ids.len() as u64) as usize],
            };
            let whole = tree.walk(id, &mut stack, &mut path);
            if !whole {
                path.clear();
            }
            assert_eq!(walk.to(&tree, id), whole, "node {id}");
            assert_eq!(walk.stack, stack, "node {id}");
            assert_eq!(walk.path, path, "node {id}");
        }
    }
}
