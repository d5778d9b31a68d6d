//! A protobuf trace decoded as its bytes arrive ([`ProtoStream`]): each packet is decoded
//! once it is whole, so the file is never held. What it keeps:
//!
//! - the packet a chunk boundary cuts, until the rest arrives;
//! - descriptor packets (tracks, processes, threads: names borrow from them), to the end;
//! - packets of interned data, while their sequence's incremental state holds them (until
//!   the sequence clears its state, or the end);
//! - its own copy of each open async slice's name and category;
//! - a bundle of compressed packets, inflated, while its packets are decoded in its place.
//!
//! The whole-file decode reads every descriptor and clock snapshot before any event; a
//! stream knows only those seen so far. An event decoded with facts that a later packet
//! changes (a descriptor that defines or moves a track an event was put on, a snapshot
//! that changes how a clock an event used converts, a primary trace clock named late)
//! would differ from the whole decode: the stream stops decoding then and
//! [`finish`](ProtoStream::finish) says to decode the file again, whole. So does framing
//! that is not a clean run of packets (a top-level field that is no packet, a file cut
//! off inside a packet), a bundle of compressed packets that the whole decode would warn
//! about (broken, past the inflation limit, holding broken framing or another bundle), and
//! events on a track no descriptor defines in a file of more than one part (the whole
//! decode warns once per part, the stream once). Perfetto and Chrome
//! write each track's descriptor before its events and convert times on the trace clock,
//! so their traces stream.
//!
//! The events are the whole decode's: names first (in the first sink, filled at the end),
//! then the packets' events in file order (the whole decode groups them by sequence), then
//! the ends of async slices paired at the end.

use super::clock::ClockKey;
use super::events::{Decoder, Facts, CLEARED};
use super::hash::IdMap;
use super::scan::{CounterInfo, Found, Place};
use super::seq::Uses;
use super::wire::{varint, Reader, Value};
use super::{compressed, events, named, parts};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::EventSink;
use crate::{Format, Summary};

/// A packet longer than this is not carried across chunks: the file is decoded whole
/// (a length past the end would otherwise gather the rest of the file).
const MAX_PACKET: u64 = 256 << 20;

/// Why a stream gives up on a file: the whole decode is needed for the same result.
type Again = &'static str;

/// A Perfetto protobuf trace decoded as its bytes arrive: [`push`](Self::push) the file's
/// bytes in order, then [`finish`](Self::finish). Runs of about `target` bytes of packets
/// go each into a sink of their own.
pub struct ProtoStream<S: EventSink> {
    // Declared (so dropped) before the bytes its slices borrow.
    dec: Decoder<'static>,
    d: Diagnostics,
    primary: Option<u32>,
    sinks: Vec<S>,
    new_sink: Box<dyn Fn() -> S>,
    target: usize,
    run: usize,
    carry: Vec<u8>,
    read: u64,
    /// The file offset the next packet's framing starts at.
    done: u64,
    again: Option<Again>,
    /// Descriptor packets, kept to the end.
    kept: Vec<Box<[u8]>>,
    /// Packets of interned data, per sequence, kept until it clears its state.
    interned: IdMap<u32, Vec<Box<[u8]>>>,
    /// Each track's children, as descriptors named them: who a descriptor may move.
    children: IdMap<u64, Vec<u64>>,
    /// What bundles of compressed packets may still inflate to, as in the whole decode.
    inflate_left: u64,
}

impl<S: EventSink> std::fmt::Debug for ProtoStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtoStream")
            .field("read", &self.read)
            .field("done", &self.done)
            .field("again", &self.again)
            .finish()
    }
}

/// What the stream reads of a packet before decoding it.
#[derive(Default)]
struct Skim<'a> {
    seq: u32,
    cleared: bool,
    /// It holds interned data.
    interned: bool,
    descriptor: bool,
    snapshot: bool,
    /// The last `compressed_packets`, as the whole decode's first pass finds it.
    bundle: Option<&'a [u8]>,
    /// A track descriptor's uuid and parent.
    track: Option<(u64, u64)>,
    /// Every field parsed (the decoder reads none of a broken packet's state).
    sound: bool,
}

