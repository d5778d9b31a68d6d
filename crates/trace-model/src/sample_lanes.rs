//! A sample track's stacks over time, as lanes of span-like boxes: speedscope's "time
//! order" view and Perfetto's CPU-profile flame chart.
//!
//! Each sample covers the time from its own to where the next begins (see
//! [`SampleTrack::sample_end`]). At each depth, consecutive samples whose stacks hold the
//! same frame there (frames are interned with their caller, so the same frame means the
//! same stack down to it) and that touch in time become one box, named after the frame.
//! The boxes of one depth are a [`Lane`]: sorted, never overlapping, so a timeline draws
//! them with the spans' level of detail. A box's samples are found again from its times
//! ([`SampleTrack::samples_in`]), so the lanes keep no per-box bookkeeping beyond a span's.

use crate::args::ArgsId;
use crate::samples::{Frame, SampleTrack, NO_FRAME};
use crate::span::Lane;
use crate::strings::StrId;

/// Stacks deeper than this are cut there (a corrupt profile's cycle, a runaway recursion):
/// the deeper frames get no lane.
pub const MAX_STACK_DEPTH: usize = 1024;

/// One box being extended.
#[derive(Clone, Copy)]
struct Open {
    frame: u32,
    name: StrId,
    start: i64,
    end: i64,
}

impl SampleTrack {
    /// The time at which sample `i` stops covering the timeline: where the next sample
    /// starts, but no later than its own weight (in nanoseconds, or laid out by weight) or,
    /// for weights that are not times, twice the track's typical interval `typical` after
    /// it: a thread's time off the CPU stays empty, while a sample a little late (timer
    /// jitter) does not split a box.
    pub fn sample_end(&self, i: usize, typical: i64) -> i64 {
        let ts = self.ts[i];
        let own = if !self.timed || self.unit == spall_format::SampleUnit::Nanoseconds {
            ts.saturating_add(self.weight[i].max(0))
        } else {
            ts.saturating_add(typical.saturating_mul(2))
        };
        match self.ts.get(i + 1) {
            Some(&next) => own.min(next).max(ts),
            None => own,
        }
    }

    /// The median of the positive intervals between samples (1 ns if there are none): how
    /// long a sample of a timed track in a unit that is not time stands for.
    pub fn typical_interval(&self) -> i64 {
        let mut d: Vec<i64> = (self.ts.windows(2))
            .map(|p| p[1].saturating_sub(p[0]))
            .filter(|&x| x > 0)
            .collect();
        if d.is_empty() {
            return 1;
        }
        let mid = d.len() / 2;
        *d.select_nth_unstable(mid).1
    }

    /// The stacks over time, one lane per depth (0 is the outermost frame): see the module
    /// overview. `frames` is the trace's frame table. O(samples × depth).
    pub fn stack_lanes(&self, frames: &[Frame]) -> Vec<Lane> {
        let typical = self.typical_interval();
        let mut lanes: Vec<Lane> = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        let mut path: Vec<u32> = Vec::new();
        let mut last_leaf = None;
        let mut prev_end = i64::MIN;
        for i in 0..self.ts.len() {
            let leaf = self.frame[i];
            if last_leaf != Some(leaf) {
                stack_path(frames, leaf, &mut path);
                last_leaf = Some(leaf);
            }
            // Out-of-order times (a corrupt file) are clamped so boxes never overlap.
            let start = self.ts[i].max(prev_end);
            let end = self.sample_end(i, typical).max(start);
            prev_end = end;
            let mut d = 0;
            while d < open.len() && d < path.len() {
                let o = &mut open[d];
                if o.frame != path[d] || o.end != start {
                    break;
                }
                o.end = end;
                d += 1;
            }
            close(&mut lanes, &mut open, d);
            for &f in &path[d..] {
                let name = frames[f as usize].name;
                open.push(Open {
                    frame: f,
                    name,
                    start,
                    end,
                });
            }
        }
        close(&mut lanes, &mut open, 0);
        lanes
    }

