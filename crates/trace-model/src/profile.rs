//! The samples of sampling profiles (`perf script`, collapsed stacks, `.cpuprofile`,
//! speedscope: [`spall_format::sampled`]), collected as they are decoded and made into
//! sample tracks when the trace is finished.
//!
//! Samples go to one track per (thread, kind, unit). A sample's stack is interned frame by
//! frame, outermost first, into a table where each (name, file, line, caller) is one frame,
//! so a sample is its leaf frame's index. Tracks whose samples have no time are laid out
//! end to end by weight from 0 (see [`SampleTrack::timed`]).

use hashbrown::HashMap;
use spall_format::{Diagnostics, RawFrame, RawSample, SampleUnit};

use crate::args::ArgsId;
use crate::diag::ModelWarning;
use crate::samples::{Frame, Frames, SampleTrack, NO_CPU, NO_FRAME};
use crate::strings::{StrId, Strings};

/// How many tracks [`Collected`] remembers the kinds of.
const RECENT_TRACKS: usize = 8;

/// One track being collected.
#[derive(Default)]
struct TrackBuild {
    thread: u32,
    kind: StrId,
    unit: SampleUnit,
    /// Samples that came with no time.
    untimed: u64,
    ts: Vec<i64>,
    frame: Vec<u32>,
    weight: Vec<i64>,
    /// Per sample, its args; empty until a sample has some.
    args: Vec<ArgsId>,
    /// Per sample, its CPU ([`NO_CPU`]: not known); empty until a sample has one.
    cpu: Vec<u32>,
}

/// A builder's profile samples and their frames.
#[derive(Default)]
pub(crate) struct Collected {
    pub(crate) frames: Frames,
    tracks: Vec<TrackBuild>,
    ids: HashMap<(u32, StrId, SampleUnit), u32>,
    /// The last few tracks samples went to, with their kind's text: samples come in runs
    /// of one track, or (pprof's sample types) take turns among a few.
    recent: Vec<(u32, SampleUnit, String, u32)>,
    /// The last sample's leaf frame, for a sample with the same stack.
    last_leaf: Option<u32>,
    /// The last sample's stack: frame text and interned frame (consecutive samples share
    /// their outer frames, which need no lookup then).
    prev: Vec<(u64, u32)>,
    /// The kind the profile's own tools count by default, where it says
    /// ([`spall_format::EventSink::sample_kind_default`]).
    pub(crate) default_kind: Option<(String, SampleUnit)>,
    /// Names that look mangled, to their demangled form (`StrId::EMPTY`: not mangled).
    demangled: HashMap<StrId, StrId>,
    /// The file of the last frame interned that had one.
    last_file: (String, StrId),
    /// Per node of the reader's call tree ([`RawSample::nodes`]), its frame ([`NO_FRAME`]:
    /// not seen yet).
    tree_frames: Vec<u32>,
}

impl Collected {
    /// Adds one sample of `thread`, with its args' id (`ArgsId::NONE`: none).
    pub(crate) fn add(
        &mut self,
        s: &RawSample<'_>,
        thread: u32,
        args: ArgsId,
        strings: &mut Strings,
    ) {
        let track = self.track(s, thread, strings);
        let mut parent = NO_FRAME;
        let same = self.last_leaf.filter(|_| s.same_stack);
        let tree = same.is_none() && !s.nodes.is_empty() && s.nodes.len() == s.stack.len();
        let stack = if same.is_some() || tree {
            &[][..]
        } else {
            s.stack
        };
        // Outer frames the reader kept from the last sample are the last stack's.
        let kept = s.same_outer.min(self.prev.len()).min(stack.len());
        if kept > 0 {
            parent = self.prev[kept - 1].1;
        }
        for (depth, f) in stack.iter().enumerate().skip(kept) {
            let key = frame_key(f);
            if let Some(&(k, id)) = self.prev.get(depth) {
                let same = k == key && self.same_frame(id, f, parent, strings);
                if same {
                    parent = id;
                    continue;
                }
            }
            self.prev.truncate(depth);
            parent = self.intern(f, parent, strings);
            self.prev.push((key, parent));
        }
        match same {
            Some(leaf) => parent = leaf,
            None if tree => parent = self.tree_stack(s, strings),
            None => self.prev.truncate(s.stack.len()),
        }
        self.last_leaf = Some(parent);
        let t = &mut self.tracks[track as usize];
        match s.ts {
            Some(ts) => t.ts.push(ts),
            None => {
                t.ts.push(0);
                t.untimed += 1;
            }
        }
        t.frame.push(parent);
        t.weight.push(s.weight);
        // Filled in from the first sample that has some (the track's first included).
        if args != ArgsId::NONE || !t.args.is_empty() {
            t.args.resize(t.weight.len() - 1, ArgsId::NONE);
            t.args.push(args);
        }
        if s.cpu.is_some() || !t.cpu.is_empty() {
            t.cpu.resize(t.weight.len() - 1, NO_CPU);
            t.cpu.push(s.cpu.unwrap_or(NO_CPU));
        }
    }

