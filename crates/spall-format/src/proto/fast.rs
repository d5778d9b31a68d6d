//! The usual packet read the fast way: a `TracePacket` of a timestamp, a sequence id, its
//! flags and a `TrackEvent` that begins, ends or marks a slice (type, track, name and
//! categories, debug annotations, extra counter values, flows, the task's origin), maybe
//! with the sequence's interned data. Each reader takes one straight
//! pass over the bytes, matching whole tags, and gives up (`None`, `false`) at anything
//! else: an other field, an other wire type, a broken varint, an interned id not defined.
//! The general field walk ([`Decoder::fields`](super::events::Decoder::fields),
//! `Te::read`) then reads the message from its start, so the result is the same either
//! way, warnings included; giving up costs the bytes read so far again.
//!
//! A debug build's tests can turn the fast readers off (`general_only`) to compare the
//! two on real traces.

use std::borrow::Cow;

use super::base::{general_only, Packet, Te};
use super::seq::Seq;
use super::typed;
use super::wire::{bytes, var};

/// Whether packet field `num` is sideband that every reader of packets skips (trusted uid
/// and pid, sync markers, ...): one list, so the general walk and the fast readers agree
/// on what a packet holds. Descriptors (60) are kept apart: the first pass reads them.
#[inline(always)]
pub(super) const fn sideband(num: u64) -> bool {
    matches!(num, 3 | 36 | 43 | 79 | 87 | 98)
}

/// Skips the value of tag `t` at `p[*i..]`: a varint or a length-delimited field, `None`
/// for another wire type or a broken one.
#[inline(always)]
pub(super) fn skip(p: &[u8], i: &mut usize, t: u64) -> Option<()> {
    match t & 7 {
        0 => var(p, i).map(drop),
        2 => bytes(p, i).map(drop),
        _ => None,
    }
}

/// Tags (`field << 3 | wire type`) the fast readers take.
pub(super) mod tag {
    pub(in crate::proto) const TIMESTAMP: u64 = 8 << 3;
    pub(in crate::proto) const SEQUENCE_ID: u64 = 10 << 3;
    pub(in crate::proto) const TRACK_EVENT: u64 = 11 << 3 | 2;
    pub(in crate::proto) const SEQUENCE_FLAGS: u64 = 13 << 3;
    pub(in crate::proto) const CLOCK_ID: u64 = 58 << 3;
    pub(in crate::proto) const CLEARED: u64 = 41 << 3;
    pub(in crate::proto) const DROPPED: u64 = 42 << 3;
    pub(in crate::proto) const INTERNED: u64 = 12 << 3 | 2;
    pub(in crate::proto) const DEFAULTS: u64 = 59 << 3 | 2;
    pub(in crate::proto) const SNAPSHOT: u64 = 6 << 3 | 2;
    pub(in crate::proto) const THREAD: u64 = 44 << 3 | 2;
    pub(in crate::proto) const TE_DELTA_US: u64 = 1 << 3;
    pub(in crate::proto) const TE_CATEGORY_IID: u64 = 3 << 3;
    pub(in crate::proto) const TE_CATEGORY_IIDS: u64 = 3 << 3 | 2;
    pub(in crate::proto) const TE_DEBUG_ANNOTATION: u64 = 4 << 3 | 2;
    pub(in crate::proto) const TE_TYPE: u64 = 9 << 3;
    pub(in crate::proto) const TE_NAME_IID: u64 = 10 << 3;
    pub(in crate::proto) const TE_TRACK_UUID: u64 = 11 << 3;
    pub(in crate::proto) const TE_EXTRA_COUNTER_VALUE: u64 = 12 << 3;
    pub(in crate::proto) const TE_EXTRA_COUNTER_VALUES: u64 = 12 << 3 | 2;
    pub(in crate::proto) const TE_ABSOLUTE_US: u64 = 16 << 3;
    pub(in crate::proto) const TE_TASK: u64 = 5 << 3 | 2;
    pub(in crate::proto) const TE_CATEGORY: u64 = 22 << 3 | 2;
    pub(in crate::proto) const TE_NAME: u64 = 23 << 3 | 2;
    pub(in crate::proto) const TE_LOCATION_IID: u64 = 34 << 3;
    pub(in crate::proto) const TE_FLOW_ID: u64 = 47 << 3 | 1;
    pub(in crate::proto) const TE_FLOW_IDS: u64 = 47 << 3 | 2;
    pub(in crate::proto) const TE_END_FLOW_ID: u64 = 48 << 3 | 1;
    pub(in crate::proto) const TE_END_FLOW_IDS: u64 = 48 << 3 | 2;
}

