//! What a transferred trace holds, as one list per record: each field in the order it is
//! in the buffer, with how it is written (`codec.rs`'s `Codec`). `record!` makes both the
//! writer and the reader of a record from its list, so the two cannot drift apart, and
//! adding a column is one line.

use spall_format::{Diagnostics, SampleUnit, Summary};

use super::bytes::{TransferReader as R, TransferWriter as W};
use super::codec::{Codec, List, Plain, Record, Wire};
use super::meta::{model_kind, model_tag};
use super::sched::Sched;
use super::TransferError;
use crate::args::{ArgsId, ArgsStore};
use crate::asyncs::{AsyncSlice, AsyncTrack};
use crate::diag::ModelWarning;
use crate::event_kinds::{
    AsyncEvent, CounterSeries, Flow, FlowPoint, Instant, InstantScope, Metadata,
};
use crate::flows::FlowLink;
use crate::samples::{Frame, SampleTrack};
use crate::span::{ExtId, Lane, Process, SpanRef, Thread};
use crate::strings::{StrId, Strings};
use crate::trace::Trace;

record!(Trace {
    strings as Texts,
    args as ArgTexts,
    processes as List,
    threads as List,
    instants as List,
    counters as List,
    flows as List,
    async_events as List,
    metadata as List,
    async_slices as List,
    async_tracks as List,
    flow_links as List,
    flow_links_by_to,
    samples as List,
    frames as List,
    start_ns,
    end_ns,
    diagnostics as ModelDiags,
    decode as DecodeSummary,
    sched as Sched,
    importer_threads,
} default derived check checked_ids);
record!(Process {
    pid,
    name,
    sort_index,
    labels,
    threads
});
record!(Thread { pid, tid, process, name, sort_index, lanes as List });
record!(Lane { start as Col, dur as Col, name as Col, cat as Col, args as Col, flags as Col }
    check same_lengths);
record!(CounterSeries {
    process,
    thread,
    name,
    id,
    key,
    from_track,
    cname,
    ts,
    values
});
record!(Flow { id, cat, name, points as List });
record!(FlowPoint {
    ts,
    thread,
    phase,
    bind_enclosing,
    on_slice,
    span_dur,
    span_name,
    offset,
    on_end
});
record!(AsyncEvent {
    phase,
    ts,
    name,
    cat,
    id,
    local,
    process,
    thread,
    args,
    offset
});
record!(Metadata {
    name,
    process,
    thread,
    args
});
record!(AsyncSlice {
    start,
    end,
    name,
    cat,
    id,
    process,
    thread,
    args,
    end_args,
    parent,
    depth,
    flags,
});
record!(AsyncTrack {
    process,
    name,
    rows
});
record!(FlowLink { from, to, flow });
record!(SampleTrack {
    thread,
    kind,
    unit,
    counted,
    timed,
    ts,
    frame,
    weight,
    args,
    cpu
});
record!(Frame {
    name,
    parent,
    file,
    line,
    raw
});

/// An instant's scope and mark share a byte: the scope in the low bits, a mark in bit 4;
/// its `ends_after` and `begins_after` follow.
impl Record for Instant {
    fn put(&self, w: &mut W<'_>) {
        w.i64(self.ts);
        w.u32(self.name.0);
        w.u32(self.cat.0);
        let scope = match self.scope {
            InstantScope::Global => 0,
            InstantScope::Process => 1,
            InstantScope::Thread => 2,
        };
        w.u8(u8::from(self.mark) << 4 | scope);
        w.u8(self.ends_after);
        w.u8(self.begins_after);
        w.u32(self.process);
        w.u32(self.thread);
        w.u32(self.args.0);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        let (ts, name, cat, scope) = (r.i64()?, StrId(r.u32()?), StrId(r.u32()?), r.u8()?);
        let (ends_after, begins_after) = (r.u8()?, r.u8()?);
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
            ends_after,
            begins_after,
        })
    }
}

