//! What the second pass's files share, below all of them: a packet's fields, a TrackEvent's,
//! counter values, open and pending async slices, and small helpers.

use std::borrow::Cow;

pub(super) use crate::tagged::dec;

use super::wire::WireError;
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{EventSink, RawEvent};

/// The fields of one packet that decoding needs.
#[derive(Default)]
pub(super) struct Packet<'a> {
    pub(super) ts: Option<u64>,
    pub(super) clock: Option<u32>,
    pub(super) seq: u32,
    pub(super) flags: u64,
    pub(super) cleared: bool,
    pub(super) dropped: bool,
    pub(super) te: Option<(&'a [u8], u64)>,
    pub(super) interned: Option<&'a [u8]>,
    pub(super) defaults: Option<&'a [u8]>,
    pub(super) snapshot: Option<&'a [u8]>,
    pub(super) thread: Option<&'a [u8]>,
    /// A TrackDescriptor (read in the first pass; here only for when it is met).
    pub(super) descriptor: Option<&'a [u8]>,
    pub(super) kind: Option<u32>,
    /// A system-trace packet: its field (ftrace events, process tree, system info), bytes
    /// and offset.
    pub(super) system: Option<(u32, &'a [u8], u64)>,
    /// Its sequence's index in [`Decoder::seqs`].
    pub(super) slot: usize,
}

/// An interned name or category with its key: a number its decoder gives each string it
/// interns, once (see [`ThreadSlice::name_key`](crate::ThreadSlice::name_key)); 0 where
/// the decoder gives none.
pub(super) type Keyed<'a> = (Cow<'a, str>, u32);

/// An open async slice: its name, category and start, for its end.
pub(super) type Open<'a> = (Cow<'a, str>, Cow<'a, str>, i64);

pub(super) fn text<'a>(b: &'a [u8], at: u64, d: &mut Diagnostics) -> Cow<'a, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            d.warn(WarningKind::InvalidUtf8, at, || {
                "a protobuf string that is not UTF-8, decoded with U+FFFD replacements".into()
            });
            Cow::Owned(String::from_utf8_lossy(b).into_owned())
        }
    }
}

pub(super) fn malformed(d: &mut Diagnostics, e: WireError, what: &str) {
    d.warn(WarningKind::ProtoMalformed, e.offset, || {
        format!("{what} with a broken field ({e}); skipped")
    });
}

/// Hands `ev` to `sink`, counting it.
pub(super) fn emit<S: EventSink>(events: &mut u64, sink: &mut S, ev: &RawEvent<'_>) {
    *events += 1;
    sink.event(ev);
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Num {
    Int(i64),
    Double(f64),
}

impl Num {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Double(x) => x,
        }
    }
}

/// The fields of one `TrackEvent`, and scratch lists reused from event to event.
#[derive(Default)]
pub(super) struct Te<'a> {
    pub(super) ty: u64,
    pub(super) name: Option<Cow<'a, str>>,
    /// The name's key when it is interned ([`Keyed`]), else 0.
    pub(super) name_key: u32,
    pub(super) cats: Vec<Cow<'a, str>>,
    /// The last category's key when it is interned, else 0.
    pub(super) cat_key: u32,
    pub(super) track: Option<u64>,
    pub(super) counter: Option<Num>,
    pub(super) extra_tracks: Vec<u64>,
    pub(super) extra_values: Vec<i64>,
    pub(super) extra_double_tracks: Vec<u64>,
    pub(super) extra_double_values: Vec<f64>,
    pub(super) flow_out: Vec<u64>,
    pub(super) flow_in: Vec<u64>,
    pub(super) annots: Vec<(&'a [u8], u64)>,
    pub(super) abs_us: Option<i64>,
    pub(super) delta_us: Option<i64>,
    pub(super) legacy: Option<(&'a [u8], u64)>,
    /// `source_location_iid` and where it was, else an inline `source_location`.
    pub(super) location_iid: Option<(u64, u64)>,
    pub(super) location: Option<&'a [u8]>,
    /// `task_execution.posted_from_iid` (Chrome's posted-from location) and where it was.
    pub(super) task_iid: Option<(u64, u64)>,
    /// Chrome's typed fields written as args (see `typed`): (number, message, offset).
    pub(super) typed: Vec<(u32, &'a [u8], u64)>,
}

impl<'a> Te<'a> {
    /// Whether the event carries extra counter values (on any type of event).
    #[inline]
    pub(super) fn has_extras(&self) -> bool {
        !self.extra_values.is_empty() || !self.extra_double_values.is_empty()
    }

    #[inline]
    pub(super) fn clear(&mut self) {
        self.ty = 0;
        self.name = None;
        self.name_key = 0;
        self.cats.clear();
        self.cat_key = 0;
        self.track = None;
        self.counter = None;
        self.extra_tracks.clear();
        self.extra_values.clear();
        self.extra_double_tracks.clear();
        self.extra_double_values.clear();
        self.flow_out.clear();
        self.flow_in.clear();
        self.annots.clear();
        self.abs_us = None;
        self.delta_us = None;
        self.legacy = None;
        self.location_iid = None;
        self.location = None;
        self.task_iid = None;
        self.typed.clear();
    }

    /// The name, with its key.
    #[inline]
    pub(super) fn set_name(&mut self, (name, key): &Keyed<'a>) {
        self.name = Some(name.clone());
        self.name_key = *key;
    }

    /// One more category, with its key.
    #[inline]
    pub(super) fn push_cat(&mut self, (cat, key): &Keyed<'a>) {
        self.cats.push(cat.clone());
        self.cat_key = *key;
    }

    /// Whether it has nothing that becomes args (`write_args`' quick answer).
    #[inline]
    pub(super) fn no_args(&self) -> bool {
        self.annots.is_empty()
            && self.typed.is_empty()
            && self.legacy.is_none()
            && self.location_iid.is_none()
            && self.location.is_none()
            && self.task_iid.is_none()
    }
}

/// A part's ends left for `parts::resolve`, and the tracks they are on: a track's later
/// ends in the part wait too, so that all of them pair in time order.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) ends: Vec<PendingEnd>,
    pub(super) tracks: super::hash::IdMap<u64, ()>,
}

/// A slice end on an async track with no slice open in its own part.
pub(super) struct PendingEnd {
    pub(super) track: u64,
    pub(super) ts: i64,
    pub(super) pid: i64,
    pub(super) tid: i64,
    /// Its id is process-local (see [`set_async_id`](super::track_event::set_async_id)).
    pub(super) local: bool,
    pub(super) offset: u64,
    pub(super) args: Option<String>,
    /// Its flow points: (id, terminating).
    pub(super) flows: Vec<(u64, bool)>,
}

#[cfg(test)]
thread_local! {
    static GENERAL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the fast readers, [`usual`](super::usual)'s and `annot`'s usual annotation stand
/// aside (a test's switch; always `false` in a build).
#[inline(always)]
pub(super) fn general_only() -> bool {
    #[cfg(test)]
    return GENERAL_ONLY.with(|g| g.get());
    #[cfg(not(test))]
    false
}

/// Runs `f` with the fast readers off on this thread (the decode's parts then run on it).
#[cfg(test)]
pub(super) fn with_general_only<T>(f: impl FnOnce() -> T) -> T {
    GENERAL_ONLY.with(|g| g.set(true));
    let out = f();
    GENERAL_ONLY.with(|g| g.set(false));
    out
}
