//! Per-lane summaries: a pyramid of blocks of 16, 256, 4096, ... consecutive spans.
//!
//! A block records what the level-of-detail walk needs to swallow it whole: where it starts
//! and ends, its widest span, its widest internal gap, how many spans it holds, their busy
//! time, and the name of its longest span. About 3 bytes per span in all.

use trace_model::{Lane, StrId};

/// Spans per block at level 0, and blocks per block above.
pub const FANOUT: usize = 16;
const SHIFT: u32 = 4;

/// A summary of `FANOUT^(level+1)` consecutive spans (fewer at the end of a lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub first_start: i64,
    pub last_end: i64,
    /// The longest span inside.
    pub max_dur: i64,
    /// The largest gap between consecutive spans inside.
    pub max_gap: i64,
    /// Sum of the spans' durations.
    pub busy: i64,
    pub count: u32,
    /// Name of the longest span inside.
    pub name: StrId,
}

impl Block {
    /// The block of one span.
    fn single(lane: &Lane, i: usize) -> Block {
        Block {
            first_start: lane.start[i],
            last_end: lane.end(i),
            max_dur: lane.dur[i],
            max_gap: 0,
            busy: lane.dur[i],
            count: 1,
            name: lane.name[i],
        }
    }

    fn merge(a: &Block, b: &Block) -> Block {
        Block {
            first_start: a.first_start,
            last_end: a.last_end.max(b.last_end),
            max_dur: a.max_dur.max(b.max_dur),
            max_gap: a.max_gap.max(b.max_gap).max(b.first_start - a.last_end),
            busy: a.busy.saturating_add(b.busy),
            count: a.count + b.count,
            name: if b.max_dur > a.max_dur {
                b.name
            } else {
                a.name
            },
        }
    }
}

/// The pyramid of one lane. `levels[0]` summarises spans; `levels[k]` summarises blocks of
/// `levels[k - 1]`.
#[derive(Clone, Debug, Default)]
pub struct Pyramid {
    pub levels: Vec<Vec<Block>>,
}

impl Pyramid {
    pub fn build(lane: &Lane) -> Pyramid {
        let n = lane.len();
        let mut levels = Vec::new();
        if n <= FANOUT {
            return Pyramid { levels };
        }
        let mut l0 = Vec::with_capacity(n.div_ceil(FANOUT));
        for c in 0..n.div_ceil(FANOUT) {
            let (a, b) = (c * FANOUT, ((c + 1) * FANOUT).min(n));
            let blk = (a + 1..b).fold(Block::single(lane, a), |acc, i| {
                Block::merge(&acc, &Block::single(lane, i))
            });
            l0.push(blk);
        }
        levels.push(l0);
        while levels.last().is_some_and(|l| l.len() > FANOUT) {
            let prev = levels.last().expect("non-empty");
            let next: Vec<Block> = prev
                .chunks(FANOUT)
                .map(|c| c[1..].iter().fold(c[0], |acc, b| Block::merge(&acc, b)))
                .collect();
            levels.push(next);
        }
        Pyramid { levels }
    }

    /// The largest block that starts at span `i` and is whole: `(level, block)` where the
    /// block covers spans `i .. i + FANOUT^(level+1)` (clamped to the lane). Tries the
    /// largest level first and calls `fits` until one is accepted.
    #[inline]
    pub fn largest_fitting(
        &self,
        i: usize,
        fits: impl Fn(&Block) -> bool,
    ) -> Option<(usize, Block)> {
        let align = i.trailing_zeros() / SHIFT; // levels at which i is block-aligned
        let top = (align as usize).min(self.levels.len());
        for level in (0..top).rev() {
            let idx = i >> (SHIFT * (level as u32 + 1));
            if let Some(b) = self.levels[level].get(idx) {
                if fits(b) {
                    return Some((level, *b));
                }
            }
        }
        None
    }

    /// Spans covered by a block at `level`.
    #[inline]
    pub fn span_count(level: usize) -> usize {
        FANOUT << (SHIFT as usize * level)
    }

    pub fn heap_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.capacity() * std::mem::size_of::<Block>())
            .sum()
    }
}
