//! CPU samples: `P` events, V8's `Profile`/`ProfileChunk` events, and the samples of
//! sampling profiles ([`crate::profile`]), as per-thread sample tracks whose samples point
//! into one table of stack frames.
//!
//! Every sample has a weight in its track's unit. A plain `P` event weighs 1 (a count); a
//! V8 sample the time to the next sample of its profile (the last one, the interval before
//! it), in nanoseconds, as DevTools and speedscope count self time.
//!
//! A plain `P` event is one sample whose leaf frame is its name. A `Profile` event (args
//! `data.startTime`, µs) opens a V8 profile with its `id`; each `ProfileChunk` of that id and
//! process adds call-tree nodes (`cpuProfile.nodes`: `id`, `parent` or `children`,
//! `callFrame.functionName`) and samples (`cpuProfile.samples`: node ids, with `timeDeltas`
//! in µs, each from the previous sample). The samples go on the `Profile` event's thread.
//! V8's `(root)` node is left out of stacks.

use std::collections::HashMap;

use serde_json::Value;
use spall_format::{Diagnostics, SampleUnit};

use crate::args::{ArgsId, ArgsStore};
use crate::diag::ModelWarning;
use crate::event_kinds::SampleEvent;
use crate::strings::{StrId, Strings};

/// No frame: the parent of a stack's outermost frame.
pub const NO_FRAME: u32 = u32::MAX;

/// A sample's CPU where it is not known.
pub const NO_CPU: u32 = u32::MAX;

/// One stack frame: a function (where given, its source file and line), and the frame
/// that called it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The function's name.
    pub name: StrId,
    /// Index into [`Trace::frames`](crate::Trace::frames), or [`NO_FRAME`].
    pub parent: u32,
    /// The source file (for `perf`, the module), or [`StrId::EMPTY`].
    pub file: StrId,
    /// The line in `file`, 1-based; 0 where not given.
    pub line: u32,
    /// The name as the file gave it where `name` is that name demangled (a C++ or Rust
    /// symbol); else [`StrId::EMPTY`].
    pub raw: StrId,
}

/// The samples of one thread and kind, sorted by time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleTrack {
    /// Index into [`Trace::threads`](crate::Trace::threads).
    pub thread: u32,
    /// What the weights measure (`cycles`, `cpu`, `samples`): a thread has one track per
    /// kind.
    pub kind: StrId,
    /// The weights' unit.
    pub unit: SampleUnit,
    /// Whether flame graphs and statistics count this track's kind (see
    /// [`Trace::sample_kind`](crate::Trace::sample_kind)): the kind the profile's own tools
    /// show by default (pprof's default sample type), or one chosen with
    /// [`Trace::set_sample_kind`](crate::Trace::set_sample_kind).
    pub counted: bool,
    /// Whether the times are the samples' own. When false (collapsed stacks, and
    /// speedscope profiles in bytes or counts have none) each sample was given the time at
    /// which the previous one's weight ended, from 0, in file order: speedscope's "time
    /// order" layout, where a sample is as wide as its weight.
    pub timed: bool,
    /// Per sample, its time in nanoseconds.
    pub ts: Vec<i64>,
    /// Per sample, its leaf frame.
    pub frame: Vec<u32>,
    /// Per sample, its weight in `unit`.
    pub weight: Vec<i64>,
    /// Per sample, its own arguments (pprof's labels); empty when no sample of the track
    /// has any.
    pub args: Vec<ArgsId>,
    /// Per sample, the CPU it was taken on ([`NO_CPU`]: not known); empty when no sample
    /// of the track says (`perf script` prints `[cpu]` for system-wide recordings).
    pub cpu: Vec<u32>,
}

impl SampleTrack {
    /// The sum of the weights.
    pub fn total_weight(&self) -> i64 {
        self.weight.iter().fold(0i64, |a, &w| a.saturating_add(w))
    }

    /// Where the track ends: its last sample's time plus its weight when that is a time
    /// (or the samples were laid out by weight), else its last sample's time.
    pub fn end(&self) -> Option<i64> {
        let (&ts, &w) = self.ts.last().zip(self.weight.last())?;
        let by_weight = !self.timed || self.unit == SampleUnit::Nanoseconds;
        Some(if by_weight { ts.saturating_add(w) } else { ts })
    }
}

