//! Each packet sequence's incremental state: interned strings, defaults, incremental
//! clocks, and the event times they give.

use super::annot::{AnnName, Location};
use super::base::{text, Keyed, Num, Packet, Te};
use super::clock::{self, ClockKey, BOOTTIME};
use super::hash::{IdMap, IidMap};
use super::scan::Found;
use super::wire::{repeated, Reader, Value};
use crate::diag::{Diagnostics, WarningKind};

/// What a stream's events used of what was found, to tell whether a later fact would
/// have decoded them otherwise ([`stream`](super::stream)).
#[derive(Default)]
pub(super) struct Uses {
    /// Tracks events were put on, whether a descriptor defined them yet or not.
    pub(super) tracks: IdMap<u64, ()>,
    /// Clocks converted through snapshots, and the least and greatest times converted.
    pub(super) clocks: IdMap<ClockKey, (i64, i64)>,
    /// Whether any time was converted (or incremental clock set) with the trace clock.
    pub(super) trace_clock: bool,
    /// Sequences whose thread wrote events on process or global tracks, with that
    /// thread as known then (a later descriptor naming another changes those events).
    pub(super) writers: IdMap<u32, Option<(i64, i64)>>,
    /// TrackDescriptors met while their track hung from no process or thread known yet:
    /// (uuid, time, byte offset), met again at the end, once every track is known.
    pub(super) descriptors: Vec<(u64, i64, u64)>,
}

/// A clock whose timestamps are deltas from the previous one on its sequence.
#[derive(Clone, Copy, Debug)]
pub(super) struct IncClock {
    pub(super) value: i64,
    pub(super) multiplier: i64,
    /// Its value in ns at the snapshot that defined it, and the clock read beside it then
    /// (with that clock's reading), through which its times convert.
    pub(super) snap_ns: i64,
    pub(super) via: Option<(ClockKey, i64)>,
}

/// One packet sequence's incremental state.
#[derive(Default)]
pub(super) struct Seq<'a> {
    pub(super) valid: bool,
    pub(super) names: IidMap<Keyed<'a>>,
    pub(super) cats: IidMap<Keyed<'a>>,
    pub(super) ann_names: IdMap<u64, AnnName<'a>>,
    pub(super) ann_strings: IdMap<u64, &'a [u8]>,
    /// Interned `SourceLocation` messages, undecoded.
    pub(super) locations: IdMap<u64, Location<'a>>,
    /// Interned `UnsymbolizedSourceLocation` messages (Chrome's Mojo methods), undecoded.
    pub(super) unsymbolized: IdMap<u64, &'a [u8]>,
    pub(super) track_uuid: Option<u64>,
    pub(super) extra_counters: Vec<u64>,
    pub(super) extra_double_counters: Vec<u64>,
    pub(super) clock: Option<u32>,
    /// Its incremental clocks by id: one or two, looked up on every event.
    pub(super) inc: Vec<(u32, IncClock)>,
    /// The thread of a legacy `ThreadDescriptor` packet: the default track.
    pub(super) thread: Option<(i64, i64)>,
    pub(super) last_us: i64,
    /// The last thread track this sequence's events went on, defined by a descriptor:
    /// (uuid, pid, tid). Set and read only by a whole decode, whose tracks are all known;
    /// cleared when `thread` changes.
    pub(super) thread_track: Option<(u64, i64, i64)>,
    /// Running totals of incremental counter tracks: integer values summed exactly, any
    /// double turns the total into one.
    pub(super) sums: IdMap<u64, Num>,
}

impl Seq<'_> {
    fn inc_clock(&mut self, id: u32) -> Option<&mut IncClock> {
        self.inc.iter_mut().find(|c| c.0 == id).map(|c| &mut c.1)
    }

    pub(super) fn reset(&mut self) {
        let thread = self.thread;
        *self = Seq {
            thread,
            ..Seq::default()
        };
    }
}

/// Moves the sequence's incremental clock by the timestamp of a packet that is no
/// TrackEvent (a track descriptor, say): trace_processor reads every packet's time, so the
/// deltas of later events count from it.
pub(super) fn advance(seq: &mut Seq<'_>, pk: &Packet<'_>) {
    let id = pk.clock.or(seq.clock).unwrap_or(BOOTTIME);
    if let (Some(raw), Some(inc)) = (pk.ts, seq.inc_clock(id)) {
        inc.value = inc.value.wrapping_add(raw as i64);
    }
}

