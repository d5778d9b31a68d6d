//! A chunk's kept `E` events of one thread ([`KeptEnd`]), held in 16 bytes each where they
//! can be: most threads are never paired again, so what they keep is pure cost.
//!
//! An `E` with no name and no arguments (every thread slice end of a Perfetto protobuf
//! file, and many JSON ones) is stored as its time and byte offset less those of the `E`
//! before it, its place among the spans and its category. Any other `E` (a name, arguments,
//! a step back in time or a gap past `u32`) is stored whole beside them, in order; where
//! those are most of a thread's, the list turns into whole events (32 bytes each), so no
//! file pays more than that.

use super::KeptEnd;
use crate::args::ArgsId;
use crate::strings::StrId;

/// `after`'s top bit in a short record: the event is the next of `whole`.
const WHOLE: u32 = 1 << 31;

/// Short records before the list decides whether to stay short.
const TRIAL: usize = 64;

/// One thread's kept `E` events in one chunk, in file order.
#[derive(Debug)]
pub(crate) enum KeptEnds {
    Short {
        /// (time since the previous event, `after` or [`WHOLE`], category, bytes since the
        /// previous event).
        short: Pieces<[u32; 4]>,
        /// The events a short record cannot hold, in order.
        whole: Vec<KeptEnd>,
        /// The previous event's time and offset.
        ts: i64,
        offset: u64,
    },
    Whole(Vec<KeptEnd>),
}

impl Default for KeptEnds {
    fn default() -> Self {
        KeptEnds::Short {
            short: Pieces::default(),
            whole: Vec::new(),
            ts: 0,
            offset: 0,
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
        let KeptEnds::Short {
            short,
            whole,
            ts,
            offset,
        } = self
        else {
            let KeptEnds::Whole(v) = self else {
                unreachable!()
            };
            return v.push(x);
        };
        let dt = u32::try_from(x.ts.wrapping_sub(*ts))
            .ok()
            .filter(|_| x.ts >= *ts);
        let doff = u32::try_from(x.offset.wrapping_sub(*offset))
            .ok()
            .filter(|_| x.offset >= *offset);
        (*ts, *offset) = (x.ts, x.offset);
        match (dt, doff) {
            (Some(dt), Some(doff))
                if x.name == StrId::EMPTY && x.args == ArgsId::NONE && x.after < WHOLE =>
            {
                short.push([dt, x.after, x.cat.0, doff]);
            }
            _ => {
                short.push([0, WHOLE, 0, 0]);
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
        let (mut ts, mut offset) = (0i64, 0u64);
        for [dt, after, cat, doff] in short.into_iter() {
            let x = if after == WHOLE {
                whole.next().expect("a whole event for each marked record")
            } else {
                KeptEnd {
                    ts: ts + i64::from(dt),
                    offset: offset + u64::from(doff),
                    after,
                    name: StrId::EMPTY,
                    cat: StrId(cat),
                    args: ArgsId::NONE,
                }
            };
            (ts, offset) = (x.ts, x.offset);
            out.push(x);
        }
        out
    }
}

/// A list in pieces that never grow: a full piece is followed by one twice its size (up
/// to 1 MB of records), so a push never moves the records before it, where one vector
/// grown by doubling copies them again each time, into fresh pages (a tenth of what the
/// kept ends cost, at 16 bytes an `E`).
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
            let after = if i == 300 { WHOLE + 1 } else { i / 2 };
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
