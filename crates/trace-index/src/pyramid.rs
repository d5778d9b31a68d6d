//! Per-lane block summaries: a pyramid of blocks of 16, 256, 4096, ... consecutive spans.
//!
//! Level 0 summarises 16 spans per block, level `l` summarises 16 blocks of level `l - 1`.
//! Blocks are found by index arithmetic (block `b` of level `l` holds spans
//! `b * 16^(l+1) ..`), and each level is stored as columns:
//!
//! | column     | type  | meaning                                                      |
//! |------------|-------|--------------------------------------------------------------|
//! | `last_end` | `i64` | end of the block's last span (the largest end: lanes do not overlap) |
//! | `busy`     | `i64` | sum of the spans' durations                                  |
//! | `max_dur`  | `u32` | the longest span, saturated at [`SATURATED`]                 |
//! | `max_gap`  | `u32` | the widest gap between consecutive spans inside, saturated   |
//! | `name`     | `u32` | the name of the block's first longest span                   |
//!
//! 28 bytes per 16 spans plus the levels above: under 2 bytes per span. A saturated value
//! means "4.3 s or more": the block is then never used whole, and readers look inside it,
//! so saturation costs time on exotic lanes, never exactness.
//!
//! The pyramid answers three questions without reading every span: where the first span
//! ending at or after a time is ([`Pyramid::first_ending_at_or_after`], reading a few
//! cache lines per level rather than binary-searching the whole lane), which whole block
//! starting at a span can be absorbed ([`Pyramid::largest_fitting`]), and the busy time and
//! longest span of any index range ([`Pyramid::aggregate`]).

use trace_model::{Lane, StrId};

use crate::detail::count_boundary;

/// Spans per block at level 0, and blocks per block above.
pub(crate) const FANOUT: usize = 16;
const SHIFT: u32 = 4;

/// A `u32` summary value too large to store: treat as unknown and look inside.
pub(crate) const SATURATED: u32 = u32::MAX;

/// A non-negative duration as a `u32`, saturated.
#[inline]
pub(crate) fn sat(x: i64) -> u32 {
    x.clamp(0, SATURATED as i64) as u32
}

/// One level of blocks, as columns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Blocks {
    pub last_end: Vec<i64>,
    pub busy: Vec<i64>,
    pub max_dur: Vec<u32>,
    pub max_gap: Vec<u32>,
    pub name: Vec<StrId>,
}

impl Blocks {
    fn with_capacity(n: usize) -> Blocks {
        Blocks {
            last_end: Vec::with_capacity(n),
            busy: Vec::with_capacity(n),
            max_dur: Vec::with_capacity(n),
            max_gap: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.last_end.len()
    }

    fn heap_bytes(&self) -> usize {
        self.last_end.capacity() * 8
            + self.busy.capacity() * 8
            + self.max_dur.capacity() * 4
            + self.max_gap.capacity() * 4
            + self.name.capacity() * 4
    }
}

/// The busy time and first longest span of a run of spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aggregate {
    pub busy: i64,
    pub longest: i64,
    /// The name of the first longest span.
    pub name: StrId,
}

impl Aggregate {
    #[inline]
    pub(crate) fn span(lane: &Lane, i: usize) -> Aggregate {
        Aggregate {
            busy: lane.dur[i],
            longest: lane.dur[i],
            name: lane.name[i],
        }
    }

    /// Folds in the run that follows this one (earlier spans win ties for the name).
    #[inline]
    pub(crate) fn then(&mut self, next: Aggregate) {
        self.busy = self.busy.saturating_add(next.busy);
        if next.longest > self.longest {
            self.longest = next.longest;
            self.name = next.name;
        }
    }
}

/// The pyramid of one lane. `levels[0]` summarises spans; `levels[k]` summarises blocks of
/// `levels[k - 1]`. Lanes of 16 spans or fewer have no levels.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pyramid {
    pub levels: Vec<Blocks>,
    /// Whether the lane's last end and its extent fit in an `i64`: spans do not overlap, so
    /// then no end and no sum of durations over a range overflows, and the vector walk may
    /// add without saturating. (Kept here: checking it per query reads the lane's last
    /// span, a cache miss per lane.)
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub sums_fit: bool,
}

impl Pyramid {
    pub(crate) fn build(lane: &Lane) -> Pyramid {
        Pyramid::build_counting::<false>(lane, &mut [])
    }