/// The event's time in trace-clock nanoseconds.
pub(super) fn time(
    f: &Found<'_>,
    seq: &mut Seq<'_>,
    pk: &Packet<'_>,
    te: &Te<'_>,
    at: u64,
    d: &mut Diagnostics,
    uses: &mut Option<Box<Uses>>,
) -> i64 {
    let id = pk.clock.or(seq.clock).unwrap_or(BOOTTIME);
    let (key, ns) = if let Some(raw) = pk.ts {
        raw_time(f, seq, id, raw, pk.seq)
    } else if let Some(us) = te.abs_us {
        seq.last_us = us;
        (clock::key(id, pk.seq), us as i128 * 1000)
    } else if let Some(delta) = te.delta_us {
        seq.last_us = seq.last_us.wrapping_add(delta);
        (clock::key(id, pk.seq), seq.last_us as i128 * 1000)
    } else {
        d.warn(WarningKind::ProtoClock, at, || {
            "an event with no timestamp; taken as 0".into()
        });
        return 0;
    };
    to_trace(f, key, ns, at, d, uses)
}

/// [`time`] of an event whose packet (at byte `at`, on sequence `seq_id`) has timestamp
/// `raw` on the sequence's clock.
#[inline(always)]
pub(super) fn packet_time(
    f: &Found<'_>,
    seq: &mut Seq<'_>,
    raw: u64,
    seq_id: u32,
    at: u64,
    d: &mut Diagnostics,
) -> i64 {
    let id = seq.clock.unwrap_or(BOOTTIME);
    match usual_time(f, seq, id, raw) {
        Some(t) => t,
        None => any_packet_time(f, seq, id, raw, seq_id, at, d),
    }
}

/// The usual packet's time, as [`raw_time`] and [`to_trace`] give it: on an incremental
/// clock read beside the trace clock, in 64 bits. `None`, with nothing moved, for any other.
#[inline(always)]
fn usual_time(f: &Found<'_>, seq: &mut Seq<'_>, id: u32, raw: u64) -> Option<i64> {
    let inc = seq.inc_clock(id)?;
    let (via, via_ns) = inc.via?;
    if via != clock::key(f.clocks.trace_clock, 0) {
        return None;
    }
    let value = inc.value.wrapping_add(raw as i64);
    let ns = value.checked_mul(inc.multiplier)?;
    let t = via_ns.checked_add(ns)?.checked_sub(inc.snap_ns)?;
    inc.value = value;
    Some(t)
}

/// [`packet_time`] by the general rules.
#[inline(never)]
fn any_packet_time(
    f: &Found<'_>,
    seq: &mut Seq<'_>,
    id: u32,
    raw: u64,
    seq_id: u32,
    at: u64,
    d: &mut Diagnostics,
) -> i64 {
    let (key, ns) = raw_time(f, seq, id, raw, seq_id);
    to_trace(f, key, ns, at, d, &mut None)
}

/// Packet timestamp `raw` on clock `id` of sequence `seq_id` (moving an incremental
/// clock on): the clock it converts through, and nanoseconds on it.
#[inline]
fn raw_time(f: &Found<'_>, seq: &mut Seq<'_>, id: u32, raw: u64, seq_id: u32) -> (ClockKey, i128) {
    if let Some(inc) = seq.inc_clock(id) {
        inc.value = inc.value.wrapping_add(raw as i64);
        // In 64 bits when nothing overflows (128-bit arithmetic is slow in wasm).
        let ns64 = inc.value.checked_mul(inc.multiplier);
        match (inc.via, ns64) {
            (Some((via, via_ns)), Some(ns)) => match via_ns
                .checked_add(ns)
                .and_then(|x| x.checked_sub(inc.snap_ns))
            {
                Some(t) => (via, t as i128),
                None => (via, via_ns as i128 + ns as i128 - inc.snap_ns as i128),
            },
            (None, Some(ns)) => (clock::key(f.clocks.trace_clock, 0), ns as i128),
            (via, None) => {
                let ns = inc.value as i128 * inc.multiplier as i128;
                match via {
                    Some((via, via_ns)) => (via, via_ns as i128 + ns - inc.snap_ns as i128),
                    None => (clock::key(f.clocks.trace_clock, 0), ns),
                }
            }
        }
    } else {
        let key = clock::key(id, seq_id);
        (key, raw as i128 * f.clocks.multiplier(key) as i128)
    }
}

/// Nanoseconds `ns` on clock `key` in trace-clock nanoseconds (a stream notes the clock
/// in `uses`).
#[inline]
fn to_trace(
    f: &Found<'_>,
    key: ClockKey,
    ns: i128,
    at: u64,
    d: &mut Diagnostics,
    uses: &mut Option<Box<Uses>>,
) -> i64 {
    let Ok(ns) = i64::try_from(ns) else {
        d.warn(WarningKind::ProtoClock, at, || {
            format!("a time of {ns} ns, which does not fit in 64 bits; taken as 0")
        });
        return 0;
    };
    if let Some(u) = uses {
        // The trace clock converts as it is; any other through the snapshots.
        if key == (f.clocks.trace_clock, 0) {
            u.trace_clock = true;
        } else {
            let r = u.clocks.entry(key).or_insert((ns, ns));
            *r = (r.0.min(ns), r.1.max(ns));
        }
    }
    match f.clocks.to_trace(key, ns) {
        Some(t) => t,
        None => {
            d.warn(WarningKind::ProtoClock, at, || {
                format!(
                    "a time on clock {} that no clock snapshot relates to the trace clock {}; taken as it is",
                    key.0, f.clocks.trace_clock
                )
            });
            ns
        }
    }
}

