//! Per-name statistics over spans: counts, total and self time, percentiles; filtered by
//! thread, name and time range (a range clips spans to it, as spall's range statistics do).

use std::collections::HashMap;

use regex::Regex;

use crate::strings::StrId;
use crate::trace::Trace;

/// How to match span names.
#[derive(Clone, Debug)]
pub enum NameFilter {
    Substring(String),
    Regex(Regex),
}

impl NameFilter {
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NameFilter::Substring(s) => name.contains(s.as_str()),
            NameFilter::Regex(r) => r.is_match(name),
        }
    }
}

/// Which spans count.
#[derive(Clone, Debug, Default)]
pub struct StatsFilter {
    /// Thread indices (into `Trace::threads`); `None` means all.
    pub threads: Option<Vec<u32>>,
    pub name: Option<NameFilter>,
    /// `[start, end)` in ns. Spans are clipped to it; spans outside are left out.
    pub range: Option<(i64, i64)>,
}

/// Statistics for one name. All times in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameStats {
    pub name: StrId,
    pub count: u64,
    /// Sum of (clipped) durations. Recursive calls count once per level, as in spall.
    pub total_ns: i64,
    /// Sum of (clipped) self times: duration minus direct children's duration (children
    /// counted only up to the parent's end).
    pub self_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// `total_ns / count`, rounded to nearest.
    pub mean_ns: i64,
    /// Nearest-rank percentiles of the (clipped) durations.
    pub p50_ns: i64,
    pub p90_ns: i64,
    pub p99_ns: i64,
}

#[derive(Default)]
struct Acc {
    total: i64,
    self_ns: i64,
    durs: Vec<i64>,
}

/// The first index in `0..n` for which `before` is false (`before` must be monotonic).
fn lower_bound(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Nearest-rank percentile of sorted values: the smallest value with at least `p`% of the
/// values at or below it.
pub fn percentile(sorted: &[i64], p: u32) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() as u64 * p as u64).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

impl Trace {
    /// Statistics per span name, sorted by total time (largest first), then name.
    pub fn stats(&self, filter: &StatsFilter) -> Vec<NameStats> {
        let (r0, r1) = filter.range.unwrap_or((i64::MIN, i64::MAX));
        let clip = |s: i64, e: i64| -> Option<i64> {
            let inside = (s < r1 && e > r0) || (s == e && s >= r0 && s < r1);
            inside.then(|| e.min(r1) - s.max(r0))
        };
        // Name filter results, computed once per distinct name.
        let mut name_ok: HashMap<StrId, bool> = HashMap::new();
        let mut acc: HashMap<StrId, Acc> = HashMap::new();
        let all: Vec<u32>;
        let threads = match &filter.threads {
            Some(t) => t.as_slice(),
            None => {
                all = (0..self.threads.len() as u32).collect();
                &all
            }
        };
        for &t in threads {
            let Some(thread) = self.threads.get(t as usize) else {
                continue;
            };
            for (d, lane) in thread.lanes.iter().enumerate() {
                let next = thread.lanes.get(d + 1);
                // Lanes never overlap, so ends are sorted too: skip straight to the range.
                let first = lower_bound(lane.len(), |k| lane.end(k) < r0);
                let mut c = match (next, lane.start.get(first)) {
                    (Some(n), Some(&s0)) => n.start.partition_point(|&x| x < s0),
                    _ => 0,
                };
                for i in first..lane.len() {
                    let (s, e) = (lane.start[i], lane.end(i));
                    if s >= r1 {
                        break;
                    }
                    // Advance the child cursor to this span's children (starts in [s, e)).
                    let mut child_sum = 0i64;
                    if let Some(n) = next {
                        while c < n.len() && n.start[c] < s {
                            c += 1;
                        }
                        let mut j = c;
                        while j < n.len() && n.start[j] < e {
                            // A partially overlapping child counts only up to our end.
                            if let Some(cd) = clip(n.start[j], n.end(j).min(e)) {
                                child_sum += cd;
                            }
                            j += 1;
                        }
                    }
                    let Some(dur) = clip(s, e) else { continue };
                    let name = lane.name[i];
                    let ok = *name_ok.entry(name).or_insert_with(|| match &filter.name {
                        Some(f) => f.matches(self.str(name)),
                        None => true,
                    });
                    if !ok {
                        continue;
                    }
                    let a = acc.entry(name).or_default();
                    a.total += dur;
                    a.self_ns += dur - child_sum;
                    a.durs.push(dur);
                }
            }
        }
        let mut out: Vec<NameStats> = acc
            .into_iter()
            .map(|(name, mut a)| {
                a.durs.sort_unstable();
                let n = a.durs.len() as i64;
                NameStats {
                    name,
                    count: n as u64,
                    total_ns: a.total,
                    self_ns: a.self_ns,
                    min_ns: a.durs[0],
                    max_ns: a.durs[a.durs.len() - 1],
                    mean_ns: (a.total + n / 2).div_euclid(n),
                    p50_ns: percentile(&a.durs, 50),
                    p90_ns: percentile(&a.durs, 90),
                    p99_ns: percentile(&a.durs, 99),
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| self.str(a.name).cmp(self.str(b.name)))
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50), 5);
        assert_eq!(percentile(&v, 90), 9);
        assert_eq!(percentile(&v, 99), 10);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
    }
}
