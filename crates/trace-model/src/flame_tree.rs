//! Aggregated call trees: spans merged by call stack (the names from the outermost span
//! down), as a flame graph draws them and as folded stacks list them.
//!
//! A [`FlameTree`] is stored in preorder with each parent's children sorted (heaviest
//! first, or by name): a node's subtree is the index range `n..n + size[n]`, and `x[n]` is
//! where its bar starts, in nanoseconds from the left edge, so drawing a zoomed-in frame is
//! a walk over one index range. Node 0 is the root (all stacks); with
//! [`FlameOptions::per_thread`] its children are processes, then threads, then stacks.
//!
//! Per span, time is counted as [`Trace::stats`] counts it: a range clips spans to it, and
//! a span's self time is its duration minus its direct children's, each child counted only
//! up to its parent's end.

use std::borrow::Cow;

use hashbrown::HashMap;

use crate::clip::{child_time, clip_span};
use crate::span::lower_bound;
use crate::span::SpanRef;
use crate::strings::StrId;
use crate::trace::Trace;

/// What a flame graph node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameLabel {
    /// The root: every stack.
    Root,
    /// Spans of this name.
    Name(StrId),
    /// A process (index into [`Trace::processes`]), with [`FlameOptions::per_thread`].
    Process(u32),
    /// A thread (index into [`Trace::threads`]), with [`FlameOptions::per_thread`].
    Thread(u32),
}

/// Which spans a flame graph merges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlameOptions {
    /// Thread indices (into [`Trace::threads`]); `None` means all.
    pub threads: Option<Vec<u32>>,
    /// `[start, end)` in ns: spans are clipped to it, those outside left out.
    pub range: Option<(i64, i64)>,
    /// Keep threads apart: the process and the thread are the first two frames.
    pub per_thread: bool,
    /// Of a sampling profile, the kind of samples counted (`alloc_space`, or
    /// `alloc_objects/count`, as [`Trace::set_sample_kind`] names them); `None` (or a kind
    /// the profile lacks): [`Trace::sample_kind`].
    pub sample_kind: Option<String>,
}

/// How a node's children are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlameSort {
    /// The largest total first (speedscope's "left heavy"), then by name.
    #[default]
    Heaviest,
    /// By name, as folded-stack tools order them.
    Name,
}

/// An aggregated call tree, in preorder. All times in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlameTree {
    /// Per node, what it stands for.
    pub label: Vec<FrameLabel>,
    /// The parent's index (`u32::MAX` for the root).
    pub parent: Vec<u32>,
    /// 0 for the root.
    pub depth: Vec<u32>,
    /// Time of the spans with this stack (the children's totals for synthetic nodes).
    pub total: Vec<i64>,
    /// Self time of the spans with this stack: their durations less their children's.
    pub self_ns: Vec<i64>,
    /// Spans with this stack (0 for synthetic nodes).
    pub count: Vec<u64>,
    /// Nodes in the subtree, this one included.
    pub size: Vec<u32>,
    /// Left edge of the node's bar: the parent's, plus the earlier siblings' totals.
    pub x: Vec<i64>,
}

/// No parent: the root's.
const NONE: u32 = u32::MAX;

