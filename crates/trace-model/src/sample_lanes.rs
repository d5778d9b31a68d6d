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
use crate::samples::{Frame, SampleTrack};
use crate::span::Lane;
use crate::strings::StrId;

/// Stacks deeper than this are cut there (a corrupt profile's cycle, a runaway recursion):
/// the deeper frames get no lane.
pub const MAX_STACK_DEPTH: usize = 1024;

/// One box being extended; the open boxes all end where the last sample did.
#[derive(Clone, Copy)]
struct Open {
    frame: u32,
    name: StrId,
    start: i64,
}

impl SampleTrack {
    /// The time at which sample `i` stops covering the timeline: where the next sample
    /// starts, but no later than its own weight (in nanoseconds, or laid out by weight) or,
    /// for weights that are not times, twice the track's typical interval `typical` after
    /// it: a thread's time off the CPU stays empty, while a sample a little late (timer
    /// jitter) does not split a box.
    pub fn sample_end(&self, i: usize, typical: i64) -> i64 {
        let ts = self.ts[i];
        let own = if self.ends_at_weight() {
            ts.saturating_add(self.weight[i].max(0))
        } else {
            ts.saturating_add(typical.saturating_mul(2))
        };
        match self.ts.get(i + 1) {
            Some(&next) => own.min(next).max(ts),
            None => own,
        }
    }

    /// Whether a sample ends at its weight ([`sample_end`](Self::sample_end)): the track is
    /// untimed (laid out by weight) or its weights are nanoseconds.
    fn ends_at_weight(&self) -> bool {
        !self.timed || self.unit == spall_format::SampleUnit::Nanoseconds
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
        self.stack_lanes_at(frames, &frame_depths(frames))
    }

    /// [`stack_lanes`](Self::stack_lanes) with the frames' depths ([`frame_depths`]), for
    /// the tracks of one trace to share. A sample's stack is walked from its leaf up only
    /// to the first frame the last sample's stack had at the same depth (a frame is
    /// interned with its caller, so the stacks share every frame above it): O(boxes), not
    /// O(samples × depth), and a deep stack's outer frames are not read again from the
    /// table, whose rows are scattered (the walk was most of a deep profile's cost).
    pub fn stack_lanes_at(&self, frames: &[Frame], depths: &[u32]) -> Vec<Lane> {
        // Only a track whose samples do not end at their weight needs it (a selection).
        let typical = match self.ends_at_weight() {
            true => 1,
            false => self.typical_interval(),
        };
        let mut lanes: Vec<Lane> = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        // The frames below those kept open, leaf first.
        let mut new: Vec<(u32, StrId)> = Vec::new();
        let mut prev_end = i64::MIN;
        for i in 0..self.ts.len() {
            // Out-of-order times (a corrupt file) are clamped so boxes never overlap.
            let start = self.ts[i].max(prev_end);
            let end = self.sample_end(i, typical).max(start);
            // Boxes go on only where this sample starts as the last one ended.
            let (touches, last_end) = (prev_end == start, prev_end);
            prev_end = end;
            new.clear();
            let mut keep = 0;
            let mut f = self.frame[i];
            while let (Some(&d), Some(fr)) = (depths.get(f as usize), frames.get(f as usize)) {
                let d = d as usize;
                if touches && open.get(d).is_some_and(|o| o.frame == f) {
                    keep = d + 1;
                    break;
                }
                if d < MAX_STACK_DEPTH {
                    new.push((f, fr.name));
                }
                if d == 0 {
                    break;
                }
                f = fr.parent;
            }
            close(&mut lanes, &mut open, keep, last_end);
            open.extend(
                new.iter()
                    .rev()
                    .map(|&(frame, name)| Open { frame, name, start }),
            );
        }
        close(&mut lanes, &mut open, 0, prev_end);
        // The columns every box has alike, at once.
        for lane in &mut lanes {
            let n = lane.start.len();
            lane.cat = vec![StrId::EMPTY; n];
            lane.args = vec![ArgsId::NONE; n];
            lane.flags = vec![0; n];
        }
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

/// Per frame of a trace's frame table, its depth: 0 for an outermost frame, its caller's
/// plus one for another. Frames come after their callers ([`Trace::frames`]); one that
/// does not (a damaged table) is taken as outermost, so no walk up a table loops.
///
/// [`Trace::frames`]: crate::Trace::frames
pub fn frame_depths(frames: &[Frame]) -> Vec<u32> {
    let mut depths: Vec<u32> = Vec::with_capacity(frames.len());
    for f in frames {
        // `get` finds only a caller before the frame (`depths` holds those).
        let d = (depths.get(f.parent as usize)).map_or(0, |&p| p.saturating_add(1));
        depths.push(d);
    }
    depths
}

/// The frame at `depth` of the stack whose leaf is `leaf`, if the stack is that deep
/// (depths as [`frame_depths`] gives them; the stack lanes' depths).
pub fn frame_at_depth(frames: &[Frame], leaf: u32, depth: usize) -> Option<u32> {
    let mut path = Vec::new();
    let mut f = leaf;
    while let Some(fr) = frames.get(f as usize) {
        path.push(f);
        if fr.parent >= f {
            break;
        }
        f = fr.parent;
    }
    path.reverse();
    path.get(depth).copied()
}

/// Closes the open boxes from depth `from` down, each ending at `end`, adding each to its
/// lane (their times and names: the other columns are filled once all are in).
fn close(lanes: &mut Vec<Lane>, open: &mut Vec<Open>, from: usize, end: i64) {
    if lanes.len() < open.len() {
        lanes.resize_with(open.len(), Lane::default);
    }
    for (o, lane) in open.drain(from..).zip(&mut lanes[from..]) {
        lane.start.push(o.start);
        lane.dur.push(end - o.start);
        lane.name.push(o.name);
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

    /// A stack deeper than [`MAX_STACK_DEPTH`] keeps its outer frames, each at its own
    /// depth, and the deeper ones get no lane; a sample that returns to a shallower stack
    /// ends them there.
    #[test]
    fn stacks_are_cut_below_the_deepest_lane() {
        use super::MAX_STACK_DEPTH;
        let deep: Vec<String> = (0..MAX_STACK_DEPTH + 100)
            .map(|i| format!("f{i}"))
            .collect();
        let text = format!("{} 2\nf0;f1;x 1\n", deep.join(";"));
        let t = load_bytes(text.as_bytes()).unwrap();
        let lanes = t.samples()[0].stack_lanes(t.frames());
        assert_eq!(lanes.len(), MAX_STACK_DEPTH);
        let first = |d: usize| t.str(lanes[d].name[0]).to_string();
        assert_eq!(
            (first(0), first(MAX_STACK_DEPTH - 1)),
            ("f0".into(), "f1023".into())
        );
        assert_eq!((lanes[1].len(), lanes[1].end(0)), (1, 3));
        assert_eq!((t.str(lanes[2].name[1]), lanes[2].dur[1]), ("x", 1));
        assert_eq!(lanes[3].len(), 1);
    }
}
