//! Precomputed level-of-detail partitions of a lane, at fixed zoom steps (a mipmap).
//!
//! At level `k` with threshold `τ = tau(k)` (two steps per power of two: 1, 2, 3, 4, 6, 8,
//! 12, 16, 23, ... ns), a lane is cut into *items*: a new item starts before span `i` when the
//! gap before it is at least `τ`, or when span `i` or span `i - 1` lasts at least `2τ`. So
//! spans of `2τ` or more stand alone and runs of narrower spans with gaps under `τ` form one
//! item: exactly what a query at `2τ` per visible span and `τ` per visible gap returns.
//!
//! A query with coarser thresholds uses the finest such level at or below them and merges
//! neighbouring items with the same rule (every boundary of the coarser partition is a
//! boundary of the finer one), so its cost follows the items on screen, not the spans. A
//! query at a level's own thresholds (the default [`Detail`](crate::Detail) snaps its
//! resolution to them) merges nothing: its answer is the level's records in range, copied.
//! Which of the two (or the span walk) answers a query is decided by
//! [`LaneIndex::plan`](crate::lane::LaneIndex::plan).
//!
//! Each item is stored as one 32-byte record (a lane's items at one level are read in one
//! sequential stream, so records beat columns here):
//!
//! | column    | type  | meaning                                                   |
//! |-----------|-------|-----------------------------------------------------------|
//! | `start`   | `i64` | start of its first span                                   |
//! | `end`     | `i64` | end of its last span                                      |
//! | `first`   | `u32` | index of its first span (the last is the next item's first - 1) |
//! | `busy`    | `u32` | sum of durations, saturated (then recomputed from the pyramid) |
//! | `longest` | `u32` | its longest span, saturated likewise                      |
//! | `name`    | `u32` | the name of its first longest span                        |
//!
//! Which levels a lane keeps is decided by [`candidates`] and, across the whole trace, by
//! a memory budget (see `TraceIndex::build`).

use std::hint::select_unpredictable;

use trace_model::{Lane, StrId};

use crate::detail::{tau, LEVELS};
use crate::item::{append, Item};
use crate::pyramid::{sat, Aggregate, Pyramid, SATURATED};

/// Bytes per stored item.
pub(crate) const ITEM_BYTES: usize = 32;

/// Lanes with fewer spans keep no levels: walking them is as fast.
const MIN_SPANS: usize = 64;

/// A level is a candidate only if it has at least 3 spans per 2 items: below that, walking
/// the spans reads no more than merging the items would.
const MIN_SPANS_PER_ITEM: (usize, usize) = (3, 2);

/// The strength of the boundary before span `i > 0`: it survives every level whose
/// threshold is at most `max(gap, longer neighbour / 2)`.
#[cfg(test)]
fn strength(lane: &Lane, i: usize) -> i64 {
    let gap = lane.start[i].saturating_sub(lane.end(i - 1));
    gap.max(lane.dur[i].max(lane.dur[i - 1]) / 2)
}

/// The histogram of a lane's boundaries, boundary by boundary: what the pyramid's pass
/// counts, for tests.
#[cfg(test)]
pub(crate) fn histogram(lane: &Lane) -> Vec<u32> {
    let mut h = vec![0u32; LEVELS];
    for i in 1..lane.len() {
        if let Some(l) = crate::detail::level_of(strength(lane, i)) {
            h[l] += 1;
        }
    }
    h
}

/// Items at each level of a lane of `n` spans whose boundaries are `hist`.
fn items_per_level(hist: &[u32], n: usize) -> Vec<usize> {
    let mut items = vec![0usize; LEVELS];
    let mut above = (n > 0) as usize;
    for k in (0..LEVELS).rev() {
        above += hist.get(k).copied().unwrap_or(0) as usize;
        items[k] = above;
    }
    items
}

/// The levels worth keeping for a lane of `n` spans whose boundaries are `hist`, finest
/// first, as `(level, items)`: at least 1.5 spans per item, and each kept level at most
/// half the items of the previous one (so all of them together hold at most `4n / 3`
/// items, and a query never merges more than about twice the items it would get at its
/// own level).
pub(crate) fn candidates(hist: &[u32], n: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    if n < MIN_SPANS {
        return out;
    }
    for (k, c) in items_per_level(hist, n).into_iter().enumerate() {
        let (spans, per) = MIN_SPANS_PER_ITEM;
        if c * spans > n * per || out.last().is_some_and(|&(_, p)| c * 10 > p * 7) {
            continue;
        }
        out.push((k, c));
    }
    out
}

