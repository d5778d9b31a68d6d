//! The usual packet of a TrackEvent-heavy trace, straight to the sink: a thread slice's
//! begin or end, or an instant (a timestamp on the sequence's clock, the sequence's id and flags, a
//! TrackEvent of a type, an interned name, at most one interned category, debug
//! annotations, extra counter values on the sequence's default tracks (Chrome's thread
//! time), on the sequence's thread track already met). One pass over its bytes, no
//! [`Packet`](super::base::Packet) or [`Te`](super::base::Te) filled, nothing looked up
//! that the last event of its sequence did not already settle.
//!
//! Anything else (another field, a second category, a flow, a track not the sequence's
//! thread track, a sequence whose state was lost or is cleared, a broken field, an iid not
//! defined) is left, with nothing changed, to the readers of [`fast`](super::fast) and the
//! general walk, which give the same events and warnings (the test
//! `the_fast_readers_decode_as_the_general_walk_does` turns both off and compares).

use std::borrow::Cow;

use super::annot::{write_debug, Interned};
use super::base::general_only;
use super::base::{malformed, Te};
use super::events::{Decoder, CLEARED, NEEDS_STATE};
use super::fast::{packed, sideband, skip, tag};
use super::seq::packet_time;
use super::track_event::{extra_counters, Out};
use super::wire::{bytes, var};
use crate::diag::Diagnostics;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId, ThreadSlice};

/// The TrackEvent types it takes: a slice's begin and end, an instant.
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const INSTANT: u64 = 3;

/// A usual packet's fields: the timestamp, sequence id and flags, and its TrackEvent with
/// its offset in the packet.
struct Head<'a> {
    ts: u64,
    seq: u32,
    flags: u64,
    te: &'a [u8],
    te_at: u64,
}

/// Packet `p` (at byte `at`) when it holds only a timestamp, sequence id, flags and a
/// TrackEvent, as [`fast::packet`](super::fast::packet) reads them (the last of a repeated
/// field wins).
#[inline(always)]
fn head(p: &[u8], at: u64) -> Option<Head<'_>> {
    let (mut ts, mut seq, mut flags, mut te) = (None, 0, 0, None);
    let mut i = 0;
    while i < p.len() {
        match var(p, &mut i)? {
            tag::TIMESTAMP => ts = Some(var(p, &mut i)?),
            tag::SEQUENCE_ID => seq = var(p, &mut i)? as u32,
            tag::SEQUENCE_FLAGS => flags = var(p, &mut i)?,
            tag::TRACK_EVENT => {
                let b = bytes(p, &mut i)?;
                te = Some((b, at + (b.as_ptr() as usize - p.as_ptr() as usize) as u64));
            }
            t if sideband(t >> 3) => skip(p, &mut i, t)?,
            _ => return None,
        }
    }
    let (te, te_at) = te?;
    Some(Head {
        ts: ts?,
        seq,
        flags,
        te,
        te_at,
    })
}

/// A usual TrackEvent's fields: its type, name and category iids (how many categories),
/// and its track.
#[derive(Default)]
struct Fields {
    ty: u64,
    name: Option<u64>,
    cat: Option<u64>,
    cats: u32,
    track: Option<u64>,
    /// Extra counter values came, into `Decoder::te` (cleared for them).
    extras: bool,
}

impl<'a> Decoder<'a> {
    /// Packet `p` (at byte `at`) handed to `sink` as a [`ThreadSlice`] when it is the usual
    /// one (see the module's overview); `false`, with nothing changed, for any other.
    #[inline]
    pub(super) fn usual_slice<S: EventSink>(
        &mut self,
        p: &'a [u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> bool {
        if general_only() || self.uses.is_some() {
            return false;
        }
        let Some(h) = head(p, at) else {
            return false;
        };
        if h.flags & CLEARED != 0 {
            return false;
        }
        let slot = self.slot(h.seq);
        let Some(x) = self.usual_fields(slot, &h) else {
            return false;
        };
        let seq = &mut self.seqs[slot];
        if h.flags & NEEDS_STATE != 0 && !seq.valid {
            return false;
        }
        let Some((uuid, pid, tid)) = seq.thread_track else {
            return false;
        };
        if x.track.filter(|&u| u != 0).or(seq.track_uuid) != Some(uuid) {
            return false;
        }
        // Taken: from here on, as `Decoder::track_event` does it.
        let ts = packet_time(&self.f, seq, h.ts, h.seq, at, d);
        let seq = &self.seqs[slot];
        self.args.clear();
        if !self.annots.is_empty() {
            let it = Interned {
                names: &seq.ann_names,
                strings: &seq.ann_strings,
            };
            self.args.push('{');
            if let Err(e) = write_debug(&mut self.args, &self.annots, &it, true, d) {
                malformed(d, e, "a debug annotation");
            }
            self.args.push('}');
        }
        let name = x.name.and_then(|n| seq.names.get(&n));
        let cat = x.cat.and_then(|c| seq.cats.get(&c));
        self.events += 1;
        #[cfg(test)]
        super::fast::USUAL_SLICES.with(|n| n.set(n.get() + 1));
        if x.ty == INSTANT {
            sink.event(&RawEvent {
                ph: Phase::INSTANT,
                name: Cow::Borrowed(name.map_or("", |n| &n.0)),
                cat: Cow::Borrowed(cat.map_or("", |c| &c.0)),
                ts,
                pid: RawId::Num(pid),
                tid: RawId::Num(tid),
                args: match self.args.is_empty() {
                    true => Args::None,
                    false => Args::Json(Cow::Borrowed(&self.args)),
                },
                offset: at,
                // Chrome writes global legacy instants with track 0.
                scope: Some(if x.track == Some(0) { b'g' } else { b't' }),
                ..RawEvent::default()
            });
        } else {
            sink.thread_slice(&ThreadSlice {
                ph: if x.ty == SLICE_BEGIN {
                    Phase::BEGIN
                } else {
                    Phase::END
                },
                pid,
                tid,
                ts,
                name: name.map_or("", |n| &n.0),
                cat: cat.map_or("", |c| &c.0),
                args: &self.args,
                offset: at,
                name_key: name.map_or(0, |n| n.1),
                cat_key: cat.map_or(0, |c| c.1),
            });
        }
        if x.extras {
            self.usual_extras(slot, (ts, at, x.cat), sink, d);
        }
        true
    }

