//! Per-name statistics over spans: counts, total and self time, percentiles; filtered by
//! thread, name and time range (a range clips spans to it, as spall's range statistics do).

use std::collections::HashMap;

use regex::Regex;

use crate::clip::{child_time, clip_span};
use crate::samples::{Frames, NO_FRAME};
use crate::span::{lower_bound, Lane, Thread};
use crate::strings::StrId;
use crate::trace::Trace;

/// How to match span names.
#[derive(Clone, Debug)]
pub enum NameFilter {
    /// Names containing this text (case-sensitive).
    Substring(String),
    /// Names the regex matches anywhere in.
    Regex(Regex),
}

impl NameFilter {
    /// Whether `name` passes the filter.
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
    /// Which span names count; `None` means all.
    pub name: Option<NameFilter>,
    /// `[start, end)` in ns. Spans are clipped to it; spans outside are left out.
    pub range: Option<(i64, i64)>,
}

/// Statistics for one name. All times in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameStats {
    /// The span name.
    pub name: StrId,
    /// Spans of this name that pass the filter.
    pub count: u64,
    /// Sum of (clipped) durations. Recursive calls count once per level, as in spall.
    pub total_ns: i64,
    /// Sum of (clipped) self times: duration minus direct children's duration (children
    /// counted only up to the parent's end).
    pub self_ns: i64,
    /// The shortest (clipped) duration.
    pub min_ns: i64,
    /// The longest (clipped) duration.
    pub max_ns: i64,
    /// `total_ns / count`, rounded to nearest.
    pub mean_ns: i64,
    /// Nearest-rank percentiles of the (clipped) durations.
    pub p50_ns: i64,
    /// 90th percentile, nearest rank.
    pub p90_ns: i64,
    /// 99th percentile, nearest rank.
    pub p99_ns: i64,
}

impl NameStats {
    /// A sampling profile's row for one function (or stack): its samples as the count, its
    /// total and self weight (in the profile's unit) as the times, no per-call figures.
    pub fn of_samples(name: StrId, samples: u64, total: i64, self_weight: i64) -> NameStats {
        NameStats {
            name,
            count: samples,
            total_ns: total,
            self_ns: self_weight,
            min_ns: 0,
            max_ns: 0,
            mean_ns: 0,
            p50_ns: 0,
            p90_ns: 0,
            p99_ns: 0,
        }
    }
}

/// How spans are grouped for statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupBy {
    /// One group per span name.
    #[default]
    Name,
    /// One group per call stack: the names from the outermost span down to the span.
    Stack,
}

/// The statistics of one group of spans, and the values behind them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The names from the outermost span to the group's spans (just the name for
    /// [`GroupBy::Name`]).
    pub stack: Vec<StrId>,
    /// `stats.name` is the last name of `stack`.
    pub stats: NameStats,
    /// Every occurrence's (clipped) duration, sorted.
    pub durations: Vec<i64>,
    /// Every occurrence's (clipped) self time, sorted.
    pub self_times: Vec<i64>,
}

#[derive(Default)]
struct Acc {
    total: i64,
    self_ns: i64,
    durs: Vec<i64>,
    selfs: Vec<i64>,
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
        self.collect_groups(filter, GroupBy::Name, false)
            .into_iter()
            .map(|g| g.stats)
            .collect()
    }

    /// Statistics per group (name or call stack) with every occurrence's duration and self
    /// time, sorted by total time (largest first), then by the stack's names.
    pub fn groups(&self, filter: &StatsFilter, by: GroupBy) -> Vec<Group> {
        self.collect_groups(filter, by, true)
    }

    /// `groups`, with `self_times` left empty unless `keep_self_times` (plain statistics
    /// need only their sum, and sorting them costs O(n log n)).
    fn collect_groups(
        &self,
        filter: &StatsFilter,
        by: GroupBy,
        keep_self_times: bool,
    ) -> Vec<Group> {
        let mut c = Collector {
            trace: self,
            filter,
            by,
            keep_self_times,
            name_ok: HashMap::new(),
            acc: Vec::new(),
            stacks: Frames::default(),
        };
        let all: Vec<u32>;
        let threads = match &filter.threads {
            Some(t) => t.as_slice(),
            None => {
                all = (0..self.threads.len() as u32).collect();
                &all
            }
        };
        for &t in threads {
            if let Some(thread) = self.threads.get(t as usize) {
                c.thread(thread);
            }
        }
        c.groups()
    }
}