/// Levels `ks` of `lane` with their item counts, for tests that choose the levels.
#[cfg(test)]
pub(crate) fn with_counts(lane: &Lane, ks: &[usize]) -> Vec<(usize, usize)> {
    let items = items_per_level(&histogram(lane), lane.len());
    ks.iter().map(|&k| (k, items[k])).collect()
}

/// Whether a lane of `n` spans is worth a histogram (it may keep levels).
pub(crate) fn wants_levels(n: usize) -> bool {
    n >= MIN_SPANS
}

/// One stored item: a run of spans of a lane at one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LevelItem {
    /// Start of its first span.
    pub start: i64,
    /// End of its last span.
    pub end: i64,
    /// Index of its first span.
    pub first: u32,
    /// Sum of its spans' durations, saturated at [`SATURATED`].
    pub busy: u32,
    /// Its longest span, saturated at [`SATURATED`].
    pub longest: u32,
    /// The name of its first longest span.
    pub name: StrId,
}

/// The stored levels of one lane.
#[derive(Clone, Debug, Default)]
pub(crate) struct Levels {
    /// Level numbers, ascending.
    pub ks: Vec<u8>,
    /// Level `ks[l]` holds items `offs[l] .. offs[l + 1]`.
    pub offs: Vec<u32>,
    pub items: Vec<LevelItem>,
    /// Indices in `items` of the saturated records, ascending (usually none).
    pub saturated: Vec<u32>,
    /// A search index over each level's ends: level `l`'s entries are
    /// `skip[skip_offs[l] .. skip_offs[l + 1]]`, entry `q` the end of the last record of its
    /// `q`-th group of `SKIP` (16) records. A range query searches it (a few cached lines)
    /// instead of the records, then scans one group.
    pub skip: Vec<i64>,
    pub skip_offs: Vec<u32>,
}

/// Records per group of the skip index.
pub(crate) const SKIP: usize = 16;

/// An item being built or merged.
#[derive(Clone, Copy, Debug)]
struct Unit {
    start: i64,
    end: i64,
    first: usize,
    last: usize,
    agg: Aggregate,
}

impl Unit {
    /// Whether `next` joins this unit at thresholds `wide` and `gap`: both hold only narrow
    /// spans and the gap between them is narrow.
    #[inline]
    fn joins(&self, next: &Unit, wide: i64, gap: i64) -> bool {
        joins(
            self.agg.longest,
            self.end,
            next.agg.longest,
            next.start,
            wide,
            gap,
        )
    }

    /// Record `it` (not saturated) as a unit whose last span is `last`.
    #[inline(always)]
    fn of_record(it: &LevelItem, last: usize) -> Unit {
        Unit {
            start: it.start,
            end: it.end,
            first: it.first as usize,
            last,
            agg: Aggregate {
                busy: it.busy as i64,
                longest: it.longest as i64,
                name: it.name,
            },
        }
    }

    /// As a stored record.
    #[inline]
    fn record(&self) -> LevelItem {
        LevelItem {
            start: self.start,
            end: self.end,
            first: self.first as u32,
            busy: sat(self.agg.busy),
            longest: sat(self.agg.longest),
            name: self.agg.name,
        }
    }

    #[inline]
    fn absorb(&mut self, next: &Unit) {
        self.end = next.end;
        self.last = next.last;
        self.agg.then(next.agg);
    }

    /// As an item for a query whose spans of `wide` or more stand alone.
    #[inline]
    fn item(&self, wide: i64) -> Item {
        Item::of(
            (self.first as u32, self.last as u32),
            (self.start, self.end, self.agg.busy),
            (self.agg.longest, self.agg.name),
            wide,
        )
    }
}

