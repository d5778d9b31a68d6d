//! Combining the builders of a parallel decode's chunks, in file order, into one.
//!
//! Each chunk interned its own strings and stored its own arguments; the merge re-interns
//! them into the first chunk's table and rewrites every id. A thread's B/E matching crosses
//! chunks: E events that found no open B in their chunk close the B events left open by
//! earlier chunks, in order (see `Matcher::append`), which is what a sequential decode does.

use rayon::prelude::*;
use spall_format::{Diagnostics, Summary};

use super::{ProcessBuild, TraceBuilder};
use crate::args::{ArgsId, ArgsMap};
use crate::diag::ModelWarning;
use crate::event_kinds::{CounterSeries, Flow};
use crate::nest::{KeptEnd, KeptEnds, Matcher, Pending};
use crate::span::{flags, ExtId, SpanData};
use crate::stack::{ChunkIds, ChunkStack, ThreadStack};
use crate::strings::{StrId, Strings};
use crate::trace::Trace;

/// How one chunk's ids map to the merged builder's.
pub(super) struct Remap {
    strs: Vec<StrId>,
    args: ArgsMap,
    /// It maps every id to itself (the first chunk's).
    identity: bool,
}

impl Remap {
    fn new(strs: Vec<StrId>, args: ArgsMap) -> Remap {
        let identity =
            args.is_identity() && (strs.iter().enumerate()).all(|(i, s)| s.0 as usize == i);
        Remap {
            strs,
            args,
            identity,
        }
    }

    fn s(&self, id: StrId) -> StrId {
        self.strs[id.0 as usize]
    }

    fn a(&self, id: ArgsId) -> ArgsId {
        self.args.get(id)
    }

    fn ext(&self, id: ExtId) -> ExtId {
        match id {
            ExtId::Str(s) => ExtId::Str(self.s(s)),
            n => n,
        }
    }
}

/// One chunk's part of a thread: its matcher, its kept `E` events and its warnings.
struct Piece {
    chunk: usize,
    matcher: Matcher,
    ends: KeptEnds,
    diags: Diagnostics<ModelWarning>,
}

/// A thread joined across chunks: its matcher, its `.spall` stack (or, for a `.spall`
/// thread that went back in time, its Begin and End events had again in file order), the
/// warnings of joining them, and its kept `E` events.
type Joined = (
    Matcher,
    SpallJoined,
    Diagnostics<ModelWarning>,
    Vec<KeptPart>,
);

/// A `.spall` thread's stacks joined across chunks: none, joined, or (the thread went
/// back in time) its events in file order, to be paired as a buffered builder pairs them.
enum SpallJoined {
    None,
    Stack(ThreadStack),
    Replay(Vec<Pending>),
}

/// One chunk's kept `E` events of a thread, left with the chunk's ids: most threads never
/// need them, so they are renumbered only for a thread paired again ([`kept_ends`]).
#[derive(Debug)]
pub(super) struct KeptPart {
    chunk: usize,
    /// The thread's spans in the chunks before.
    before: u32,
    ends: KeptEnds,
}

/// A thread's kept `E` events with the merged builder's ids and their places among all of
/// the thread's spans.
pub(super) fn kept_ends(parts: Vec<KeptPart>, maps: &[Remap]) -> Vec<KeptEnd> {
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.ends.len()).sum());
    for p in parts {
        let r = &maps[p.chunk];
        out.extend(p.ends.into_vec().into_iter().map(|mut x| {
            (x.name, x.cat, x.args) = (r.s(x.name), r.s(x.cat), r.a(x.args));
            x.after += p.before;
            x
        }));
    }
    out
}

impl TraceBuilder {
    /// Merges the chunk builders of a parallel decode ([`TraceBuilder::streaming`], in file
    /// order) and builds the trace; `None` when some thread's B/E events went back in time
    /// (decode again with a buffered builder).
    pub(crate) fn finish_chunks(chunks: Vec<TraceBuilder>, decode: Summary) -> Option<Trace> {
        let from_spall = decode.format.is_spall();
        TraceBuilder::merge(chunks, from_spall).try_finish(decode)
    }