    /// The pyramid, and with `COUNT` the histogram of the lane's boundaries in `hist`
    /// ([`LEVELS`](crate::detail::LEVELS) counts, see [`count_boundary`]): one pass over
    /// the lane for both.
    pub(crate) fn build_counting<const COUNT: bool>(lane: &Lane, hist: &mut [u32]) -> Pyramid {
        let n = lane.len();
        let sums_fit = match (lane.start.first(), n.checked_sub(1)) {
            (Some(&s), Some(last)) => {
                let end = lane.end(last);
                end < i64::MAX && end.checked_sub(s).is_some()
            }
            _ => false,
        };
        let mut levels = Vec::new();
        if n <= FANOUT {
            for i in (1..n).filter(|_| COUNT) {
                let gap = lane.start[i].saturating_sub(lane.end(i - 1));
                count_boundary(hist, gap, lane.dur[i].max(lane.dur[i - 1]));
            }
            return Pyramid { levels, sums_fit };
        }
        let mut l0 = Blocks::with_capacity(n.div_ceil(FANOUT));
        // The previous span's end and duration, across blocks (for the boundaries).
        let (mut end, mut prev) = (i64::MIN, 0);
        for a in (0..n).step_by(FANOUT) {
            let b = (a + FANOUT).min(n);
            let (start, dur, name) = (&lane.start[a..b], &lane.dur[a..b], &lane.name[a..b]);
            if COUNT && a > 0 {
                // The boundary before the block.
                count_boundary(hist, start[0].saturating_sub(end), dur[0].max(prev));
            }
            let mut agg = Aggregate {
                busy: dur[0],
                longest: dur[0],
                name: name[0],
            };
            let mut gap = 0i64;
            (end, prev) = (start[0].saturating_add(dur[0]), dur[0]);
            for ((&s, &d), &nm) in (start.iter().zip(dur).zip(name)).skip(1) {
                agg.then(Aggregate {
                    busy: d,
                    longest: d,
                    name: nm,
                });
                let g = s.saturating_sub(end);
                gap = gap.max(g);
                if COUNT {
                    count_boundary(hist, g, d.max(prev));
                }
                (end, prev) = (s.saturating_add(d), d);
            }
            l0.last_end.push(end);
            l0.busy.push(agg.busy);
            l0.max_dur.push(sat(agg.longest));
            l0.max_gap.push(sat(gap));
            l0.name.push(agg.name);
        }
        levels.push(l0);
        while levels.last().is_some_and(|l| l.len() > FANOUT) {
            let below = levels.last().expect("non-empty");
            let child_spans = FANOUT << (SHIFT as usize * (levels.len() - 1));
            let mut up = Blocks::with_capacity(below.len().div_ceil(FANOUT));
            for a in (0..below.len()).step_by(FANOUT) {
                let b = (a + FANOUT).min(below.len());
                let (mut busy, mut dur, mut gap, mut name) = (
                    below.busy[a],
                    below.max_dur[a],
                    below.max_gap[a],
                    below.name[a],
                );
                for c in a + 1..b {
                    busy = busy.saturating_add(below.busy[c]);
                    // Saturated children make the parent saturated, so its name is unused.
                    if below.max_dur[c] > dur {
                        dur = below.max_dur[c];
                        name = below.name[c];
                    }
                    let between = lane.start[c * child_spans].saturating_sub(below.last_end[c - 1]);
                    gap = gap.max(below.max_gap[c]).max(sat(between));
                }
                up.last_end.push(below.last_end[b - 1]);
                up.busy.push(busy);
                up.max_dur.push(dur);
                up.max_gap.push(gap);
                up.name.push(name);
            }
            levels.push(up);
        }
        Pyramid { levels, sums_fit }
    }

    /// Spans covered by a block at `level`.
    #[inline]
    pub(crate) fn span_count(level: usize) -> usize {
        FANOUT << (SHIFT as usize * level)
    }

    /// The first span of `lane` that ends at or after `t` (`lane.len()` if none), reading
    /// at most 16 summaries per level and 16 spans.
    pub(crate) fn first_ending_at_or_after(&self, lane: &Lane, t: i64) -> usize {
        let mut block = 0; // the block of the current level whose children we scan
        for (level, blocks) in self.levels.iter().enumerate().rev() {
            let from = if level + 1 == self.levels.len() {
                0
            } else {
                block * FANOUT
            };
            let to = (from + FANOUT).min(blocks.len());
            match blocks.last_end[from..to].iter().position(|&e| e >= t) {
                Some(p) => block = from + p,
                None => return lane.len(),
            }
        }
        let from = if self.levels.is_empty() {
            0
        } else {
            block * FANOUT
        };
        let to = (from + FANOUT).min(lane.len());
        (from..to).find(|&i| lane.end(i) >= t).unwrap_or(to)
    }

    /// The largest block that starts at span `i` (so `i` must be aligned to it) and for
    /// which `fits(level, blocks, block)` holds, tried largest first: `(level, block)`.
    #[inline]
    pub(crate) fn largest_fitting(
        &self,
        i: usize,
        fits: impl Fn(usize, &Blocks, usize) -> bool,
    ) -> Option<(usize, usize)> {
        let align = i.trailing_zeros() / SHIFT; // levels at which i is block-aligned
        let top = (align as usize).min(self.levels.len());
        for level in (0..top).rev() {
            let b = i >> (SHIFT * (level as u32 + 1));
            let blocks = &self.levels[level];
            if b < blocks.len() && fits(level, blocks, b) {
                return Some((level, b));
            }
        }
        None
    }

    /// The busy time and first longest span of spans `a..=b`: whole blocks where they fit,
    /// single spans at the edges. O(16 × levels).
    pub(crate) fn aggregate(&self, lane: &Lane, a: usize, b: usize) -> Aggregate {
        let mut agg = Aggregate::span(lane, a);
        let mut i = a + 1;
        while i <= b {
            let whole = self.largest_fitting(i, |level, blk, k| {
                blk.max_dur[k] != SATURATED && i + Self::span_count(level) - 1 <= b
            });
            match whole {
                Some((level, k)) => {
                    let blk = &self.levels[level];
                    agg.then(Aggregate {
                        busy: blk.busy[k],
                        longest: blk.max_dur[k] as i64,
                        name: blk.name[k],
                    });
                    i += Self::span_count(level);
                }
                None => {
                    agg.then(Aggregate::span(lane, i));
                    i += 1;
                }
            }
        }
        agg
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.levels.iter().map(Blocks::heap_bytes).sum::<usize>()
            + self.levels.capacity() * std::mem::size_of::<Blocks>()
    }
}