impl Levels {
    /// Builds levels `ks` (ascending, each with its number of items as [`candidates`]
    /// counts them) of `lane` in one pass over its spans: each level's items are folded
    /// into the next level's as they close, and each written once, straight to its place
    /// among the records. `None` where the counts are not the lane's: then it stores no
    /// level, and is walked, which answers the same; so is an empty lane.
    pub(crate) fn build(lane: &Lane, ks: &[(usize, usize)]) -> Option<Levels> {
        if lane.is_empty() {
            return None;
        }
        let taus: Vec<i64> = ks.iter().map(|&(k, _)| tau(k)).collect();
        let mut offs = Vec::with_capacity(ks.len() + 1);
        offs.push(0u32);
        for &(_, items) in ks {
            let last = *offs.last()? as usize;
            offs.push(u32::try_from(last.checked_add(items)?).ok()?);
        }
        let zero = LevelItem {
            start: 0,
            end: 0,
            first: 0,
            busy: 0,
            longest: 0,
            name: StrId::EMPTY,
        };
        let mut items = vec![zero; *offs.last()? as usize];
        // Where each level's next record goes, and whether each went within its level.
        let mut at: Vec<usize> = offs[..ks.len()].iter().map(|&o| o as usize).collect();
        let mut fits = true;
        let mut open: Vec<Option<Unit>> = vec![None; ks.len()];
        let mut close = |l: usize, open: &mut [Option<Unit>]| {
            let Some(u) = open[l].take() else {
                return;
            };
            match items
                .get_mut(at[l])
                .filter(|_| at[l] < offs[l + 1] as usize)
            {
                Some(slot) => *slot = u.record(),
                None => fits = false,
            }
            at[l] += 1;
            match open.get_mut(l + 1) {
                Some(Some(up)) => up.absorb(&u),
                Some(slot) => *slot = Some(u),
                None => {}
            }
        };
        if !ks.is_empty() && !lane.is_empty() {
            // The finest level's open item lives in locals; a boundary closes it and
            // cascades up through the levels whose threshold the boundary reaches.
            let (start, dur) = (&lane.start[..], &lane.dur[..]);
            let (mut first, mut end, mut prev) = (0usize, lane.end(0), dur[0]);
            let (mut busy, mut longest, mut longest_at) = (dur[0], dur[0], 0usize);
            let fold = |first: usize, last: usize, end: i64, busy, longest, at: usize| Unit {
                start: start[first],
                end,
                first,
                last,
                agg: Aggregate {
                    busy,
                    longest,
                    name: lane.name[at],
                },
            };
            for (i, (&s, &d)) in (start.iter().zip(dur)).enumerate().skip(1) {
                // The boundary's strength (see `strength`), from the previous span's end
                // and duration kept in locals.
                let strength = s.saturating_sub(end).max(d.max(prev) / 2);
                if strength >= taus[0] {
                    open[0] = Some(fold(first, i - 1, end, busy, longest, longest_at));
                    let mut l = 0;
                    while l < taus.len() && taus[l] <= strength {
                        close(l, &mut open);
                        l += 1;
                    }
                    (first, busy, longest, longest_at) = (i, d, d, i);
                } else {
                    busy = busy.saturating_add(d);
                    if d > longest {
                        (longest, longest_at) = (d, i);
                    }
                }
                end = s.saturating_add(d);
                prev = d;
            }
            open[0] = Some(fold(first, lane.len() - 1, end, busy, longest, longest_at));
            for l in 0..ks.len() {
                close(l, &mut open);
            }
        }
        let whole = (at.iter().zip(&offs[1..])).all(|(&a, &end)| a == end as usize);
        if !fits || !whole {
            return None;
        }
        let levels = offs
            .windows(2)
            .map(|w| &items[w[0] as usize..w[1] as usize]);
        let mut skip = Vec::with_capacity(levels.clone().map(|l| l.len().div_ceil(SKIP)).sum());
        let mut skip_offs = Vec::with_capacity(ks.len() + 1);
        skip_offs.push(0u32);
        for l in levels {
            skip.extend(l.chunks(SKIP).map(|g| g[g.len() - 1].end));
            skip_offs.push(skip.len() as u32);
        }
        let saturated = (items.iter().enumerate())
            .filter(|(_, it)| it.busy == SATURATED || it.longest == SATURATED)
            .map(|(j, _)| j as u32)
            .collect();
        Some(Levels {
            ks: ks.iter().map(|&(k, _)| k as u8).collect(),
            offs,
            items,
            saturated,
            skip,
            skip_offs,
        })
    }

