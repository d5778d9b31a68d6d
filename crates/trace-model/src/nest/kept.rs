//! A chunk's kept `E` events of one thread ([`KeptEnd`]), held in 8 bytes each where they
//! can be: most threads are never paired again, so what they keep is pure cost.
//!
//! An `E` with no name and no arguments, of the category of the `E` before it (every
//! thread slice end of a Perfetto protobuf file, and many JSON ones) is stored as its time,
//! byte offset and place among the spans less those of the `E` before it, in one word. Any
//! other `E` (a name, arguments, another category, a step back in time, a gap too wide) is
//! stored whole beside them, in order; where those are most of a thread's, the list turns
//! into whole events (32 bytes each), so no file pays more than that.

use super::KeptEnd;
use crate::args::ArgsId;
use crate::strings::StrId;

/// A short record's top bit: the event is the next of `whole`.
const WHOLE: u64 = 1 << 63;

/// A short record's fields, from the low bits: the place among the spans, the byte
/// offset and the time, each less the `E` before it's.
const AFTER_BITS: u32 = 6;
const OFFSET_BITS: u32 = 27;
const TIME_BITS: u32 = 30;

/// Short records before the list decides whether to stay short.
const TRIAL: usize = 64;

/// The `E` before: what a short record counts from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Last {
    ts: i64,
    offset: u64,
    after: u32,
    cat: StrId,
}

impl Last {
    /// `x` as a short record after this one, if it fits in one.
    #[inline]
    fn short(&self, x: &KeptEnd) -> Option<u64> {
        if x.name != StrId::EMPTY || x.args != ArgsId::NONE || x.cat != self.cat {
            return None;
        }
        let dt = u64::try_from(x.ts.checked_sub(self.ts)?).ok()?;
        let doff = x.offset.checked_sub(self.offset)?;
        let dafter = u64::from(x.after.checked_sub(self.after)?);
        (dt < 1 << TIME_BITS && doff < 1 << OFFSET_BITS && dafter < 1 << AFTER_BITS)
            .then_some(dt << (OFFSET_BITS + AFTER_BITS) | doff << AFTER_BITS | dafter)
    }

    /// The event of short record `r` after this one.
    fn event(&self, r: u64) -> KeptEnd {
        let field = |shift: u32, bits: u32| (r >> shift) & ((1 << bits) - 1);
        KeptEnd {
            ts: self.ts + field(OFFSET_BITS + AFTER_BITS, TIME_BITS) as i64,
            offset: self.offset + field(AFTER_BITS, OFFSET_BITS),
            after: self.after + field(0, AFTER_BITS) as u32,
            name: StrId::EMPTY,
            cat: self.cat,
            args: ArgsId::NONE,
        }
    }

    fn of(x: &KeptEnd) -> Last {
        Last {
            ts: x.ts,
            offset: x.offset,
            after: x.after,
            cat: x.cat,
        }
    }
}

/// One thread's kept `E` events in one chunk, in file order.
#[derive(Debug)]
pub(crate) enum KeptEnds {
    Short {
        /// A word an event ([`Last::short`]), or [`WHOLE`].
        short: Pieces<u64>,
        /// The events a short record cannot hold, in order.
        whole: Vec<KeptEnd>,
        last: Last,
    },
    Whole(Vec<KeptEnd>),
}

impl Default for KeptEnds {
    fn default() -> Self {
        KeptEnds::Short {
            short: Pieces::default(),
            whole: Vec::new(),
            last: Last::default(),
        }
    }
}

impl KeptEnds {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            KeptEnds::Short { short, .. } => short.is_empty(),
            KeptEnds::Whole(v) => v.is_empty(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            KeptEnds::Short { short, .. } => short.len(),
            KeptEnds::Whole(v) => v.len(),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, x: KeptEnd) {
        let KeptEnds::Short { short, whole, last } = self else {
            let KeptEnds::Whole(v) = self else {
                unreachable!()
            };
            return v.push(x);
        };
        let r = last.short(&x);
        *last = Last::of(&x);
        match r {
            Some(r) => short.push(r),
            None => {
                short.push(WHOLE);
                whole.push(x);
                if short.len() >= TRIAL && whole.len() * 2 > short.len() {
                    *self = KeptEnds::Whole(std::mem::take(self).into_vec());
                }
            }
        }
    }