    /// Room for `n` more frames (a call tree's nodes, each about one), at most 16M: its
    /// table and the per-node frames are then not copied as they grow.
    pub(crate) fn reserve_frames(&mut self, n: usize) {
        let n = n.min(1 << 24);
        self.frames.reserve(n);
        self.tree_frames
            .reserve(n.saturating_sub(self.tree_frames.len()));
    }

    /// The frame `f` called from `parent`, interned.
    fn intern(&mut self, f: &RawFrame<'_>, parent: u32, strings: &mut Strings) -> u32 {
        let (name, raw) = self.name(&f.name, strings);
        // Most frames are of the module or file of the frame before them.
        let file = match f.file.as_deref() {
            None => StrId::EMPTY,
            Some(x) if spall_format::hash::same(self.last_file.0.as_bytes(), x.as_bytes()) => {
                self.last_file.1
            }
            Some(x) => {
                let id = strings.intern(x);
                self.last_file.0.clear();
                self.last_file.0.push_str(x);
                self.last_file.1 = id;
                id
            }
        };
        self.frames.get_frame(Frame {
            name,
            raw,
            parent,
            file,
            line: f.line.unwrap_or(0),
        })
    }

    /// The leaf frame of a sample whose stack the reader keeps as a call tree
    /// ([`RawSample::nodes`]): from the deepest of its nodes seen before, only the frames
    /// below it are interned (a node's frame is the same in every sample).
    fn tree_stack(&mut self, s: &RawSample<'_>, strings: &mut Strings) -> u32 {
        let known = |n: u32| self.tree_frames.get(n as usize).copied();
        let seen = s
            .nodes
            .iter()
            .rposition(|&n| known(n).is_some_and(|f| f != NO_FRAME));
        let (mut parent, from) = match seen {
            Some(d) => (self.tree_frames[s.nodes[d] as usize], d + 1),
            None => (NO_FRAME, 0),
        };
        for (f, &n) in s.stack[from..].iter().zip(&s.nodes[from..]) {
            parent = self.intern(f, parent, strings);
            let n = n as usize;
            if self.tree_frames.len() <= n {
                self.tree_frames.resize(n + 1, NO_FRAME);
            }
            self.tree_frames[n] = parent;
        }
        // The next sample's stack is compared with this one's frame by frame.
        self.prev.clear();
        parent
    }

    /// A frame's name interned, demangled if it is a C++ or Rust symbol, and its raw form
    /// (`StrId::EMPTY` when it needed no demangling).
    fn name(&mut self, name: &str, strings: &mut Strings) -> (StrId, StrId) {
        let id = strings.intern(name);
        if !(name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__")) {
            return (id, StrId::EMPTY);
        }
        let d = *(self.demangled.entry(id)).or_insert_with(|| {
            crate::demangle::demangle(name).map_or(StrId::EMPTY, |d| strings.intern(&d))
        });
        if d == StrId::EMPTY {
            (id, StrId::EMPTY)
        } else {
            (d, id)
        }
    }

