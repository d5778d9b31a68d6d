//! The call tree of a `perf script` decode's records, by their lines: a node is a line
//! under its parent node, the record's outermost line under none, so a node names one
//! sequence of lines from the record's end up to it, and with it a frame and all its
//! callers ([`RawSample::nodes`](crate::RawSample::nodes)). A sink that has seen a
//! sample's leaf node takes its stack from there instead of looking at every frame again
//! (most samples of a profile end in a leaf seen before).
//!
//! The tree owns its lines' text, so one tree serves every run of a streamed decode. It is
//! bounded: a line or node past its bounds is [`NONE`], and a record with one gets no nodes
//! (its frames are looked at one by one, as without the tree). A profile whose records
//! mostly end in a node not seen before (perf prints each frame's address, and where a
//! sample landed in a function differs from sample to sample unless it spins in a short
//! loop) gains nothing from the tree and pays its lookups, as many as the sink's own: once
//! over half of a window of records ended in a node not found (made for them, or none),
//! the tree gives none for the rest of the decode.

use hashbrown::HashTable;

use crate::hash;

/// A line or node the tree had no room for.
pub(crate) const NONE: u32 = u32::MAX;
/// The parent of a record's outermost line.
pub(crate) const ROOT: u32 = u32::MAX - 1;

/// The most distinct lines, and bytes of their text, the tree keeps.
const LINES_MAX: usize = 1 << 16;
const TEXT_MAX: usize = 8 << 20;
/// The most nodes (a sink keeps 4 bytes for each).
const NODES_MAX: usize = 1 << 21;
/// Records in a window: the tree is given up when over half of one's ended in a node not
/// found.
/// Small, since a native decode's every chunk of a few megabytes has a tree of its own.
const WINDOW: u32 = 1 << 10;

/// See the [module](self).
#[derive(Default)]
pub(crate) struct Tree {
    /// Every line's text, one after another.
    text: String,
    /// Per line id, where its text is in `text`.
    spans: Vec<(u32, u32)>,
    /// Line ids, by their text's [`hash::hash`].
    lines: HashTable<u32>,
    /// `(parent node << 32 | line id, node)`.
    nodes: HashTable<(u64, u32)>,
    /// Records counted in this window, and those whose innermost node was not found.
    records: u32,
    missed: u32,
    /// The nodes made before the record being read: a node below is one it found.
    known: u32,
    /// Whether the tree was given up.
    off: bool,
}

/// A node's key, spread over a table's hash.
#[inline(always)]
fn spread(key: u64) -> u64 {
    hash::fold_mul(key ^ 0x9e37_79b9_7f4a_7c15, 0xa076_1d64_78bd_642f)
}

impl Tree {
    /// The id of the line `s` (its [`hash::hash`] with seed 0: `h`), or [`NONE`].
    pub(crate) fn line(&mut self, s: &str, h: u64) -> u32 {
        if self.off {
            return NONE;
        }
        let Tree {
            text, spans, lines, ..
        } = self;
        let get = |id: u32| {
            let (at, len) = spans[id as usize];
            &text.as_bytes()[at as usize..(at + len) as usize]
        };
        if let Some(&id) = lines.find(h, |&id| hash::same(get(id), s.as_bytes())) {
            return id;
        }
        if spans.len() >= LINES_MAX || text.len() + s.len() > TEXT_MAX {
            return NONE;
        }
        let id = spans.len() as u32;
        spans.push((text.len() as u32, s.len() as u32));
        text.push_str(s);
        let rehash = |&id: &u32| {
            let (at, len) = spans[id as usize];
            hash::hash(&text.as_bytes()[at as usize..(at + len) as usize], 0)
        };
        lines.insert_unique(h, id, rehash);
        id
    }

    /// The node of `line` under `parent` ([`ROOT`] for a record's outermost line), or
    /// [`NONE`] if either is, or the tree is full.
    #[inline]
    pub(crate) fn child(&mut self, parent: u32, line: u32) -> u32 {
        if parent == NONE || line == NONE || self.off {
            return NONE;
        }
        let key = (parent as u64) << 32 | line as u64;
        let h = spread(key);
        if let Some(&(_, node)) = self.nodes.find(h, |e| e.0 == key) {
            return node;
        }
        let node = self.nodes.len() as u32;
        if node as usize >= NODES_MAX {
            return NONE;
        }
        self.nodes.insert_unique(h, (key, node), |e| spread(e.0));
        node
    }