fn skim(p: &[u8]) -> Skim<'_> {
    let mut s = Skim::default();
    let mut flags = 0;
    let mut r = Reader::new(p, 0);
    while let Some(f) = r.next_field() {
        let Ok(f) = f else {
            return s;
        };
        match (f.num, f.value) {
            (10, v) => s.seq = v.uint().unwrap_or(0) as u32,
            (13, v) => flags = v.uint().unwrap_or(0),
            (41, v) => s.cleared |= v.uint().unwrap_or(0) != 0,
            (12, _) => s.interned = true,
            (60, Value::Bytes(t)) => {
                s.descriptor = true;
                let (mut uuid, mut parent) = (0, 0);
                for g in Reader::new(t, 0).map_while(Result::ok) {
                    match g.num {
                        1 => uuid = g.value.uint().unwrap_or(0),
                        5 => parent = g.value.uint().unwrap_or(0),
                        _ => {}
                    }
                }
                s.track = Some((uuid, parent));
            }
            (43 | 44 | 60, _) => s.descriptor = true,
            (6, _) => s.snapshot = true,
            (50, Value::Bytes(z)) => s.bundle = Some(z),
            _ => {}
        }
    }
    s.cleared |= flags & CLEARED != 0;
    s.sound = true;
    s
}

/// A packet's framing at the start of `b`: `Ok(Some((header, body)))` when it is known,
/// `Ok(None)` when `b` ends inside the header, `Err` when it is no packet.
fn frame(b: &[u8]) -> Result<Option<(usize, u64)>, Again> {
    match b.first() {
        None => return Ok(None),
        Some(0x0a) => {}
        Some(_) => return Err("a top-level field that is no packet"),
    }
    match varint(&b[1..]) {
        Ok((len, _)) if len > MAX_PACKET => Err("a packet too long to carry"),
        Ok((len, n)) => Ok(Some((1 + n, len))),
        Err(_) if b.len() < 11 => Ok(None),
        Err(_) => Err("a packet length that is no varint"),
    }
}

/// The signature of how a track places its events, `None` for a track no descriptor
/// defines yet.
type Placed = Option<(
    Place,
    i64,
    Option<i64>,
    Option<CounterInfo>,
    Option<Vec<u8>>,
    bool,
)>;

fn placed(f: &Found<'_>, u: u64) -> Placed {
    f.tracks.get(&u).map(|t| {
        let name = t.name.map(<[u8]>::to_vec);
        (t.place, t.pid, t.tid, t.counter, name, t.orphan)
    })
}

type Basis = Vec<(i64, Vec<(i64, i64)>)>;

/// Track `u` and the tracks below it.
fn subtree(children: &IdMap<u64, Vec<u64>>, u: u64) -> Vec<u64> {
    let mut all = vec![u];
    let mut seen: IdMap<u64, ()> = IdMap::default();
    seen.insert(u, ());
    let mut i = 0;
    while i < all.len() {
        for &c in children.get(&all[i]).into_iter().flatten() {
            // A cycle in a broken file ends at a track already taken.
            if seen.insert(c, ()).is_none() {
                all.push(c);
            }
        }
        i += 1;
    }
    all
}

/// What a track's descriptors said (its placement follows from these and its ancestors').
type Raw = Option<(
    u64,
    Option<Vec<u8>>,
    Option<(i64, i64)>,
    Option<i64>,
    Option<CounterInfo>,
)>;

fn raw(f: &Found<'_>, u: u64) -> Raw {
    f.tracks.get(&u).map(|t| {
        let name = t.name.map(<[u8]>::to_vec);
        (t.parent, name, t.thread, t.process, t.counter)
    })
}

impl<S: EventSink> ProtoStream<S> {
    /// Whether a file starting with `head` is protobuf.
    pub fn accepts(head: &[u8]) -> bool {
        crate::detect(head) == crate::Detected::Proto
    }

