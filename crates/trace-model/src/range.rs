//! What a time range holds: the counter and async statistics of a range. A span is
//! clipped to a range by the one rule in [`clip_span`](crate::clip_span).

use std::collections::BTreeMap;

use crate::asyncs::async_flags;
use crate::clip::clip_span;
use crate::event_kinds::CounterSeries;
use crate::strings::StrId;
use crate::trace::Trace;

impl CounterSeries {
    /// The value at time `t`: that of the last sample at or before it (`None` before the
    /// first sample). O(log samples).
    pub fn value_at(&self, t: i64) -> Option<f64> {
        let i = self.ts.partition_point(|&x| x <= t);
        i.checked_sub(1).map(|i| self.values[i])
    }
}

/// One counter series over a range (see [`Trace::counter_range_stats`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CounterRangeStats {
    /// Index into [`Trace::counters`].
    pub series: u32,
    /// How many values the statistics cover: the samples in the range, and the value
    /// carried in from before it.
    pub values: u64,
    /// The smallest, largest and mean of those values.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// See `min`.
    pub mean: f64,
    /// The value at the range's start ([`CounterSeries::value_at`]).
    pub at_start: Option<f64>,
    /// The value at the range's end.
    pub at_end: Option<f64>,
}

/// The async slices of one name over a range, each clipped to it (see
/// [`Trace::async_range_stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncRangeStats {
    /// The slices' name.
    pub name: StrId,
    /// How many slices of the name the range holds.
    pub count: u64,
    /// The sum of their parts in the range.
    pub total_ns: i64,
    /// The shortest part.
    pub min_ns: i64,
    /// The longest part.
    pub max_ns: i64,
}

impl Trace {
    /// Every counter series with a value in `[from, to]`, in series order: min, max and mean
    /// of the value carried in at `from` and the samples up to and including `to` (a
    /// counter holds its value until the next sample, so the value at `from` counts too).
    /// O(series × log samples + samples in range).
    pub fn counter_range_stats(&self, from: i64, to: i64) -> Vec<CounterRangeStats> {
        let mut out = Vec::new();
        for (k, c) in self.counters.iter().enumerate() {
            let i = c.ts.partition_point(|&x| x < from);
            let j = c.ts.partition_point(|&x| x <= to).max(i);
            let inside = c
                .value_at(from)
                .into_iter()
                .chain(c.values[i..j].iter().copied());
            let (mut n, mut sum, mut min, mut max) = (0u64, 0.0, f64::INFINITY, f64::NEG_INFINITY);
            for v in inside {
                (n, sum, min, max) = (n + 1, sum + v, min.min(v), max.max(v));
            }
            if n == 0 {
                continue;
            }
            out.push(CounterRangeStats {
                series: k as u32,
                values: n,
                min,
                max,
                mean: sum / n as f64,
                at_start: c.value_at(from),
                at_end: c.value_at(to),
            });
        }
        out
    }

    /// The async slices in `[from, to)` grouped by name, by name text: count, and the
    /// total, shortest and longest of their parts in the range ([`clip_span`]). Async
    /// instants (`n` events) are left out. O(async slices).
    pub fn async_range_stats(&self, from: i64, to: i64) -> Vec<AsyncRangeStats> {
        let mut by_name: BTreeMap<&str, AsyncRangeStats> = BTreeMap::new();
        for x in &self.async_slices {
            if x.flags & async_flags::INSTANT != 0 {
                continue;
            }
            let Some(d) = clip_span(x.start, x.end, from, to) else {
                continue;
            };
            let e = by_name.entry(self.str(x.name)).or_insert(AsyncRangeStats {
                name: x.name,
                count: 0,
                total_ns: 0,
                min_ns: i64::MAX,
                max_ns: i64::MIN,
            });
            e.count += 1;
            e.total_ns += d;
            e.min_ns = e.min_ns.min(d);
            e.max_ns = e.max_ns.max(d);
        }
        by_name.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_bytes;

    #[test]
    fn spans_are_cut_at_the_edges_of_a_range() {
        let (a, b) = (100, 200);
        // Inside, straddling one edge, straddling both.
        assert_eq!(clip_span(120, 150, a, b), Some(30));
        assert_eq!(clip_span(50, 150, a, b), Some(50));
        assert_eq!(clip_span(150, 250, a, b), Some(50));
        assert_eq!(clip_span(0, 300, a, b), Some(100));
        // Touching an edge from outside shares no time: out.
        assert_eq!(clip_span(50, 100, a, b), None);
        assert_eq!(clip_span(200, 250, a, b), None);
        // Zero-length spans: in at the start, out at the end, as a time in [a, b).
        assert_eq!(clip_span(100, 100, a, b), Some(0));
        assert_eq!(clip_span(199, 199, a, b), Some(0));
        assert_eq!(clip_span(200, 200, a, b), None);
        assert_eq!(clip_span(99, 99, a, b), None);
        // An empty range holds nothing, not even a zero-length span at its time.
        assert_eq!(clip_span(100, 100, 100, 100), None);
        assert_eq!(clip_span(0, 300, 100, 100), None);
        // The whole line.
        assert_eq!(clip_span(5, 5, i64::MIN, i64::MAX), Some(0));
    }

    const COUNTERS: &[u8] = br#"[
        {"name":"mem","ph":"C","ts":10,"pid":1,"args":{"bytes":4}},
        {"name":"mem","ph":"C","ts":20,"pid":1,"args":{"bytes":8}},
        {"name":"mem","ph":"C","ts":30,"pid":1,"args":{"bytes":2}},
        {"name":"late","ph":"C","ts":50,"pid":1,"args":{"value":7}}
    ]"#;

