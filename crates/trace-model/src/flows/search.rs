//! Where a flow point's time falls in a lane: the first span starting at or after it, and
//! the first ending at or after it. [`Search`] searches the whole lane for each point;
//! [`Cursors`] serve a thread's points in time order, each search starting where the last
//! one ended (a gallop, then a binary search), so a thread's many points cost about a pass
//! over its lanes instead of a search per point per lane. Both give the same answers.

use crate::span::{lower_bound, Lane};

/// A lane's two searches for time `t`; `d` is the lane's depth.
pub(crate) trait Find {
    /// The first span of `lane` starting at or after `t` (the lane's length if none).
    fn by_start(&mut self, d: usize, lane: &Lane, t: i64) -> usize;
    /// The first span of `lane` ending at or after `t` (the lane's length if none).
    fn by_end(&mut self, d: usize, lane: &Lane, t: i64) -> usize;
}

/// A binary search of the whole lane for each time.
pub(crate) struct Search;

impl Find for Search {
    fn by_start(&mut self, _: usize, lane: &Lane, t: i64) -> usize {
        lane.start.partition_point(|&s| s < t)
    }

    fn by_end(&mut self, _: usize, lane: &Lane, t: i64) -> usize {
        lane.first_ending_at_or_after(t)
    }
}

/// One thread's searches for times that never decrease: per lane, where the last search by
/// start and by end ended.
pub(crate) struct Cursors {
    start: Vec<usize>,
    end: Vec<usize>,
}

impl Cursors {
    /// Cursors at the start of `lanes` lanes.
    pub(crate) fn new(lanes: usize) -> Cursors {
        Cursors {
            start: vec![0; lanes],
            end: vec![0; lanes],
        }
    }
}

impl Find for Cursors {
    fn by_start(&mut self, d: usize, lane: &Lane, t: i64) -> usize {
        let c = &mut self.start[d];
        *c = gallop(*c, lane.len(), |i| lane.start[i] < t);
        *c
    }

    fn by_end(&mut self, d: usize, lane: &Lane, t: i64) -> usize {
        let c = &mut self.end[d];
        *c = gallop(*c, lane.len(), |i| lane.end(i) < t);
        *c
    }
}

/// The first `i` in `from..len` where `before(i)` is false (`len` if none), for a
/// `before` true then false over `0..len` and true below `from`: steps of 1, 2, 4, ...
/// from `from`, then a binary search of the last step.
fn gallop(from: usize, len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi, mut step) = (from, from, 1);
    while hi < len && before(hi) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    lo + lower_bound(hi.min(len) - lo, |k| before(lo + k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lane of spans at `starts`, each `dur` long.
    fn lane(starts: &[i64], dur: i64) -> Lane {
        Lane {
            start: starts.to_vec(),
            dur: vec![dur; starts.len()],
            ..Lane::default()
        }
    }

    /// Cursors answer as the whole-lane search for every time in order, on lanes with
    /// repeated starts, zero-length spans, and times before, between and after them.
    #[test]
    fn cursors_answer_as_the_search_does() {
        let lanes = [
            lane(&[], 0),
            lane(&[5], 0),
            lane(&[0, 0, 3, 3, 3, 9, 20, 21, 40, 41, 42, 100], 0),
            lane(&(0..500).map(|i| i * 10).collect::<Vec<_>>(), 7),
        ];
        for step in [1, 3, 17, 400] {
            let mut c = Cursors::new(lanes.len());
            for t in (-5..5_100).step_by(step) {
                for (d, l) in lanes.iter().enumerate() {
                    // Twice at each time: a thread's points may share one.
                    for _ in 0..2 {
                        assert_eq!(c.by_start(d, l, t), Search.by_start(d, l, t), "{d} {t}");
                        assert_eq!(c.by_end(d, l, t), Search.by_end(d, l, t), "{d} {t}");
                    }
                }
            }
        }
    }
}
