//! Property tests: level-of-detail queries against a brute-force scan of random lanes, and
//! the stored levels against the span walk.

use proptest::prelude::*;
use trace_model::{Lane, StrId};

use crate::detail::{tau, LEVELS};
use crate::lane::{LaneIndex, Plan};
use crate::levels::{self, Levels};
use crate::pyramid::Pyramid;
use crate::{Detail, Item};

/// A lane from (gap, dur, name) triples: spans laid end to end with the given gaps.
fn lane(spec: &[(i64, i64, u32)]) -> Lane {
    let mut l = Lane::default();
    let mut t = 0i64;
    for &(gap, dur, name) in spec {
        t += gap;
        l.start.push(t);
        l.dur.push(dur);
        l.name.push(StrId(name));
        l.cat.push(StrId(0));
        l.args.push(Default::default());
        l.flags.push(0);
        t += dur;
    }
    l
}

/// Durations and gaps spanning many scales, so every zoom level sees both kinds.
fn scale() -> impl Strategy<Value = i64> {
    prop_oneof![0i64..3, 0i64..100, 0i64..10_000, 0i64..1_000_000]
}

fn spec() -> impl Strategy<Value = Vec<(i64, i64, u32)>> {
    prop::collection::vec((scale(), scale(), 0u32..8), 0..3000)
}

/// Scales up to 20 s, past what the summaries store in 32 bits (4.3 s), and dense runs.
fn wide_scale() -> impl Strategy<Value = i64> {
    prop_oneof![0i64..3, 0i64..1000, 0i64..20_000_000_000]
}

fn wide_spec() -> impl Strategy<Value = Vec<(i64, i64, u32)>> {
    prop::collection::vec((wide_scale(), wide_scale(), 0u32..8), 0..2000)
}

/// A lane index with every level (the budget would keep fewer): queries use levels
/// wherever the resolution allows.
fn all_levels(lane: &Lane) -> LaneIndex {
    let every: Vec<usize> = (0..LEVELS).collect();
    LaneIndex::with_levels(lane, &every)
}

/// The items of `lane` over `[t0, t1]` by walking its spans, after checking that stored
/// levels (every one, whether copied or merged) give the same.
fn walked_matching_levels(
    lane: &Lane,
    (t0, t1): (i64, i64),
    detail: Detail,
) -> Result<Vec<Item>, TestCaseError> {
    let mut walked = Vec::new();
    LaneIndex::with_levels(lane, &[]).query(lane, t0, t1, detail, &mut walked);
    let mut leveled = Vec::new();
    all_levels(lane).query(lane, t0, t1, detail, &mut leveled);
    prop_assert_eq!(&leveled, &walked);
    Ok(walked)
}

