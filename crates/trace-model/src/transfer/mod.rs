//! A built [`Trace`] as one flat byte buffer and back, for handing a trace between two
//! memories that share nothing: a browser's worker builds the model, and the page, which
//! draws it, takes the buffer (a transfer, not a copy) and rebuilds the trace from it with
//! little more than copies of its columns. Nothing is decoded or nested again.
//!
//! The buffer is little-endian, tagged with [`MAGIC`], and read back only by this build of
//! the crate (both halves of a page are one module). Reading checks every length against
//! the bytes left, so a damaged buffer is an error, never a panic or an unbounded
//! allocation.
//!
//! ```
//! let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#;
//! let trace = trace_model::load_bytes(json).unwrap();
//! let bytes = trace.to_transfer();
//! let back = trace_model::Trace::from_transfer(&bytes).unwrap();
//! assert_eq!(back.span_count(), 1);
//! assert_eq!(back.str(back.span(trace_model::SpanRef { thread: 0, depth: 0, index: 0 }).name), "a");
//! ```

use crate::args::{ArgsId, ArgsStore};
use crate::asyncs::{AsyncSlice, AsyncTrack};
use crate::flows::FlowLink;
use crate::other::{AsyncEvent, CounterSeries, Flow, FlowPoint, Instant, InstantScope, Metadata};
use crate::samples::{Frame, SampleTrack};
use crate::span::{ExtId, Lane, Process, SpanRef, Thread};
use crate::strings::{StrId, Strings};
use crate::trace::Trace;
use spall_format::SampleUnit;

mod bytes;
mod meta;
mod pieces;

pub use bytes::{TransferReader, TransferWriter};
use bytes::{TransferReader as R, TransferWriter as W};
use meta::{model_kind, model_tag};
pub use pieces::{ColumnFill, ColumnSink, ColumnSource, Columns, MemoryColumns, Stream};

/// The first bytes of a transferred trace (its layout's version is the last digit).
pub const MAGIC: &[u8; 8] = b"SPALLTM1";

/// Why a buffer is not a transferred trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferError {
    /// Byte offset where reading stopped.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl std::fmt::Display for TransferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "transferred trace damaged at byte {}: expected {}",
            self.offset, self.expected
        )
    }
}

impl std::error::Error for TransferError {}

impl Trace {
    /// The trace as one buffer for [`Trace::from_transfer`] (about the model's own size).
    pub fn to_transfer(&self) -> Vec<u8> {
        let mut w = W::with_capacity(self.heap_estimate());
        for &b in MAGIC {
            w.u8(b);
        }
        self.write(&mut w);
        w.into_bytes()
    }

    /// The trace [`Trace::to_transfer`] wrote.
    pub fn from_transfer(bytes: &[u8]) -> Result<Trace, TransferError> {
        let mut r = R::new(bytes);
        if r.take(8, "the magic SPALLTM1")? != MAGIC {
            return Err(r.fail("the magic SPALLTM1"));
        }
        let t = Trace::read(&mut r)?;
        if !r.at_end() {
            return Err(r.fail("the end of the buffer"));
        }
        Ok(t)
    }

    /// The trace for a transfer in pieces: its head (returned), with the spans' columns
    /// given to `sink` ([`TraceIn`] reads them back).
    pub fn to_transfer_pieces(&self, sink: &mut dyn ColumnSink) -> Vec<u8> {
        let mut w = W::with_sink(sink);
        // The head's bytes at once: grown by doubling, its argument texts (which can be
        // most of it) would be copied again at each step.
        w.reserve(self.head_estimate());
        for &b in MAGIC {
            w.u8(b);
        }
        self.write(&mut w);
        w.into_bytes()
    }

    fn heap_estimate(&self) -> usize {
        let spans = self.span_count() as usize;
        1024 + spans * 29 + self.strings.heap_bytes() + self.args.heap_bytes()
    }

    /// About the bytes [`write`](Self::write) puts in the head of a transfer in pieces:
    /// everything but the spans' columns.
    fn head_estimate(&self) -> usize {
        let (strings, args) = (self.strings.len(), self.args.count() as usize);
        let counters: usize = (self.counters.iter()).map(|c| 64 + c.ts.len() * 16).sum();
        let flows: usize = (self.flows.iter()).map(|f| 20 + f.points.len() * 38).sum();
        let samples: usize = (self.samples.iter()).map(|s| 30 + s.ts.len() * 20).sum();
        let lanes: usize = (self.threads.iter()).map(|t| 64 + t.lanes.len() * 48).sum();
        4096 + strings * 8
            + self.strings.text_bytes()
            + args * 9
            + self.args.text_bytes()
            + self.processes.len() * 64
            + lanes
            + self.instants.len() * 33
            + counters
            + flows
            + self.async_events.len() * 44
            + self.metadata.len() * 20
            + self.async_slices.len() * 53
            + self.flow_links.len() * 32
            + samples
            + self.frames.len() * 16
    }