/// A lane's six columns are of one length (in pieces: the lengths the head gives them).
fn same_lengths(r: &mut R<'_>, lane: Lane) -> Result<Lane, TransferError> {
    let same = match r.col_lens() {
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
}

/// Every index points inside its table; in pieces the spans' ids and the flow links are
/// checked once filled.
fn checked_ids(r: &mut R<'_>, t: Trace) -> Result<Trace, TransferError> {
    t.check_ids(r.pieces_left().is_none())
        .map_err(|expected| r.fail(expected))?;
    super::sched::check(&t).map_err(|expected| r.fail(expected))?;
    Ok(t)
}

/// A lane's large column: inline, or in a transfer in pieces to the column streams.
pub(super) struct Col;

/// The strings: their count, then each one's text.
pub(super) struct Texts;

/// The argument texts as one text and each set's end in it: a copy per segment, not per
/// set, on both sides (a trace's arguments can be most of its bytes).
pub(super) struct ArgTexts;

/// The model's warnings.
pub(super) struct ModelDiags;

/// The decode's summary.
pub(super) struct DecodeSummary;

/// `Wire` for types written as a writer's and a reader's method pair.
macro_rules! wire {
    ($($ty:ty => $put:ident, $get:ident;)*) => {
        $(impl Wire for $ty {
            fn put(&self, w: &mut W<'_>) {
                w.$put(*self);
            }

            fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
                r.$get()
            }
        })*
    };
}

wire! {
    u8 => u8, u8;
    u32 => u32, u32;
    u64 => u64, u64;
    i64 => i64, i64;
    ExtId => ext, ext;
    Option<StrId> => opt_str, opt_str;
    Option<u32> => opt_u32, opt_u32;
    Option<i64> => opt_i64, opt_i64;
}

/// A byte that is 0 or 1.
impl Wire for bool {
    fn put(&self, w: &mut W<'_>) {
        w.u8(*self as u8);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.bool()
    }
}

/// A sample's unit, as a byte.
impl Wire for SampleUnit {
    fn put(&self, w: &mut W<'_>) {
        w.u8(*self as u8);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        match r.u8()? {
            0 => Ok(SampleUnit::Count),
            1 => Ok(SampleUnit::Nanoseconds),
            2 => Ok(SampleUnit::Bytes),
            _ => Err(r.fail("a sample unit")),
        }
    }
}

impl Wire for StrId {
    fn put(&self, w: &mut W<'_>) {
        w.u32(self.0);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        Ok(StrId(r.u32()?))
    }
}

impl Wire for ArgsId {
    fn put(&self, w: &mut W<'_>) {
        w.u32(self.0);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        Ok(ArgsId(r.u32()?))
    }
}

/// An async slice's depth, as 32 bits.
impl Wire for u16 {
    fn put(&self, w: &mut W<'_>) {
        w.u32(*self as u32);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        u16::try_from(r.u32()?).map_err(|_| r.fail("a 16-bit depth"))
    }
}

impl Wire for SpanRef {
    fn put(&self, w: &mut W<'_>) {
        w.u32(self.thread);
        w.u32(self.depth);
        w.u32(self.index);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        Ok(SpanRef {
            thread: r.u32()?,
            depth: r.u32()?,
            index: r.u32()?,
        })
    }
}

impl Wire for Vec<u32> {
    fn put(&self, w: &mut W<'_>) {
        w.u32s(self);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.u32s()
    }
}

impl Wire for Vec<i64> {
    fn put(&self, w: &mut W<'_>) {
        w.i64s(self);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.i64s()
    }
}

/// Bits, as 64-bit words.
impl Wire for Vec<u64> {
    fn put(&self, w: &mut W<'_>) {
        let words: Vec<i64> = self.iter().map(|&x| x as i64).collect();
        w.i64s(&words);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        Ok(r.i64s()?.into_iter().map(|x| x as u64).collect())
    }
}

impl Wire for Vec<(i64, i64)> {
    fn put(&self, w: &mut W<'_>) {
        let flat: Vec<i64> = self.iter().flat_map(|&(a, b)| [a, b]).collect();
        w.i64s(&flat);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        let flat = r.i64s()?;
        Ok(flat.chunks_exact(2).map(|c| (c[0], c[1])).collect())
    }
}

impl Wire for Vec<StrId> {
    fn put(&self, w: &mut W<'_>) {
        w.ids(self);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.ids()
    }
}

