//! The span walk: a lane's items read from its spans, whole pyramid blocks taken at once
//! where they fit. Used where no stored level is fine enough (zoomed in), and the reference
//! the stored levels are tested against. On x86-64 CPUs with AVX2, blocks of spans go
//! through vector code (`arch/x86_64/avx2.rs`) with the same answer.

use std::hint::select_unpredictable;

use trace_model::Lane;

#[cfg(target_arch = "x86_64")]
use crate::arch::avx2;
use crate::item::{append, Item};
use crate::levels::joins;
use crate::pyramid::{Blocks, Pyramid, FANOUT, SATURATED};

/// A block boundary tries to absorb whole pyramid blocks only when the open item already
/// holds this many spans. A short item means visible spans or gaps nearby, where a block
/// rarely fits, and each try reads the pyramid (a cache miss or two per lane); a missed
/// chance costs one block walked span by span.
const ABSORB_AFTER: usize = 8;

/// Appends the items of `lane` overlapping `[t0, t1]` to `out`: from the first span in
/// range, spans of `wide` or more stand alone, and runs of narrower spans with gaps under
/// `gap` merge, absorbing whole pyramid blocks where a block is aligned, narrow, gap-free
/// and inside the range.
pub(crate) fn walk(
    lane: &Lane,
    pyr: &Pyramid,
    (t0, t1): (i64, i64),
    (wide, gap): (i64, i64),
    out: &mut Vec<Item>,
) {
    let (start, dur, names) = (&lane.start[..], &lane.dur[..], &lane.name[..]);
    let n = start.len().min(dur.len()).min(names.len());
    let mut i = pyr.first_ending_at_or_after(lane, t0);
    if i >= n || start[i] > t1 {
        return;
    }
    // Vector blocks where the CPU has them and no sum can overflow (the vector code adds
    // without saturating).
    #[cfg(target_arch = "x86_64")]
    let avx2 = avx2::Avx2::detect().filter(|_| pyr.sums_fit);
    // The open item: spans first..i.
    let (mut first, mut from, mut end) = (i, start[i], lane.end(i));
    let (mut busy, mut longest, mut name) = (dur[i], dur[i], names[i]);
    i += 1;
    while i < n {
        // At a block boundary the open item may absorb whole blocks.
        if i.is_multiple_of(FANOUT)
            && i - first >= ABSORB_AFTER
            && joins(longest, end, dur[i], start[i], wide, gap)
        {
            if let Some((level, b)) = absorbable(pyr, i, wide, gap, t1) {
                let blk = &pyr.levels[level];
                end = blk.last_end[b];
                busy = busy.saturating_add(blk.busy[b]);
                if blk.max_dur[b] as i64 > longest {
                    (longest, name) = (blk.max_dur[b] as i64, blk.name[b]);
                }
                i = n.min(i + Pyramid::span_count(level));
                continue;
            }
        }
        // Spans i..lim: up to the next block boundary, and none starting after t1, so the
        // loop over them checks neither.
        let mut lim = n.min((i / FANOUT + 1) * FANOUT);
        let last = start[lim - 1] > t1;
        if last {
            lim = i + start[i..lim].partition_point(|&s| s <= t1);
        }
        // The block in vector code where it can go, else in the scalar loop.
        #[cfg(target_arch = "x86_64")]
        let vector = match avx2.filter(|_| lim > i && i + (lim - i).next_multiple_of(4) <= n) {
            Some(avx2) => {
                let mut open = avx2::Open {
                    first: first as u32,
                    from,
                    end,
                    busy,
                    longest,
                    name,
                };
                let cols = (start, dur, names);
                avx2::walk_block(avx2, cols, i..lim, (wide, gap), &mut open, out);
                (first, from, end) = (open.first as usize, open.from, open.end);
                (busy, longest, name) = (open.busy, open.longest, open.name);
                #[cfg(test)]
                tests::VECTOR_BLOCKS.with(|c| c.set(c.get() + 1));
                true
            }
            None => false,
        };
        #[cfg(not(target_arch = "x86_64"))]
        let vector = false;
        if !vector {
            // At most one item per span.
            append(out, lim - i, |slots| {
                for i in i..lim {
                    let (s, d) = (start[i], dur[i]);
                    let joins = joins(longest, end, d, s, wide, gap);
                    let span = (first as u32, (i - 1) as u32);
                    slots.put(
                        Item::of(span, (from, end, busy), (longest, name), wide),
                        !joins,
                    );
                    first = select_unpredictable(joins, first, i);
                    from = select_unpredictable(joins, from, s);
                    end = s.saturating_add(d);
                    busy = select_unpredictable(joins, busy, 0).saturating_add(d);
                    let take = !joins | (d > longest);
                    name = select_unpredictable(take, names[i], name);
                    longest = select_unpredictable(take, d, longest);
                }
            });
        }
        i = lim;
        if last {
            break;
        }
    }
    let span = (first as u32, (i - 1) as u32);
    out.push(Item::of(span, (from, end, busy), (longest, name), wide));
}

