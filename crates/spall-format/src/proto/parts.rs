//! Packet sequences decoded apart. A sequence's incremental state (interned strings,
//! defaults, incremental clocks) is its own, and what events share across sequences
//! (tracks, clocks, names) the first pass has already read, so the sequences are grouped
//! into parts, each decoded on its own into its own sink.
//!
//! Parts are fixed by the file, not by the number of threads: sequences in the order they
//! first appear, grouped until a part holds [`PART_BYTES`]. A part's packets are decoded in
//! file order. The one thing a part cannot finish alone is a slice on an async track begun
//! in another part: such an end is kept ([`PendingEnd`]), and once every part is decoded
//! ([`resolve`]) the ends are paired, track by track in time order, with the slices other
//! parts left open. The sequential decode takes the same parts in order, so one thread and
//! many give the same events.

use std::borrow::Cow;

use super::base::{dec, emit, Open, PendingEnd};
use super::events::Decoder;
use super::hash::IdMap;
use super::kinds::flow_events_of;
use super::scan::Found;
use super::wire::{Reader, Value};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// A part is closed once its sequences hold this many bytes.
pub const PART_BYTES: usize = 4 << 20;

/// What a part leaves to the others: its unpaired ends and its slices still open.
pub struct Left<'a> {
    ends: Vec<PendingEnd>,
    open: Vec<(u64, Open<'a>)>,
}

/// Packets in `bufs[buf][start..end]`: (buf, start, end).
pub type Range = (u32, usize, usize);

/// Each part's byte ranges of whole packets, in file order.
pub fn plan(f: &Found<'_>) -> Vec<Vec<Range>> {
    let mut index: IdMap<u32, usize> = IdMap::default();
    let mut bytes: Vec<usize> = Vec::new();
    for r in &f.runs {
        let i = *index.entry(r.seq).or_insert_with(|| {
            bytes.push(0);
            bytes.len() - 1
        });
        bytes[i] += r.end - r.start;
    }
    let mut part_of = Vec::with_capacity(bytes.len());
    let (mut part, mut fill) = (0, 0);
    for &n in &bytes {
        if fill >= PART_BYTES {
            part += 1;
            fill = 0;
        }
        part_of.push(part);
        fill += n;
    }
    let n_parts = part_of.last().map_or(0, |p| p + 1);
    // Each run's part, found once; the parts' ranges counted first, so that each list is
    // allocated once at its size (a dense file has a run every dozen packets: growing the
    // lists by doubling copied them into fresh pages).
    let run_part: Vec<u32> = (f.runs.iter())
        .map(|r| part_of[index[&r.seq]] as u32)
        .collect();
    let mut ends: Vec<Option<(u32, usize)>> = vec![None; n_parts];
    let mut sizes = vec![0usize; n_parts];
    for (r, &p) in f.runs.iter().zip(&run_part) {
        let end = &mut ends[p as usize];
        if *end != Some((r.buf, r.start)) {
            sizes[p as usize] += 1;
        }
        *end = Some((r.buf, r.end));
    }
    let mut parts: Vec<Vec<Range>> = sizes.into_iter().map(Vec::with_capacity).collect();
    for (r, &p) in f.runs.iter().zip(&run_part) {
        let p = &mut parts[p as usize];
        match p.last_mut() {
            Some(last) if last.0 == r.buf && last.2 == r.start => last.2 = r.end,
            _ => p.push((r.buf, r.start, r.end)),
        }
    }
    parts
}

/// How many ranges ahead of the one decoded are asked of the CPU before they are read.
/// Where sequences interleave packet by packet, a part's ranges are short and lie apart in
/// the file, and the first read of each missed the caches: a tenth of a dense file's
/// decode (docs/PERFORMANCE.md, "Perfetto protobuf").
const PREFETCH_AHEAD: usize = 2;

