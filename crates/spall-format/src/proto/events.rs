//! The second pass: one part's packets (see [`parts`](super::parts)) in file order,
//! dispatched to their sequence's incremental state ([`seq`](super::seq)), TrackEvents
//! ([`track_event`](super::track_event)) and the event kinds beyond slices
//! ([`kinds`](super::kinds)). What these files share is in [`base`](super::base), below
//! them all.

use std::borrow::Cow;

use super::annot::{self, escape_bytes, escape_into};
use super::base::{emit, malformed, Open, Packet, Pending, Te};
use super::hash::IdMap;
use super::packet_kind;
use super::scan::{thread_descriptor, Found, Track};
use super::seq::{advance, defaults, incremental_clocks, intern, time, Seq, Uses};
use super::wire::{Reader, Value};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

pub(super) const CLEARED: u64 = 1;
pub(super) const NEEDS_STATE: u64 = 2;

/// What the first pass found: shared by the parts of a whole decode, a stream's own (it
/// grows as packets arrive).
pub(super) enum Facts<'a> {
    Shared(&'a Found<'a>),
    Own(Box<Found<'a>>),
}

impl<'a> std::ops::Deref for Facts<'a> {
    type Target = Found<'a>;

    fn deref(&self) -> &Found<'a> {
        match self {
            Facts::Shared(f) => f,
            Facts::Own(f) => f,
        }
    }
}

/// Decodes the packets of one part: sequences whose incremental state is all its own.
pub(super) struct Decoder<'a> {
    pub(super) f: Facts<'a>,
    /// A stream's: what its events used; and, set, open slices keep their own names (the
    /// bytes they came from do not stay).
    pub(super) uses: Option<Box<Uses>>,
    /// The part's sequences' state, found by id through `slots`; packets come in runs of
    /// one sequence, so the last one found is kept at hand.
    pub(super) seqs: Vec<Seq<'a>>,
    slots: IdMap<u32, usize>,
    last: Option<(u32, usize)>,
    /// Tracks events name that no TrackDescriptor defines (global tracks, warned once).
    pub(super) unknown: IdMap<u64, Track<'a>>,
    /// Open slices of each async track: innermost last.
    pub(super) stacks: IdMap<u64, Vec<Open<'a>>>,
    /// Slice ends on async tracks where this part has no slice open: paired after every
    /// part is decoded, with slices other parts left open.
    pub(super) pending: Pending,
    pub(super) events: u64,
    pub(super) te: Te<'a>,
    pub(super) args: String,
    /// System-trace packets' state (see [`ftrace`](super::ftrace)).
    pub(super) ftrace: super::ftrace::Ftrace,
    /// The key the next interned name or category takes (see
    /// [`ThreadSlice::name_key`](crate::ThreadSlice::name_key)); 0 in a stream, whose
    /// sinks take no keys. Decoders into one sink carry it on from one to the next.
    pub(super) next_key: u32,
    /// The usual thread slice's debug annotations ([`usual`](super::usual)).
    pub(super) annots: Vec<(&'a [u8], u64)>,
}