    /// Combines chunk builders given in file order into one, as if one builder had seen
    /// every event. `.spall` spans lose the B/E flag (every `.spall` span is B/E).
    fn merge(chunks: Vec<TraceBuilder>, from_spall: bool) -> TraceBuilder {
        // The merged builder receives no events: its threads get their matchers below.
        let mut g = TraceBuilder::new();
        let mut maps: Vec<Remap> = Vec::with_capacity(chunks.len());
        // Per merged thread: each chunk's part of it, in file order.
        let mut pieces: Vec<Vec<Piece>> = Vec::new();
        let mut stacks: Vec<Vec<(usize, ChunkStack)>> = Vec::new();
        for (ci, mut c) in chunks.into_iter().enumerate() {
            c.spall_flush();
            c.end_chunk_matchers();
            let r = g.absorb_chunk_head(&mut c, ci);
            let pmap: Vec<u32> = c.processes.iter().map(|p| g.merge_process(p, &r)).collect();
            let tmap = g.merge_chunk_threads(&mut c, ci, &r, &mut pieces, &mut stacks);
            g.merge_others(c, &r, &pmap, &tmap);
            maps.push(r);
        }
        spall_util::timing::stage("chunks merged: strings, args, other events");
        pieces.resize_with(g.threads.len(), Vec::new);
        stacks.resize_with(g.threads.len(), Vec::new);
        let disordered: Vec<bool> = g.threads.iter().map(|t| t.disordered).collect();
        let joined = join_threads(pieces, stacks, &disordered, &maps, &g.strings, from_spall);
        spall_util::timing::stage("threads joined across chunks");
        for (t, (m, stack, d, kept)) in g.threads.iter_mut().zip(joined) {
            t.stream = Some(m);
            t.diags = d;
            t.kept = kept;
            match stack {
                SpallJoined::None => {
                    // Nothing kept to pair it again from: decode again.
                    g.disordered |= t.disordered && (!g.keep || from_spall);
                }
                SpallJoined::Stack(s) => t.joined = Some(s),
                SpallJoined::Replay(events) => {
                    // Paired again as the buffered builder pairs it (`nest_threads`).
                    (t.stream, t.events) = (None, events);
                    t.diags = Diagnostics::default();
                }
            }
        }
        g.chunk_maps = maps;
        g
    }

    /// Ends a chunk: closes each thread matcher's pending run of E events.
    fn end_chunk_matchers(&mut self) {
        let TraceBuilder {
            threads, strings, ..
        } = self;
        let names = |id: StrId| strings.get(id).to_string();
        for t in threads.iter_mut() {
            if let Some(m) = &mut t.stream {
                m.end_chunk(&names, &mut t.diags);
            }
        }
    }

    /// Takes chunk `ci`'s flags, times, strings and argument sets into this merged builder;
    /// returns how the chunk's ids map to the merged ones.
    fn absorb_chunk_head(&mut self, c: &mut TraceBuilder, ci: usize) -> Remap {
        self.disordered |= c.disordered;
        self.keep = c.keep;
        self.met.absorb(std::mem::take(&mut c.met));
        // Where trace_processor's sorter starts ordering by phase: within a chunk, or
        // at its earliest event if that comes before a time an earlier chunk reached.
        self.sorted_from = self.sorted_from.min(c.sorted_from);
        if c.earliest < self.latest {
            self.sorted_from = self.sorted_from.min(c.earliest);
        }
        self.earliest = self.earliest.min(c.earliest);
        self.latest = self.latest.max(c.latest);
        if ci == 0 {
            self.strings = std::mem::take(&mut c.strings);
            self.args = std::mem::take(&mut c.args);
            Remap::new(
                (0..self.strings.len() as u32).map(StrId).collect(),
                ArgsMap::IDENTITY,
            )
        } else {
            let strs = (c.strings.iter())
                .map(|(_, s)| self.strings.intern(s))
                .collect();
            Remap::new(strs, self.args.append(std::mem::take(&mut c.args)))
        }
    }

