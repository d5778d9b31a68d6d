//! Property tests: the level-of-detail walk against a brute-force scan of random lanes.

use proptest::prelude::*;
use trace_index::{hit_test, query_lane, Detail, Item, Pyramid};
use trace_model::{Lane, StrId};

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
        let pyr = Pyramid::build(&lane);
        let total = lane.start.last().map_or(1, |_| lane.end(lane.len() - 1)).max(1);
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let t0 = (lo * total as f64) as i64 + margin;
        let t1 = ((hi * total as f64) as i64).max(t0);
        let width = px as f64;
        let detail = Detail::new(((t1 - t0).max(1) as f64) / width);
        let mut items = Vec::new();
        query_lane(&lane, &pyr, t0, t1, detail, &mut items);

        // Brute force: the spans overlapping [t0, t1].
        let overlapping: Vec<usize> =
            (0..lane.len()).filter(|&i| lane.start[i] <= t1 && lane.end(i) >= t0).collect();
        if overlapping.is_empty() {
            prop_assert!(items.is_empty());
            return Ok(());
        }
        // Items are contiguous index ranges starting at the first overlapping span.
        let mut next = overlapping[0];
        for it in &items {
            let (first, last) = match *it {
                Item::Span(i) => (i as usize, i as usize),
                Item::Merged(m) => (m.first as usize, m.last as usize),
            };
            prop_assert_eq!(first, next, "items must be contiguous, in order");
            prop_assert!(last >= first);
            if let Item::Merged(m) = *it {
                // A box covers its spans exactly, and holds no visible span or visible gap.
                prop_assert_eq!(m.start, lane.start[first]);
                prop_assert_eq!(m.end, (first..=last).map(|k| lane.end(k)).max().unwrap());
                prop_assert_eq!(m.busy, (first..=last).map(|k| lane.dur[k]).sum::<i64>());
                for k in first..=last {
                    prop_assert!(lane.dur[k] < detail.min_dur(), "a visible span hid in a box");
                    if k > first {
                        prop_assert!(lane.start[k] - lane.end(k - 1) < detail.min_gap());
                    }
                }
                let longest = (first..=last).map(|k| lane.dur[k]).max().unwrap();
                prop_assert!((first..=last).any(|k| lane.dur[k] == longest && lane.name[k] == m.name));
            } else {
                prop_assert!(lane.dur[first] >= detail.min_dur());
            }
            next = last + 1;
        }
        prop_assert!(next > *overlapping.last().unwrap(), "every overlapping span is covered");
        // The pixel budget: about one item per pixel, at most two.
        prop_assert!(items.len() as f64 <= 2.0 * width + 4.0, "{} items for {} px", items.len(), px);
    }

    #[test]
    fn hit_test_finds_the_span_under_the_time(spec in spec(), f in 0.0f64..1.0, tol in 0i64..50) {
        let lane = lane(&spec);
        if lane.is_empty() { return Ok(()); }
        let total = lane.end(lane.len() - 1);
        let t = (f * total as f64) as i64;
        let got = hit_test(&lane, t, tol);
        // Brute force: the nearest span within the tolerance, preferring one containing t.
        let dist = |i: usize| {
            let (s, e) = (lane.start[i], lane.end(i));
            if t < s { s - t } else if t < e || (s == e && t == s) { 0 } else { t - e + 1 }
        };
        let best = (0..lane.len()).map(dist).filter(|&d| d <= tol).min();
        prop_assert_eq!(got.map(|h| h.distance), best);
        if let Some(h) = got {
            prop_assert_eq!(dist(h.index), h.distance);
        }
    }
}

#[test]
fn a_long_dense_lane_collapses_to_a_few_items() {
    // 1M spans of 10 ns every 20 ns on 1920 px: one box, found in few steps.
    let spec: Vec<(i64, i64, u32)> = (0..1_000_000).map(|i| (10, 10, (i % 5) as u32)).collect();
    let lane = lane(&spec);
    let pyr = Pyramid::build(&lane);
    let total = lane.end(lane.len() - 1);
    let mut items = Vec::new();
    query_lane(
        &lane,
        &pyr,
        0,
        total,
        Detail::new(total as f64 / 1920.0),
        &mut items,
    );
    assert_eq!(items.len(), 1);
    let Item::Merged(m) = items[0] else { panic!() };
    assert_eq!(m.count(), 1_000_000);
    assert_eq!(m.busy, 10_000_000);
}