/// The 8 bytes at `b[*i..]`, moving `i` past them.
#[inline(always)]
fn fixed64(b: &[u8], i: &mut usize) -> Option<u64> {
    let v = b.get(*i..*i + 8)?;
    *i += 8;
    Some(u64::from_le_bytes(v.try_into().ok()?))
}

/// Each fixed64 of a packed list; `None` if it is cut short.
#[inline(always)]
fn packed64(b: &[u8], mut f: impl FnMut(u64)) -> Option<()> {
    if !b.len().is_multiple_of(8) {
        return None;
    }
    for x in b.chunks_exact(8) {
        f(u64::from_le_bytes(x.try_into().ok()?));
    }
    Some(())
}

/// Each varint of a packed list; `None` if one is broken.
#[inline(always)]
pub(super) fn packed(b: &[u8], mut f: impl FnMut(u64) -> Option<()>) -> Option<()> {
    let mut j = 0;
    while j < b.len() {
        f(var(b, &mut j)?)?;
    }
    Some(())
}

/// Text as the general read takes it when it is UTF-8 (else it warns: `None`).
#[inline(always)]
fn utf8(b: &[u8]) -> Option<Cow<'_, str>> {
    std::str::from_utf8(b).ok().map(Cow::Borrowed)
}

/// The fields of packet `p` (at byte `at`) when it holds only a TrackEvent, its timestamp,
/// clock, sequence id and flags, the sequence's state (interned data, defaults, a clock
/// snapshot, a thread descriptor) and sideband fields, into `pk` (a default one) as
/// [`Decoder::fields`] reads them; `false` for any other packet (unmodelled kinds,
/// system-trace packets).
///
/// [`Decoder::fields`]: super::events::Decoder::fields
#[inline]
pub(super) fn packet<'a>(p: &'a [u8], at: u64, pk: &mut Packet<'a>) -> bool {
    packet_fields(p, at, pk).is_some()
}

#[inline(always)]
fn packet_fields<'a>(p: &'a [u8], at: u64, pk: &mut Packet<'a>) -> Option<()> {
    if general_only() {
        return None;
    }
    let mut i = 0;
    while i < p.len() {
        match var(p, &mut i)? {
            tag::TIMESTAMP => pk.ts = Some(var(p, &mut i)?),
            tag::SEQUENCE_ID => pk.seq = var(p, &mut i)? as u32,
            tag::SEQUENCE_FLAGS => pk.flags = var(p, &mut i)?,
            tag::CLOCK_ID => pk.clock = Some(var(p, &mut i)? as u32),
            tag::CLEARED => pk.cleared |= var(p, &mut i)? != 0,
            tag::DROPPED => pk.dropped |= var(p, &mut i)? != 0,
            tag::TRACK_EVENT => {
                let b = bytes(p, &mut i)?;
                let off = b.as_ptr() as usize - p.as_ptr() as usize;
                pk.te = Some((b, at + off as u64));
            }
            tag::INTERNED => pk.interned = Some(bytes(p, &mut i)?),
            tag::DEFAULTS => pk.defaults = Some(bytes(p, &mut i)?),
            tag::SNAPSHOT => pk.snapshot = Some(bytes(p, &mut i)?),
            tag::THREAD => pk.thread = Some(bytes(p, &mut i)?),
            t if t == 60 << 3 | 2 => pk.descriptor = Some(bytes(p, &mut i)?),
            // Sideband, and a descriptor of another wire type, which the decode skips.
            t if sideband(t >> 3) || t >> 3 == 60 => skip(p, &mut i, t)?,
            _ => return None,
        }
    }
    Some(())
}

