//! Clocks: every timestamp converted to the trace's one time line.
//!
//! A packet's timestamp is in its `timestamp_clock_id` clock (the sequence's default, else
//! BOOTTIME). `ClockSnapshot` packets read several clocks at one instant; a timestamp of
//! clock A converts to the trace clock through the snapshot holding both whose reading of A
//! is the latest at or before it (the first snapshot, for times before every snapshot), as
//! trace_processor does. Clock ids 64 to 127 belong to one packet sequence. An incremental
//! clock's timestamps are deltas from the previous one on its sequence (see `Sequence`).

use std::collections::HashMap;

/// BOOTTIME: the trace clock unless a snapshot names another.
pub const BOOTTIME: u32 = 6;

/// A clock: its id and, for sequence-scoped ids (64 and up), the sequence.
pub type ClockKey = (u32, u32);

pub fn key(clock: u32, seq: u32) -> ClockKey {
    (clock, if clock >= 64 { seq } else { 0 })
}

/// One clock's reading in a snapshot, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    pub clock: ClockKey,
    pub ns: i64,
}

/// What the snapshots say, gathered before any event is decoded.
#[derive(Debug, Default)]
pub struct Clocks {
    pub trace_clock: u32,
    /// Per clock: (its reading, the trace clock's reading), sorted by the first.
    pairs: HashMap<ClockKey, Vec<(i64, i64)>>,
    /// Per clock: nanoseconds per unit (1 unless a snapshot said otherwise).
    multipliers: HashMap<ClockKey, i64>,
    /// Every snapshot's readings, in order: [`finish`](Self::finish) derives `pairs` from
    /// them (again, for a stream, after each new one).
    snaps: Vec<Vec<Reading>>,
    pub snapshots: usize,
}

impl Clocks {
    pub fn new() -> Clocks {
        Clocks {
            trace_clock: BOOTTIME,
            ..Clocks::default()
        }
    }

    pub fn set_multiplier(&mut self, clock: ClockKey, m: i64) {
        self.multipliers.insert(clock, m);
    }

    pub fn multiplier(&self, clock: ClockKey) -> i64 {
        self.multipliers.get(&clock).copied().unwrap_or(1)
    }

    /// Adds a snapshot (readings already in nanoseconds).
    pub fn add(&mut self, readings: Vec<Reading>) {
        self.snapshots += 1;
        self.snaps.push(readings);
    }

    /// Sorts what [`add`](Self::add) gathered; call after the last snapshot, when the
    /// trace clock is known (a stream calls it after each, to convert with what it knows).
    pub fn finish(&mut self) {
        let trace = (self.trace_clock, 0);
        self.pairs.clear();
        let snaps = std::mem::take(&mut self.snaps);
        let mut rest = Vec::new();
        for snap in &snaps {
            match snap.iter().find(|r| r.clock == trace) {
                Some(t) => {
                    for r in snap {
                        self.pairs.entry(r.clock).or_default().push((r.ns, t.ns));
                    }
                }
                None => rest.push(snap),
            }
        }
        // A clock read only beside another clock that the trace clock was read with.
        for snap in rest {
            for via in snap {
                let Some(t) = self.direct(via.clock, via.ns) else {
                    continue;
                };
                for r in snap {
                    self.pairs.entry(r.clock).or_default().push((r.ns, t));
                }
                break;
            }
        }
        for v in self.pairs.values_mut() {
            v.sort_unstable();
        }
        self.snaps = snaps;
    }

    /// What converting times up to `upto` on `clock` depends on: its multiplier, its first
    /// pair (times before every snapshot) and its pairs read at or before `upto` (a stream
    /// compares them before and after a snapshot, for the clocks its events used).
    pub fn basis(&self, clock: ClockKey, upto: i64) -> (i64, Vec<(i64, i64)>) {
        let v = self.pairs.get(&clock).map_or(&[][..], Vec::as_slice);
        let n = v.partition_point(|p| p.0 <= upto).max(v.len().min(1));
        (self.multiplier(clock), v[..n].to_vec())
    }

    fn direct(&self, clock: ClockKey, ns: i64) -> Option<i64> {
        if clock == (self.trace_clock, 0) {
            return Some(ns);
        }
        let v = self.pairs.get(&clock)?;
        let i = v.partition_point(|p| p.0 <= ns).saturating_sub(1);
        let (c, t) = v[i];
        ns.checked_sub(c)?.checked_add(t)
    }

    /// `ns` on `clock` as trace-clock nanoseconds. `None`: no snapshot relates the two
    /// clocks (the caller keeps the time as it is, and counts it) or the result overflows.
    pub fn to_trace(&self, clock: ClockKey, ns: i64) -> Option<i64> {
        self.direct(clock, ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_through_the_latest_snapshot_at_or_before() {
        let mut c = Clocks::new();
        let mono = key(3, 0);
        c.add(vec![
            Reading {
                clock: mono,
                ns: 1_000,
            },
            Reading {
                clock: (6, 0),
                ns: 5_000,
            },
        ]);
        c.add(vec![
            Reading {
                clock: mono,
                ns: 2_000,
            },
            Reading {
                clock: (6, 0),
                ns: 7_000,
            },
        ]);
        // A sequence clock read only beside MONOTONIC: two steps.
        c.add(vec![
            Reading {
                clock: key(64, 9),
                ns: 10,
            },
            Reading {
                clock: mono,
                ns: 1_500,
            },
        ]);
        c.finish();
        assert_eq!(c.to_trace(mono, 1_200), Some(5_200));
        assert_eq!(c.to_trace(mono, 2_500), Some(7_500));
        // Before every snapshot: the first one.
        assert_eq!(c.to_trace(mono, 500), Some(4_500));
        assert_eq!(c.to_trace((6, 0), 42), Some(42));
        assert_eq!(c.to_trace(key(64, 9), 20), Some(5_510));
        assert_eq!(c.to_trace(key(64, 8), 20), None);
        assert_eq!(c.to_trace(mono, i64::MIN), None);
    }
}
