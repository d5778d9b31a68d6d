//! [`AsyncGroup`]: a process's async tracks as a timeline groups them, so that dozens of
//! tracks of one slice each (Chrome's startup metrics) do not fill the first screen: the
//! union of their slices for the folded summary row, and the one-slice tracks packed into
//! shared rows for the unfolded group.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use trace_model::Trace;

/// One process's async tracks, grouped for drawing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AsyncGroup {
    /// Its tracks (indices into `Trace::async_tracks`), in the trace's order.
    pub tracks: Vec<u32>,
    /// Of those, the tracks holding exactly one slice.
    pub singles: Vec<u32>,
    /// The one-slice tracks' slices (indices into `Trace::async_slices`) packed into rows:
    /// by start, none overlapping another in its row, as few rows as they need.
    pub packed: Vec<Vec<u32>>,
    /// Where any of its slices is, as `[start, end]` intervals: sorted, disjoint.
    pub union: Vec<(i64, i64)>,
    /// How many slices its tracks hold.
    pub slices: usize,
}

impl AsyncGroup {
    /// Every process's group: O(slices × log slices).
    pub fn build(t: &Trace) -> Vec<AsyncGroup> {
        let mut groups = vec![AsyncGroup::default(); t.processes().len()];
        for (i, a) in t.async_tracks().iter().enumerate() {
            let Some(g) = groups.get_mut(a.process as usize) else {
                continue;
            };
            g.tracks.push(i as u32);
            let n: usize = a.rows.iter().map(Vec::len).sum();
            g.slices += n;
            if n == 1 {
                g.singles.push(i as u32);
            }
        }
        for g in &mut groups {
            g.pack(t);
            g.unite(t);
        }
        groups
    }

    /// The one-slice tracks' slices into rows: each takes the first row free at its start
    /// (a new one when none is), so the top rows fill first.
    fn pack(&mut self, t: &Trace) {
        let slices = t.async_slices();
        let mut ids: Vec<u32> = (self.singles.iter())
            .filter_map(|&a| t.async_tracks()[a as usize].rows.iter().flatten().next())
            .copied()
            .collect();
        ids.sort_by_key(|&s| (slices[s as usize].start, s));
        // Rows in use by the end of their last slice, earliest first; rows free again.
        let mut busy: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
        let mut free: BTreeSet<usize> = BTreeSet::new();
        for s in ids {
            let a = &slices[s as usize];
            while let Some(&Reverse((end, r))) = busy.peek() {
                if end > a.start {
                    break;
                }
                busy.pop();
                free.insert(r);
            }
            let row = free.pop_first().unwrap_or_else(|| {
                self.packed.push(Vec::new());
                self.packed.len() - 1
            });
            self.packed[row].push(s);
            busy.push(Reverse((a.end.max(a.start), row)));
        }
    }

    /// The union of every slice of the group's tracks.
    fn unite(&mut self, t: &Trace) {
        let slices = t.async_slices();
        let mut spans: Vec<(i64, i64)> = (self.tracks.iter())
            .flat_map(|&a| t.async_tracks()[a as usize].rows.iter().flatten())
            .map(|&s| {
                let a = &slices[s as usize];
                (a.start, a.end.max(a.start))
            })
            .collect();
        spans.sort_unstable();
        for (a, b) in spans {
            match self.union.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => self.union.push((a, b)),
            }
        }
    }

    /// The packed row holding slice `s`, if it is one of the one-slice tracks'.
    pub fn packed_row(&self, t: &Trace, s: u32) -> Option<u32> {
        let slices = t.async_slices();
        let start = slices.get(s as usize)?.start;
        (self.packed.iter())
            .position(|row| {
                let i = row.partition_point(|&x| slices[x as usize].start < start);
                row[i..]
                    .iter()
                    .take_while(|&&x| slices[x as usize].start == start)
                    .any(|&x| x == s)
            })
            .map(|r| r as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slice_tracks_pack_into_shared_rows_and_the_union_covers_every_slice() {
        let slice = |name: &str, id: u32, a: u32, b: u32| {
            format!(
                r#"{{"ph":"b","cat":"c","name":"{name}","id":{id},"ts":{a},"pid":1,"tid":1}},
                   {{"ph":"e","cat":"c","name":"{name}","id":{id},"ts":{b},"pid":1,"tid":1}},"#
            )
        };
        // Four one-slice tracks (x, y, z, w) and one of two slices (m).
        let events = [
            slice("x", 1, 0, 10),
            slice("y", 2, 5, 8),
            slice("z", 3, 10, 20),
            slice("w", 4, 30, 40),
            slice("m", 5, 50, 60),
            slice("m", 6, 70, 80),
        ]
        .concat();
        let json = format!("[{}]", events.trim_end_matches(','));
        let t = trace_model::load_bytes(json.as_bytes()).unwrap();
        let g = &AsyncGroup::build(&t)[0];
        assert_eq!((g.tracks.len(), g.singles.len(), g.slices), (5, 4, 6));
        let names = |row: &[u32]| -> Vec<&str> {
            (row.iter())
                .map(|&s| t.str(t.async_slices()[s as usize].name))
                .collect()
        };
        // y overlaps x and takes a second row; z starts where x ends and w after both.
        let rows: Vec<Vec<&str>> = g.packed.iter().map(|r| names(r)).collect();
        assert_eq!(rows, [vec!["x", "z", "w"], vec!["y"]]);
        let y = (0..t.async_slices().len() as u32)
            .find(|&s| names(&[s]) == ["y"])
            .unwrap();
        assert_eq!(g.packed_row(&t, y), Some(1));
        assert_eq!(
            g.union,
            [
                (0, 20_000),
                (30_000, 40_000),
                (50_000, 60_000),
                (70_000, 80_000)
            ]
        );
    }
}