/// What [`Trace::collect_groups`] gathers as it walks the spans.
struct Collector<'t> {
    trace: &'t Trace,
    filter: &'t StatsFilter,
    by: GroupBy,
    keep_self_times: bool,
    /// Name filter results, computed once per distinct name.
    name_ok: HashMap<StrId, bool>,
    /// Keys (name or stack ids) are dense: a vector, not a map, on this per-span path.
    acc: Vec<Acc>,
    stacks: Frames,
}

impl Collector<'_> {
    /// One thread's spans, lane by lane.
    fn thread(&mut self, thread: &Thread) {
        let lane_stacks = match self.by {
            GroupBy::Stack => self.lane_stacks(thread),
            GroupBy::Name => Vec::new(),
        };
        for (d, lane) in thread.lanes.iter().enumerate() {
            let stacks = lane_stacks.get(d).map(Vec::as_slice);
            self.lane(lane, thread.lanes.get(d + 1), stacks);
        }
    }

    /// Per lane, each span's stack: its parent is the last span one level up that starts
    /// at or before it.
    fn lane_stacks(&mut self, thread: &Thread) -> Vec<Vec<u32>> {
        let mut lane_stacks: Vec<Vec<u32>> = Vec::new();
        for (d, lane) in thread.lanes.iter().enumerate() {
            let ids = (0..lane.len())
                .map(|i| {
                    let parent = match d.checked_sub(1) {
                        Some(up) => {
                            let pl = &thread.lanes[up];
                            let k = pl.start.partition_point(|&x| x <= lane.start[i]);
                            k.checked_sub(1).map_or(NO_FRAME, |k| lane_stacks[up][k])
                        }
                        None => NO_FRAME,
                    };
                    self.stacks.get(lane.name[i], parent)
                })
                .collect();
            lane_stacks.push(ids);
        }
        lane_stacks
    }

    /// The spans of `lane` (its children in `next`; with `stacks`, each span's stack) that
    /// pass the filter, clipped to its range, added to their groups.
    fn lane(&mut self, lane: &Lane, next: Option<&Lane>, stacks: Option<&[u32]>) {
        let (r0, r1) = self.filter.range.unwrap_or((i64::MIN, i64::MAX));
        let clip = |s: i64, e: i64| clip_span(s, e, r0, r1);
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
                    child_sum += child_time(n.start[j], n.end(j), e, (r0, r1));
                    j += 1;
                }
            }
            let Some(dur) = clip(s, e) else { continue };
            let name = lane.name[i];
            let (t, filter) = (self.trace, &self.filter.name);
            let ok = *self.name_ok.entry(name).or_insert_with(|| match filter {
                Some(f) => f.matches(t.str(name)),
                None => true,
            });
            if !ok {
                continue;
            }
            let key = match self.by {
                GroupBy::Name => name.0,
                GroupBy::Stack => stacks.map_or(NO_FRAME, |v| v[i]),
            };
            if self.acc.len() <= key as usize {
                self.acc.resize_with(key as usize + 1, Acc::default);
            }
            let a = &mut self.acc[key as usize];
            a.total += dur;
            a.self_ns += dur - child_sum;
            a.durs.push(dur);
            if self.keep_self_times {
                a.selfs.push(dur - child_sum);
            }
        }
    }

    /// The groups gathered, by total time (largest first), then by the stack's names.
    fn groups(self) -> Vec<Group> {
        let (by, stacks, t) = (self.by, &self.stacks, self.trace);
        let mut out: Vec<Group> = (self.acc.into_iter().enumerate())
            .filter(|(_, a)| !a.durs.is_empty())
            .map(|(key, a)| {
                let stack = match by {
                    GroupBy::Name => vec![StrId(key as u32)],
                    GroupBy::Stack => stacks.path(key as u32),
                };
                group(stack, a)
            })
            .collect();
        out.sort_by(|a, b| {
            b.stats.total_ns.cmp(&a.stats.total_ns).then_with(|| {
                let (na, nb) = (a.stack.iter(), b.stack.iter());
                na.map(|&n| t.str(n)).cmp(nb.map(|&n| t.str(n)))
            })
        });
        out
    }
}