    /// Merges chunk `ci`'s threads into this builder's: names, sort indices and B/E times,
    /// and each thread's matcher and `.spall` stack set aside in `pieces` and `stacks` (by
    /// merged thread) to be joined later. Returns the chunk's thread map.
    fn merge_chunk_threads(
        &mut self,
        c: &mut TraceBuilder,
        ci: usize,
        r: &Remap,
        pieces: &mut Vec<Vec<Piece>>,
        stacks: &mut Vec<Vec<(usize, ChunkStack)>>,
    ) -> Vec<u32> {
        let mut tmap = Vec::with_capacity(c.threads.len());
        for t in &mut c.threads {
            let gt = self.thread_of((r.ext(t.pid), r.ext(t.tid)));
            tmap.push(gt);
            let th = &mut self.threads[gt as usize];
            if let Some(n) = t.name {
                th.name = Some(r.s(n));
            }
            if t.sort_index.is_some() {
                th.sort_index = t.sort_index;
            }
            th.disordered |= t.disordered || t.first_be_ts < th.last_be_ts;
            th.first_be_ts = th.first_be_ts.min(t.first_be_ts);
            th.last_be_ts = th.last_be_ts.max(t.last_be_ts);
            if pieces.len() <= gt as usize {
                pieces.resize_with(gt as usize + 1, Vec::new);
                stacks.resize_with(gt as usize + 1, Vec::new);
            }
            if let Some(m) = t.stream.take() {
                pieces[gt as usize].push(Piece {
                    chunk: ci,
                    matcher: m,
                    ends: std::mem::take(&mut t.ends),
                    diags: std::mem::take(&mut t.diags),
                });
            }
            let cut = t.spall_cut.drain(..);
            (stacks[gt as usize]).extend(cut.chain(t.spall.take()).map(|st| (ci, st)));
        }
        tmap
    }

    /// Finds or creates the merged process for a chunk's process; returns its index.
    fn merge_process(&mut self, p: &ProcessBuild, r: &Remap) -> u32 {
        let gp = self.process(r.ext(p.pid));
        let q = &mut self.processes[gp as usize];
        if let Some(n) = p.name {
            q.name = Some(r.s(n));
        }
        if p.sort_index.is_some() {
            q.sort_index = p.sort_index;
        }
        q.labels.extend(p.labels.iter().map(|&l| r.s(l)));
        gp
    }