    fn write(&self, w: &mut W<'_>) {
        w.u64(self.strings.len() as u64);
        for (_, s) in self.strings.iter() {
            w.str(s);
        }
        // The argument texts as one text and each set's end in it: a copy per segment,
        // not per set, on both sides (a trace's arguments can be most of its bytes).
        w.u64(self.args.count() as u64);
        let mut base = 0;
        for (text, ends) in self.args.segments() {
            for &end in ends {
                w.u64(end + base);
            }
            base += text.len() as u64;
        }
        w.u64(base);
        for (text, _) in self.args.segments() {
            w.raw(text.as_bytes());
        }
        w.list(&self.processes, |w, p| {
            w.ext(p.pid);
            w.opt_str(p.name);
            w.opt_i64(p.sort_index);
            w.ids(&p.labels);
            w.u32s(&p.threads);
        });
        w.list(&self.threads, |w, t| {
            w.ext(t.pid);
            w.ext(t.tid);
            w.u32(t.process);
            w.opt_str(t.name);
            w.opt_i64(t.sort_index);
            w.list(&t.lanes, |w, l| {
                w.col_i64s(&l.start);
                w.col_i64s(&l.dur);
                w.col_u32s_by(&l.name, |s| s.0);
                w.col_u32s_by(&l.cat, |s| s.0);
                w.col_u32s_by(&l.args, |a| a.0);
                w.col_u8s(&l.flags);
            });
        });
        w.list(&self.instants, |w, i| {
            w.i64(i.ts);
            w.u32(i.name.0);
            w.u32(i.cat.0);
            // The scope in the low bits, a mark in bit 4.
            w.u8(u8::from(i.mark) << 4
                | match i.scope {
                    InstantScope::Global => 0,
                    InstantScope::Process => 1,
                    InstantScope::Thread => 2,
                });
            w.u32(i.process);
            w.u32(i.thread);
            w.u32(i.args.0);
        });
        w.list(&self.counters, |w, c| {
            w.u32(c.process);
            w.opt_u32(c.thread);
            w.u32(c.name.0);
            w.opt_str(c.id);
            w.u32(c.key.0);
            w.opt_str(c.cname);
            w.i64s(&c.ts);
            w.u64(c.values.len() as u64);
            for v in &c.values {
                w.u64(v.to_bits());
            }
        });
        w.list(&self.flows, |w, f| {
            w.u32(f.id.0);
            w.u32(f.cat.0);
            w.u32(f.name.0);
            w.list(&f.points, |w, p| {
                w.i64(p.ts);
                w.u32(p.thread);
                w.u8(p.phase);
                w.u8(p.bind_enclosing as u8);
                w.u8(p.on_slice as u8);
                w.i64(p.span_dur);
                w.u64(p.offset);
            });
        });
        w.list(&self.async_events, |w, e| {
            w.u8(e.phase);
            w.i64(e.ts);
            w.u32(e.name.0);
            w.u32(e.cat.0);
            w.u32(e.id.0);
            w.u8(e.local as u8);
            w.u32(e.process);
            w.u32(e.thread);
            w.u32(e.args.0);
            w.u64(e.offset);
        });
        w.list(&self.metadata, |w, m| {
            w.u32(m.name.0);
            w.u32(m.process);
            w.opt_u32(m.thread);
            w.u32(m.args.0);
        });
        w.list(&self.async_slices, |w, s| {
            w.i64(s.start);
            w.i64(s.end);
            w.u32(s.name.0);
            w.u32(s.cat.0);
            w.u32(s.id.0);
            w.u32(s.process);
            w.u32(s.thread);
            w.u32(s.args.0);
            w.u32(s.end_args.0);
            w.u32(s.parent);
            w.u32(s.depth as u32);
            w.u8(s.flags);
        });
        w.list(&self.async_tracks, |w, t| {
            w.u32(t.process);
            w.u32(t.name.0);
            w.list(&t.rows, |w, row| w.u32s(row));
        });
        w.list(&self.flow_links, |w, l| {
            for r in [l.from, l.to] {
                w.u32(r.thread);
                w.u32(r.depth);
                w.u32(r.index);
            }
            w.u32(l.flow);
        });
        w.u32s(&self.flow_links_by_to);
        w.list(&self.samples, |w, s| {
            w.u32(s.thread);
            w.u32(s.kind.0);
            w.u8(s.unit as u8);
            w.u8(s.timed as u8);
            w.i64s(&s.ts);
            w.u32s(&s.frame);
            w.i64s(&s.weight);
        });
        w.list(&self.frames, |w, f| {
            w.u32(f.name.0);
            w.u32(f.parent);
            w.u32(f.file.0);
            w.u32(f.line);
        });
        w.i64(self.start_ns);
        w.i64(self.end_ns);
        w.diags(&self.diagnostics, |w, k| {
            let (tag, phase) = model_tag(k);
            w.u8(tag);
            w.u8(phase);
        });
        w.summary(&self.decode);
    }