/// The statistics of a group's spans.
fn group(stack: Vec<StrId>, mut a: Acc) -> Group {
    a.durs.sort_unstable();
    a.selfs.sort_unstable();
    let n = a.durs.len() as i64;
    let stats = NameStats {
        name: stack[stack.len() - 1],
        count: n as u64,
        total_ns: a.total,
        self_ns: a.self_ns,
        min_ns: a.durs[0],
        max_ns: a.durs[a.durs.len() - 1],
        mean_ns: (a.total + n / 2).div_euclid(n),
        p50_ns: percentile(&a.durs, 50),
        p90_ns: percentile(&a.durs, 90),
        p99_ns: percentile(&a.durs, 99),
    };
    Group {
        stack,
        stats,
        durations: a.durs,
        self_times: a.selfs,
    }
}

#[cfg(test)]
mod tests {
    use super::{percentile, GroupBy, StatsFilter};

    #[test]
    fn stacks_group_spans_by_their_callers() {
        // `draw` under `render` twice and under `ui` once; a range clips `main`.
        let t = crate::load_bytes(
            br#"[{"ph":"X","name":"main","ts":0,"dur":100,"pid":1,"tid":1},
                 {"ph":"X","name":"render","ts":0,"dur":40,"pid":1,"tid":1},
                 {"ph":"X","name":"draw","ts":0,"dur":10,"pid":1,"tid":1},
                 {"ph":"X","name":"draw","ts":20,"dur":10,"pid":1,"tid":1},
                 {"ph":"X","name":"ui","ts":50,"dur":40,"pid":1,"tid":1},
                 {"ph":"X","name":"draw","ts":60,"dur":5,"pid":1,"tid":1}]"#,
        )
        .unwrap();
        let groups = t.groups(&StatsFilter::default(), GroupBy::Stack);
        let found: Vec<(String, u64, i64, Vec<i64>)> = groups
            .iter()
            .map(|g| {
                let path: Vec<&str> = g.stack.iter().map(|&n| t.str(n)).collect();
                (
                    path.join(";"),
                    g.stats.count,
                    g.stats.self_ns,
                    g.self_times.clone(),
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                ("main".into(), 1, 20_000, vec![20_000]),
                ("main;render".into(), 1, 20_000, vec![20_000]),
                ("main;ui".into(), 1, 35_000, vec![35_000]),
                ("main;render;draw".into(), 2, 20_000, vec![10_000, 10_000]),
                ("main;ui;draw".into(), 1, 5_000, vec![5_000]),
            ]
        );
        // By name, the groups are the plain statistics.
        let by_name = t.groups(&StatsFilter::default(), GroupBy::Name);
        let stats = t.stats(&StatsFilter::default());
        assert_eq!(
            by_name.iter().map(|g| &g.stats).collect::<Vec<_>>(),
            stats.iter().collect::<Vec<_>>()
        );
        let draw = by_name
            .iter()
            .find(|g| t.str(g.stats.name) == "draw")
            .unwrap();
        assert_eq!(draw.durations, vec![5_000, 10_000, 10_000]);
    }

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