    /// Whether the interned frame `id` is `f` called from `parent`.
    fn same_frame(&self, id: u32, f: &RawFrame<'_>, parent: u32, strings: &Strings) -> bool {
        let fr = &self.frames.frames[id as usize];
        let name = if fr.raw == StrId::EMPTY {
            fr.name
        } else {
            fr.raw
        };
        // Compared a word at a time, inline (`memcmp` is a byte loop in WebAssembly).
        let same = |a: &str, b: &str| spall_format::hash::same(a.as_bytes(), b.as_bytes());
        fr.parent == parent
            && same(strings.get(name), &f.name)
            && fr.line == f.line.unwrap_or(0)
            && same(strings.get(fr.file), f.file.as_deref().unwrap_or(""))
    }

    /// The track of a sample.
    fn track(&mut self, s: &RawSample<'_>, thread: u32, strings: &mut Strings) -> u32 {
        let same = |r: &str| spall_format::hash::same(r.as_bytes(), s.kind.as_bytes());
        let hit = (self.recent.iter()).find(|r| r.0 == thread && r.1 == s.unit && same(&r.2));
        if let Some(r) = hit {
            return r.3;
        }
        let kind = strings.intern(&s.kind);
        let next = self.tracks.len() as u32;
        let t = *self.ids.entry((thread, kind, s.unit)).or_insert(next);
        if t == next {
            self.tracks.push(TrackBuild {
                thread,
                kind,
                unit: s.unit,
                ..TrackBuild::default()
            });
        }
        if self.recent.len() == RECENT_TRACKS {
            self.recent.remove(0);
        }
        self.recent.push((thread, s.unit, s.kind.to_string(), t));
        t
    }

    /// Adds another builder's samples, its strings and threads mapped to this one's.
    pub(crate) fn absorb(
        &mut self,
        other: Collected,
        s: impl Fn(StrId) -> StrId,
        thread: impl Fn(u32) -> u32,
        args: impl Fn(ArgsId) -> ArgsId,
    ) {
        self.recent.clear();
        self.last_leaf = None;
        self.tree_frames.clear();
        self.default_kind = self.default_kind.take().or(other.default_kind);
        self.prev.clear();
        // Into no frames (a profile decoded as one chunk), they are taken as they are:
        // distinct strings stay distinct, so the frames stay distinct, and keep their ids
        // (an empty map).
        let map: Vec<u32> = if self.frames.frames.is_empty() {
            let mine = other.frames.frames.into_iter().map(|f| Frame {
                name: s(f.name),
                file: s(f.file),
                raw: s(f.raw),
                ..f
            });
            self.frames.take_unique(mine);
            Vec::new()
        } else {
            let mut map = Vec::with_capacity(other.frames.frames.len());
            // A chunk makes its frames in the order its stacks first show them, as the
            // chunk that first showed them did: a frame is often the one after the last
            // one's, checked in the table's own order before it is looked up at random.
            let mut last = NO_FRAME;
            for f in &other.frames.frames {
                let parent = if f.parent == NO_FRAME {
                    NO_FRAME
                } else {
                    map[f.parent as usize]
                };
                let (name, file, raw) = (s(f.name), s(f.file), s(f.raw));
                let f = Frame {
                    name,
                    raw,
                    parent,
                    file,
                    line: f.line,
                };
                let next = last.wrapping_add(1);
                last = match self.frames.frames.get(next as usize) {
                    Some(g) if *g == f => next,
                    _ => self.frames.get_frame(f),
                };
                map.push(last);
            }
            map
        };
        for t in other.tracks {
            let (th, kind) = (thread(t.thread), s(t.kind));
            let next = self.tracks.len() as u32;
            let i = *self.ids.entry((th, kind, t.unit)).or_insert(next);
            if i == next {
                self.tracks.push(TrackBuild {
                    thread: th,
                    kind,
                    unit: t.unit,
                    ..TrackBuild::default()
                });
            }
            let mine = &mut self.tracks[i as usize];
            if !t.args.is_empty() || !mine.args.is_empty() {
                mine.args.resize(mine.weight.len(), ArgsId::NONE);
                let theirs = t.args.iter().map(|&a| args(a));
                mine.args.extend(
                    theirs
                        .chain(std::iter::repeat(ArgsId::NONE))
                        .take(t.weight.len()),
                );
            }
            if !t.cpu.is_empty() || !mine.cpu.is_empty() {
                mine.cpu.resize(mine.weight.len(), NO_CPU);
                let theirs = t.cpu.iter().copied().chain(std::iter::repeat(NO_CPU));
                mine.cpu.extend(theirs.take(t.weight.len()));
            }
            mine.untimed += t.untimed;
            mine.ts.extend(t.ts);
            mine.weight.extend(t.weight);
            mine.frame.extend(
                t.frame
                    .iter()
                    .map(|&f| map.get(f as usize).copied().unwrap_or(f)),
            );
        }
    }