    /// The first record of level `l` (index within the level) ending at or after `t`, or
    /// the level's length: a binary search over the skip index, then a scan of one group.
    pub(crate) fn first_ending_at_or_after(&self, l: usize, t: i64) -> usize {
        let items = &self.items[self.offs[l] as usize..self.offs[l + 1] as usize];
        let skip = &self.skip[self.skip_offs[l] as usize..self.skip_offs[l + 1] as usize];
        let q = skip.partition_point(|&e| e < t);
        let from = (q * SKIP).min(items.len());
        let group = &items[from..items.len().min(from + SKIP)];
        from + group
            .iter()
            .position(|it| it.end >= t)
            .unwrap_or(group.len())
    }

    /// Bytes of a lane's level table (this struct, `ks`, `offs`, `skip_offs`) holding
    /// `levels` levels.
    pub(crate) fn table_bytes(levels: usize) -> usize {
        match levels {
            0 => 0,
            l => std::mem::size_of::<Levels>() + l + 8 * (l + 1),
        }
    }

    /// Heap bytes, this struct included (it is boxed).
    pub(crate) fn heap_bytes(&self) -> usize {
        Levels::table_bytes(self.ks.len())
            + self.items.capacity() * ITEM_BYTES
            + self.saturated.capacity() * 4
            + self.skip.capacity() * 8
    }
}

/// Whether a unit ending at `end` whose longest span is `longest` joins the next one (longest
/// span `next_longest`, starting at `next_start`): both hold only spans narrower than `wide`
/// and the gap between them is narrower than `gap`. The one join rule of the merge and the
/// walk, computed without branches.
#[inline(always)]
pub(crate) fn joins(
    longest: i64,
    end: i64,
    next_longest: i64,
    next_start: i64,
    wide: i64,
    gap: i64,
) -> bool {
    // Units do not overlap, so the gap fits in a u64.
    let apart = next_start.wrapping_sub(end) as u64;
    (longest < wide) & (next_longest < wide) & (apart < gap as u64)
}

/// The last index in `a..=b` whose span starts at or before `t` (`lane.start[a] <= t`).
fn last_start_at_most(lane: &Lane, a: usize, b: usize, t: i64) -> usize {
    a + lane.start[a..=b].partition_point(|&s| s <= t) - 1
}

/// Appends the items of `lane` overlapping `[t0, t1]` to `out`, from the records of stored
/// level `l`: copied when `copy` (the query's thresholds are the level's own, so no record
/// joins another), else merged. The result is the span walk's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn query(
    lane: &Lane,
    pyr: &Pyramid,
    lv: &Levels,
    (l, copy): (usize, bool),
    (t0, t1): (i64, i64),
    wide: i64,
    gap: i64,
    out: &mut Vec<Item>,
) {
    let off = lv.offs[l] as usize;
    let items = &lv.items[off..lv.offs[l + 1] as usize];
    let n = lane.len();
    // The first record overlapping the range; the records after it are merged up to the
    // first one ending after t1 (no search for the last).
    let j0 = match items.first() {
        Some(it) if it.end >= t0 => 0,
        _ => lv.first_ending_at_or_after(l, t0),
    };
    if j0 >= items.len() || items[j0].start > t1 {
        return;
    }
    let first_of = |j: usize| items[j].first as usize;
    let last_of = |j: usize| items.get(j + 1).map_or(n - 1, |x| x.first as usize - 1);
    // Spans lo.. overlap the range: the first record may hold spans before it.
    let mut lo = first_of(j0);
    if items[j0].start < t0 && lane.end(lo) < t0 {
        // Record j0 is the first ending at or after t0, so the span is one of its own.
        lo = pyr.first_ending_at_or_after(lane, t0);
        if lane.start[lo] > t1 {
            return;
        }
    }
    // Record j as a unit, cut to spans lo.. and to those starting by t1; from the pyramid
    // when cut or saturated.
    let unit = |j: usize| -> Unit {
        let it = &items[j];
        let (first, last) = (first_of(j), last_of(j));
        let a = lo.max(first);
        let b = if it.end > t1 && lane.start[last] > t1 {
            last_start_at_most(lane, a, last, t1)
        } else {
            last
        };
        if a == first && b == last && it.busy != SATURATED && it.longest != SATURATED {
            Unit::of_record(it, last)
        } else {
            Unit {
                start: lane.start[a],
                end: lane.end(b),
                first: a,
                last: b,
                agg: pyr.aggregate(lane, a, b),
            }
        }
    };
    let mut cur = unit(j0);
    let mut j = j0 + 1;
    if items[j0].end <= t1 {
        // Records are taken whole up to the first one ending after t1, found through the
        // skip index. At the level's own thresholds no record joins another (each boundary
        // between them has a gap of at least τ or a span of at least 2τ on one side): the
        // records in range are the answer, copied.
        // (No search when the level ends by t1, as in a view of the whole trace.)
        let whole = if items[items.len() - 1].end <= t1 {
            items.len()
        } else {
            lv.first_ending_at_or_after(l, t1.saturating_add(1))
        };
        // Saturated records split the run of records merged from their fields.
        let mut sat = lv.saturated.partition_point(|&x| (x as usize) < off + j);
        loop {
            // (The list spans all levels: the next may be past this one.)
            let stop = (lv.saturated.get(sat))
                .map_or(items.len(), |&x| (x as usize - off).min(items.len()));
            j = if copy {
                copy_records(items, j..stop.min(whole), &mut cur, wide, out)
            } else {
                merge_records(items, j..stop.min(whole), &mut cur, wide, gap, out)
            };
            cur.last = last_of(j - 1);
            // Record j is the one ending after t1, a saturated one, or the end.
            if j == items.len() || items[j].start > t1 {
                break;
            }
            let u = unit(j);
            cur.last = u.first - 1;
            if cur.joins(&u, wide, gap) {
                cur.absorb(&u);
            } else {
                out.push(cur.item(wide));
                cur = u;
            }
            if items[j].end > t1 {
                break;
            }
            (j, sat) = (j + 1, sat + 1);
        }
    }
    out.push(cur.item(wide));
}