    #[test]
    fn a_counter_holds_its_value_until_the_next_sample() {
        let t = load_bytes(COUNTERS).unwrap();
        let mem = &t.counters()[0];
        assert_eq!(t.str(mem.key), "bytes");
        assert_eq!(mem.value_at(9_999), None, "before the first sample");
        assert_eq!(mem.value_at(10_000), Some(4.0));
        assert_eq!(mem.value_at(19_999), Some(4.0));
        assert_eq!(mem.value_at(20_000), Some(8.0));
        assert_eq!(mem.value_at(i64::MAX), Some(2.0));
    }

    #[test]
    fn counter_statistics_count_the_value_carried_in() {
        let t = load_bytes(COUNTERS).unwrap();
        // [15, 25] µs: 4 carried in, 8 sampled inside.
        let s = t.counter_range_stats(15_000, 25_000);
        assert_eq!(s.len(), 1, "`late` has no value yet: {s:?}");
        let m = &s[0];
        assert_eq!((m.series, m.values), (0, 2));
        assert_eq!((m.min, m.max, m.mean), (4.0, 8.0, 6.0));
        assert_eq!((m.at_start, m.at_end), (Some(4.0), Some(8.0)));
        // A range before any sample has no statistics; one ending on a sample takes it.
        assert!(t.counter_range_stats(0, 9_999).is_empty());
        let edge = t.counter_range_stats(0, 10_000);
        assert_eq!((edge[0].values, edge[0].at_start), (1, None));
        // Every series is there: no cap.
        assert_eq!(t.counter_range_stats(0, 60_000).len(), 2);
    }

    #[test]
    fn async_statistics_clip_like_spans() {
        let t = load_bytes(
            br#"[
            {"name":"load","ph":"b","id":1,"ts":0,"pid":1,"tid":1},
            {"name":"load","ph":"e","id":1,"ts":10,"pid":1,"tid":1},
            {"name":"load","ph":"b","id":2,"ts":20,"pid":1,"tid":1},
            {"name":"load","ph":"e","id":2,"ts":40,"pid":1,"tid":1},
            {"name":"blip","ph":"b","id":3,"ts":30,"pid":1,"tid":1},
            {"name":"blip","ph":"e","id":3,"ts":30,"pid":1,"tid":1},
            {"name":"mark","ph":"n","id":4,"ts":25,"pid":1,"tid":1}
        ]"#,
        )
        .unwrap();
        // [10, 30) µs: the first `load` only touches it; the second is cut to 10 µs; the
        // zero-length `blip` at 30 is at the range's end: out.
        let s = t.async_range_stats(10_000, 30_000);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(t.str(s[0].name), "load");
        assert_eq!((s[0].count, s[0].total_ns), (1, 10_000));
        let s = t.async_range_stats(0, 31_000);
        let names: Vec<&str> = s.iter().map(|a| t.str(a.name)).collect();
        assert_eq!(names, ["blip", "load"]);
        assert_eq!((s[0].count, s[0].total_ns), (1, 0));
        assert_eq!((s[1].count, s[1].min_ns, s[1].max_ns), (2, 10_000, 11_000));
        assert!(t.async_range_stats(5_000, 5_000).is_empty(), "empty range");
    }
}
