//! Flame graphs and per-function statistics of a sampling profile: each sample's stack
//! counted with its weight, in the profile's unit (see `docs/MODEL.md`, "Samples").
//!
//! A trace whose spans are none and whose samples are some [`is_sampled`](Trace::is_sampled):
//! its flame graph, sandwich and statistics come from the samples of its
//! [`sample_kind`](Trace::sample_kind). Both walk the frame table, not each sample's
//! stack: a frame's parent always comes before it, so one backward pass adds each frame's
//! weight to its callers.

use hashbrown::HashMap;
use spall_format::SampleUnit;

use crate::flame_tree::{Builder, FlameOptions, FlameSort, FlameTree, FrameLabel};
use crate::samples::{SampleTrack, NO_FRAME};
use crate::strings::StrId;
use crate::trace::Trace;

/// One function's weight in a sampling profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleStats {
    /// The function's name.
    pub name: StrId,
    /// Samples whose stack holds the function.
    pub samples: u64,
    /// Weight of the samples whose stack holds it (once per sample, however many times
    /// it recurses).
    pub total: i64,
    /// Weight of the samples it is the leaf of.
    pub self_weight: i64,
}

/// A weight (or a difference of weights) in `unit`, for people: a duration, a size, or a
/// plain count.
pub fn weight_text(unit: SampleUnit, w: i64) -> String {
    match unit {
        SampleUnit::Nanoseconds => spall_util::format_duration(w),
        // Negative in differences (`diff`'s deltas, `check`'s margins).
        SampleUnit::Bytes if w < 0 => format!("-{}", spall_util::human_bytes(w.unsigned_abs())),
        SampleUnit::Bytes => spall_util::human_bytes(w as u64),
        SampleUnit::Count => w.to_string(),
    }
}

impl Trace {
    /// A flame graph's or statistic's weight as text: a duration for spans, in the counted
    /// samples' unit for a sampling profile.
    pub fn flame_weight_text(&self, w: i64) -> String {
        match self.sample_kind().filter(|_| self.is_sampled()) {
            Some((_, unit)) => weight_text(unit, w),
            None => spall_util::format_duration(w),
        }
    }

    /// [`flame_weight_text`](Self::flame_weight_text) for a flame graph of the samples of
    /// `kind` ([`FlameOptions::sample_kind`]).
    pub fn kind_weight_text(&self, kind: Option<&str>, w: i64) -> String {
        let kind = kind.and_then(|k| self.find_sample_kind(k).ok());
        match kind.filter(|_| self.is_sampled()) {
            Some((_, unit)) => weight_text(unit, w),
            None => self.flame_weight_text(w),
        }
    }

    /// Whether this is a sampling profile: samples and no spans.
    pub fn is_sampled(&self) -> bool {
        !self.samples.is_empty() && self.span_count() == 0
    }

    /// The kind of samples flame graphs and statistics count, and its unit: the one the
    /// tracks say is counted ([`SampleTrack::counted`]: pprof's default sample type, or one
    /// chosen with [`set_sample_kind`](Self::set_sample_kind)), else of the kinds the
    /// tracks hold the one with the most samples (a `perf` file of several events shows the
    /// commonest, as `perf report` shows one event at a time).
    pub fn sample_kind(&self) -> Option<(StrId, SampleUnit)> {
        if let Some(s) = self.samples.iter().find(|s| s.counted) {
            return Some((s.kind, s.unit));
        }
        let mut n: HashMap<(StrId, SampleUnit), usize> = HashMap::new();
        for s in &self.samples {
            *n.entry((s.kind, s.unit)).or_default() += s.ts.len();
        }
        n.into_iter()
            .max_by_key(|&((k, u), c)| (c, std::cmp::Reverse((k, u))))
            .map(|x| x.0)
    }

    /// Counts the samples of kind `name` (`cpu`, `alloc_space`; or `name/unit`, as
    /// `cpu/nanoseconds`) from now on; an error naming the kinds there are if none is
    /// called so.
    pub fn set_sample_kind(&mut self, name: &str) -> Result<(), String> {
        let (kind, unit) = self.find_sample_kind(name)?;
        for s in &mut self.samples {
            s.counted = s.kind == kind && s.unit == unit;
        }
        Ok(())
    }