    /// Counts a record read, after its nodes: `leaf`, its innermost line's ([`ROOT`] for a
    /// record of no lines). Once over half of a window's records ended in a node not found
    /// (made for them, or none: the tree is full), the tree is given up: no line or node
    /// is looked up or kept from then on.
    pub(crate) fn record(&mut self, leaf: u32) {
        if self.off {
            return;
        }
        let found = leaf == ROOT || leaf < self.known;
        self.known = self.nodes.len() as u32;
        self.records += 1;
        self.missed += !found as u32;
        if self.records < WINDOW {
            return;
        }
        if self.missed > WINDOW / 2 {
            *self = Tree {
                off: true,
                ..Tree::default()
            };
            return;
        }
        (self.records, self.missed) = (0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_its_line_under_its_parent() {
        let mut t = Tree::default();
        let id = |t: &mut Tree, s: &str| t.line(s, hash::hash(s.as_bytes(), 0));
        let (a, b) = (id(&mut t, "\t1 main (x)"), id(&mut t, "\t2 f (x)"));
        assert_ne!(a, b);
        assert_eq!(id(&mut t, "\t1 main (x)"), a);
        let main = t.child(ROOT, a);
        let f = t.child(main, b);
        assert_eq!(t.child(ROOT, a), main);
        assert_eq!(t.child(main, b), f);
        // The same line under another parent is another node.
        let f2 = t.child(ROOT, b);
        assert!(f2 != f && f2 != main);
        assert_eq!(t.child(NONE, a), NONE);
        assert_eq!(t.child(main, NONE), NONE);
    }

    #[test]
    fn a_full_tree_has_no_room_for_more() {
        let mut t = Tree::default();
        for i in 0..LINES_MAX + 10 {
            let s = format!("\t{i:x} f{i} (x)");
            let id = t.line(&s, hash::hash(s.as_bytes(), 0));
            assert_eq!(id == NONE, i >= LINES_MAX, "line {i}");
        }
        // Every record ends in a node made for it: the tree is given up after its first
        // window of records.
        let mut parent = ROOT;
        for i in 0..WINDOW as usize + 10 {
            let node = t.child(parent, (i % 7) as u32);
            assert_eq!(node == NONE, i >= WINDOW as usize, "node {i}");
            t.record(node);
            parent = if node == NONE { parent } else { node };
        }
        // Nor any line, seen before or not.
        for s in ["\t0 f0 (x)", "\t9 other (x)"] {
            assert_eq!(t.line(s, hash::hash(s.as_bytes(), 0)), NONE);
        }
    }

    /// Records of five lines, four of them under the same caller each time: the tree is
    /// kept while most records end in a node seen before, however many nodes the others
    /// make, and given up once over half of a window's end in a new one, however few
    /// nodes that makes.
    #[test]
    fn the_tree_is_given_up_by_its_records_new_leaves() {
        let mut t = Tree::default();
        let record = |t: &mut Tree, leaf: u32| {
            let mut parent = ROOT;
            for line in [1, 2, 3, 4, leaf] {
                parent = t.child(parent, line);
            }
            t.record(parent);
            parent
        };
        // Windows where two records in five end in a new leaf: kept.
        for i in 0..4 * WINDOW {
            let leaf = if i % 5 < 2 { 100 + i } else { 5 };
            assert_ne!(record(&mut t, leaf), NONE, "record {i}");
        }
        // A record whose lines are all the last one's looks nothing up: its leaf, the last
        // one's, counts as found.
        let last = record(&mut t, 5);
        for _ in 0..WINDOW {
            t.record(last);
        }
        assert_ne!(record(&mut t, 5), NONE);
        // Then every record's leaf is new (one node in five lookups): given up after a
        // window.
        let after = (0..2 * WINDOW).position(|i| record(&mut t, 10_000 + i) == NONE);
        assert!(matches!(after, Some(n) if n as u32 <= WINDOW), "{after:?}");
    }

    #[test]
    fn a_tree_of_nodes_found_again_is_kept_to_its_bound() {
        let mut t = Tree::default();
        // A third of the lookups make nodes, the others find them.
        for i in 0..NODES_MAX as u32 + 10 {
            let node = t.child(ROOT, i);
            assert_eq!(node == NONE, i >= NODES_MAX as u32, "line {i}");
            assert_eq!(t.child(ROOT, i), node);
            assert_eq!(t.child(ROOT, i), node);
        }
        // Then records that end in no node, the tree being full: given up after a window,
        // its nodes with it.
        for i in 0..WINDOW {
            assert_eq!(t.child(ROOT, 0), 0, "record {i}");
            let leaf = t.child(ROOT, NODES_MAX as u32 + 20 + i);
            assert_eq!(leaf, NONE);
            t.record(leaf);
        }
        assert_eq!(t.child(ROOT, 0), NONE);
    }
}