/// Interned strings of a packet, added to its sequence; each name and category takes the
/// key `next` (moved on), unless it is 0 (no keys).
pub(super) fn intern<'a>(seq: &mut Seq<'a>, b: &'a [u8], next: &mut u32, d: &mut Diagnostics) {
    for f in Reader::new(b, 0).map_while(Result::ok) {
        let Value::Bytes(entry) = f.value else {
            continue;
        };
        let (mut iid, mut s) = (0, None);
        for g in Reader::new(entry, 0).map_while(Result::ok) {
            match (g.num, g.value) {
                (1, v) => iid = v.uint().unwrap_or(0),
                (2, Value::Bytes(x)) => s = Some(x),
                _ => {}
            }
        }
        let s = s.unwrap_or(b"");
        match f.num {
            4 => {
                seq.locations.insert(iid, Location::new(entry));
            }
            28 => {
                seq.unsymbolized.insert(iid, entry);
            }
            1 => {
                seq.cats.insert(iid, (text(s, f.offset, d), new_key(next)));
            }
            2 => {
                seq.names.insert(iid, (text(s, f.offset, d), new_key(next)));
            }
            3 => {
                seq.ann_names.insert(iid, AnnName::new(s));
            }
            29 => {
                seq.ann_strings.insert(iid, s);
            }
            _ => {}
        }
    }
}

/// The key `next` (0: none), and the next one; once they run out, none.
fn new_key(next: &mut u32) -> u32 {
    let k = *next;
    *next = k.checked_add(1).unwrap_or(0);
    k
}

/// `TracePacketDefaults`: the sequence's default clock and tracks.
pub(super) fn defaults(seq: &mut Seq<'_>, b: &[u8]) {
    for f in Reader::new(b, 0).map_while(Result::ok) {
        match (f.num, f.value) {
            (58, v) => seq.clock = v.uint().map(|c| c as u32),
            (11, Value::Bytes(t)) => {
                seq.extra_counters.clear();
                seq.extra_double_counters.clear();
                for g in Reader::new(t, 0).map_while(Result::ok) {
                    let _ = match g.num {
                        11 => {
                            seq.track_uuid = g.value.uint();
                            Ok(())
                        }
                        31 => repeated(g.value, false, |u| seq.extra_counters.push(u)),
                        45 => repeated(g.value, false, |u| seq.extra_double_counters.push(u)),
                        _ => Ok(()),
                    };
                }
            }
            _ => {}
        }
    }
}

/// The incremental clocks a `ClockSnapshot` on sequence `seq_id` defines.
pub(super) fn incremental_clocks(seq: &mut Seq<'_>, b: &[u8], seq_id: u32, trace_clock: u32) {
    let mut clocks: Vec<(u32, u64, bool, i64)> = Vec::new();
    for f in Reader::new(b, 0).map_while(Result::ok) {
        let (1, Value::Bytes(c)) = (f.num, f.value) else {
            continue;
        };
        let (mut id, mut ts, mut inc, mut mult) = (0u32, 0u64, false, 1i64);
        for g in Reader::new(c, 0).map_while(Result::ok) {
            match g.num {
                1 => id = g.value.uint().unwrap_or(0) as u32,
                2 => ts = g.value.uint().unwrap_or(0),
                3 => inc = g.value.uint().unwrap_or(0) != 0,
                4 => mult = g.value.int().filter(|&m| m > 0).unwrap_or(1),
                _ => {}
            }
        }
        clocks.push((id, ts, inc, mult));
    }
    let via = clocks
        .iter()
        .filter(|c| !c.2)
        .min_by_key(|c| c.0 != trace_clock)
        .and_then(|&(id, ts, _, mult)| {
            let ns = i64::try_from(ts as i128 * mult as i128).ok()?;
            Some((clock::key(id, seq_id), ns))
        });
    for &(id, ts, inc, mult) in &clocks {
        if inc {
            let c = IncClock {
                value: ts as i64,
                multiplier: mult,
                snap_ns: (ts as i64).wrapping_mul(mult),
                via,
            };
            match seq.inc_clock(id) {
                Some(old) => *old = c,
                None => seq.inc.push((id, c)),
            }
        }
    }
}