/// A range and resolution from fractions of the lane's extent.
fn view(lane: &Lane, a: f64, b: f64, px: u32, margin: i64) -> (i64, i64, Detail) {
    let total = lane
        .start
        .last()
        .map_or(1, |_| lane.end(lane.len() - 1))
        .max(1);
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let t0 = (lo * total as f64) as i64 + margin;
    let t1 = ((hi * total as f64) as i64).max(t0);
    (t0, t1, Detail::new(((t1 - t0).max(1) as f64) / px as f64))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn items_cover_every_overlapping_span_exactly_once(
        spec in spec(),
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
        px in 1u32..3000,
        margin in -1000i64..1000,
    ) {
        let lane = lane(&spec);
        let (t0, t1, detail) = view(&lane, a, b, px, margin);
        let width = px as f64;
        for index in [LaneIndex::with_levels(&lane, &[]), LaneIndex::unbudgeted(&lane), all_levels(&lane)] {
            let mut items = Vec::new();
            index.query(&lane, t0, t1, detail, &mut items);
            check(&lane, t0, t1, detail, width, &items)?;
        }
    }

    #[test]
    fn the_pyramids_pass_counts_each_boundary(spec in prop_oneof![spec(), wide_spec()]) {
        // One pass builds the pyramid and counts the boundaries: the same pyramid as
        // without counting, and the histogram of the boundaries taken one by one.
        let lane = lane(&spec);
        let mut hist = vec![0; LEVELS];
        let counted = Pyramid::build_counting::<true>(&lane, &mut hist);
        prop_assert_eq!(format!("{counted:?}"), format!("{:?}", Pyramid::build(&lane)));
        prop_assert_eq!(hist, levels::histogram(&lane));
        // Every level's records land where the counts say; counts that are not the lane's
        // store nothing (the lane is walked), never a panic.
        let every: Vec<usize> = (0..LEVELS).collect();
        let counts = levels::with_counts(&lane, &every);
        prop_assert_eq!(Levels::build(&lane, &counts).is_some(), !lane.is_empty());
        if let Some(&(k, n)) = counts.iter().find(|c| c.1 > 1) {
            for wrong in [n - 1, n + 1] {
                prop_assert!(Levels::build(&lane, &[(k, wrong)]).is_none());
            }
        }
    }

    #[test]
    fn stored_levels_give_the_same_items_as_the_walk(
        spec in prop_oneof![spec(), wide_spec()],
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
        px in 1u32..3000,
        margin in -1000i64..1000,
        gap_px in prop_oneof![Just(1.0), 0.5f64..8.0],
        min_px in prop_oneof![Just(2.0), 0.5f64..8.0],
        snap in any::<bool>(),
    ) {
        // Snapped with the default thresholds, the stored level's records are copied;
        // otherwise merged from a finer level.
        let lane = lane(&spec);
        let (t0, t1, mut detail) = view(&lane, a, b, px, margin);
        detail.gap_px = gap_px;
        detail.min_px = min_px;
        detail.snap = snap;
        let walked = walked_matching_levels(&lane, (t0, t1), detail)?;
        check(&lane, t0, t1, detail, px as f64, &walked)?;
    }

    #[test]
    fn moving_a_lane_in_time_moves_its_items(
        spec in prop_oneof![spec(), wide_spec()],
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
        px in 1u32..3000,
        offset in prop_oneof![-(1i64 << 62)..(1i64 << 62), Just(i64::MIN / 2), Just(-1)],
    ) {
        // Timestamps may be negative or far from zero (a trace's clock is its own): the
        // same lane shifted in time, queried over the shifted range, gives the same items
        // shifted, from the walk and from stored levels alike.
        let lane0 = lane(&spec);
        let mut moved = lane0.clone();
        for s in &mut moved.start {
            *s += offset;
        }
        let (t0, t1, detail) = view(&lane0, a, b, px, 0);
        for index in [LaneIndex::with_levels(&lane0, &[]), all_levels(&lane0)] {
            let mut here = Vec::new();
            index.query(&lane0, t0, t1, detail, &mut here);
            for it in &mut here {
                (it.start, it.end) = (it.start + offset, it.end + offset);
            }
            let moved_index = if index.has_levels() {
                all_levels(&moved)
            } else {
                LaneIndex::with_levels(&moved, &[])
            };
            let mut there = Vec::new();
            moved_index.query(&moved, t0 + offset, t1 + offset, detail, &mut there);
            prop_assert_eq!(&there, &here);
        }
    }

    #[test]
    fn long_lanes_answer_like_short_ones(
        spec in prop::collection::vec(
            (prop_oneof![9 => 0i64..3, 1 => 0i64..5000], prop_oneof![9 => 0i64..3, 1 => 0i64..5000], 0u32..8),
            3000..9000,
        ),
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
        px in prop_oneof![1u32..100, 100u32..20_000],
    ) {
        // Thousands of spans (or stored items) in range: the walk and the merge fill the
        // output a chunk at a time, and whole blocks absorbed by the walk cross chunks.
        let lane = lane(&spec);
        let (t0, t1, detail) = view(&lane, a, b, px, 0);
        let walked = walked_matching_levels(&lane, (t0, t1), detail)?;
        check(&lane, t0, t1, detail, px as f64, &walked)?;
    }

    #[test]
    fn thresholds_are_exact(
        r in 1i64..1000,
        picks in prop::collection::vec((0usize..7, 0usize..7, 0u32..8), 0..2000),
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
        snap in any::<bool>(),
    ) {
        // Gaps and durations at, just under and just over the thresholds (r ns per pixel,
        // or the level threshold it snaps to: visible gaps are g or more, visible spans w
        // or more).
        let mut detail = Detail::new(r as f64);
        detail.snap = snap;
        let (g, w) = (detail.min_gap(), detail.min_dur());
        let near = [0, 1, g - 1, g, g + 1, w - 1, w];
        let spec: Vec<(i64, i64, u32)> =
            picks.iter().map(|&(g, d, name)| (near[g], near[d], name)).collect();
        let lane = lane(&spec);
        let (t0, t1, _) = view(&lane, a, b, 1, 0);
        let walked = walked_matching_levels(&lane, (t0, t1), detail)?;
        check(&lane, t0, t1, detail, ((t1 - t0) / r + 1) as f64, &walked)?;
    }

    #[test]
    fn snapping_is_at_least_as_detailed_and_at_most_a_step_finer(r in 1.0f64..1e15) {
        let mut detail = Detail::new(r);
        let snapped = detail.resolution();
        let step = if r < 4.0 { 2.0 } else { 2f64.sqrt() };
        prop_assert!(snapped <= r && snapped > r / step, "{} snapped to {}", r, snapped);
        // Every resolution in a step gives the same thresholds; off, they follow r.
        prop_assert_eq!(Detail::new(snapped).min_gap(), detail.min_gap());
        detail.snap = false;
        prop_assert_eq!(detail.resolution(), r);
    }

    #[test]
    fn a_lane_picks_the_level_its_stored_levels_would(
        spec in spec(),
        ks in prop::collection::btree_set(0usize..LEVELS, 0..12),
        wide in 0i64..i64::MAX,
        gap in 0i64..i64::MAX,
    ) {
        // The lane's set of stored levels answers like a scan of the stored level numbers:
        // the coarsest level whose threshold τ is at most `gap` and `wide / 2`.
        let lane = lane(&spec);
        let ks: Vec<usize> = ks.into_iter().collect();
        let index = LaneIndex::with_levels(&lane, &ks);
        let (wide, gap) = (wide >> (gap % 63), gap >> (wide % 63));
        // An empty lane stores no level and is walked.
        let scanned = (!lane.is_empty())
            .then(|| ks.iter().rposition(|&k| tau(k) <= gap.min(wide / 2)))
            .flatten();
        let planned = match index.plan(wide, gap) {
            Plan::Copy(l) | Plan::Merge(l) => Some(l),
            Plan::Walk => None,
        };
        prop_assert_eq!(planned, scanned);
    }
}