/// Nodes being merged, in the order they were first seen (also by `flame_samples`).
#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) label: Vec<FrameLabel>,
    pub(crate) parent: Vec<u32>,
    pub(crate) total: Vec<i64>,
    pub(crate) self_ns: Vec<i64>,
    pub(crate) count: Vec<u64>,
    ids: HashMap<(u32, FrameLabel), u32>,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        let mut b = Builder::default();
        b.push(NONE, FrameLabel::Root);
        b
    }

    fn push(&mut self, parent: u32, label: FrameLabel) -> u32 {
        let id = self.label.len() as u32;
        self.label.push(label);
        self.parent.push(parent);
        self.total.push(0);
        self.self_ns.push(0);
        self.count.push(0);
        id
    }

    pub(crate) fn child(&mut self, parent: u32, label: FrameLabel) -> u32 {
        if let Some(&id) = self.ids.get(&(parent, label)) {
            return id;
        }
        let id = self.push(parent, label);
        self.ids.insert((parent, label), id);
        id
    }

    /// Gives synthetic nodes (root, processes, threads) the sum of their children's
    /// totals. Children are created after their parents, so one reverse pass does it.
    fn sum_synthetic(&mut self) {
        let n = self.label.len();
        let mut child_total = vec![0i64; n];
        for i in (0..n).rev() {
            if !matches!(self.label[i], FrameLabel::Name(_)) {
                self.total[i] = child_total[i];
            }
            if i > 0 {
                let p = self.parent[i] as usize;
                child_total[p] = child_total[p].saturating_add(self.total[i]);
            }
        }
    }

    /// Sorts children and lays the tree out in preorder.
    pub(crate) fn finish(self, t: &Trace, sort: FlameSort) -> FlameTree {
        let n = self.label.len();
        // Children lists, flat: node i's are kids[first[i]..first[i + 1]].
        let mut first = vec![0u32; n + 1];
        for &p in &self.parent[1..] {
            first[p as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut kids = vec![0u32; n.saturating_sub(1)];
        for (i, &p) in self.parent.iter().enumerate().skip(1) {
            kids[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
        let rank = name_ranks(t, &self.label);
        let node_rank: Vec<u32> = self.label.iter().map(|l| rank[l]).collect();
        let tot = &self.total;
        let r = |k: u32| node_rank[k as usize];
        for i in 0..n {
            let list = &mut kids[first[i] as usize..first[i + 1] as usize];
            match sort {
                FlameSort::Heaviest => list.sort_unstable_by(|&a, &b| {
                    (tot[b as usize].cmp(&tot[a as usize])).then_with(|| r(a).cmp(&r(b)))
                }),
                FlameSort::Name => list.sort_unstable_by(|&a, &b| {
                    (r(a).cmp(&r(b))).then_with(|| tot[b as usize].cmp(&tot[a as usize]))
                }),
            }
        }
        let mut out = FlameTree {
            label: Vec::with_capacity(n),
            parent: Vec::with_capacity(n),
            depth: Vec::with_capacity(n),
            total: Vec::with_capacity(n),
            self_ns: Vec::with_capacity(n),
            count: Vec::with_capacity(n),
            size: vec![1; n],
            x: Vec::with_capacity(n),
        };
        let mut stack: Vec<(u32, u32, u32, i64)> = vec![(0, NONE, 0, 0)];
        let mut offsets: Vec<i64> = Vec::new();
        while let Some((old, new_parent, depth, x)) = stack.pop() {
            let id = out.label.len() as u32;
            let o = old as usize;
            out.label.push(self.label[o]);
            out.parent.push(new_parent);
            out.depth.push(depth);
            out.total.push(self.total[o]);
            out.self_ns.push(self.self_ns[o]);
            out.count.push(self.count[o]);
            out.x.push(x);
            let list = &kids[first[o] as usize..first[o + 1] as usize];
            // Offsets forward (saturating, so a child never lies left of its parent even
            // when hostile durations overflow), pushed last to first so the first child is
            // laid out next.
            offsets.clear();
            let mut at = x;
            for &k in list {
                offsets.push(at);
                at = at.saturating_add(self.total[k as usize]);
            }
            for (&k, &at) in list.iter().zip(&offsets).rev() {
                stack.push((k, id, depth + 1, at));
            }
        }
        // Subtree sizes: children come after parents in preorder.
        for i in (1..n).rev() {
            let p = out.parent[i] as usize;
            out.size[p] += out.size[i];
        }
        out
    }
}

/// Each distinct label's place in name order.
fn name_ranks(t: &Trace, labels: &[FrameLabel]) -> HashMap<FrameLabel, u32> {
    let mut distinct: Vec<FrameLabel> = labels.to_vec();
    distinct.sort_unstable_by_key(|l| match *l {
        FrameLabel::Root => (0, 0),
        FrameLabel::Name(s) => (1, s.0),
        FrameLabel::Process(p) => (2, p),
        FrameLabel::Thread(th) => (3, th),
    });
    distinct.dedup();
    let texts: Vec<Cow<'_, str>> = distinct.iter().map(|&l| label_text(t, l)).collect();
    let mut order: Vec<u32> = (0..distinct.len() as u32).collect();
    order.sort_by(|&a, &b| texts[a as usize].cmp(&texts[b as usize]));
    order
        .iter()
        .enumerate()
        .map(|(rank, &i)| (distinct[i as usize], rank as u32))
        .collect()
}

/// A label's text: the span name, `NAME (pid N)` / `NAME (tid N)` for processes and
/// threads (`pid N` / `tid N` when unnamed), `all` for the root.
pub fn label_text(t: &Trace, label: FrameLabel) -> Cow<'_, str> {
    match label {
        FrameLabel::Root => Cow::Borrowed("all"),
        FrameLabel::Name(n) => Cow::Borrowed(t.str(n)),
        FrameLabel::Process(p) => {
            let pr = &t.processes()[p as usize];
            let id = t.ext_id(pr.pid);
            Cow::Owned(match pr.name {
                Some(n) => format!("{} (pid {id})", t.str(n)),
                None => format!("pid {id}"),
            })
        }
        FrameLabel::Thread(th) => {
            let thread = &t.threads()[th as usize];
            let id = t.ext_id(thread.tid);
            Cow::Owned(match thread.name {
                Some(n) => format!("{} (tid {id})", t.str(n)),
                None => format!("tid {id}"),
            })
        }
    }
}

/// One lane's spans in range, while its children are being matched to them.
#[derive(Default)]
struct Level {
    node: Vec<u32>,
    start: Vec<i64>,
    end: Vec<i64>,
    /// The end its time is counted to (its parent's, if that came first).
    cut: Vec<i64>,
    dur: Vec<i64>,
    child: Vec<i64>,
}

impl Level {
    fn clear(&mut self) {
        self.node.clear();
        self.start.clear();
        self.end.clear();
        self.cut.clear();
        self.dur.clear();
        self.child.clear();
    }

    /// Adds each span's self time to its node.
    fn settle(&self, b: &mut Builder) {
        for j in 0..self.node.len() {
            let n = self.node[j] as usize;
            b.self_ns[n] = b.self_ns[n].saturating_add(self.dur[j] - self.child[j]);
        }
    }
}

impl Trace {
    /// The spans `opts` selects merged by call stack; for a sampling profile (a trace
    /// with samples and no spans), its samples ([`Trace::sample_flame`]).
    pub fn flame(&self, opts: &FlameOptions, sort: FlameSort) -> FlameTree {
        if self.is_sampled() {
            return self.sample_flame(opts, sort);
        }
        let (r0, r1) = opts.range.unwrap_or((i64::MIN, i64::MAX));
        let clip = |s: i64, e: i64| clip_span(s, e, r0, r1);
        let mut b = Builder::new();
        let all: Vec<u32>;
        let threads = match &opts.threads {
            Some(t) => t.as_slice(),
            None => {
                all = (0..self.threads.len() as u32).collect();
                &all
            }
        };
        let (mut up, mut here) = (Level::default(), Level::default());
        for &ti in threads {
            let Some(thread) = self.threads.get(ti as usize) else {
                continue;
            };
            if thread.lanes.first().is_none_or(|l| l.is_empty()) {
                continue;
            }
            let base = if opts.per_thread {
                let p = b.child(0, FrameLabel::Process(thread.process));
                b.child(p, FrameLabel::Thread(ti))
            } else {
                0
            };
            up.clear();
            for lane in &thread.lanes {
                here.clear();
                // Lanes never overlap, so ends are sorted too: skip straight to the range.
                let first = lower_bound(lane.len(), |k| lane.end(k) < r0);
                let mut k = 0usize;
                // Consecutive spans often share a parent and a name.
                let mut last: Option<(u32, StrId, u32)> = None;
                for i in first..lane.len() {
                    let (s, e) = (lane.start[i], lane.end(i));
                    if s >= r1 {
                        break;
                    }
                    if clip(s, e).is_none() {
                        continue;
                    }
                    // The parent: the last span one level up that starts at or before this.
                    while k + 1 < up.start.len() && up.start[k + 1] <= s {
                        k += 1;
                    }
                    let parent =
                        (k < up.start.len() && up.start[k] <= s && up.end[k] >= s).then_some(k);
                    // A span that outlives its parent (a partial overlap in a broken trace)
                    // counts up to the parent's end, by self time's rule (`child_time`): no
                    // frame is wider than its parent. Nesting still follows the timeline
                    // (`end`); only the time is cut (`cut`, the parent's end for its own
                    // children in turn).
                    let parent_end = parent.map_or(e, |k| up.cut[k]);
                    let cut = e.min(parent_end).max(s);
                    let dur = child_time(s, e, parent_end, (r0, r1));
                    let parent_node = match parent {
                        Some(k) => {
                            up.child[k] += dur;
                            up.node[k]
                        }
                        None => base,
                    };
                    let name = lane.name[i];
                    let node = match last {
                        Some((p, n, id)) if p == parent_node && n == name => id,
                        _ => {
                            let id = b.child(parent_node, FrameLabel::Name(name));
                            last = Some((parent_node, name, id));
                            id
                        }
                    };
                    b.total[node as usize] = b.total[node as usize].saturating_add(dur);
                    b.count[node as usize] += 1;
                    here.node.push(node);
                    here.start.push(s);
                    here.end.push(e);
                    here.cut.push(cut);
                    here.dur.push(dur);
                    here.child.push(0);
                }
                up.settle(&mut b);
                std::mem::swap(&mut up, &mut here);
            }
            up.settle(&mut b);
        }
        b.sum_synthetic();
        b.finish(self, sort)
    }

    /// The spans merged into `node` of `tree` (built with `opts`), sorted by start.
    pub fn flame_occurrences(
        &self,
        tree: &FlameTree,
        node: u32,
        opts: &FlameOptions,
    ) -> Vec<SpanRef> {
        let mut names = Vec::new();
        let mut only_thread = None;
        for n in tree.path(node) {
            match tree.label[n as usize] {
                FrameLabel::Name(s) => names.push(s),
                FrameLabel::Thread(t) => only_thread = Some(t),
                _ => {}
            }
        }
        let Some(&leaf) = names.last() else {
            return Vec::new();
        };
        let (r0, r1) = opts.range.unwrap_or((i64::MIN, i64::MAX));
        let depth = names.len() - 1;
        let all: Vec<u32> = (0..self.threads.len() as u32).collect();
        let threads = opts.threads.as_deref().unwrap_or(&all);
        let mut out: Vec<(i64, SpanRef)> = Vec::new();
        for &ti in threads {
            if only_thread.is_some_and(|t| t != ti) {
                continue;
            }
            let Some(lane) = self
                .threads
                .get(ti as usize)
                .and_then(|t| t.lanes.get(depth))
            else {
                continue;
            };
            let first = lower_bound(lane.len(), |k| lane.end(k) < r0);
            for i in first..lane.len() {
                let (s, e) = (lane.start[i], lane.end(i));
                if s >= r1 {
                    break;
                }
                let inside = (s < r1 && e > r0) || (s == e && s >= r0);
                if lane.name[i] != leaf || !inside {
                    continue;
                }
                let r = SpanRef {
                    thread: ti,
                    depth: depth as u32,
                    index: i as u32,
                };
                // Check the callers, innermost first.
                let mut cur = r;
                let same = names[..depth]
                    .iter()
                    .rev()
                    .all(|&want| match self.parent(cur) {
                        Some(p) if self.span(p).name == want => {
                            cur = p;
                            true
                        }
                        _ => false,
                    });
                if same {
                    out.push((s, r));
                }
            }
        }
        out.sort_unstable();
        out.into_iter().map(|(_, r)| r).collect()
    }
}

impl FlameTree {
    /// The number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.label.len()
    }

    /// Whether the tree has no node besides the root.
    pub fn is_empty(&self) -> bool {
        self.label.len() <= 1
    }

    /// The node's children, in their sorted order.
    pub fn children(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        let end = n + self.size[n as usize];
        let mut next = n + 1;
        std::iter::from_fn(move || {
            (next < end).then(|| {
                let c = next;
                next += self.size[c as usize];
                c
            })
        })
    }

    /// The nodes from the root's child down to `n` (empty for the root).
    pub fn path(&self, mut n: u32) -> Vec<u32> {
        let mut v = Vec::new();
        while n != 0 && n != NONE {
            v.push(n);
            n = self.parent[n as usize];
        }
        v.reverse();
        v
    }

    /// The deepest node's depth.
    pub fn max_depth(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// Folded stacks: per node with self time, its path's labels (`;` in a label becomes
    /// `:`, line breaks spaces, so a line always parses) and its self time; in preorder.
    pub fn folded(&self, t: &Trace) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        self.each_folded(t, |s, n| out.push((s.to_string(), n)));
        out
    }

    /// [`folded`](FlameTree::folded), one line at a time, with no allocation per line.
    pub fn each_folded(&self, t: &Trace, mut line: impl FnMut(&str, i64)) {
        let mut texts: HashMap<FrameLabel, String> = HashMap::new();
        let mut text = |path: &mut String, l: FrameLabel| {
            let s = texts.entry(l).or_insert_with(|| {
                label_text(t, l)
                    .replace(';', ":")
                    .replace(['\n', '\r'], " ")
            });
            path.push_str(s);
        };
        // The current path, and where each of its frames ends in it.
        let mut path = String::new();
        let mut ends: Vec<usize> = Vec::new();
        // A sandwich's trees have a function at their root: it is the first frame.
        let rooted = self.label.first().is_some_and(|&l| l != FrameLabel::Root);
        if rooted {
            text(&mut path, self.label[0]);
            ends.push(path.len());
            if self.self_ns[0] > 0 {
                line(&path, self.self_ns[0]);
            }
        }
        for i in 1..self.len() {
            ends.truncate(self.depth[i] as usize - 1 + rooted as usize);
            path.truncate(ends.last().copied().unwrap_or(0));
            if !ends.is_empty() {
                path.push(';');
            }
            text(&mut path, self.label[i]);
            ends.push(path.len());
            if self.self_ns[i] > 0 {
                line(&path, self.self_ns[i]);
            }
        }
    }

    /// The same tree with its children ordered `by`.
    pub fn sorted(&self, t: &Trace, by: FlameSort) -> FlameTree {
        let mut b = self.to_builder();
        b.ids.clear();
        b.finish(t, by)
    }

    /// Only the stacks in which some frame satisfies `keep` (with the frames under it):
    /// totals are recomputed from the self times kept, as `grep` on folded stacks would.
    pub fn filtered(
        &self,
        t: &Trace,
        keep: impl Fn(FrameLabel) -> bool,
        by: FlameSort,
    ) -> FlameTree {
        let mut b = self.to_builder();
        let mut kept = vec![false; self.len()];
        for i in 1..self.len() {
            let p = self.parent[i] as usize;
            kept[i] = kept[p] || keep(self.label[i]);
            if !kept[i] {
                b.self_ns[i] = 0;
            }
        }
        // Totals: the self times kept in each subtree (children follow parents).
        b.total = b.self_ns.clone();
        for i in (1..self.len()).rev() {
            let p = self.parent[i] as usize;
            b.total[p] += b.total[i];
        }
        prune(b, t, by, |b, i| b.total[i] > 0)
    }

    /// Speedscope's sandwich for the frames labelled `name`: its callers (the name at the
    /// root, each caller chain inverted beneath it) and its callees (every subtree under
    /// the name merged). Recursion counts once per stack: only the outermost occurrence on
    /// a stack adds its time. Both roots carry the name's total.
    pub fn sandwich(&self, t: &Trace, name: FrameLabel, by: FlameSort) -> (FlameTree, FlameTree) {
        let mut callers = Builder::new();
        let mut callees = Builder::new();
        callers.label[0] = name;
        callees.label[0] = name;
        let mut i = 1u32;
        while (i as usize) < self.len() {
            if self.label[i as usize] != name {
                i += 1;
                continue;
            }
            let (tot, cnt) = (self.total[i as usize], self.count[i as usize]);
            // Callers: this occurrence's path, inverted under the root.
            let mut at = 0u32;
            let mut p = self.parent[i as usize];
            while p != 0 && p != NONE {
                at = callers.child(at, self.label[p as usize]);
                callers.total[at as usize] += tot;
                callers.count[at as usize] += cnt;
                p = self.parent[p as usize];
            }
            callers.self_ns[at as usize] += tot;
            callers.total[0] += tot;
            callers.count[0] += cnt;
            // Callees: the subtree, merged by path relative to this node.
            callees.self_ns[0] += self.self_ns[i as usize];
            callees.total[0] += tot;
            callees.count[0] += cnt;
            let end = i + self.size[i as usize];
            let mut map = vec![0u32; (end - i) as usize];
            for j in i + 1..end {
                let parent = map[(self.parent[j as usize] - i) as usize];
                let id = callees.child(parent, self.label[j as usize]);
                map[(j - i) as usize] = id;
                callees.total[id as usize] += self.total[j as usize];
                callees.self_ns[id as usize] += self.self_ns[j as usize];
                callees.count[id as usize] += self.count[j as usize];
            }
            // Inner occurrences are already inside this subtree.
            i = end;
        }
        (callers.finish(t, by), callees.finish(t, by))
    }

    fn to_builder(&self) -> Builder {
        Builder {
            label: self.label.clone(),
            parent: self.parent.clone(),
            total: self.total.clone(),
            self_ns: self.self_ns.clone(),
            count: self.count.clone(),
            ids: HashMap::new(),
        }
    }
}

/// `b` without the nodes `keep` rejects (and their subtrees), then sorted and laid out.
fn prune(
    b: Builder,
    t: &Trace,
    by: FlameSort,
    keep: impl Fn(&Builder, usize) -> bool,
) -> FlameTree {
    let mut out = Builder::new();
    out.label[0] = b.label[0];
    out.total[0] = b.total[0];
    out.self_ns[0] = b.self_ns[0];
    out.count[0] = b.count[0];
    let mut map = vec![NONE; b.label.len()];
    map[0] = 0;
    for i in 1..b.label.len() {
        let p = map[b.parent[i] as usize];
        if p == NONE || !keep(&b, i) {
            continue;
        }
        let id = out.push(p, b.label[i]);
        map[i] = id;
        out.total[id as usize] = b.total[i];
        out.self_ns[id as usize] = b.self_ns[i];
        out.count[id as usize] = b.count[i];
    }
    out.finish(t, by)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GroupBy, StatsFilter};

    /// `main` calls `render` (which calls `draw` twice) and `ui` (which calls `draw` once);
    /// a second thread has `draw` calling itself.
    const TRACE: &[u8] = br#"[
        {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"Main"}},
        {"ph":"X","name":"main","ts":0,"dur":100,"pid":1,"tid":1},
        {"ph":"X","name":"render","ts":0,"dur":40,"pid":1,"tid":1},
        {"ph":"X","name":"draw","ts":0,"dur":10,"pid":1,"tid":1},
        {"ph":"X","name":"draw","ts":20,"dur":10,"pid":1,"tid":1},
        {"ph":"X","name":"ui","ts":50,"dur":40,"pid":1,"tid":1},
        {"ph":"X","name":"draw","ts":60,"dur":5,"pid":1,"tid":1},
        {"ph":"X","name":"draw","ts":0,"dur":30,"pid":1,"tid":2},
        {"ph":"X","name":"draw","ts":5,"dur":10,"pid":1,"tid":2}
    ]"#;

    fn folded(t: &Trace, tree: &FlameTree) -> Vec<String> {
        let mut v: Vec<String> = tree
            .folded(t)
            .into_iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn stacks_merge_across_threads_with_exact_self_times() {
        let t = crate::load_bytes(TRACE).unwrap();
        let tree = t.flame(&FlameOptions::default(), FlameSort::Heaviest);
        assert_eq!(
            folded(&t, &tree),
            [
                "draw 20000",
                "draw;draw 10000",
                "main 20000",
                "main;render 20000",
                "main;render;draw 20000",
                "main;ui 35000",
                "main;ui;draw 5000",
            ]
        );
        // The root weighs every outermost span; children are heaviest first and laid out
        // side by side.
        assert_eq!(tree.total[0], 130_000);
        let top: Vec<u32> = tree.children(0).collect();
        assert_eq!(
            tree.label[top[0] as usize],
            FrameLabel::Name(t.strings().lookup("main").unwrap())
        );
        assert_eq!(
            (tree.x[top[0] as usize], tree.x[top[1] as usize]),
            (0, 100_000)
        );
        // Self times agree with the statistics by stack.
        let by_stack = t.groups(&StatsFilter::default(), GroupBy::Stack);
        let self_sum: i64 = by_stack.iter().map(|g| g.stats.self_ns).sum();
        assert_eq!(self_sum, tree.folded(&t).iter().map(|f| f.1).sum::<i64>());
    }

    #[test]
    fn per_thread_puts_process_and_thread_first() {
        let t = crate::load_bytes(TRACE).unwrap();
        let opts = FlameOptions {
            per_thread: true,
            ..Default::default()
        };
        let tree = t.flame(&opts, FlameSort::Name);
        let f = folded(&t, &tree);
        assert!(
            f.contains(&"pid 1;Main (tid 1);main;ui;draw 5000".to_string()),
            "{f:?}"
        );
        assert!(
            f.contains(&"pid 1;tid 2;draw;draw 10000".to_string()),
            "{f:?}"
        );
        // Synthetic frames weigh their children.
        let p = tree.children(0).next().unwrap();
        assert_eq!(tree.total[p as usize], 130_000);
    }

    #[test]
    fn a_range_clips_spans_like_the_statistics() {
        let t = crate::load_bytes(TRACE).unwrap();
        let range = Some((t.start_ns() + 25_000, t.start_ns() + 62_000));
        let opts = FlameOptions {
            threads: Some(vec![0]),
            range,
            per_thread: false,
            sample_kind: None,
        };
        let tree = t.flame(&opts, FlameSort::Heaviest);
        assert_eq!(
            folded(&t, &tree),
            [
                "main 10000",
                "main;render 10000",
                "main;render;draw 5000",
                "main;ui 10000",
                "main;ui;draw 2000",
            ]
        );
        let filter = StatsFilter {
            threads: Some(vec![0]),
            range,
            name: None,
        };
        let total: i64 = t.stats(&filter).iter().map(|s| s.self_ns).sum();
        assert_eq!(total, tree.total[0]);
    }

    #[test]
    fn sandwich_counts_recursion_once() {
        let t = crate::load_bytes(TRACE).unwrap();
        let tree = t.flame(&FlameOptions::default(), FlameSort::Heaviest);
        let draw = FrameLabel::Name(t.strings().lookup("draw").unwrap());
        let (callers, callees) = tree.sandwich(&t, draw, FlameSort::Name);
        // Outermost draws: 2×10 under render, 5 under ui, 30 on thread 2 (whose inner draw
        // is not counted again).
        assert_eq!(callers.total[0], 55_000);
        assert_eq!(callees.total[0], 55_000);
        assert_eq!(
            folded(&t, &callers),
            ["draw 30000", "draw;render;main 20000", "draw;ui;main 5000"]
        );
        assert_eq!(folded(&t, &callees), ["draw 45000", "draw;draw 10000"]);
    }

    #[test]
    fn occurrences_follow_the_whole_stack() {
        let t = crate::load_bytes(TRACE).unwrap();
        let opts = FlameOptions::default();
        let tree = t.flame(&opts, FlameSort::Heaviest);
        let find = |path: &str| {
            (1..tree.len() as u32)
                .find(|&n| {
                    let p: Vec<_> = tree
                        .path(n)
                        .iter()
                        .map(|&k| label_text(&t, tree.label[k as usize]))
                        .collect();
                    p.join(";") == path
                })
                .unwrap()
        };
        let starts = |n: u32| -> Vec<i64> {
            t.flame_occurrences(&tree, n, &opts)
                .iter()
                .map(|&r| (t.span(r).start - t.start_ns()) / 1000)
                .collect()
        };
        assert_eq!(starts(find("main;render;draw")), [0, 20]);
        assert_eq!(starts(find("main;ui;draw")), [60]);
        assert_eq!(starts(find("draw;draw")), [5]);
    }

    #[test]
    fn filtering_keeps_matching_stacks_only() {
        let t = crate::load_bytes(TRACE).unwrap();
        let tree = t.flame(&FlameOptions::default(), FlameSort::Heaviest);
        let ui = t.strings().lookup("ui").unwrap();
        let kept = tree.filtered(&t, |l| l == FrameLabel::Name(ui), FlameSort::Heaviest);
        assert_eq!(folded(&t, &kept), ["main;ui 35000", "main;ui;draw 5000"]);
        assert_eq!(kept.total[0], 40_000);
    }
}