impl<'a> Decoder<'a> {
    /// A whole decode's: interned names take keys from `next_key` on (0: none).
    pub fn new(f: &'a Found<'a>, next_key: u32) -> Decoder<'a> {
        Decoder {
            next_key,
            ..Decoder::with(Facts::Shared(f), None)
        }
    }

    pub fn with(f: Facts<'a>, uses: Option<Box<Uses>>) -> Decoder<'a> {
        Decoder {
            f,
            uses,
            seqs: Vec::new(),
            slots: IdMap::default(),
            last: None,
            unknown: IdMap::default(),
            stacks: IdMap::default(),
            pending: Pending::default(),
            events: 0,
            te: Te::default(),
            args: String::new(),
            ftrace: Default::default(),
            next_key: 0,
            annots: Vec::new(),
        }
    }

    pub(super) fn slot(&mut self, id: u32) -> usize {
        match self.last {
            Some((last, i)) if last == id => i,
            _ => {
                let seqs = &mut self.seqs;
                let i = *self.slots.entry(id).or_insert_with(|| {
                    seqs.push(Seq::default());
                    seqs.len() - 1
                });
                self.last = Some((id, i));
                i
            }
        }
    }

    /// One packet, at byte `at` of the input: the usual thread slice straight to the sink
    /// ([`usual`](super::usual)), the usual TrackEvent packet read the fast way
    /// ([`fast`](super::fast)), any other by the general field walk.
    pub fn packet<S: EventSink>(
        &mut self,
        p: &'a [u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        if self.usual_slice(p, at, sink, d) {
            return;
        }
        // Filled in place: a packet is too large to move about per event.
        let mut pk = Packet::default();
        if !super::fast::packet(p, at, &mut pk) {
            pk = Packet::default();
            if !self.fields(p, at, &mut pk, sink, d) {
                return;
            }
        }
        self.apply(&mut pk, at, sink, d);
    }

    /// A packet's fields by the general walk; its system-trace events decoded and its
    /// unmodelled kind counted. `false` when a field is broken (warned).
    #[inline(never)]
    pub(super) fn fields<S: EventSink>(
        &mut self,
        p: &'a [u8],
        at: u64,
        pk: &mut Packet<'a>,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> bool {
        let mut r = Reader::new(p, at);
        while let Some(f) = r.next_field() {
            let f = match f {
                Ok(f) => f,
                Err(e) => {
                    malformed(d, e, "a packet");
                    return false;
                }
            };
            match (f.num, f.value) {
                (8, v) => pk.ts = v.uint(),
                (58, v) => pk.clock = v.uint().map(|c| c as u32),
                (10, v) => pk.seq = v.uint().unwrap_or(0) as u32,
                (13, v) => pk.flags = v.uint().unwrap_or(0),
                (41, v) => pk.cleared |= v.uint().unwrap_or(0) != 0,
                (42, v) => pk.dropped |= v.uint().unwrap_or(0) != 0,
                (11, Value::Bytes(b)) => pk.te = Some((b, r.offset_of(b))),
                (12, Value::Bytes(b)) => pk.interned = Some(b),
                (59, Value::Bytes(b)) => pk.defaults = Some(b),
                (6, Value::Bytes(b)) => pk.snapshot = Some(b),
                (44, Value::Bytes(b)) => pk.thread = Some(b),
                (60, Value::Bytes(b)) => pk.descriptor = Some(b),
                (11 | 12 | 59 | 6 | 44, _) => annot::wrong_type(d, f.offset),
                // System traces: ftrace bundles, process trees, the kernel's version.
                (1 | 2 | 45, Value::Bytes(b)) => pk.system = Some((f.num, b, r.offset_of(b))),
                // Sideband fields, descriptors (read in the first pass), sync markers.
                (n, _) if super::fast::sideband(n as u64) || n == 60 => {}
                (n, _) => pk.kind = Some(n),
            }
        }
        if let Some(k) = pk.kind {
            let kind = packet_kind(k);
            d.warn(WarningKind::ProtoUnmodelled(kind), at, || {
                format!("a packet of kind {k} ({kind}), which is not modelled; counted and skipped")
            });
        }
        if let Some((n, b, at)) = pk.system {
            let f = &*self.f;
            self.events += match n {
                1 => self.ftrace.bundle(f, b, at, sink, d),
                2 => self.ftrace.process_tree(b, at, sink, d),
                _ => self.ftrace.system_info(b, at, sink),
            };
        }
        true
    }

    /// A packet's fields applied: its sequence's state, then its TrackEvent.
    #[inline]
    fn apply<S: EventSink>(
        &mut self,
        pk: &mut Packet<'a>,
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        pk.slot = self.slot(pk.seq);
        let seq = &mut self.seqs[pk.slot];
        if pk.dropped {
            seq.valid = false;
        }
        if pk.cleared || pk.flags & CLEARED != 0 {
            seq.reset();
            seq.valid = true;
        }
        if pk.flags & NEEDS_STATE != 0 && !seq.valid {
            if pk.te.is_some() {
                d.warn(WarningKind::ProtoIncrementalStateLost, at, || {
                    format!(
                        "an event on sequence {} whose incremental state was lost (packets dropped before it); skipped until the state is cleared",
                        pk.seq
                    )
                });
            }
            return;
        }
        if let Some(b) = pk.interned {
            intern(seq, b, &mut self.next_key, d);
        }
        if let Some(b) = pk.defaults {
            defaults(seq, b);
        }
        if let Some(b) = pk.snapshot {
            incremental_clocks(seq, b, pk.seq, self.f.clocks.trace_clock);
            if let Some(u) = &mut self.uses {
                u.trace_clock = true;
            }
        }
        if let Some(b) = pk.thread {
            let (key, _, _) = thread_descriptor(b);
            seq.thread = Some(key);
            seq.thread_track = None;
            for f in Reader::new(b, 0).map_while(Result::ok) {
                if f.num == 6 {
                    seq.last_us = f.value.int().unwrap_or(0);
                }
            }
        }
        match (pk.te, pk.descriptor, pk.ts) {
            (Some(_), _, _) => self.track_event(pk, at, sink, d),
            (None, Some(b), Some(_)) => {
                let ts = time(&self.f, seq, pk, &Te::default(), at, d, &mut self.uses);
                let uuid = Reader::new(b, 0)
                    .map_while(Result::ok)
                    .find(|x| x.num == 1)
                    .and_then(|x| x.value.uint())
                    .unwrap_or(0);
                let met = met_track(&self.f, uuid, ts, at, sink);
                if let (false, Some(u)) = (met, &mut self.uses) {
                    u.descriptors.push((uuid, ts, at));
                }
            }
            _ => advance(seq, pk),
        }
    }
}

