//! Compare mode's flame graph layout: NEW's graph, widened to give each call stack only
//! BASE has (a removed stack) a frame of BASE's width in the parent it left.
//!
//! A frame's width is NEW's total plus the BASE-only time under it, so every frame NEW
//! shares with BASE keeps its relative size, and a removed stack sits, drawn from BASE's
//! tree with its own subtree, after NEW's children of its parent and before the parent's
//! self time: `[NEW's children][removed][self]`. Without removed stacks the layout is
//! NEW's own. Pyroscope's diff view widens frames the same way (by the sum of both runs);
//! inferno's differential graph leaves removed stacks out and needs a second, negated
//! graph to show them.
//!
//! ```
//! use std::sync::Arc;
//! use spall_viewer::view::removed_stacks::Room;
//!
//! let tree = trace_model::FlameTree::default();
//! assert!(Room::new(&tree, &[], Arc::new(tree.clone())).is_none());
//! ```

use std::sync::Arc;

use trace_model::FlameTree;

use trace_model::changes::Change;

/// A removed stack's frame: BASE's node, where its bar starts in the widened layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ghost {
    /// The node in BASE's tree.
    pub node: u32,
    /// Its left edge, in the layout's nanoseconds.
    pub x: i64,
}

/// The widened layout of NEW's graph.
#[derive(Clone, Debug)]
pub struct Room {
    /// Per node of NEW's tree, its left edge.
    pub x: Vec<i64>,
    /// Per node, its width: NEW's total plus the removed time under it.
    pub w: Vec<i64>,
    /// Per node, the width of its own removed stacks (not its children's).
    pub direct: Vec<i64>,
    /// Per node, whether its children's removed stacks widened some child, which breaks
    /// the heaviest-first order of their widths.
    pub reordered: Vec<bool>,
    /// Node `n`'s removed stacks are `ghosts[first[n]..first[n + 1]]`, largest first.
    first: Vec<u32>,
    ghosts: Vec<Ghost>,
    /// BASE's graph, built with NEW's scope: the removed stacks' frames.
    pub base: Arc<FlameTree>,
}

impl Room {
    /// The layout of `new` (NEW's tree) with the removed stacks of `changes` (its frames'
    /// changes against `base`); `None` when there are none, or the changes are not for
    /// this tree.
    pub fn new(new: &FlameTree, changes: &[Change], base: Arc<FlameTree>) -> Option<Room> {
        let n = new.len();
        if changes.len() != n || changes.iter().all(|c| c.removed.is_empty()) {
            return None;
        }
        let direct: Vec<i64> = (changes.iter())
            .map(|c| c.removed.iter().map(|r| r.base_total.max(0)).sum())
            .collect();
        // The removed time in each subtree: children come after their parents.
        let mut extra = direct.clone();
        let mut reordered = vec![false; n];
        for i in (1..n).rev() {
            let p = new.parent[i] as usize;
            extra[p] = extra[p].saturating_add(extra[i]);
            reordered[p] |= extra[i] > 0;
        }
        let w: Vec<i64> = (0..n)
            .map(|i| new.total[i].max(0).saturating_add(extra[i]))
            .collect();
        // Left edges in preorder: each child starts where its earlier siblings end.
        let mut x = vec![0i64; n];
        let mut next = vec![0i64; n];
        for i in 1..n {
            let p = new.parent[i] as usize;
            x[i] = next[p].max(x[p]);
            next[p] = x[i].saturating_add(w[i]);
            next[i] = x[i];
        }
        let mut first = Vec::with_capacity(n + 1);
        let mut ghosts = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            first.push(ghosts.len() as u32);
            let mut at = next[i].max(x[i]);
            for r in &c.removed {
                ghosts.push(Ghost {
                    node: r.node,
                    x: at,
                });
                at = at.saturating_add(r.base_total.max(0));
            }
        }
        first.push(ghosts.len() as u32);
        Some(Room {
            x,
            w,
            direct,
            reordered,
            first,
            ghosts,
            base,
        })
    }

    /// The removed stacks directly under NEW's node `n`.
    pub fn ghosts_of(&self, n: u32) -> &[Ghost] {
        let n = n as usize;
        &self.ghosts[self.first[n] as usize..self.first[n + 1] as usize]
    }

    /// BASE's node `k`, in the subtree of the removed stack `g`: its left edge.
    pub fn x_in(&self, g: Ghost, k: u32) -> i64 {
        let b = &self.base;
        g.x + (b.x[k as usize] - b.x[g.node as usize])
    }

    /// The frame of BASE at layout time `at` and depth `row`, in the removed stacks
    /// under NEW's node `n` (whose depth is less than `row`).
    pub fn hit(&self, n: u32, row: u32, at: f64) -> Option<u32> {
        let b = &self.base;
        let within = |x: i64, w: i64| (x as f64) <= at && at < (x.saturating_add(w)) as f64;
        let g = *(self.ghosts_of(n).iter()).find(|g| within(g.x, b.total[g.node as usize]))?;
        let mut k = g.node;
        while b.depth[k as usize] < row {
            k = b
                .children(k)
                .find(|&c| within(self.x_in(g, c), b.total[c as usize]))?;
        }
        Some(k)
    }
}