impl<'a> Te<'a> {
    /// Reads TrackEvent `b` (at byte `at`) as `Te::read` does, when it holds only the
    /// usual fields, every interned id defined in `seq`; `false` for any other (its fields
    /// then partly read: the general walk clears them first).
    #[inline]
    pub(super) fn read_fast(&mut self, b: &'a [u8], at: u64, seq: &Seq<'a>) -> bool {
        if general_only() {
            return false;
        }
        self.clear();
        let mut i = 0;
        while i < b.len() {
            let tag_at = at + i as u64;
            let Some(t) = var(b, &mut i) else {
                return false;
            };
            let read = match t {
                tag::TE_TYPE => var(b, &mut i).map(|v| self.ty = v),
                tag::TE_NAME_IID => var(b, &mut i)
                    .and_then(|v| seq.names.get(&v))
                    .map(|n| self.set_name(n)),
                tag::TE_CATEGORY_IID => var(b, &mut i)
                    .and_then(|v| seq.cats.get(&v))
                    .map(|c| self.push_cat(c)),
                tag::TE_CATEGORY_IIDS => bytes(b, &mut i).and_then(|ids| {
                    packed(ids, |v| {
                        self.push_cat(seq.cats.get(&v)?);
                        Some(())
                    })
                }),
                tag::TE_CATEGORY => bytes(b, &mut i)
                    .and_then(utf8)
                    .map(|c| self.push_cat(&(c, 0))),
                tag::TE_NAME => bytes(b, &mut i)
                    .and_then(utf8)
                    .map(|n| self.set_name(&(n, 0))),
                tag::TE_TRACK_UUID => var(b, &mut i).map(|v| self.track = Some(v)),
                tag::TE_DEBUG_ANNOTATION => bytes(b, &mut i).map(|a| {
                    let off = a.as_ptr() as usize - b.as_ptr() as usize;
                    self.annots.push((a, at + off as u64))
                }),
                tag::TE_EXTRA_COUNTER_VALUE => {
                    var(b, &mut i).map(|v| self.extra_values.push(v as i64))
                }
                tag::TE_EXTRA_COUNTER_VALUES => bytes(b, &mut i).and_then(|vs| {
                    packed(vs, |v| {
                        self.extra_values.push(v as i64);
                        Some(())
                    })
                }),
                tag::TE_TASK => bytes(b, &mut i).map(|task| {
                    let off = task.as_ptr() as usize - b.as_ptr() as usize;
                    self.task(task, at + off as u64)
                }),
                tag::TE_LOCATION_IID => {
                    var(b, &mut i).map(|v| self.location_iid = Some((v, tag_at)))
                }
                tag::TE_FLOW_ID => fixed64(b, &mut i).map(|v| self.flow_out.push(v)),
                tag::TE_FLOW_IDS => {
                    bytes(b, &mut i).and_then(|v| packed64(v, |x| self.flow_out.push(x)))
                }
                tag::TE_END_FLOW_ID => fixed64(b, &mut i).map(|v| self.flow_in.push(v)),
                tag::TE_END_FLOW_IDS => {
                    bytes(b, &mut i).and_then(|v| packed64(v, |x| self.flow_in.push(x)))
                }
                tag::TE_DELTA_US => var(b, &mut i).map(|v| self.delta_us = Some(v as i64)),
                tag::TE_ABSOLUTE_US => var(b, &mut i).map(|v| self.abs_us = Some(v as i64)),
                t => self.other(b, &mut i, t, at),
            };
            if read.is_none() {
                return false;
            }
        }
        #[cfg(test)]
        FAST_READS.with(|n| n.set(n.get() + 1));
        true
    }
}

impl<'a> Te<'a> {
    /// A field the fast read has no arm for, at `b[*i..]` after its tag `t`: Chrome's
    /// typed fields kept for args, fields the general read ignores skipped; `None` for
    /// one the general read takes otherwise.
    #[inline]
    fn other(&mut self, b: &'a [u8], i: &mut usize, t: u64, at: u64) -> Option<()> {
        let num = u32::try_from(t >> 3).ok()?;
        // Those the general read takes (`Te::read`), here with another wire type or not
        // read the fast way; and 0, which no message has.
        const READ: [u32; 24] = [
            0, 1, 3, 4, 5, 6, 9, 10, 11, 12, 16, 22, 23, 30, 31, 33, 34, 36, 42, 44, 45, 46, 47, 48,
        ];
        if READ.contains(&num) {
            return None;
        }
        match t & 7 {
            0 => drop(var(b, i)?),
            1 => drop(fixed64(b, i)?),
            2 => {
                let m = bytes(b, i)?;
                if typed::track_event_field(num).is_some() {
                    let off = m.as_ptr() as usize - b.as_ptr() as usize;
                    self.typed.push((num, m, at + off as u64));
                }
            }
            5 => {
                b.get(*i..*i + 4)?;
                *i += 4;
            }
            _ => return None,
        }
        Some(())
    }
}

#[cfg(test)]
thread_local! {
    /// TrackEvents the fast read took, on this thread.
    pub(super) static FAST_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Thread slices the usual packet's path ([`usual`](super::usual)) took, on this thread.
    pub(super) static USUAL_SLICES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