/// The thread or process track `uuid` (its descriptor's packet at `at`, time `ts`)
/// describes or hangs from, met ([`met`]); `false` when it hangs from neither.
pub(super) fn met_track<S: EventSink>(
    f: &Found<'_>,
    uuid: u64,
    ts: i64,
    at: u64,
    sink: &mut S,
) -> bool {
    let Some(t) = f.tracks.get(&uuid) else {
        return false;
    };
    let (pid, tid) = match (t.thread, t.process, t.tid) {
        (Some((pid, tid)), _, _) => (pid, tid),
        (None, Some(pid), _) => (pid, pid),
        (None, None, Some(tid)) => (t.pid, tid),
        (None, None, None) if t.pid != 0 => (t.pid, t.pid),
        _ => return false,
    };
    met(sink, pid, tid, ts, at, true);
    true
}

/// Tells the sink that trace_processor's importer meets thread `tid` of process `pid` (its
/// main thread, tid = pid, where it meets only the process) at time `ts`, in the packet or
/// event at byte `at`, a TrackDescriptor's (`descriptor`) or an event's: a `spall_met`
/// `M` event, which the model ranks threads by (docs/SQL.md, `legacy_event.passthrough_utid`).
/// Not counted as a decoded event.
pub(super) fn met<S: EventSink>(
    sink: &mut S,
    pid: i64,
    tid: i64,
    ts: i64,
    at: u64,
    descriptor: bool,
) {
    sink.event(&RawEvent {
        ph: Phase::METADATA,
        name: Cow::Borrowed("spall_met"),
        pid: RawId::Num(pid),
        tid: RawId::Num(tid),
        ts,
        scope: descriptor.then_some(b'd'),
        offset: at,
        ..RawEvent::default()
    });
}

/// Process and thread names, sort indices and labels, as `M` events.
pub(super) fn names<S: EventSink>(f: &Found<'_>, sink: &mut S) -> u64 {
    let mut d = Diagnostics::default();
    let mut events = 0;
    let mut args = String::new();
    let mut m = |name: &str, pid: i64, tid: i64, args: &str| {
        let ev = RawEvent {
            ph: Phase::METADATA,
            name: Cow::Borrowed(name),
            pid: RawId::Num(pid),
            tid: RawId::Num(tid),
            args: Args::Json(Cow::Borrowed(args)),
            ..RawEvent::default()
        };
        emit(&mut events, sink, &ev);
    };
    for (&pid, p) in &f.processes {
        if let Some(n) = p.name {
            args.clear();
            args.push_str("{\"name\":");
            escape_bytes(&mut args, n, 0, &mut d);
            args.push('}');
            m("process_name", pid, 0, &args);
        }
        if let Some(i) = p.sort_index {
            m(
                "process_sort_index",
                pid,
                0,
                &format!("{{\"sort_index\":{i}}}"),
            );
        }
        if !p.labels.is_empty() {
            let l: Vec<_> = p
                .labels
                .iter()
                .map(|l| String::from_utf8_lossy(l))
                .collect();
            args.clear();
            args.push_str("{\"labels\":");
            escape_into(&mut args, &l.join(","));
            args.push('}');
            m("process_labels", pid, 0, &args);
        }
    }
    for (&(pid, tid), t) in &f.threads {
        if let Some(n) = t.name {
            args.clear();
            args.push_str("{\"name\":");
            escape_bytes(&mut args, n, 0, &mut d);
            args.push('}');
            m("thread_name", pid, tid, &args);
        }
        if let Some(i) = t.sort_index {
            m(
                "thread_sort_index",
                pid,
                tid,
                &format!("{{\"sort_index\":{i}}}"),
            );
        }
    }
    events
}