    fn read(r: &mut R<'_>) -> Result<Trace, TransferError> {
        let mut strings = Strings::default();
        let n = r.len(1)?;
        for i in 0..n {
            let s = r.str()?;
            if strings.intern(s).0 as usize != i {
                return Err(r.fail("distinct strings"));
            }
        }
        let n = r.len(8)?;
        let ends = (0..n).map(|_| r.u64()).collect::<Result<Vec<u64>, _>>()?;
        let text = r.str()?;
        let args = ArgsStore::from_text(text, ends)
            .ok_or_else(|| r.fail("non-empty argument texts within the text"))?;
        let processes = r.list(|r| {
            Ok(Process {
                pid: r.ext()?,
                name: r.opt_str()?,
                sort_index: r.opt_i64()?,
                labels: r.ids()?,
                threads: r.u32s()?,
            })
        })?;
        let threads = r.list(|r| {
            Ok(Thread {
                pid: r.ext()?,
                tid: r.ext()?,
                process: r.u32()?,
                name: r.opt_str()?,
                sort_index: r.opt_i64()?,
                lanes: r.list(|r| {
                    let lane = Lane {
                        start: r.col_i64s()?,
                        dur: r.col_i64s()?,
                        name: r.col_u32s_by(StrId)?,
                        cat: r.col_u32s_by(StrId)?,
                        args: r.col_u32s_by(ArgsId)?,
                        flags: r.col_u8s()?,
                    };
                    let same = match r.col_lens() {
                        // In pieces: the lengths the head gives the lane's six columns.
                        Some(lens) => lens[lens.len() - 6..]
                            .iter()
                            .all(|&m| m == lens[lens.len() - 1]),
                        None => {
                            let n = lane.start.len();
                            [lane.dur.len(), lane.name.len(), lane.cat.len()]
                                .into_iter()
                                .chain([lane.args.len(), lane.flags.len()])
                                .all(|m| m == n)
                        }
                    };
                    if !same {
                        return Err(r.fail("columns of one length"));
                    }
                    Ok(lane)
                })?,
            })
        })?;
        let instants = r.list(|r| {
            let (ts, name, cat, scope) = (r.i64()?, StrId(r.u32()?), StrId(r.u32()?), r.u8()?);
            Ok(Instant {
                ts,
                name,
                cat,
                scope: match scope & 0xf {
                    0 => InstantScope::Global,
                    1 => InstantScope::Process,
                    2 => InstantScope::Thread,
                    _ => return Err(r.fail("an instant scope")),
                },
                process: r.u32()?,
                thread: r.u32()?,
                args: ArgsId(r.u32()?),
                mark: scope & 0x10 != 0,
            })
        })?;
        let counters = r.list(|r| {
            Ok(CounterSeries {
                process: r.u32()?,
                thread: r.opt_u32()?,
                name: StrId(r.u32()?),
                id: r.opt_str()?,
                key: StrId(r.u32()?),
                cname: r.opt_str()?,
                ts: r.i64s()?,
                values: r
                    .i64s()?
                    .into_iter()
                    .map(|b| f64::from_bits(b as u64))
                    .collect(),
            })
        })?;
        let flows = r.list(|r| {
            Ok(Flow {
                id: StrId(r.u32()?),
                cat: StrId(r.u32()?),
                name: StrId(r.u32()?),
                points: r.list(|r| {
                    Ok(FlowPoint {
                        ts: r.i64()?,
                        thread: r.u32()?,
                        phase: r.u8()?,
                        bind_enclosing: r.bool()?,
                        on_slice: r.bool()?,
                        span_dur: r.i64()?,
                        offset: r.u64()?,
                    })
                })?,
            })
        })?;
        let async_events = r.list(|r| {
            Ok(AsyncEvent {
                phase: r.u8()?,
                ts: r.i64()?,
                name: StrId(r.u32()?),
                cat: StrId(r.u32()?),
                id: StrId(r.u32()?),
                local: r.bool()?,
                process: r.u32()?,
                thread: r.u32()?,
                args: ArgsId(r.u32()?),
                offset: r.u64()?,
            })
        })?;
        let metadata = r.list(|r| {
            Ok(Metadata {
                name: StrId(r.u32()?),
                process: r.u32()?,
                thread: r.opt_u32()?,
                args: ArgsId(r.u32()?),
            })
        })?;
        let async_slices = r.list(|r| {
            Ok(AsyncSlice {
                start: r.i64()?,
                end: r.i64()?,
                name: StrId(r.u32()?),
                cat: StrId(r.u32()?),
                id: StrId(r.u32()?),
                process: r.u32()?,
                thread: r.u32()?,
                args: ArgsId(r.u32()?),
                end_args: ArgsId(r.u32()?),
                parent: r.u32()?,
                depth: u16::try_from(r.u32()?).map_err(|_| r.fail("a 16-bit depth"))?,
                flags: r.u8()?,
            })
        })?;
        let async_tracks = r.list(|r| {
            Ok(AsyncTrack {
                process: r.u32()?,
                name: StrId(r.u32()?),
                rows: r.list(|r| r.u32s())?,
            })
        })?;
        let flow_links = r.list(|r| {
            let mut refs = [SpanRef {
                thread: 0,
                depth: 0,
                index: 0,
            }; 2];
            for s in &mut refs {
                *s = SpanRef {
                    thread: r.u32()?,
                    depth: r.u32()?,
                    index: r.u32()?,
                };
            }
            Ok(FlowLink {
                from: refs[0],
                to: refs[1],
                flow: r.u32()?,
            })
        })?;
        let flow_links_by_to = r.u32s()?;
        let samples = r.list(|r| {
            Ok(SampleTrack {
                thread: r.u32()?,
                kind: StrId(r.u32()?),
                unit: match r.u8()? {
                    0 => SampleUnit::Count,
                    1 => SampleUnit::Nanoseconds,
                    2 => SampleUnit::Bytes,
                    _ => return Err(r.fail("a sample unit")),
                },
                timed: r.bool()?,
                ts: r.i64s()?,
                frame: r.u32s()?,
                weight: r.i64s()?,
            })
        })?;
        let frames = r.list(|r| {
            Ok(Frame {
                name: StrId(r.u32()?),
                parent: r.u32()?,
                file: StrId(r.u32()?),
                line: r.u32()?,
            })
        })?;
        let start_ns = r.i64()?;
        let end_ns = r.i64()?;
        let diagnostics = r.diags(|r| model_kind(r.u8()?, r.u8()?).ok_or(r.fail("a kind")))?;
        let decode = r.summary()?;
        let t = Trace {
            strings,
            processes,
            threads,
            args,
            instants,
            counters,
            flows,
            async_events,
            metadata,
            async_slices,
            async_tracks,
            flow_links,
            flow_links_by_to,
            samples,
            frames,
            start_ns,
            end_ns,
            diagnostics,
            decode,
        };
        // In pieces the spans' ids and the flow links are checked once filled.
        t.check_ids(r.pieces_left().is_none())
            .map_err(|expected| r.fail(expected))?;
        Ok(t)
    }