    /// The tracks, timed ones sorted by time and untimed ones laid out by weight, and the
    /// frames (more may be added to them).
    pub(crate) fn finish(
        self,
        strings: &Strings,
        diags: &mut Diagnostics<ModelWarning>,
    ) -> (Vec<SampleTrack>, Frames) {
        let default = self.default_kind;
        let tracks = (self.tracks.into_iter())
            .map(|mut t| {
                let n = t.ts.len() as u64;
                let timed = t.untimed == 0;
                if !timed {
                    if t.untimed < n {
                        diags.warn(ModelWarning::BadSamples, 0, || {
                            format!(
                                "{} of {n} samples of one track have a time and the rest none: all were laid out by weight",
                                n - t.untimed
                            )
                        });
                    }
                    let mut at = 0i64;
                    for (ts, &w) in t.ts.iter_mut().zip(&t.weight) {
                        *ts = at;
                        at = at.saturating_add(w.max(0));
                    }
                } else if !t.ts.is_sorted() {
                    let mut order: Vec<u32> = (0..n as u32).collect();
                    order.sort_by_key(|&i| t.ts[i as usize]);
                    let pick = |v: &[i64]| order.iter().map(|&i| v[i as usize]).collect();
                    (t.ts, t.weight) = (pick(&t.ts), pick(&t.weight));
                    t.frame = order.iter().map(|&i| t.frame[i as usize]).collect();
                    if !t.args.is_empty() {
                        t.args = order.iter().map(|&i| t.args[i as usize]).collect();
                    }
                    if !t.cpu.is_empty() {
                        t.cpu = order.iter().map(|&i| t.cpu[i as usize]).collect();
                    }
                }
                let counted = (default.as_ref())
                    .is_some_and(|(k, u)| *u == t.unit && strings.get(t.kind) == k);
                SampleTrack {
                    thread: t.thread,
                    kind: t.kind,
                    unit: t.unit,
                    counted,
                    timed,
                    ts: t.ts,
                    frame: t.frame,
                    weight: t.weight,
                    args: t.args,
                    cpu: t.cpu,
                }
            })
            .collect();
        (tracks, self.frames)
    }
}

/// A cheap fingerprint of a frame's text, to skip interning a frame equal to the last
/// sample's at the same depth (checked in full before it is trusted).
#[inline]
fn frame_key(f: &RawFrame<'_>) -> u64 {
    let n = f.name.as_bytes();
    let (head, tail) = match n.len() {
        // Two words, the second's bytes the name's last 8 (overlapping the first's).
        8.. => (
            u64::from_le_bytes(n[..8].try_into().unwrap()),
            u64::from_le_bytes(n[n.len() - 8..].try_into().unwrap()),
        ),
        _ => (n.iter().fold(0u64, |a, &b| a << 8 | b as u64), 0),
    };
    head ^ tail.rotate_left(17) ^ (n.len() as u64) << 56 ^ f.line.unwrap_or(0) as u64
}

#[cfg(test)]
mod tests {
    use spall_format::{EventSink, RawEvent, RawSample, SampleUnit};

    use crate::build::TraceBuilder;
    use crate::{load_bytes, Trace, NO_FRAME};

