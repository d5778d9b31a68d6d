//! The index of one lane, and the one place a lane query decides how it is answered.

use trace_model::Lane;

use crate::detail::{level_of, tau, Detail};
use crate::item::Item;
use crate::levels::{self, Levels};
use crate::pyramid::Pyramid;
use crate::walk::walk;

/// The index of one lane: its pyramid, and the levels it keeps.
#[derive(Clone, Debug, Default)]
pub(crate) struct LaneIndex {
    pub(crate) pyramid: Pyramid,
    pub(crate) levels: Option<Box<Levels>>,
    /// Bit `k` set when level `k` is stored: the plan is made without reading the boxed
    /// levels (a cache miss per lane).
    pub(crate) stored: u128,
}

/// How a lane answers a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The query's thresholds are those of stored level `l` (an index into the lane's
    /// stored levels): its records in range are the answer, copied.
    Copy(usize),
    /// Stored level `l` is the coarsest at or below the query's thresholds: its records in
    /// range, merged by the query's rule.
    Merge(usize),
    /// No stored level is fine enough: the spans are walked.
    Walk,
}

impl LaneIndex {
    /// The pyramid and the given levels (ascending, with their item counts; none: every
    /// query walks the spans).
    pub(crate) fn new(lane: &Lane, pyramid: Pyramid, ks: &[(usize, usize)]) -> LaneIndex {
        let mut li = LaneIndex {
            pyramid,
            levels: None,
            stored: 0,
        };
        li.add_levels(lane, ks);
        li
    }

    /// Stores the given levels (as [`new`](Self::new) takes them) in place of any.
    pub(crate) fn add_levels(&mut self, lane: &Lane, ks: &[(usize, usize)]) {
        self.levels = match ks {
            [] => None,
            ks => Levels::build(lane, ks).map(Box::new),
        };
        self.stored = (self.levels.iter().flat_map(|l| &l.ks)).fold(0, |m, &k| m | 1 << k);
    }

    /// The stored levels alone, the pyramid dropped.
    pub(crate) fn levels_only(self) -> LaneIndex {
        LaneIndex {
            pyramid: Pyramid::default(),
            ..self
        }
    }

    /// How a query whose spans of `wide` ns or more stand alone and whose gaps of `gap` ns
    /// or more stay visible is answered: from the coarsest stored level with `τ <= gap`
    /// and `2τ <= wide`, copied when those are its own thresholds, else by the walk.
    #[inline]
    pub(crate) fn plan(&self, wide: i64, gap: i64) -> Plan {
        let Some(k) = level_of(gap.min(wide / 2)) else {
            return Plan::Walk;
        };
        let below = self.stored & (u128::MAX >> (127 - k));
        let Some(l) = below.count_ones().checked_sub(1) else {
            return Plan::Walk;
        };
        let k = 127 - below.leading_zeros() as usize;
        match gap == tau(k) && wide == 2 * tau(k) {
            true => Plan::Copy(l as usize),
            false => Plan::Merge(l as usize),
        }
    }

    /// Appends the items of `lane` (the lane this indexes) overlapping `[t0, t1]` at
    /// `detail` to `out`. See [`TraceIndex::query`](crate::TraceIndex::query).
    pub(crate) fn query(&self, lane: &Lane, t0: i64, t1: i64, detail: Detail, out: &mut Vec<Item>) {
        self.query_with(self, lane, (t0, t1), detail, out)
    }

    /// [`query`](Self::query) with the stored levels of `stored` (this lane's, set apart
    /// from its pyramid: `TraceIndex::set_levels`).
    #[inline]
    pub(crate) fn query_with(
        &self,
        stored: &LaneIndex,
        lane: &Lane,
        range: (i64, i64),
        detail: Detail,
        out: &mut Vec<Item>,
    ) {
        if lane.is_empty() {
            return;
        }
        let (wide, gap) = detail.thresholds();
        let pyr = &self.pyramid;
        match (stored.plan(wide, gap), stored.levels.as_deref()) {
            (Plan::Copy(l), Some(lv)) => {
                levels::query(lane, pyr, lv, (l, true), range, wide, gap, out)
            }
            (Plan::Merge(l), Some(lv)) => {
                levels::query(lane, pyr, lv, (l, false), range, wide, gap, out)
            }
            _ => walk(lane, pyr, range, (wide, gap), out),
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.pyramid.heap_bytes() + self.levels.as_ref().map_or(0, |l| l.heap_bytes())
    }
}

#[cfg(test)]
impl LaneIndex {
    /// The pyramid and levels `ks`, for tests that choose which levels are stored.
    pub(crate) fn with_levels(lane: &Lane, ks: &[usize]) -> LaneIndex {
        LaneIndex::new(lane, Pyramid::build(lane), &levels::with_counts(lane, ks))
    }

    pub(crate) fn has_levels(&self) -> bool {
        self.levels.is_some()
    }

    /// The pyramid and every level worth keeping, with no memory budget across lanes.
    pub(crate) fn unbudgeted(lane: &Lane) -> LaneIndex {
        let ks = levels::candidates(&levels::histogram(lane), lane.len());
        LaneIndex::new(lane, Pyramid::build(lane), &ks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(ks: &[usize]) -> LaneIndex {
        LaneIndex {
            stored: ks.iter().fold(0, |m, &k| m | 1 << k),
            ..LaneIndex::default()
        }
    }

    #[test]
    fn the_plan_copies_a_level_at_its_own_thresholds() {
        // Level 10 has τ = 32; level 13 has τ = 91 (ceil(64 √2)).
        let li = stored(&[10, 13]);
        assert_eq!(li.plan(64, 32), Plan::Copy(0));
        assert_eq!(li.plan(182, 91), Plan::Copy(1));
        // A finer gap than the wide spans allow: still level 10, but merged.
        assert_eq!(li.plan(200, 40), Plan::Merge(0));
        assert_eq!(li.plan(64, 33), Plan::Merge(0));
        // Wide spans limit the level as gaps do.
        assert_eq!(li.plan(63, 1000), Plan::Walk);
        assert_eq!(li.plan(1000, 1000), Plan::Merge(1));
    }

    #[test]
    fn the_plan_walks_below_the_finest_stored_level() {
        assert_eq!(stored(&[]).plan(1 << 40, 1 << 40), Plan::Walk);
        assert_eq!(stored(&[10]).plan(1 << 40, 31), Plan::Walk);
        assert_eq!(stored(&[0]).plan(1, 1), Plan::Walk); // wide / 2 is 0: no level
        assert_eq!(stored(&[0]).plan(2, 1), Plan::Copy(0));
        assert_eq!(stored(&[0, 123]).plan(i64::MAX, i64::MAX), Plan::Merge(1));
    }
}