    /// Every index the accessors follow points inside its table (the spans' and the flow
    /// links' too, with `spans`): a damaged buffer is an error here, not a panic in a drawing loop later.
    fn check_ids(&self, spans: bool) -> Result<(), &'static str> {
        let n_str = self.strings.len() as u32;
        let n_args = self.args.count();
        let (n_proc, n_thread) = (self.processes.len() as u32, self.threads.len() as u32);
        let str_ok = |s: StrId| s.0 < n_str;
        let ext_ok =
            |e: ExtId| matches!(e, ExtId::Num(_)) || matches!(e, ExtId::Str(s) if str_ok(s));
        for p in &self.processes {
            let names = p.name.iter().chain(&p.labels).all(|&s| str_ok(s));
            if !ext_ok(p.pid) || !names || p.threads.iter().any(|&t| t >= n_thread) {
                return Err("a process's ids in range");
            }
        }
        for t in &self.threads {
            let lanes = !spans
                || t.lanes.iter().all(|l| {
                    l.name.iter().chain(&l.cat).all(|&s| str_ok(s))
                        && l.args.iter().all(|a| a.0 <= n_args)
                });
            let ids = ext_ok(t.pid) && ext_ok(t.tid) && t.name.is_none_or(str_ok);
            if !ids || t.process >= n_proc || !lanes {
                return Err("a thread's ids in range");
            }
        }
        if spans && !self.links_ok() {
            return Err("flow links in range");
        }
        let n_frames = self.frames.len() as u32;
        let frames = self.frames.iter().all(|f| str_ok(f.name) && str_ok(f.file))
            && self.samples.iter().all(|s| {
                s.thread < n_thread
                    && str_ok(s.kind)
                    && s.ts.len() == s.frame.len()
                    && s.ts.len() == s.weight.len()
                    && s.frame.iter().all(|&f| f < n_frames)
            });
        if !frames {
            return Err("samples and frames in range");
        }
        Ok(())
    }

    /// Whether every flow link points at a span and a flow of the trace.
    fn links_ok(&self) -> bool {
        let links = self.flow_links.iter().all(|l| {
            [l.from, l.to].iter().all(|r| {
                self.threads
                    .get(r.thread as usize)
                    .and_then(|t| t.lanes.get(r.depth as usize))
                    .is_some_and(|lane| (r.index as usize) < lane.len())
            }) && (l.flow as usize) < self.flows.len()
        });
        let by_to = self.flow_links_by_to.len() == self.flow_links.len()
            && self
                .flow_links_by_to
                .iter()
                .all(|&i| (i as usize) < self.flow_links.len());
        links && by_to
    }
}