    /// The usual TrackEvent's fields, its annotations into `annots`; `None` for any other
    /// TrackEvent, or one naming an iid its sequence (`slot`) does not define.
    #[inline(always)]
    fn usual_fields(&mut self, slot: usize, h: &Head<'a>) -> Option<Fields> {
        let seq = &self.seqs[slot];
        let (b, at) = (h.te, h.te_at);
        let mut x = Fields::default();
        self.annots.clear();
        let mut i = 0;
        while i < b.len() {
            match var(b, &mut i)? {
                tag::TE_TYPE => x.ty = var(b, &mut i)?,
                tag::TE_NAME_IID => {
                    let n = var(b, &mut i)?;
                    seq.names.get(&n)?;
                    x.name = Some(n);
                }
                tag::TE_CATEGORY_IID => {
                    let c = var(b, &mut i)?;
                    seq.cats.get(&c)?;
                    (x.cat, x.cats) = (Some(c), x.cats + 1);
                }
                tag::TE_CATEGORY_IIDS => packed(bytes(b, &mut i)?, |c| {
                    seq.cats.get(&c)?;
                    (x.cat, x.cats) = (Some(c), x.cats + 1);
                    Some(())
                })?,
                tag::TE_TRACK_UUID => x.track = Some(var(b, &mut i)?),
                tag::TE_EXTRA_COUNTER_VALUE => {
                    let v = var(b, &mut i)?;
                    extra(&mut self.te, &mut x).push(v as i64);
                }
                tag::TE_EXTRA_COUNTER_VALUES => {
                    let vs = bytes(b, &mut i)?;
                    let values = extra(&mut self.te, &mut x);
                    packed(vs, |v| {
                        values.push(v as i64);
                        Some(())
                    })?
                }
                tag::TE_DEBUG_ANNOTATION => {
                    let a = bytes(b, &mut i)?;
                    let off = a.as_ptr() as usize - b.as_ptr() as usize;
                    self.annots.push((a, at + off as u64));
                }
                _ => return None,
            }
        }
        // Several categories are joined into a new string: the general path's.
        let slice = matches!(x.ty, SLICE_BEGIN | SLICE_END | INSTANT) && x.cats <= 1;
        slice.then_some(x)
    }

    /// The extra counter values of the usual thread slice (at byte `at`, time `ts`, on
    /// sequence `slot`, of category `cat`), as `Decoder::track_event` writes them.
    #[inline(never)]
    fn usual_extras<S: EventSink>(
        &mut self,
        slot: usize,
        (ts, at, cat): (i64, u64, Option<u64>),
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        let seq = &mut self.seqs[slot];
        let cat = cat.and_then(|c| seq.cats.get(&c));
        let mut ev = RawEvent {
            cat: cat.map_or(Cow::Borrowed(""), |c| c.0.clone()),
            ts,
            offset: at,
            ..RawEvent::default()
        };
        let out = &mut Out {
            events: &mut self.events,
            sink,
        };
        let (f, uses) = (&self.f, &mut self.uses);
        extra_counters(out, &mut ev, f, uses, &self.te, seq, d);
    }
}

/// Where extra counter values go: `te`'s, cleared at the first (the general read clears it
/// again, should it take the event after all).
#[inline]
fn extra<'t>(te: &'t mut Te<'_>, x: &mut Fields) -> &'t mut Vec<i64> {
    if !x.extras {
        te.clear();
        x.extras = true;
    }
    &mut te.extra_values
}