    /// The kind called `name` (or `name/unit`); an error naming the kinds there are.
    pub fn find_sample_kind(&self, name: &str) -> Result<(StrId, SampleUnit), String> {
        let kinds = self.sample_kinds();
        let hit = (kinds.iter()).find(|&&(k, u)| {
            let k = self.strings.get(k);
            name == k || name.split_once('/') == Some((k, u.name()))
        });
        let Some(&(kind, unit)) = hit else {
            let names: Vec<String> = (kinds.iter())
                .map(|&(k, u)| format!("{}/{}", self.strings.get(k), u.name()))
                .collect();
            return Err(format!(
                "no samples of kind {name:?}; the kinds are: {}",
                names.join(", ")
            ));
        };
        Ok((kind, unit))
    }

    /// The kind `opts` counts: its [`FlameOptions::sample_kind`] where the profile has it,
    /// else [`sample_kind`](Self::sample_kind).
    pub fn flame_sample_kind(&self, opts: &FlameOptions) -> Option<(StrId, SampleUnit)> {
        (opts.sample_kind.as_deref())
            .and_then(|k| self.find_sample_kind(k).ok())
            .or_else(|| self.sample_kind())
    }

    /// Every (kind, unit) the sample tracks hold, in the order of their first track.
    pub fn sample_kinds(&self) -> Vec<(StrId, SampleUnit)> {
        let mut v: Vec<(StrId, SampleUnit)> = Vec::new();
        for s in &self.samples {
            if !v.contains(&(s.kind, s.unit)) {
                v.push((s.kind, s.unit));
            }
        }
        v
    }

