//! [`AsyncGroup`]: a process's async tracks as a timeline groups them, so that dozens of
//! tracks of one slice each (Chrome's startup metrics) do not fill the first screen: the
//! union of their slices for the folded summary row, and the one-slice tracks packed into
//! shared rows for the unfolded group.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// Every process's group, given each async slice's (track, row)
    /// (`EventIndex::async_place`): O(slices × log slices), in passes over the slices in
    /// order rather than through each track's rows (200,000 tracks of one slice each are
    /// that many cache misses).
    pub fn build(t: &Trace, place: &[(u32, u32)]) -> Vec<AsyncGroup> {
        let mut groups = vec![AsyncGroup::default(); t.processes().len()];
        let mut count = vec![0u32; t.async_tracks().len()];
        for &(track, _) in place {
            if let Some(c) = count.get_mut(track as usize) {
                *c += 1;
            }
        }
        for (i, a) in t.async_tracks().iter().enumerate() {
            let Some(g) = groups.get_mut(a.process as usize) else {
                continue;
            };
            g.tracks.push(i as u32);
            g.slices += count[i] as usize;
            if count[i] == 1 {
                g.singles.push(i as u32);
            }
        }
        // Per process, (start, end, slice) of its one-slice tracks, and of all its slices.
        let mut singles: Vec<Vec<(i64, i64, u32)>> = vec![Vec::new(); groups.len()];
        let mut all: Vec<Vec<(i64, i64)>> = vec![Vec::new(); groups.len()];
        for (s, (a, &(track, _))) in t.async_slices().iter().zip(place).enumerate() {
            let (p, span) = (a.process as usize, (a.start, a.end.max(a.start)));
            if p >= groups.len() {
                continue;
            }
            if count.get(track as usize) == Some(&1) {
                singles[p].push((span.0, span.1, s as u32));
            }
            all[p].push(span);
        }
        for ((g, singles), all) in groups.iter_mut().zip(singles).zip(all) {
            g.pack(singles);
            g.unite(all);
        }
        groups
    }

    /// The one-slice tracks' slices into rows: each takes the first row free at its start
    /// (a new one when none is), so the top rows fill first.
    fn pack(&mut self, mut ids: Vec<(i64, i64, u32)>) {
        ids.sort_unstable();
        // Rows in use by the end of their last slice, earliest first; rows free again.
        let mut busy: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
        let mut free: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
        for (start, end, s) in ids {
            while let Some(&Reverse((e, r))) = busy.peek() {
                if e > start {
                    break;
                }
                busy.pop();
                free.push(Reverse(r));
            }
            let row = free.pop().map(|r| r.0).unwrap_or_else(|| {
                self.packed.push(Vec::new());
                self.packed.len() - 1
            });
            self.packed[row].push(s);
            busy.push(Reverse((end, row)));
        }
    }

    /// The union of the group's slices (`[start, end]` each).
    fn unite(&mut self, mut spans: Vec<(i64, i64)>) {
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
    use crate::EventIndex;

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
        let g = &EventIndex::new(&t).async_groups[0];
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