/// Interned call stacks: each (name, parent) pair once. CPU samples point into one, and
/// statistics by call stack (`GroupBy::Stack`) use another.
#[derive(Default)]
pub(crate) struct Frames {
    pub(crate) frames: Vec<Frame>,
    /// Ids into `frames` (an entry's low 32 bits), each beside its frame's
    /// [`frame_tag`] (the high 32): 8 bytes an entry where a map keyed by the frame held
    /// 24, and the table grows, and a probe passes an entry of another hash, without
    /// reading that entry's frame (a cache miss each in a large profile). A frame made
    /// right after its parent (at [`next_to`]) is not in it: a lookup reads that place
    /// first, and a new stack's frames, each under the last, are most of a profile's (an
    /// insert each was a cache miss; docs/PERFORMANCE.md, "Sampling profiles").
    ids: hashbrown::HashTable<u64>,
    /// How many of `frames` are placed: in `ids`, or at [`next_to`] their parent.
    placed: usize,
}

/// The place right after frame `f`'s parent's (0 for an outermost frame), where a lookup
/// reads first.
#[inline(always)]
fn next_to(f: &Frame) -> usize {
    f.parent.wrapping_add(1) as usize
}

/// An odd constant of mixed bits (2^64 over the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The table's hash of an entry, from the tag it keeps (its high 32 bits).
#[inline(always)]
fn spread(e: &u64) -> u64 {
    (e >> 32).wrapping_mul(K)
}

/// The high 32 bits of a frame's hash: its five numbers in two words folded with one
/// multiply, inline (`Hash` through foldhash shifted each field into a 128-bit buffer,
/// then folded it).
#[inline(always)]
fn frame_tag(f: &Frame) -> u64 {
    const K2: u64 = 0xa076_1d64_78bd_642f;
    let a = ((f.name.0 as u64) << 32 | f.parent as u64) ^ K;
    let b = ((f.file.0 as u64) << 32 | f.line as u64) ^ (f.raw.0 as u64).rotate_left(23) ^ K2;
    spall_format::hash::fold_mul(a, b) >> 32
}

impl Frames {
    /// The frame `name` called from `parent` ([`NO_FRAME`] for an outermost one).
    pub(crate) fn get(&mut self, name: StrId, parent: u32) -> u32 {
        self.get_frame(Frame {
            name,
            parent,
            file: StrId::EMPTY,
            line: 0,
            raw: StrId::EMPTY,
        })
    }

    /// Room for `n` more frames, and table entries for a quarter of them (a frame made
    /// next to its caller has none: most of a call tree's).
    pub(crate) fn reserve(&mut self, n: usize) {
        self.frames.reserve(n);
        self.ids.reserve(n / 4, spread);
    }

    /// The frame `f` (its parent interned before it), interned.
    pub(crate) fn get_frame(&mut self, f: Frame) -> u32 {
        if self.placed < self.frames.len() {
            self.place_taken();
        }
        let Frames {
            frames,
            ids,
            placed,
        } = self;
        // A stack's frames are often made in one go, each right after its caller: that
        // one is checked before the frame is looked up at random (and is in no table).
        let after = next_to(&f);
        if frames.get(after) == Some(&f) {
            return after as u32;
        }
        // A frame is made after its parent, so the last frame made has none below it yet:
        // below it, `f` is new, and lands next to its parent (a new stack's frames, each
        // under the last). Elsewhere it is looked up, and if new, goes in the table.
        let next = frames.len();
        if after != next {
            let t = frame_tag(&f);
            let h = spread(&(t << 32));
            let found = ids.find(h, |&e| e >> 32 == t && frames[e as u32 as usize] == f);
            if let Some(&e) = found {
                return e as u32;
            }
            ids.insert_unique(h, t << 32 | next as u64, spread);
        }
        frames.push(f);
        *placed += 1;
        next as u32
    }