    /// The samples a box of its stack lanes covers, `[start, end)`: those whose time lies
    /// in it.
    pub fn samples_in(&self, start: i64, end: i64) -> std::ops::Range<usize> {
        let a = self.ts.partition_point(|&t| t < start);
        let b = self.ts.partition_point(|&t| t < end.max(start + 1));
        a..b.max(a)
    }
}

/// The frame at `depth` of the stack whose leaf is `leaf`, if the stack is that deep.
pub fn frame_at_depth(frames: &[Frame], leaf: u32, depth: usize) -> Option<u32> {
    let mut path = Vec::new();
    stack_path(frames, leaf, &mut path);
    path.get(depth).copied()
}

/// The frames from the outermost down to `leaf` (at most [`MAX_STACK_DEPTH`]).
fn stack_path(frames: &[Frame], leaf: u32, path: &mut Vec<u32>) {
    path.clear();
    let mut f = leaf;
    while f != NO_FRAME && path.len() < MAX_STACK_DEPTH {
        let Some(fr) = frames.get(f as usize) else {
            break;
        };
        path.push(f);
        f = fr.parent;
    }
    path.reverse();
}

/// Closes the open boxes from depth `from` down, adding each to its lane.
fn close(lanes: &mut Vec<Lane>, open: &mut Vec<Open>, from: usize) {
    for (d, o) in open.drain(from..).enumerate().map(|(k, o)| (from + k, o)) {
        if lanes.len() <= d {
            lanes.resize_with(d + 1, Lane::default);
        }
        let lane = &mut lanes[d];
        lane.start.push(o.start);
        lane.dur.push(o.end - o.start);
        lane.name.push(o.name);
        lane.cat.push(StrId::EMPTY);
        lane.args.push(ArgsId::NONE);
        lane.flags.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::frame_at_depth;
    use crate::load_bytes;

    /// Collapsed stacks are laid end to end by weight: `a;b 2`, `a;b 1`, `a;c 3`, `d 1`.
    #[test]
    fn consecutive_samples_with_a_frame_merge_into_one_box() {
        let t = load_bytes(b"a;b 2\na;b 1\na;c 3\nd 1\n").unwrap();
        let st = &t.samples()[0];
        let lanes = st.stack_lanes(t.frames());
        let boxes = |d: usize| -> Vec<(String, i64, i64)> {
            let l = &lanes[d];
            (0..l.len())
                .map(|i| (t.str(l.name[i]).to_string(), l.start[i], l.end(i)))
                .collect()
        };
        let s = |x: &str| x.to_string();
        assert_eq!(boxes(0), vec![(s("a"), 0, 6), (s("d"), 6, 7)]);
        assert_eq!(boxes(1), vec![(s("b"), 0, 3), (s("c"), 3, 6)]);
        assert_eq!(lanes.len(), 2);
        // A box finds its samples again from its times.
        assert_eq!(st.samples_in(0, 3), 0..2);
        let leaf = st.frame[2];
        assert_eq!(
            frame_at_depth(t.frames(), leaf, 0).map(|f| t.str(t.frames()[f as usize].name)),
            Some("a")
        );
    }

    /// Timed samples in a unit that is not time cover twice their typical interval at most:
    /// a thread off the CPU leaves a gap, which splits a box.
    #[test]
    fn a_gap_in_timed_samples_splits_boxes() {
        // Every 10 µs, one sample 3 µs late (jitter), then half a second off the CPU.
        let mut perf = String::new();
        for us in [0, 10, 20, 30, 43, 500_000] {
            perf += &format!("prog 10 1.{us:06}: 1 cycles:\n\t1 f (x)\n\t2 main (x)\n\n");
        }
        let perf = perf.as_bytes();
        let t = load_bytes(perf).unwrap();
        let st = &t.samples()[0];
        assert_eq!(st.typical_interval(), 10_000);
        let lanes = st.stack_lanes(t.frames());
        let main = &lanes[0];
        assert_eq!(main.start.len(), 2, "{main:?}");
        assert_eq!((main.start[0], main.end(0)), (1_000_000_000, 1_000_063_000));
        assert_eq!(main.dur[1], 20_000);
    }
}