    /// The tracks of the counted kind on the selected threads.
    fn counted_tracks<'a>(
        &'a self,
        threads: Option<&'a [u32]>,
    ) -> impl Iterator<Item = &'a SampleTrack> + 'a {
        self.kind_tracks(self.sample_kind(), threads)
    }

    /// The tracks of `kind` on the selected threads.
    fn kind_tracks<'a>(
        &'a self,
        kind: Option<(StrId, SampleUnit)>,
        threads: Option<&'a [u32]>,
    ) -> impl Iterator<Item = &'a SampleTrack> + 'a {
        self.samples.iter().filter(move |s| {
            Some((s.kind, s.unit)) == kind && threads.is_none_or(|t| t.contains(&s.thread))
        })
    }

    /// The samples `opts` selects merged by stack: a node's total is the weight of the
    /// samples through it, its self weight theirs that end there, its count how many
    /// samples pass through it (the root's: all of them).
    pub fn sample_flame(&self, opts: &FlameOptions, sort: FlameSort) -> FlameTree {
        let (r0, r1) = opts.range.unwrap_or((i64::MIN, i64::MAX));
        let mut b = Builder::new();
        let n = self.frames.len();
        // Per frame: its node under the current base (u32::MAX: not made yet).
        let mut node = vec![u32::MAX; n];
        let mut made: Vec<u32> = Vec::new();
        let mut chain: Vec<u32> = Vec::new();
        let kind = self.flame_sample_kind(opts);
        for track in self.kind_tracks(kind, opts.threads.as_deref()) {
            let base = if opts.per_thread {
                let th = &self.threads[track.thread as usize];
                let p = b.child(0, FrameLabel::Process(th.process));
                b.child(p, FrameLabel::Thread(track.thread))
            } else {
                0
            };
            if opts.per_thread {
                for &f in &made {
                    node[f as usize] = u32::MAX;
                }
                made.clear();
            }
            for i in 0..track.ts.len() {
                if !(track.ts[i] >= r0 && track.ts[i] < r1) {
                    continue;
                }
                let leaf = track.frame[i];
                let at = self.node_of(leaf, base, &mut b, &mut node, &mut made, &mut chain);
                let a = at as usize;
                b.self_ns[a] = b.self_ns[a].saturating_add(track.weight[i]);
                b.count[a] += 1;
            }
        }
        // Totals: each node's own, then (children after parents) added up the tree.
        for i in 0..b.label.len() {
            b.total[i] = b.self_ns[i];
        }
        for i in (1..b.label.len()).rev() {
            let p = b.parent[i] as usize;
            b.total[p] = b.total[p].saturating_add(b.total[i]);
            b.count[p] += b.count[i];
        }
        b.finish(self, sort)
    }

    /// The flame node of `frame` under `base`, made with its callers' where new.
    fn node_of(
        &self,
        frame: u32,
        base: u32,
        b: &mut Builder,
        node: &mut [u32],
        made: &mut Vec<u32>,
        chain: &mut Vec<u32>,
    ) -> u32 {
        if frame == NO_FRAME {
            return base;
        }
        chain.clear();
        let mut f = frame;
        let mut parent = base;
        while f != NO_FRAME && chain.len() <= self.frames.len() {
            if node[f as usize] != u32::MAX {
                parent = node[f as usize];
                break;
            }
            chain.push(f);
            f = self.frames[f as usize].parent;
        }
        for &f in chain.iter().rev() {
            parent = b.child(parent, FrameLabel::Name(self.frames[f as usize].name));
            node[f as usize] = parent;
            made.push(f);
        }
        parent
    }

    /// Per function of the counted kind's samples on `threads` (`None`: all) in `range`:
    /// its samples, total and self weight. In no order.
    pub fn sample_stats(
        &self,
        threads: Option<&[u32]>,
        range: Option<(i64, i64)>,
    ) -> Vec<SampleStats> {
        let (r0, r1) = range.unwrap_or((i64::MIN, i64::MAX));
        let n = self.frames.len();
        let (mut weight, mut count) = (vec![0i64; n], vec![0u64; n]);
        for track in self.counted_tracks(threads) {
            for i in 0..track.ts.len() {
                if !(track.ts[i] >= r0 && track.ts[i] < r1) {
                    continue;
                }
                let (w, f) = (track.weight[i], track.frame[i]);
                if f == NO_FRAME {
                    continue;
                }
                weight[f as usize] = weight[f as usize].saturating_add(w);
                count[f as usize] += 1;
            }
        }
        let mut by_name: HashMap<StrId, SampleStats> = HashMap::new();
        for (f, fr) in self.frames.iter().enumerate() {
            if weight[f] != 0 || count[f] != 0 {
                let e = by_name.entry(fr.name).or_insert_with(|| empty(fr.name));
                e.self_weight = e.self_weight.saturating_add(weight[f]);
            }
        }
        // Subtree sums: a frame's parent has a smaller index.
        let (mut sub_w, mut sub_c) = (weight, count);
        for f in (0..n).rev() {
            let p = self.frames[f].parent;
            if p != NO_FRAME && (p as usize) < f {
                sub_w[p as usize] = sub_w[p as usize].saturating_add(sub_w[f]);
                sub_c[p as usize] += sub_c[f];
            }
        }
        for (f, fr) in self.frames.iter().enumerate() {
            if sub_c[f] == 0 && sub_w[f] == 0 || self.recursion_below(f as u32) {
                continue;
            }
            let e = by_name.entry(fr.name).or_insert_with(|| empty(fr.name));
            e.total = e.total.saturating_add(sub_w[f]);
            e.samples += sub_c[f];
        }
        by_name.into_values().collect()
    }

    /// What a statistics table lists (the viewer's panel, the page's): for a sampling
    /// profile ([`is_sampled`](Self::is_sampled)) a row per function of the counted kind's
    /// samples as `spall-cli stats` gives them ([`sample_stats`](Self::sample_stats)): its
    /// samples as the count, its total and self weight, in the profile's unit
    /// ([`sample_kind`](Self::sample_kind)), as `total_ns` and `self_ns`, the other figures
    /// 0; else [`stats`](Self::stats)'s span names. Largest total first, then by name.
    pub fn table_stats(&self, filter: &crate::StatsFilter) -> Vec<crate::NameStats> {
        if !self.is_sampled() {
            return self.stats(filter);
        }
        let mut rows: Vec<crate::NameStats> = (self
            .sample_stats(filter.threads.as_deref(), filter.range))
        .into_iter()
        .filter(|r| {
            filter
                .name
                .as_ref()
                .is_none_or(|f| f.matches(self.str(r.name)))
        })
        .map(|r| crate::NameStats::of_samples(r.name, r.samples, r.total, r.self_weight))
        .collect();
        rows.sort_by(|a, b| {
            (b.total_ns.cmp(&a.total_ns)).then_with(|| self.str(a.name).cmp(self.str(b.name)))
        });
        rows
    }

    /// The weight of the counted kind's samples on `threads` (`None`: all) in `range`: the
    /// whole a function's share is of.
    pub fn sample_total(&self, threads: Option<&[u32]>, range: Option<(i64, i64)>) -> i64 {
        let (r0, r1) = range.unwrap_or((i64::MIN, i64::MAX));
        (self.counted_tracks(threads))
            .flat_map(|t| t.ts.iter().zip(&t.weight))
            .filter(|&(&ts, _)| ts >= r0 && ts < r1)
            .fold(0, |a, (_, &w)| a.saturating_add(w))
    }

    /// How many samples of the counted kind are on `threads` (`None`: all) in `range`.
    pub fn sample_count(&self, threads: Option<&[u32]>, range: Option<(i64, i64)>) -> u64 {
        let (r0, r1) = range.unwrap_or((i64::MIN, i64::MAX));
        (self.counted_tracks(threads))
            .map(|t| t.ts.iter().filter(|&&ts| ts >= r0 && ts < r1).count() as u64)
            .sum()
    }

    /// Whether a caller of `frame` has its name (its samples are counted there).
    fn recursion_below(&self, frame: u32) -> bool {
        let name = self.frames[frame as usize].name;
        let mut p = self.frames[frame as usize].parent;
        let mut steps = 0;
        while p != NO_FRAME && steps <= self.frames.len() {
            let fr = &self.frames[p as usize];
            if fr.name == name {
                return true;
            }
            p = fr.parent;
            steps += 1;
        }
        false
    }
}