/// A counter's values, as their bits.
impl Wire for Vec<ArgsId> {
    fn put(&self, w: &mut W<'_>) {
        w.list(self, |w, a| w.u32(a.0));
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.list(|r| Ok(ArgsId(r.u32()?)))
    }
}

impl Wire for Vec<f64> {
    fn put(&self, w: &mut W<'_>) {
        w.u64(self.len() as u64);
        for v in self {
            w.u64(v.to_bits());
        }
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        Ok(r.i64s()?
            .into_iter()
            .map(|b| f64::from_bits(b as u64))
            .collect())
    }
}

/// An async track's rows: a list of lists of slices.
impl Wire for Vec<Vec<u32>> {
    fn put(&self, w: &mut W<'_>) {
        w.list(self, |w, row| w.u32s(row));
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        r.list(|r| r.u32s())
    }
}

impl Codec<Vec<i64>> for Col {
    fn put(v: &Vec<i64>, w: &mut W<'_>) {
        w.col_i64s(v);
    }

    fn get(r: &mut R<'_>) -> Result<Vec<i64>, TransferError> {
        r.col_i64s()
    }
}

impl Codec<Vec<StrId>> for Col {
    fn put(v: &Vec<StrId>, w: &mut W<'_>) {
        w.col_u32s_by(v, |s| s.0);
    }

    fn get(r: &mut R<'_>) -> Result<Vec<StrId>, TransferError> {
        r.col_u32s_by(StrId)
    }
}

impl Codec<Vec<ArgsId>> for Col {
    fn put(v: &Vec<ArgsId>, w: &mut W<'_>) {
        w.col_u32s_by(v, |a| a.0);
    }

    fn get(r: &mut R<'_>) -> Result<Vec<ArgsId>, TransferError> {
        r.col_u32s_by(ArgsId)
    }
}

impl Codec<Vec<u8>> for Col {
    fn put(v: &Vec<u8>, w: &mut W<'_>) {
        w.col_u8s(v);
    }

    fn get(r: &mut R<'_>) -> Result<Vec<u8>, TransferError> {
        r.col_u8s()
    }
}

impl Codec<Strings> for Texts {
    fn put(v: &Strings, w: &mut W<'_>) {
        w.u64(v.len() as u64);
        for (_, s) in v.iter() {
            w.str(s);
        }
    }

    fn get(r: &mut R<'_>) -> Result<Strings, TransferError> {
        let mut strings = Strings::default();
        let n = r.len(1)?;
        for i in 0..n {
            let s = r.str()?;
            if strings.intern(s).0 as usize != i {
                return Err(r.fail("distinct strings"));
            }
        }
        Ok(strings)
    }
}

impl Codec<ArgsStore> for ArgTexts {
    fn put(v: &ArgsStore, w: &mut W<'_>) {
        w.u64(v.count() as u64);
        let mut base = 0;
        for (text, ends) in v.segments() {
            for &end in ends {
                w.u64(end + base);
            }
            base += text.len() as u64;
        }
        w.u64(base);
        for (text, _) in v.segments() {
            w.raw(text.as_bytes());
        }
    }

    fn get(r: &mut R<'_>) -> Result<ArgsStore, TransferError> {
        let n = r.len(8)?;
        let ends = (0..n).map(|_| r.u64()).collect::<Result<Vec<u64>, _>>()?;
        let text = r.str()?;
        ArgsStore::from_text(text, ends)
            .ok_or_else(|| r.fail("non-empty argument texts within the text"))
    }
}

impl Codec<Diagnostics<ModelWarning>> for ModelDiags {
    fn put(v: &Diagnostics<ModelWarning>, w: &mut W<'_>) {
        w.diags(v, |w, k| {
            let (tag, phase) = model_tag(k);
            w.u8(tag);
            w.u8(phase);
        });
    }

    fn get(r: &mut R<'_>) -> Result<Diagnostics<ModelWarning>, TransferError> {
        r.diags(|r| model_kind(r.u8()?, r.u8()?).ok_or(r.fail("a kind")))
    }
}

impl Codec<Summary> for DecodeSummary {
    fn put(v: &Summary, w: &mut W<'_>) {
        w.summary(v);
    }

    fn get(r: &mut R<'_>) -> Result<Summary, TransferError> {
        r.summary()
    }
}