    /// A stream whose runs of about `target` bytes each go into a sink from `new_sink`.
    pub fn with_target(target: usize, new_sink: impl Fn() -> S + 'static) -> Self {
        let uses = Some(Box::<Uses>::default());
        ProtoStream {
            dec: Decoder::with(Facts::Own(Box::new(Found::new())), uses),
            d: Diagnostics::default(),
            primary: None,
            // The first sink takes the names, at the end.
            sinks: vec![new_sink(), new_sink()],
            new_sink: Box::new(new_sink),
            target: target.max(1),
            run: 0,
            carry: Vec::new(),
            read: 0,
            done: 0,
            again: None,
            kept: Vec::new(),
            interned: IdMap::default(),
            children: IdMap::default(),
            inflate_left: compressed::limit(crate::DecodeOptions::default().max_decompressed),
        }
    }

    /// `(read, decoded)` bytes of the file.
    pub fn progress(&self) -> (u64, u64) {
        (self.read, self.done)
    }

    /// Bytes of the file the stream holds now: the packet cut by the last chunk's end,
    /// descriptors, interned data still in use.
    pub fn held(&self) -> usize {
        let kept = |v: &Vec<Box<[u8]>>| v.iter().map(|b| b.len()).sum::<usize>();
        self.carry.len() + kept(&self.kept) + self.interned.values().map(kept).sum::<usize>()
    }