    /// Places the frames taken as they were ([`take_unique`](Self::take_unique)), to be
    /// looked up from now on: each not next to its parent goes in the table.
    #[cold]
    fn place_taken(&mut self) {
        let Frames {
            frames,
            ids,
            placed,
        } = self;
        for (i, f) in frames.iter().enumerate().skip(*placed) {
            if next_to(f) != i {
                let e = frame_tag(f) << 32 | i as u64;
                ids.insert_unique(spread(&e), e, spread);
            }
        }
        *placed = frames.len();
    }

    /// Into no frames, `frames`, distinct and each after its parent, with their ids as
    /// they are; not looked up until [`get_frame`](Self::get_frame) needs them (a profile
    /// decoded as one chunk never does).
    pub(crate) fn take_unique(&mut self, frames: impl Iterator<Item = Frame>) {
        debug_assert!(self.frames.is_empty());
        self.frames.extend(frames);
    }

    /// The names from the outermost frame down to `id`.
    pub(crate) fn path(&self, mut id: u32) -> Vec<StrId> {
        let mut v = Vec::new();
        while id != NO_FRAME {
            let f = self.frames[id as usize];
            v.push(f.name);
            id = f.parent;
        }
        v.reverse();
        v
    }
}

#[derive(Default)]
struct Profile {
    thread: u32,
    start_ns: i64,
    /// Node id to (parent node id, function name).
    nodes: HashMap<i64, (Option<i64>, StrId)>,
    /// Sample times and node ids.
    samples: Vec<(i64, i64)>,
    /// The time of the last sample, in µs from `start_ns`.
    clock_us: f64,
}

/// Builds the sample tracks (by thread) and the frame table from `P` events (in file
/// order), after a sampling profile's tracks and frames (`profiled`).
pub(crate) fn build(
    events: &[SampleEvent],
    profiled: (Vec<SampleTrack>, Frames),
    strings: &mut Strings,
    args: &ArgsStore,
    thread_process: impl Fn(u32) -> u32,
    diags: &mut Diagnostics<ModelWarning>,
) -> (Vec<SampleTrack>, Vec<Frame>) {
    let (mut tracks, mut frames) = profiled;
    if events.is_empty() {
        return (tracks, frames.frames);
    }
    let mut by_thread: HashMap<u32, Vec<(i64, u32)>> = HashMap::new();
    let mut v8_threads: Vec<u32> = Vec::new();
    // Profiles in the order they start (a map only finds them), so frame ids do not depend
    // on hashing.
    let mut profiles: Vec<Profile> = Vec::new();
    let mut profile_ids: HashMap<(u32, StrId), usize> = HashMap::new();
    let (profile, chunk) = (strings.intern("Profile"), strings.intern("ProfileChunk"));
    for e in events {
        let key = (thread_process(e.thread), e.id);
        if e.name == profile {
            let data = args.json(e.args);
            let start_us = data
                .as_ref()
                .and_then(|a| a.pointer("/data/startTime"))
                .and_then(Value::as_f64);
            profile_ids.insert(key, profiles.len());
            profiles.push(Profile {
                thread: e.thread,
                start_ns: start_us.map_or(e.ts, |us| (us * 1000.0) as i64),
                ..Profile::default()
            });
        } else if e.name == chunk {
            let Some(p) = profile_ids.get(&key).map(|&i| &mut profiles[i]) else {
                diags.warn(ModelWarning::BadSamples, e.offset, || {
                    "ProfileChunk with no Profile event of its id before it; skipped".to_string()
                });
                continue;
            };
            if !add_chunk(p, args.json(e.args), strings) {
                diags.warn(ModelWarning::BadSamples, e.offset, || {
                    "ProfileChunk whose args are not a V8 cpuProfile; skipped".to_string()
                });
            }
        } else {
            let leaf = frames.get(e.name, NO_FRAME);
            by_thread.entry(e.thread).or_default().push((e.ts, leaf));
        }
    }
    let root = strings.intern("(root)");
    for p in profiles {
        let mut memo: HashMap<i64, u32> = HashMap::new();
        v8_threads.push(p.thread);
        let out = by_thread.entry(p.thread).or_default();
        for &(ts, node) in &p.samples {
            let leaf = frame_of(node, &p.nodes, root, &mut frames, &mut memo);
            out.push((ts, leaf));
        }
    }
    let (cpu, count) = (strings.intern("cpu"), strings.intern("samples"));
    tracks.extend(by_thread.into_iter().map(|(thread, mut s)| {
        s.sort_by_key(|x| x.0);
        let (ts, frame): (Vec<i64>, Vec<u32>) = s.into_iter().unzip();
        // V8's samples weigh the time to the next one; a `P` event is one sample.
        let (kind, unit, weight) = if v8_threads.contains(&thread) {
            (cpu, SampleUnit::Nanoseconds, intervals(&ts))
        } else {
            (count, SampleUnit::Count, vec![1; ts.len()])
        };
        SampleTrack {
            thread,
            kind,
            unit,
            counted: false,
            timed: true,
            ts,
            frame,
            weight,
            args: Vec::new(),
            cpu: Vec::new(),
        }
    }));
    tracks.sort_by_key(|t| (t.thread, t.kind));
    (tracks, frames.frames)
}