    /// A builder fed samples without their call tree's nodes, and without the outer frames
    /// they share with the last sample unless the flag is set.
    struct NoNodes(TraceBuilder, bool);

    impl EventSink for NoNodes {
        fn event(&mut self, e: &RawEvent<'_>) {
            self.0.event(e);
        }
        fn sample(&mut self, s: &RawSample<'_>) {
            let mut s = s.clone();
            s.nodes = &[];
            s.same_outer = if self.1 { s.same_outer } else { 0 };
            self.0.sample(&s);
        }
        fn sample_kind_default(&mut self, kind: &str, unit: SampleUnit) {
            self.0.sample_kind_default(kind, unit);
        }
    }

    /// A `.cpuprofile`'s (and a Gecko or pprof profile's) stacks taken from the nodes seen
    /// before are the frames one by one: the same trace, frame table and all, on node's
    /// real profile, on a tree with twin nodes (one frame, two nodes), a parent loop and a
    /// chain cut at V8's depth, and on real Firefox and Go profiles.
    #[test]
    fn stacks_from_tree_nodes_are_the_frames_one_by_one() {
        let real = spall_test_support::fixture_bytes("real/profiles/work.cpuprofile");
        let mut nodes: Vec<String> = (2..=1500)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"parent":{},"callFrame":{{"functionName":"f{}"}}}}"#,
                    i - 1,
                    i % 7
                )
            })
            .collect();
        nodes.push(r#"{"id":1,"callFrame":{"functionName":"(root)"}}"#.into());
        nodes.push(r#"{"id":9000,"parent":3,"callFrame":{"functionName":"f4"}}"#.into());
        nodes.push(r#"{"id":9001,"parent":9002,"callFrame":{"functionName":"x"}}"#.into());
        nodes.push(r#"{"id":9002,"parent":9001,"callFrame":{"functionName":"y"}}"#.into());
        let samples = [5, 4, 9000, 1500, 9001, 30, 9000, 6, 1200, 2, 1500, 77];
        let deltas: Vec<String> = (0..samples.len()).map(|i| (i % 3).to_string()).collect();
        let synth = format!(
            r#"{{"nodes":[{}],"samples":{samples:?},"timeDeltas":[{}]}}"#,
            nodes.join(","),
            deltas.join(",")
        );
        // A real Firefox profile's stack tables (nested processes: rows numbered on).
        let gecko = spall_test_support::fixture_bytes("real/profiles/firefox_page.json.gz");
        // Go's pprof profiles: a location's frames reached from several callers.
        let go_cpu = spall_test_support::fixture_bytes("real/profiles/go_cpu.pb.gz");
        let go_heap = spall_test_support::fixture_bytes("real/profiles/go_heap.pb.gz");
        for b in [
            &real[..],
            synth.as_bytes(),
            &gecko[..],
            &go_cpu[..],
            &go_heap[..],
        ] {
            let mut with = TraceBuilder::new();
            let sum = spall_format::decode(b, &mut with).unwrap();
            let mut without = NoNodes(TraceBuilder::new(), true);
            let sum2 = spall_format::decode(b, &mut without).unwrap();
            let (a, b) = (with.finish(sum), without.0.finish(sum2));
            assert!(a.frames().len() > 10);
            assert!(a.to_transfer() == b.to_transfer());
        }
    }

    /// Outer frames a reader says are the last sample's (`perf script`'s) are taken from
    /// the last stack: the same trace as each frame compared, on real `perf script` files
    /// and on records that share callers in every mix of lines.
    #[test]
    fn outer_frames_kept_from_the_last_sample_are_its_frames() {
        let mut text = String::new();
        for i in 0..2000 {
            let leaf = ["\t1 a (x)\n", "\t2 b (x)\n\t3 c (y)\n", ""][i % 3];
            let mid = ["\t4 d (x)\n", "\t5 e (x)\n\t  e.c:7\n", "\t6 f (z)\n"][i % 7 % 3];
            text += &format!("p {} {i}.0: 1 cycles:\n{leaf}{mid}\t9 main (x)\n\n", i % 2);
        }
        let real = ["spin.perf", "demangle_cpp.perf.gz", "demangle_rust.perf.gz"]
            .map(|f| spall_test_support::fixture_bytes(&format!("real/profiles/{f}")));
        for b in real.iter().map(|b| &b[..]).chain([text.as_bytes()]) {
            let (mut with, mut without) = (
                NoNodes(TraceBuilder::new(), true),
                NoNodes(TraceBuilder::new(), false),
            );
            let sum = spall_format::decode(b, &mut with).unwrap();
            let sum2 = spall_format::decode(b, &mut without).unwrap();
            let (a, b) = (with.0.finish(sum), without.0.finish(sum2));
            assert!(a.frames().len() > 5);
            assert!(a.to_transfer() == b.to_transfer());
        }
    }

    /// A sample's stack as `a;b;c`.
    fn stack(t: &Trace, mut f: u32) -> String {
        let mut names = Vec::new();
        while f != NO_FRAME {
            names.push(t.str(t.frames()[f as usize].name));
            f = t.frames()[f as usize].parent;
        }
        names.reverse();
        names.join(";")
    }

    #[test]
    fn untimed_samples_are_laid_out_by_weight() {
        let t = load_bytes(b"main;a;b 12\nmain;c 3\nmain;a;b 5\n").unwrap();
        let [s] = t.samples() else {
            panic!("one track")
        };
        assert!(!s.timed);
        assert_eq!(
            (s.ts.clone(), s.weight.clone()),
            (vec![0, 12, 15], vec![12, 3, 5])
        );
        assert_eq!(s.frame[0], s.frame[2]);
        assert_eq!(stack(&t, s.frame[1]), "main;c");
        assert_eq!((s.unit, t.str(s.kind)), (SampleUnit::Count, "samples"));
        assert_eq!((t.start_ns(), t.end_ns()), (0, 20));
        // main, a, b, c: each (name, caller) once.
        assert_eq!(t.frames().len(), 4);
    }

    /// A track's first sample keeps its CPU (and args), which filling the column in from
    /// the first sample that has one once lost; a sample with none is `NO_CPU`.
    #[test]
    fn the_first_samples_cpu_is_kept_and_moves_with_it() {
        let text = "\
p 1/1 [003] 2.0: 1 cycles:
\t1 f (/bin/p)

p 1/1 1.5: 1 cycles:
\t1 g (/bin/p)

p 1/1 [001] 1.0: 1 cycles:
\t1 h (/bin/p)
";
        let t = load_bytes(text.as_bytes()).unwrap();
        let [s] = t.samples() else {
            panic!("one track")
        };
        // Sorted by time: h, g, f.
        assert_eq!(s.cpu, vec![1, crate::NO_CPU, 3]);
        assert_eq!(stack(&t, s.frame[2]), "f");
    }

    #[test]
    fn perf_samples_by_thread_and_event_with_modules() {
        let text = "\
prog 10/11 1.000000: 100 cycles:
\t1 f+0x1 (/bin/prog)
\t2 main (/bin/prog)

prog 10/12 1.000002: 5 instructions:
\t2 main (/bin/prog)

prog 10/11 0.500000: 50 cycles:
\t2 main (/bin/prog)
";
        let t = load_bytes(text.as_bytes()).unwrap();
        assert_eq!(t.samples().len(), 2);
        let cyc = t
            .samples()
            .iter()
            .find(|s| t.str(s.kind) == "cycles")
            .unwrap();
        // Sorted by time, weights moved with their samples.
        assert_eq!(cyc.ts, vec![500_000_000, 1_000_000_000]);
        assert_eq!(cyc.weight, vec![50, 100]);
        assert!(cyc.timed);
        assert_eq!(stack(&t, cyc.frame[1]), "main;f");
        let f = t.frames()[cyc.frame[1] as usize];
        assert_eq!(t.str(f.file), "/bin/prog");
        let th = &t.threads()[cyc.thread as usize];
        assert_eq!(th.name.map(|n| t.str(n)), Some("prog"));
        assert_eq!(t.start_ns(), 500_000_000);
    }
}