    /// Why the file must be decoded again, whole, if it must.
    pub fn gave_up(&self) -> Option<&'static str> {
        self.again
    }

    /// The file's next bytes: the packets they complete are decoded.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.read += chunk.len() as u64;
        let mut b = chunk;
        while !self.carry.is_empty() && !b.is_empty() && self.again.is_none() {
            b = self.fill(b);
        }
        while self.again.is_none() && !b.is_empty() {
            match frame(b) {
                Ok(Some((h, len))) if (b.len() - h) as u64 >= len => {
                    let end = h + len as usize;
                    self.packet(&b[h..end], h);
                    b = &b[end..];
                }
                Ok(_) => {
                    self.carry.extend_from_slice(b);
                    break;
                }
                Err(why) => self.again = Some(why),
            }
        }
        Ok(())
    }

    /// Moves bytes from `b` to the carried packet; decodes it once whole. Returns the
    /// bytes left.
    fn fill<'b>(&mut self, b: &'b [u8]) -> &'b [u8] {
        let (h, len) = match frame(&self.carry) {
            Ok(Some(x)) => x,
            Ok(None) => {
                self.carry.push(b[0]);
                return &b[1..];
            }
            Err(why) => {
                self.again = Some(why);
                return b;
            }
        };
        let need = (h as u64 + len - self.carry.len() as u64) as usize;
        let take = need.min(b.len());
        self.carry.extend_from_slice(&b[..take]);
        if take == need {
            let carry = std::mem::take(&mut self.carry);
            self.packet(&carry[h..], h);
            self.carry = carry;
            self.carry.clear();
        }
        &b[take..]
    }

    /// One whole packet, its framing `h` bytes long, at `self.done` in the file.
    fn packet(&mut self, p: &[u8], h: usize) {
        let at = self.done + h as u64;
        self.done = at + p.len() as u64;
        let s = skim(p);
        match s.bundle {
            Some(z) => self.bundle(z, at),
            None => self.decode(p, at, s),
        }
        if self.again.is_some() {
            return;
        }
        self.run += h + p.len();
        if self.run >= self.target {
            self.run = 0;
            self.sinks.push((self.new_sink)());
        }
    }

    /// The bundle of compressed packets `z` of the packet at `at` (the whole decode reads
    /// nothing else of that packet): inflated, its packets decoded in its place, as the
    /// whole decode does. What the whole decode would warn about (a broken zlib stream,
    /// the inflation limit, broken framing inside, a bundle in a bundle) gives up.
    fn bundle(&mut self, z: &[u8], at: u64) {
        let mut d = Diagnostics::default();
        let b = compressed::inflate(&[(z, at)], self.inflate_left, &mut d);
        let b = b.into_iter().next().expect("a bundle out for the one in");
        if !d.is_empty() {
            self.again = Some("compressed packets a whole decode warns about");
            return;
        }
        self.inflate_left -= b.bytes.len() as u64;
        let mut off = 0;
        while off < b.bytes.len() && self.again.is_none() {
            let rest = &b.bytes[off..];
            let (h, len) = match frame(rest) {
                Ok(Some((h, len))) if (rest.len() - h) as u64 >= len => (h, len as usize),
                _ => {
                    self.again = Some("compressed packets whose framing breaks");
                    return;
                }
            };
            let q = &rest[h..h + len];
            let s = skim(q);
            if s.bundle.is_some() {
                self.again = Some("compressed packets inside compressed packets");
                return;
            }
            self.decode(q, at + (off + h) as u64, s);
            off += h + len;
        }
    }

    /// Packet `p`, at `at` in the file (or in its bundle's place), skimmed as `s`: its facts
    /// noted and its events decoded into the run's sink.
    fn decode(&mut self, p: &[u8], at: u64, s: Skim<'_>) {
        if s.sound && s.cleared {
            // The sequence's state is cleared before this packet's is read.
            self.interned.remove(&s.seq);
        }
        let bytes: &'static [u8] = if s.descriptor || s.interned {
            let kept: Box<[u8]> = p.into();
            // SAFETY: a boxed slice's bytes stay put while the box lives; the box is kept
            // as long as what borrows from it: descriptors (the found facts) to the end,
            // interned data until its sequence clears its state (the decoder drops that
            // sequence's state then, before reading anything new into it).
            #[allow(unsafe_code)]
            let b = unsafe { extend(&kept) };
            match s.descriptor {
                true => self.kept.push(kept),
                false => self.interned.entry(s.seq).or_default().push(kept),
            }
            b
        } else {
            // SAFETY: this packet holds no descriptor or interned data, so nothing the
            // decoder keeps borrows from it: open slices own their names (`uses` is set)
            // and the event's fields are cleared below, before the bytes go.
            #[allow(unsafe_code)]
            unsafe {
                extend(p)
            }
        };
        if s.descriptor || s.snapshot {
            self.facts(bytes, s.snapshot, s.track);
            if self.again.is_some() {
                return;
            }
        }
        let sink = self.sinks.last_mut().expect("a run's sink");
        self.dec.packet(bytes, at, sink, &mut self.d);
        self.dec.te.clear();
    }

    /// Notes what a descriptor or snapshot packet says; gives up when that would change
    /// an event already decoded.
    fn facts(&mut self, p: &'static [u8], snapshot: bool, track: Option<(u64, u64)>) {
        let Decoder { f, uses, .. } = &mut self.dec;
        let (Facts::Own(f), Some(uses)) = (f, uses) else {
            unreachable!("a stream's decoder owns its facts")
        };
        // A track descriptor that changes its track places it and the tracks below it
        // anew (Chrome repeats each, unchanged, on every sequence).
        let track_was = track.map(|(u, _)| (raw(f, u), placed(f, u)));
        let trace = f.clocks.trace_clock;
        let keys: Vec<(ClockKey, i64)> = uses.clocks.iter().map(|(&k, r)| (k, r.1)).collect();
        // The trace clock converts as it is: only its multiplier counts.
        let basis = |f: &Found<'_>, trace: u32| -> Basis {
            let own = uses
                .trace_clock
                .then(|| (f.clocks.multiplier((trace, 0)), Vec::new()));
            keys.iter()
                .map(|&(k, upto)| f.clocks.basis(k, upto))
                .chain(own)
                .collect()
        };
        let before = snapshot.then(|| basis(f, trace));
        f.facts(p, &mut self.primary);
        if let Some(before) = before {
            if let Some(c) = self.primary {
                f.clocks.trace_clock = c;
            }
            f.clocks.finish();
            if f.clocks.trace_clock != trace && (uses.trace_clock || !keys.is_empty()) {
                self.again = Some("a primary trace clock named after events");
            } else if basis(f, trace) != before {
                self.again = Some("a clock snapshot after events it converts");
            }
        }
        let (Some((u, parent)), Some((raw_was, u_was))) = (track, track_was) else {
            return;
        };
        if raw(f, u) == raw_was {
            return;
        }
        if parent != 0 {
            let c = self.children.entry(parent).or_default();
            if !c.contains(&u) {
                c.push(u);
            }
        }
        let below = subtree(&self.children, u);
        // Only `u`'s own fields changed: the others' placements are still as decoded.
        let was: Vec<(u64, Placed)> = below
            .iter()
            .filter(|t| uses.tracks.contains_key(t))
            .map(|&t| (t, if t == u { u_was.clone() } else { placed(f, t) }))
            .collect();
        for &t in &below {
            f.resolve_track(t);
        }
        if was.iter().any(|(t, was)| placed(f, *t) != *was) {
            self.again = Some("a track descriptor after events on its track");
        }
    }

    /// Decodes what is left: the summary and the sinks, in order, or `None` when the file
    /// must be decoded again, whole (see the module's overview).
    #[allow(clippy::type_complexity)]
    pub fn finish(self) -> Result<Option<(Summary, Vec<S>)>, Error> {
        if self.again.is_some() || !self.carry.is_empty() || self.read == 0 {
            return Ok(None);
        }
        let ProtoStream {
            mut dec,
            mut d,
            mut sinks,
            new_sink,
            read,
            done,
            kept,
            interned,
            ..
        } = self;
        // The whole decode warns of a track no descriptor defines once in each part whose
        // events use it; the stream, once: beyond one part's bytes, the counts may differ.
        if !dec.unknown.is_empty() && done > parts::PART_BYTES as u64 {
            return Ok(None);
        }
        let Facts::Own(mut f) = std::mem::replace(&mut dec.f, Facts::Own(Box::new(Found::new())))
        else {
            unreachable!("a stream's decoder owns its facts")
        };
        // Resolved track by track as descriptors came; all at once, the same (or the
        // whole decode's events would differ).
        let uses = dec.uses.take().expect("a stream's uses");
        let was: Vec<Placed> = uses.tracks.keys().map(|&u| placed(&f, u)).collect();
        f.resolve();
        if uses
            .tracks
            .keys()
            .zip(&was)
            .any(|(&u, w)| placed(&f, u) != *w)
        {
            return Ok(None);
        }
        // An event's writer is its sequence's thread, as the last descriptor names it.
        if (uses.writers.iter()).any(|(s, &w)| f.seq_threads.get(s).copied() != w) {
            return Ok(None);
        }
        f.name_threads();
        let mut events = dec.events;
        let left = dec.left();
        events += events::names(&f, &mut sinks[0]) + named::track_names(&f, &mut sinks[0]);
        let mut last = new_sink();
        for &(u, ts, at) in &uses.descriptors {
            events::met_track(&f, u, ts, at, &mut last);
        }
        events += parts::resolve(vec![left], &mut last, &mut d);
        sinks.push(last);
        // What borrows the kept bytes goes first.
        drop(f);
        drop((kept, interned));
        let summary = Summary {
            format: Format::Proto,
            gzip: false,
            input_bytes: read,
            decoded_bytes: read,
            parsed_bytes: read,
            events,
            diagnostics: d,
            spall: None,
            json: None,
        };
        Ok(Some((summary, sinks)))
    }
}

/// A slice of bytes kept (or used) for as long as the stream's decoder needs them.
///
/// # Safety
/// The caller keeps `b`'s bytes alive, unmoved, for as long as anything holds the result.
#[allow(unsafe_code)]
unsafe fn extend(b: &[u8]) -> &'static [u8] {
    std::slice::from_raw_parts(b.as_ptr(), b.len())
}
