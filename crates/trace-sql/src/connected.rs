//! `directly_connected_flow(id)`, `following_flow(id)` and `preceding_flow(id)`: the rows
//! of `flow` reached from slice `id`, as trace_processor finds them, breadth first:
//!
//! - directly connected: along flows both ways (never straight back the way it came);
//! - following: along flows out of a slice, and from each slice reached (the start
//!   included) on into its descendants;
//! - preceding: along flows into a slice, and from each slice reached on up to its
//!   ancestors.
//!
//! A flow is listed each time it is taken, as trace_processor lists it. The graph of
//! flows by slice is built at the first call.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::slices::Related;
use crate::source::{argument, argument_estimate, Cell, Constraint, Op, Source};
use crate::tables::Flows;

/// Which flows a function follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Direct,
    Following,
    Preceding,
}

/// One of the three functions: `flow`'s columns, plus the hidden argument `start_id`.
pub(crate) struct Connected {
    pub flows: Arc<Flows>,
    /// Ancestors (preceding) or descendants (following); unused when direct.
    pub relatives: Related,
    pub mode: Mode,
    graph: OnceLock<Graph>,
}

/// The rows of `flow` by the slice they leave and by the slice they reach.
#[derive(Default)]
struct Graph {
    outgoing: HashMap<u64, Vec<u64>>,
    incoming: HashMap<u64, Vec<u64>>,
}

/// How a slice was reached.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    Start,
    FlowIn,
    FlowOut,
    Relative,
}

/// The argument: the column after `flow`'s own.
const HIDDEN: usize = 5;

impl Connected {
    pub(crate) fn new(flows: Arc<Flows>, relatives: Related, mode: Mode) -> Connected {
        Connected {
            flows,
            relatives,
            mode,
            graph: OnceLock::new(),
        }
    }

    fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| {
            let mut g = Graph::default();
            for row in 0..self.flows.len() as u64 {
                let (from, to) = self.flows.ends(row);
                g.outgoing.entry(from).or_default().push(row);
                g.incoming.entry(to).or_default().push(row);
            }
            g
        })
    }

    /// The rows of `flow` reached from slice `start`, in the order they are taken.
    fn reach(&self, start: u64) -> Vec<u64> {
        let g = self.graph();
        let (ins, outs) = match self.mode {
            Mode::Direct => (true, true),
            Mode::Following => (false, true),
            Mode::Preceding => (true, false),
        };
        let mut known = HashSet::from([start]);
        let mut queue = VecDeque::from([(start, Via::Start)]);
        let mut rows = Vec::new();
        while let Some((slice, via)) = queue.pop_front() {
            if via != Via::Relative && self.mode != Mode::Direct {
                let relatives = self.relatives.of(slice);
                for id in relatives.into_iter().flatten() {
                    if known.insert(id) {
                        queue.push_back((id, Via::Relative));
                    }
                }
            }
            let ways = [
                (ins && via != Via::FlowOut, &g.incoming, Via::FlowIn),
                (outs && via != Via::FlowIn, &g.outgoing, Via::FlowOut),
            ];
            for (go, map, next_via) in ways {
                for &row in map.get(&slice).filter(|_| go).into_iter().flatten() {
                    rows.push(row);
                    let (from, to) = self.flows.ends(row);
                    let next = if next_via == Via::FlowOut { to } else { from };
                    if known.insert(next) {
                        queue.push_back((next, next_via));
                    }
                }
            }
        }
        rows
    }
}

impl Source for Connected {
    fn schema(&self) -> String {
        let flow = self.flows.schema();
        let columns = flow.trim_end_matches(')');
        format!("{columns}, start_id HIDDEN)")
    }

    fn pushable(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn exact(&self, col: usize) -> bool {
        col == HIDDEN
    }

    fn plan(&self, cons: &[Constraint]) -> Vec<Range<u64>> {
        let Some(id) = argument(cons, HIDDEN) else {
            return Vec::new();
        };
        let mut rows = self.reach(id);
        rows.sort_unstable();
        rows.into_iter().map(|r| r..r + 1).collect()
    }

    fn column(&self, row: u64, col: usize) -> Cell<'_> {
        self.flows.column(row, col)
    }

    fn estimate(&self, cons: &[(usize, Op)]) -> f64 {
        argument_estimate(cons, HIDDEN)
    }
}
