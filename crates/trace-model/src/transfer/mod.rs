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

use crate::args::ArgsId;
use crate::samples::NO_FRAME;
use crate::span::ExtId;
use crate::strings::StrId;
use crate::trace::Trace;

mod bytes;
#[macro_use]
mod codec;
mod meta;
mod pieces;
mod records;
mod sched;

pub use bytes::{TransferReader, TransferWriter};
use bytes::{TransferReader as R, TransferWriter as W};
use codec::Record;
pub use pieces::{ColumnFill, ColumnSink, ColumnSource, Columns, MemoryColumns, Stream};

/// The first bytes of a transferred trace (its layout's version is the last digit).
pub const MAGIC: &[u8; 8] = b"SPALLTM5";

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
        if r.take(8, "the magic SPALLTM5")? != MAGIC {
            return Err(r.fail("the magic SPALLTM5"));
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

    /// The trace's records, in the order [`records`] lists them.
    fn write(&self, w: &mut W<'_>) {
        Record::put(self, w);
    }

    fn read(r: &mut R<'_>) -> Result<Trace, TransferError> {
        Record::get(r)
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
        // Each frame after its caller, as the frame tables are built: the stack lanes walk
        // up the table by depth.
        let frames = (self.frames.iter().enumerate()).all(|(i, f)| {
            let parent = f.parent == NO_FRAME || (f.parent as usize) < i;
            parent && str_ok(f.name) && str_ok(f.file) && str_ok(f.raw)
        }) && self.samples.iter().all(|s| {
            s.thread < n_thread
                && str_ok(s.kind)
                && s.ts.len() == s.frame.len()
                && s.ts.len() == s.weight.len()
                && (s.args.is_empty() || s.args.len() == s.ts.len())
                && (s.cpu.is_empty() || s.cpu.len() == s.ts.len())
                && s.args.iter().all(|a| a.0 <= n_args)
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
        if r.take(8, "the magic SPALLTM5")? != MAGIC {
            return Err(r.fail("the magic SPALLTM5"));
        }
        let trace = Trace::read(&mut r)?;
        if !r.at_end() {
            return Err(r.fail("the end of the buffer"));
        }
        let left = r.pieces_left().expect("pieces");
        let fill = ColumnFill::with_zeros(r.col_lens().expect("pieces"), r.col_zeros());
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
