//! The call tree of a `perf script` decode's records, by their lines: a node is a line
//! under its parent node, the record's outermost line under none, so a node names one
//! sequence of lines from the record's end up to it, and with it a frame and all its
//! callers ([`RawSample::nodes`](crate::RawSample::nodes)). A sink that has seen a
//! sample's leaf node takes its stack from there instead of looking at every frame again
//! (most samples of a profile end in a leaf seen before).
//!
//! The tree owns its lines' text, so one tree serves every run of a streamed decode. It is
//! bounded: a line or node past its bounds is [`NONE`], and a record with one gets no nodes
//! (its frames are looked at one by one, as without the tree). A profile whose records'
//! new lines are mostly new nodes (stacks that rarely end where an earlier one did) gains
//! nothing from the tree and pays its lookups: once most of a window of lookups made
//! nodes, the tree gives none for the rest of the decode.

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
/// Lookups of nodes in a window: the tree is given up when over half of one made nodes.
const WINDOW: u32 = 1 << 16;

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
    /// Lookups of nodes, and nodes made, in this window.
    looked: u32,
    made: u32,
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
        self.looked += 1;
        if self.looked == WINDOW {
            if self.made > WINDOW / 2 {
                // Given up: no line is looked up or kept from now on.
                *self = Tree {
                    off: true,
                    ..Tree::default()
                };
                return NONE;
            }
            (self.looked, self.made) = (0, 0);
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
        self.made += 1;
        self.nodes.insert_unique(h, (key, node), |e| spread(e.0));
        node
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
        // Every lookup makes a node: the tree is given up after its first window.
        let mut parent = ROOT;
        for i in 0..WINDOW as usize + 10 {
            let node = t.child(parent, (i % 7) as u32);
            assert_eq!(node == NONE, i + 1 >= WINDOW as usize, "node {i}");
            parent = if node == NONE { parent } else { node };
        }
        // Nor any line, seen before or not.
        for s in ["\t0 f0 (x)", "\t9 other (x)"] {
            assert_eq!(t.line(s, hash::hash(s.as_bytes(), 0)), NONE);
        }
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
    }
}