impl<'a> Decoder<'a> {
    /// Decodes the packets in `ranges`; `report` is called with the bytes decoded since its
    /// last call (of a bundle of compressed packets, its share of the bundle's size in the
    /// file), every few megabytes and at the end.
    pub fn run<S: EventSink>(
        &mut self,
        ranges: &[Range],
        sink: &mut S,
        d: &mut Diagnostics,
        report: &mut dyn FnMut(u64, &mut S),
    ) {
        let mut since = 0;
        for (i, &(buf, start, end)) in ranges.iter().enumerate() {
            if let Some(&(buf, start, end)) = ranges.get(i + PREFETCH_AHEAD) {
                crate::arch::prefetch(&self.f.bufs[buf as usize].bytes[start..end]);
            }
            if let Some(a) = &mut self.ftrace.ahead {
                a.live = buf == 0;
            }
            let b = self.f.bufs[buf as usize];
            // The first pass checked the framing of these bytes.
            let mut r = Reader::new(&b.bytes[start..end], b.at + start as u64);
            loop {
                if let Some(p) = r.next_packet() {
                    self.packet(p, r.offset_of(p), sink, d);
                    continue;
                }
                match r.next_field() {
                    Some(Ok(field)) => {
                        if let Value::Bytes(p) = field.value {
                            self.packet(p, r.offset_of(p), sink, d);
                        }
                    }
                    _ => break,
                }
            }
            since += if buf == 0 {
                (end - start) as u64
            } else {
                ((end - start) as u128 * b.packed as u128 / b.bytes.len().max(1) as u128) as u64
            };
            if since >= 4 << 20 {
                report(since, sink);
                since = 0;
            }
        }
        report(since, sink);
    }

    /// The unpaired ends and open slices, for [`resolve`].
    pub fn left(self) -> Left<'a> {
        let mut open = Vec::new();
        for (u, stack) in self.stacks {
            open.extend(stack.into_iter().map(|o| (u, o)));
        }
        Left {
            ends: self.pending.ends,
            open,
        }
    }
}

/// Pairs each part's unpaired ends with the slices other parts left open on the same track:
/// per track, in time order (a begin before an end at the same time), an end closes the
/// innermost slice open. Emits the paired ends into `sink`; returns how many events.
pub fn resolve<S: EventSink>(lefts: Vec<Left<'_>>, sink: &mut S, d: &mut Diagnostics) -> u64 {
    enum Item<'a> {
        Begin(Cow<'a, str>, Cow<'a, str>),
        End(PendingEnd),
    }
    let mut items = Vec::new();
    for (part, left) in lefts.into_iter().enumerate() {
        for (i, (u, (name, cat, ts))) in left.open.into_iter().enumerate() {
            items.push(((u, ts, false, part, i), Item::Begin(name, cat)));
        }
        for (i, e) in left.ends.into_iter().enumerate() {
            items.push(((e.track, e.ts, true, part, i), Item::End(e)));
        }
    }
    if !items.iter().any(|(_, it)| matches!(it, Item::End(_))) {
        return 0;
    }
    items.sort_by_key(|&(k, _)| k);
    let mut events = 0;
    let mut stack: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    let mut track = None;
    for ((u, ..), item) in items {
        if track != Some(u) {
            stack.clear();
            track = Some(u);
        }
        let e = match item {
            Item::Begin(n, c) => {
                stack.push((n, c));
                continue;
            }
            Item::End(e) => e,
        };
        let Some((name, cat)) = stack.pop() else {
            d.warn(WarningKind::ProtoUnmatchedEnd, e.offset, || {
                format!("a slice end on track {u}, which has no open slice; skipped")
            });
            continue;
        };
        let mut buf = [0u8; 20];
        let mut ev = RawEvent {
            ph: Phase::ASYNC_END,
            name,
            cat,
            ts: e.ts,
            pid: RawId::Num(e.pid),
            tid: RawId::Num(e.tid),
            args: match &e.args {
                Some(a) => Args::Json(Cow::Borrowed(a)),
                None => Args::None,
            },
            offset: e.offset,
            ..RawEvent::default()
        };
        super::track_event::set_async_id(&mut ev, dec(&mut buf, u), e.local);
        emit(&mut events, sink, &ev);
        flow_events_of(&mut events, sink, &ev, e.flows.iter().copied(), false);
    }
    events
}