/// Merges the records `range` (none saturated, all ending by the query's end) into `cur`,
/// the output item being grown, appending every item it closes to `out`. Returns
/// `range.end`. `cur.last` is left for the caller to set.
///
/// The hot loop of a zoomed-out frame. The current item lives in locals: kept in a `Unit`,
/// it was spilled to the stack.
fn merge_records(
    items: &[LevelItem],
    range: std::ops::Range<usize>,
    cur: &mut Unit,
    wide: i64,
    gap: i64,
    out: &mut Vec<Item>,
) -> usize {
    let (mut start, mut end, mut first) = (cur.start, cur.end, cur.first as u32);
    let (mut busy, mut longest, mut name) = (cur.agg.busy, cur.agg.longest, cur.agg.name);
    let records = &items[range.clone()];
    // At most one item per record.
    append(out, records.len(), |slots| {
        for it in records {
            let (s, l) = (it.start, it.longest as i64);
            let joins = joins(longest, end, l, s, wide, gap);
            let span = (first, it.first - 1);
            slots.put(
                Item::of(span, (start, end, busy), (longest, name), wide),
                !joins,
            );
            first = select_unpredictable(joins, first, it.first);
            start = select_unpredictable(joins, start, s);
            end = it.end;
            busy = select_unpredictable(joins, busy, 0) + it.busy as i64;
            let take = !joins | (l > longest);
            name = select_unpredictable(take, it.name, name);
            longest = select_unpredictable(take, l, longest);
        }
    });
    *cur = Unit {
        start,
        end,
        first: first as usize,
        last: cur.last, // set by the caller
        agg: Aggregate {
            busy,
            longest,
            name,
        },
    };
    range.end
}

/// [`merge_records`] when no record joins another: `cur` and then records `range` but the
/// last are closed items, and the last record becomes `cur`. Returns `range.end`.
fn copy_records(
    items: &[LevelItem],
    range: std::ops::Range<usize>,
    cur: &mut Unit,
    wide: i64,
    out: &mut Vec<Item>,
) -> usize {
    let records = &items[range.clone()];
    let Some(last) = records.last() else {
        return range.end;
    };
    cur.last = records[0].first as usize - 1;
    out.push(cur.item(wide));
    out.extend(
        (records.iter().zip(&records[1..]))
            .map(|(it, next)| Unit::of_record(it, next.first as usize - 1).item(wide)),
    );
    // Its last span is set by the caller, who knows where the level ends.
    *cur = Unit::of_record(last, cur.last);
    range.end
}