    /// The events, whole, in order.
    pub(crate) fn into_vec(self) -> Vec<KeptEnd> {
        let (short, whole) = match self {
            KeptEnds::Whole(v) => return v,
            KeptEnds::Short { short, whole, .. } => (short, whole),
        };
        let mut out = Vec::with_capacity(short.len());
        let mut whole = whole.into_iter();
        let mut last = Last::default();
        for r in short.into_iter() {
            let x = if r == WHOLE {
                whole.next().expect("a whole event for each marked record")
            } else {
                last.event(r)
            };
            last = Last::of(&x);
            out.push(x);
        }
        out
    }
}

/// A list in pieces that never grow: a full piece is followed by one twice its size (up
/// to 1 MB of records), so a push never moves the records before it, where one vector
/// grown by doubling copies them again each time, into fresh pages (a tenth of what the
/// kept ends cost).
#[derive(Debug)]
pub(crate) struct Pieces<T> {
    pieces: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Pieces<T> {
    fn default() -> Self {
        Pieces {
            pieces: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Pieces<T> {
    const FIRST: usize = 64;
    const MOST: usize = 1 << 16;

    #[inline]
    fn push(&mut self, x: T) {
        self.len += 1;
        match self.pieces.last_mut() {
            Some(p) if p.len() < p.capacity() => p.push(x),
            _ => self.grow(x),
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, x: T) {
        let last = self.pieces.last().map_or(0, Vec::capacity);
        let mut p = Vec::with_capacity((last * 2).clamp(Self::FIRST, Self::MOST));
        p.push(x);
        self.pieces.push(p);
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn into_iter(self) -> impl Iterator<Item = T> {
        self.pieces.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(ts: i64, offset: u64, after: u32, name: u32, args: u32) -> KeptEnd {
        KeptEnd {
            ts,
            offset,
            after,
            name: StrId(name),
            cat: StrId(7),
            args: ArgsId(args),
        }
    }

    fn same(a: &[KeptEnd], b: &[KeptEnd]) -> bool {
        let key = |x: &KeptEnd| (x.ts, x.offset, x.after, x.name, x.cat, x.args);
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| key(x) == key(y))
    }

    #[test]
    fn every_kind_of_end_comes_back_as_it_went_in() {
        let mut all = Vec::new();
        let mut ts = 1_000i64;
        for i in 0..500u32 {
            ts += match i % 50 {
                7 => -300,             // back in time
                9 => 5_000_000_000,    // a gap past u32
                _ => i64::from(i % 4), // ties included
            };
            let offset = u64::from(i) * 40 + if i % 97 == 5 { 1 << 33 } else { 0 };
            let name = u32::from(i % 31 == 3);
            let args = u32::from(i % 17 == 2) * 5;
            let after = if i == 300 { (1 << 31) + 1 } else { i / 2 };
            all.push(end(ts, offset, after, name, args));
        }
        let mut k = KeptEnds::default();
        for x in &all {
            k.push(*x);
        }
        assert!(
            matches!(k, KeptEnds::Short { .. }),
            "mostly short events stay short"
        );
        assert!(same(&k.into_vec(), &all));
    }

    #[test]
    fn gaps_at_a_short_record_s_limits_come_back() {
        let (mut ts, mut offset, mut after) = (0i64, 0u64, 0u32);
        let mut all = Vec::new();
        for (dt, doff, dafter) in [
            ((1 << TIME_BITS) - 1, 1, 1),
            (1 << TIME_BITS, 1, 1),
            (1, (1 << OFFSET_BITS) - 1, 1),
            (1, 1 << OFFSET_BITS, 1),
            (1, 1, (1 << AFTER_BITS) - 1),
            (1, 1, 1 << AFTER_BITS),
            (0, 0, 0),
        ]
        .repeat(20)
        {
            (ts, offset, after) = (ts + dt, offset + doff, after + dafter);
            all.push(KeptEnd {
                cat: StrId::EMPTY,
                ..end(ts, offset, after, 0, 0)
            });
        }
        let mut k = KeptEnds::default();
        for x in &all {
            k.push(*x);
        }
        assert!(matches!(k, KeptEnds::Short { .. }));
        assert!(same(&k.into_vec(), &all));
    }

    #[test]
    fn named_ends_turn_the_list_whole() {
        let all: Vec<_> = (0..200)
            .map(|i| end(i, i as u64 * 9, i as u32, 3, 0))
            .collect();
        let mut k = KeptEnds::default();
        for x in &all {
            k.push(*x);
        }
        assert!(matches!(k, KeptEnds::Whole(_)));
        assert!(same(&k.into_vec(), &all));
    }
}