#[test]
fn an_empty_lane_stores_no_levels() {
    // The property above draws an empty lane once in a few thousand cases: pin it.
    let lane = lane(&[]);
    let every: Vec<usize> = (0..LEVELS).collect();
    assert!(Levels::build(&lane, &levels::with_counts(&lane, &every)).is_none());
}

#[test]
fn a_long_dense_lane_collapses_to_a_few_items() {
    // 1M spans of 10 ns every 20 ns on 1920 px: one box, found in few steps.
    let spec: Vec<(i64, i64, u32)> = (0..1_000_000).map(|i| (10, 10, (i % 5) as u32)).collect();
    let lane = lane(&spec);
    let total = lane.end(lane.len() - 1);
    for index in [
        LaneIndex::with_levels(&lane, &[]),
        LaneIndex::unbudgeted(&lane),
    ] {
        let mut items = Vec::new();
        let detail = Detail::new(total as f64 / 1920.0);
        index.query(&lane, 0, total, detail, &mut items);
        assert_eq!(items.len(), 1);
        let m = items[0];
        assert!(m.merged);
        assert_eq!(m.count(), 1_000_000);
        assert_eq!(m.busy, 10_000_000);
    }
}

/// Checks one query's items against a brute-force scan of the lane.
fn check(
    lane: &Lane,
    t0: i64,
    t1: i64,
    detail: Detail,
    width: f64,
    items: &[Item],
) -> Result<(), TestCaseError> {
    // Brute force: the spans overlapping [t0, t1].
    let overlapping: Vec<usize> = (0..lane.len())
        .filter(|&i| lane.start[i] <= t1 && lane.end(i) >= t0)
        .collect();
    if overlapping.is_empty() {
        prop_assert!(items.is_empty());
        return Ok(());
    }
    // Items are contiguous index ranges starting at the first overlapping span.
    let mut next = overlapping[0];
    for it in items {
        let (first, last) = (it.first as usize, it.last as usize);
        prop_assert_eq!(first, next, "items must be contiguous, in order");
        prop_assert!(last >= first);
        // Every item covers its spans exactly and names its first longest span.
        prop_assert_eq!(it.start, lane.start[first]);
        prop_assert_eq!(it.end, (first..=last).map(|k| lane.end(k)).max().unwrap());
        prop_assert_eq!(it.busy, (first..=last).map(|k| lane.dur[k]).sum::<i64>());
        let longest = (first..=last).map(|k| lane.dur[k]).max().unwrap();
        let named = (first..=last).find(|&k| lane.dur[k] == longest).unwrap();
        prop_assert_eq!(it.name, lane.name[named]);
        if it.merged {
            // A box holds no visible span or visible gap.
            for k in first..=last {
                prop_assert!(
                    lane.dur[k] < detail.min_dur(),
                    "a visible span hid in a box"
                );
                if k > first {
                    prop_assert!(lane.start[k] - lane.end(k - 1) < detail.min_gap());
                }
            }
        } else {
            prop_assert_eq!(first, last);
            prop_assert!(lane.dur[first] >= detail.min_dur());
        }
        next = last + 1;
    }
    prop_assert_eq!(
        next,
        *overlapping.last().unwrap() + 1,
        "exactly the overlapping spans"
    );
    // The pixel budget: items are separated by a visible gap or are visible spans, so at
    // most one per visible gap and one per visible span fit the range (2 per 1 px at the
    // default 1-px gaps and 2-px spans).
    // Snapping makes the pixels (up to 2x) smaller.
    let width = width * detail.ns_per_px.max(1.0) / detail.resolution().max(1.0);
    let budget = width / detail.gap_px + width / detail.min_px + 4.0;
    prop_assert!(
        items.len() as f64 <= budget,
        "{} items for {} px",
        items.len(),
        width
    );
    Ok(())
}

#[test]
fn a_lane_whose_last_end_saturates_answers_like_the_model() {
    // The last span's end saturates (the model keeps i64::MAX): sums and ends must saturate
    // too, not wrap.
    let mut lane = lane(&[(0, 10, 0), (40, 1000, 1)]);
    for s in &mut lane.start {
        *s += i64::MAX - 100;
    }
    assert_eq!(lane.end(1), i64::MAX);
    let index = LaneIndex::with_levels(&lane, &[]);
    for r in [1.0, 1e3, 1e18] {
        let mut items = Vec::new();
        let detail = Detail::new(r);
        index.query(&lane, i64::MIN, i64::MAX, detail, &mut items);
        check(&lane, i64::MIN, i64::MAX, detail, 1e6, &items).unwrap();
    }
}