/// A trace coming in pieces ([`Trace::to_transfer_pieces`]): its head read, its spans'
/// columns filled a step at a time.
#[derive(Debug)]
pub struct TraceIn {
    trace: Trace,
    fill: ColumnFill,
    /// The values of each stream left for what follows the trace (its index).
    left: [u64; 3],
    filled: bool,
}

impl TraceIn {
    /// Reads the head; the streams hold `lens` values (by [`Stream`]), the trace's first.
    pub fn new(head: &[u8], lens: [u64; 3]) -> Result<TraceIn, TransferError> {
        let mut r = R::with_pieces(head, lens);
        if r.take(8, "the magic SPALLTM1")? != MAGIC {
            return Err(r.fail("the magic SPALLTM1"));
        }
        let trace = Trace::read(&mut r)?;
        if !r.at_end() {
            return Err(r.fail("the end of the buffer"));
        }
        let left = r.pieces_left().expect("pieces");
        let fill = ColumnFill::new(r.col_lens().expect("pieces"));
        Ok(TraceIn {
            trace,
            fill,
            left,
            filled: false,
        })
    }

    /// Fills about `budget` bytes of the spans' columns from `src`; true once all are.
    pub fn fill(
        &mut self,
        src: &mut dyn ColumnSource,
        budget: usize,
    ) -> Result<bool, TransferError> {
        let t = &mut self.trace;
        let (n_str, n_args) = (t.strings.len() as u32, t.args.count().saturating_add(1));
        let mut c = self.fill.step(src, budget);
        for l in t.threads.iter_mut().flat_map(|t| &mut t.lanes) {
            c.i64s(&mut l.start);
            c.i64s(&mut l.dur);
            c.u32s_by(&mut l.name, n_str, StrId);
            c.u32s_by(&mut l.cat, n_str, StrId);
            c.u32s_by(&mut l.args, n_args, ArgsId);
            c.u8s(&mut l.flags);
        }
        let fail = |expected| TransferError {
            offset: 0,
            expected,
        };
        self.filled = c.done().map_err(fail)?;
        // The spans' ids were checked as they came; the flow links point at spans.
        if self.filled && !self.trace.links_ok() {
            return Err(fail("flow links in range"));
        }
        Ok(self.filled)
    }

    /// The values of each stream left for what follows the trace.
    pub fn left(&self) -> [u64; 3] {
        self.left
    }

    /// The trace, once [`fill`](Self::fill) said it is whole (`None` before).
    pub fn finish(self) -> Option<Trace> {
        self.filled.then_some(self.trace)
    }
}

#[cfg(test)]
mod tests;