/// `(start, end)` widened to every track's samples (an untimed track's from 0 to its total
/// weight, a track in nanoseconds to its last sample's end).
pub(crate) fn extent(tracks: &[SampleTrack], (mut start, mut end): (i64, i64)) -> (i64, i64) {
    for t in tracks {
        if let (Some(&first), Some(last)) = (t.ts.first(), t.end()) {
            start = start.min(first);
            end = end.max(last);
        }
    }
    (start, end)
}

/// Each sample's time to the next; the last one's, the interval before it.
fn intervals(ts: &[i64]) -> Vec<i64> {
    let mut w: Vec<i64> = ts.windows(2).map(|p| p[1].saturating_sub(p[0])).collect();
    if !ts.is_empty() {
        w.push(w.last().copied().unwrap_or(0));
    }
    w
}

/// Adds one chunk's nodes and samples; false if it holds neither.
fn add_chunk(p: &mut Profile, args: Option<Value>, strings: &mut Strings) -> bool {
    let Some(data) = args.as_ref().and_then(|a| a.get("data")) else {
        return false;
    };
    let cpu = data.get("cpuProfile");
    let nodes = cpu.and_then(|c| c.get("nodes")).and_then(Value::as_array);
    for n in nodes.into_iter().flatten() {
        let Some(id) = n.get("id").and_then(Value::as_i64) else {
            continue;
        };
        let name = n
            .pointer("/callFrame/functionName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("(anonymous)");
        let name = strings.intern(name);
        let parent = n.get("parent").and_then(Value::as_i64);
        let entry = p.nodes.entry(id).or_insert((None, name));
        entry.1 = name;
        if parent.is_some() {
            entry.0 = parent;
        }
        for c in n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_i64() {
                p.nodes.entry(c).or_insert((None, StrId::EMPTY)).0 = Some(id);
            }
        }
    }
    let samples = cpu.and_then(|c| c.get("samples")).and_then(Value::as_array);
    let deltas = data
        .get("timeDeltas")
        .or_else(|| cpu.and_then(|c| c.get("timeDeltas")))
        .and_then(Value::as_array);
    let (Some(samples), Some(deltas)) = (samples, deltas) else {
        return nodes.is_some();
    };
    for (s, d) in samples.iter().zip(deltas) {
        p.clock_us += d.as_f64().unwrap_or(0.0);
        if let Some(node) = s.as_i64() {
            let ts = p.start_ns + (p.clock_us * 1000.0) as i64;
            p.samples.push((ts, node));
        }
    }
    true
}

/// The frame of a V8 node, interning its ancestors first (iteratively: stacks can be deep).
fn frame_of(
    node: i64,
    nodes: &HashMap<i64, (Option<i64>, StrId)>,
    root: StrId,
    frames: &mut Frames,
    memo: &mut HashMap<i64, u32>,
) -> u32 {
    let mut chain = Vec::new();
    let mut at = Some(node);
    let mut parent = NO_FRAME;
    while let Some(n) = at {
        if let Some(&f) = memo.get(&n) {
            parent = f;
            break;
        }
        if chain.len() > nodes.len() {
            break; // A cycle in a corrupt profile.
        }
        chain.push(n);
        at = nodes.get(&n).and_then(|x| x.0);
    }
    for &n in chain.iter().rev() {
        let (p, name) = nodes.get(&n).copied().unwrap_or((None, StrId::EMPTY));
        let f = if name == root && p.is_none() {
            NO_FRAME
        } else {
            frames.get(name, parent)
        };
        memo.insert(n, f);
        parent = f;
    }
    parent
}