/// The largest block starting at span `i` whose spans are all narrower than `wide`, whose
/// gaps are all narrower than `gap`, and which ends by `t1`: `(level, block)`. A larger
/// block fits only if its first level-0 block does, so that one is tried first.
#[inline]
fn absorbable(pyr: &Pyramid, i: usize, wide: i64, gap: i64, t1: i64) -> Option<(usize, usize)> {
    let fits = |_: usize, b: &Blocks, k: usize| {
        b.max_dur[k] != SATURATED
            && (b.max_dur[k] as i64) < wide
            && b.max_gap[k] != SATURATED
            && (b.max_gap[k] as i64) < gap
            && b.last_end[k] <= t1
    };
    let l0 = pyr.levels.first()?;
    let b0 = i / FANOUT;
    if b0 >= l0.len() || !fits(0, l0, b0) {
        return None;
    }
    pyr.largest_fitting(i, fits)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use proptest::prelude::*;
    use trace_model::StrId;

    use super::*;

    thread_local! {
        /// Blocks the walk gave to the vector code on this thread.
        pub(super) static VECTOR_BLOCKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// A lane from (gap, dur, name) triples: only the columns the walk reads.
    fn lane(spec: &[(i64, i64, u32)]) -> Lane {
        let ends = spec.iter().scan(0, |t, &(gap, dur, _)| {
            *t += gap + dur;
            Some(*t)
        });
        Lane {
            start: ends.zip(spec).map(|(e, s)| e - s.1).collect(),
            dur: spec.iter().map(|s| s.1).collect(),
            name: spec.iter().map(|s| StrId(s.2)).collect(),
            ..Lane::default()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The vector walk returns the scalar walk's items: random lanes whose gaps and
        /// durations straddle the thresholds, cut anywhere, so blocks of every length and
        /// alignment, lane ends and absorbed pyramid blocks all occur. On a CPU without AVX2
        /// both walks are scalar and this checks nothing (it says so on stderr).
        #[test]
        fn vector_and_scalar_walks_agree(
            spec in prop::collection::vec((0i64..12, 0i64..12, 0u32..4), 1..600),
            (wide, gap) in (1i64..14, 1i64..14),
            (from, len) in (0i64..4000, 0i64..8000),
        ) {
            if avx2::Avx2::detect().is_none() {
                eprintln!("no AVX2 on this CPU: the vector walk is not tested");
                return Ok(());
            }
            let lane = lane(&spec);
            let vector = Pyramid::build(&lane);
            let scalar = Pyramid { sums_fit: false, ..vector.clone() };
            prop_assert!(vector.sums_fit);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let range = (from, from + len);
            walk(&lane, &scalar, range, (wide, gap), &mut a);
            let before = VECTOR_BLOCKS.with(|c| c.get());
            walk(&lane, &vector, range, (wide, gap), &mut b);
            prop_assert_eq!(a, b);
            // The vector code ran wherever a block could go to it (else this compared the
            // scalar walk with itself).
            let stepped = spec.len() > 40 && len > 200 && (from as usize) < spec.len() * 5;
            prop_assert!(!stepped || VECTOR_BLOCKS.with(|c| c.get()) > before);
        }
    }
}