fn empty(name: StrId) -> SampleStats {
    SampleStats {
        name,
        samples: 0,
        total: 0,
        self_weight: 0,
    }
}

#[cfg(test)]
mod tests {
    use crate::{load_bytes, FlameOptions, FlameSort};

    const FOLDED: &[u8] = b"main;a;b 12\nmain;c 3\nmain;a;b 5\nmain;a;main;a 2\n";

    #[test]
    fn stats_count_each_function_once_per_sample() {
        let t = load_bytes(FOLDED).unwrap();
        assert!(t.is_sampled());
        let mut rows: Vec<_> = (t.sample_stats(None, None).into_iter())
            .map(|s| (t.str(s.name).to_string(), s.samples, s.total, s.self_weight))
            .collect();
        rows.sort();
        assert_eq!(
            rows,
            vec![
                ("a".into(), 3, 19, 2),
                ("b".into(), 2, 17, 17),
                ("c".into(), 1, 3, 3),
                ("main".into(), 4, 22, 0),
            ]
        );
    }

    #[test]
    fn flame_weighs_stacks_and_keeps_ranges_and_threads() {
        let t = load_bytes(FOLDED).unwrap();
        let tree = t.flame(&FlameOptions::default(), FlameSort::Name);
        assert_eq!(
            tree.folded(&t),
            vec![
                ("main;a;b".to_string(), 17),
                ("main;a;main;a".to_string(), 2),
                ("main;c".to_string(), 3)
            ]
        );
        assert_eq!((tree.total[0], tree.count[0]), (22, 4));
        // Untimed samples sit end to end: [12, 15) holds only main;c.
        let opts = FlameOptions {
            range: Some((12, 15)),
            ..FlameOptions::default()
        };
        assert_eq!(
            t.flame(&opts, FlameSort::Name).folded(&t),
            vec![("main;c".to_string(), 3)]
        );
        let opts = FlameOptions {
            per_thread: true,
            ..FlameOptions::default()
        };
        let per = t.flame(&opts, FlameSort::Name).folded(&t);
        assert_eq!(per[0].1, 17);
        assert!(per[0].0.ends_with(";main;a;b"), "{per:?}");
    }
}