#[cfg(test)]
mod tests {
    use crate::{load_bytes, ExtId, NO_FRAME};

    /// Frames asked for in a random order of callers and names, biased to the last frame
    /// made (new stacks, each frame next to its caller: in no table) and to a few callers
    /// (siblings, looked up): each pair gets one id, as a map of pairs gives; frames taken
    /// as they are, then asked for again, keep theirs.
    #[test]
    fn frames_are_interned_once_wherever_they_are_kept() {
        use super::Frames;
        use crate::strings::StrId;
        use std::collections::HashMap;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut frames, mut want) = (Frames::default(), HashMap::new());
        let mut ops = Vec::new();
        for _ in 0..20_000 {
            let made = frames.frames.len() as u64;
            let parent = match next(4) {
                _ if made == 0 => NO_FRAME,
                0 => made as u32 - 1,
                1 => NO_FRAME,
                2 => next(made.min(8)) as u32,
                _ => next(made) as u32,
            };
            let name = StrId(next(6) as u32 + 1);
            let id = frames.get(name, parent);
            let known = *want.entry((name, parent)).or_insert(id);
            assert_eq!(id, known, "{name:?} under {parent}");
            ops.push((name, parent, id));
        }
        assert_eq!(frames.frames.len(), want.len());
        let mut taken = Frames::default();
        taken.take_unique(frames.frames.iter().copied());
        for (name, parent, id) in ops.into_iter().rev() {
            assert_eq!(taken.get(name, parent), id);
        }
        assert_eq!(taken.frames.len(), want.len());
    }

    #[test]
    fn v8_profile_chunks_become_stacks() {
        let t = load_bytes(
            br#"[
            {"ph":"P","name":"Profile","id":"0x1","ts":1000,"pid":1,"tid":5,
             "args":{"data":{"startTime":1000}}},
            {"ph":"P","name":"ProfileChunk","id":"0x1","ts":1100,"pid":1,"tid":9,
             "args":{"data":{"cpuProfile":{"nodes":[
                {"id":1,"callFrame":{"functionName":"(root)"}},
                {"id":2,"parent":1,"callFrame":{"functionName":"main"}},
                {"id":3,"parent":2,"callFrame":{"functionName":""}}],
              "samples":[2,3,3]},"timeDeltas":[5,10,10]}}},
            {"ph":"P","name":"SampleA","ts":7,"pid":1,"tid":2}
        ]"#,
        )
        .unwrap();
        let tracks = t.samples();
        assert_eq!(tracks.len(), 2);
        let v8 = tracks.iter().find(|s| s.ts.len() == 3).unwrap();
        assert_eq!(t.threads()[v8.thread as usize].tid, ExtId::Num(5));
        assert_eq!(v8.ts, vec![1_005_000, 1_015_000, 1_025_000]);
        let stack = |f: u32| {
            let mut out = Vec::new();
            let mut f = f;
            while f != NO_FRAME {
                out.push(t.str(t.frames()[f as usize].name).to_string());
                f = t.frames()[f as usize].parent;
            }
            out
        };
        assert_eq!(stack(v8.frame[0]), vec!["main"]);
        assert_eq!(stack(v8.frame[2]), vec!["(anonymous)", "main"]);
        // Each V8 sample weighs the time to the next; plain `P` samples count 1.
        assert_eq!(v8.weight, vec![10_000, 10_000, 10_000]);
        assert_eq!(v8.unit, spall_format::SampleUnit::Nanoseconds);
        let plain = tracks.iter().find(|s| s.ts.len() == 1).unwrap();
        assert_eq!(
            (plain.weight.clone(), plain.unit),
            (vec![1], spall_format::SampleUnit::Count)
        );
    }
}