    /// Everything but the threads' spans: instants, counters, flows, async events,
    /// metadata, warnings and the time range.
    fn merge_others(&mut self, c: TraceBuilder, r: &Remap, pmap: &[u32], tmap: &[u32]) {
        let (p, t) = (|i: u32| pmap[i as usize], |i: u32| tmap[i as usize]);
        self.instants.extend(c.instants.into_iter().map(|mut i| {
            (i.name, i.cat, i.args) = (r.s(i.name), r.s(i.cat), r.a(i.args));
            (i.process, i.thread) = (p(i.process), t(i.thread));
            i
        }));
        for cs in c.counters {
            let key = (
                p(cs.process),
                cs.thread.map(t),
                r.s(cs.name),
                r.s(cs.key),
                cs.from_track,
            );
            let cname = cs.cname.map(|c| r.s(c));
            let next = self.counters.len() as u32;
            let i = *self.counter_ids.entry(key).or_insert(next);
            if i == next {
                self.counters.push(CounterSeries {
                    process: key.0,
                    thread: key.1,
                    name: key.2,
                    id: cs.id.map(|i| r.s(i)),
                    key: key.3,
                    from_track: key.4,
                    cname,
                    ts: cs.ts,
                    values: cs.values,
                });
            } else {
                let s = &mut self.counters[i as usize];
                if cname.is_some() {
                    s.cname = cname;
                }
                s.ts.extend(cs.ts);
                s.values.extend(cs.values);
            }
        }
        for f in c.flows {
            let key = (r.s(f.cat), r.s(f.id));
            let points = f.points.into_iter().map(|mut pt| {
                pt.thread = t(pt.thread);
                pt
            });
            let next = self.flows.len() as u32;
            let i = *self.flow_ids.entry(key).or_insert(next);
            if i == next {
                self.flows.push(Flow {
                    cat: key.0,
                    id: key.1,
                    name: r.s(f.name),
                    points: points.collect(),
                });
            } else {
                self.flows[i as usize].points.extend(points);
            }
        }
        self.async_events
            .extend(c.async_events.into_iter().map(|mut a| {
                (a.name, a.cat, a.id, a.args) = (r.s(a.name), r.s(a.cat), r.s(a.id), r.a(a.args));
                (a.process, a.thread) = (p(a.process), t(a.thread));
                a
            }));
        self.profile.absorb(c.profile, |s| r.s(s), t, |a| r.a(a));
        self.sched.absorb(c.sched, |s| r.s(s));
        self.samples.extend(c.samples.into_iter().map(|mut e| {
            (e.name, e.id, e.args, e.thread) = (r.s(e.name), r.s(e.id), r.a(e.args), t(e.thread));
            e
        }));
        (self.track_names)
            .extend((c.track_names.into_iter()).map(|(pr, id, n)| (p(pr), r.s(id), r.s(n))));
        self.metadata.extend(c.metadata.into_iter().map(|mut m| {
            (m.name, m.args, m.process) = (r.s(m.name), r.a(m.args), p(m.process));
            m.thread = m.thread.map(t);
            m
        }));
        self.diags.merge(c.diags);
        self.start = self.start.min(c.start);
        self.end = self.end.max(c.end);
    }
}

/// Joins each merged thread's chunk matchers and `.spall` stacks, in file order, threads in
/// parallel (they are independent): the matcher, the stack, the warnings, and the E events
/// each chunk kept for pairing the thread again.
fn join_threads(
    pieces: Vec<Vec<Piece>>,
    stacks: Vec<Vec<(usize, ChunkStack)>>,
    disordered: &[bool],
    maps: &[Remap],
    strings: &Strings,
    from_spall: bool,
) -> Vec<Joined> {
    let names = |id: StrId| strings.get(id).to_string();
    let keep = if from_spall {
        !flags::FROM_BEGIN_END
    } else {
        !0
    };
    pieces
        .into_par_iter()
        .zip(stacks)
        .zip(disordered)
        .map(|((ps, st), &disordered)| {
            let mut m = Matcher::new(false);
            let mut d = Diagnostics::default();
            let mut kept = Vec::new();
            let ids = |ci: usize| ChunkIds {
                names: &maps[ci].strs,
                args: maps[ci].args,
            };
            let stack = match (st.is_empty(), disordered) {
                (true, _) => SpallJoined::None,
                (false, false) => SpallJoined::Stack(ThreadStack::join(st, ids, &mut d)),
                (false, true) => SpallJoined::Replay(ChunkStack::replay(st, ids)),
            };
            for p in ps {
                let r = &maps[p.chunk];
                let fix_span = |s: &mut SpanData| {
                    s.name = r.s(s.name);
                    s.cat = r.s(s.cat);
                    s.args = r.a(s.args);
                    s.flags &= keep;
                };
                let fix_event = |e: &mut Pending| {
                    e.name = r.s(e.name);
                    e.cat = r.s(e.cat);
                    e.args = r.a(e.args);
                };
                if !p.ends.is_empty() {
                    kept.push(KeptPart {
                        chunk: p.chunk,
                        before: m.span_count(),
                        ends: p.ends,
                    });
                }
                let fix_span = (!r.identity || keep != !0).then_some(&fix_span);
                m.append(p.matcher, fix_span, &fix_event, &names, &mut d);
                d.merge(p.diags);
            }
            (m, stack, d, kept)
        })
        .collect()
}
