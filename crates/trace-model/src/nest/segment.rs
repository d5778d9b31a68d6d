//! A segment of the [`Matcher`](super::Matcher)'s spans: 32 bytes a span, not 40.
//!
//! Every span a thread's events open is written here once, then once more into its lane,
//! so these bytes are fresh memory paid on every span (a dense protobuf file has a span
//! for every 30 bytes). A span keeps [`SpanData`]'s fields, and the byte offset of the
//! event that opened it (for warnings, and for its thread's events in file order) as its
//! distance from the offset of the span before it, in the 3 bytes `SpanData` pads: events
//! come in file order, so that distance is small. A span whose distance does not fit (the
//! segment's first, an event far on in the file, or before it, as a sorted thread's may
//! be) keeps its offset whole in a side list, read back in order.

use crate::args::ArgsId;
use crate::span::SpanData;
use crate::strings::StrId;

/// A span while matching: [`SpanData`]'s fields (read and written in place as it closes)
/// and its offset's distance from the span before it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MSpan {
    pub start: i64,
    pub dur: i64,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
    pub flags: u8,
    /// The distance, little-endian; [`FAR`] when the offset is in `Segment::far`.
    gap: [u8; 3],
}

const _: () = assert!(std::mem::size_of::<MSpan>() == 32);

/// The mark of an offset kept whole.
const FAR: u32 = (1 << 24) - 1;

impl MSpan {
    #[inline]
    fn data(&self) -> SpanData {
        SpanData {
            start: self.start,
            dur: self.dur,
            name: self.name,
            cat: self.cat,
            args: self.args,
            flags: self.flags,
        }
    }
}

/// Spans in the order they were pushed, with their byte offsets.
#[derive(Debug, Default)]
pub(crate) struct Segment {
    spans: Vec<MSpan>,
    /// The offsets of the spans whose gap is [`FAR`], in order.
    far: Vec<u64>,
    /// The offset of the last span pushed.
    last: u64,
}

impl Segment {
    pub(crate) fn with_capacity(n: usize) -> Segment {
        Segment {
            spans: Vec::with_capacity(n),
            ..Segment::default()
        }
    }

    /// A segment of these spans, in this order.
    pub(crate) fn of(spans: impl ExactSizeIterator<Item = (SpanData, u64)>) -> Segment {
        let mut seg = Segment::with_capacity(spans.len());
        for (s, offset) in spans {
            seg.push(&s, offset);
        }
        seg
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.spans.capacity()
    }

    /// Appends `s`, opened at byte `offset`; returns its index.
    #[inline]
    pub(crate) fn push(&mut self, s: &SpanData, offset: u64) -> usize {
        let gap = offset.wrapping_sub(self.last);
        let gap = match gap < u64::from(FAR) {
            true => gap as u32,
            false => {
                self.far.push(offset);
                FAR
            }
        };
        self.last = offset;
        let [a, b, c, _] = gap.to_le_bytes();
        self.spans.push(MSpan {
            start: s.start,
            dur: s.dur,
            name: s.name,
            cat: s.cat,
            args: s.args,
            flags: s.flags,
            gap: [a, b, c],
        });
        self.spans.len() - 1
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> &MSpan {
        &self.spans[i]
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, i: usize) -> &mut MSpan {
        &mut self.spans[i]
    }

    /// Rewrites each span's data with `fix` (its offset stays); generic, so that the
    /// rewrite is compiled into the loop rather than called through a pointer per span.
    pub(crate) fn fix(&mut self, fix: &impl Fn(&mut SpanData)) {
        for m in &mut self.spans {
            let mut s = m.data();
            fix(&mut s);
            (m.start, m.dur, m.name, m.cat, m.args, m.flags) =
                (s.start, s.dur, s.name, s.cat, s.args, s.flags);
        }
    }

    /// The spans, in order, without their offsets (nothing to decode).
    #[inline]
    pub(crate) fn spans(&self) -> impl Iterator<Item = SpanData> + '_ {
        self.spans.iter().map(MSpan::data)
    }

    /// The spans with their byte offsets, in order.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (SpanData, u64)> + '_ {
        let mut far = self.far.iter();
        let mut at = 0u64;
        self.spans.iter().map(move |m| {
            let [a, b, c] = m.gap;
            let gap = u32::from_le_bytes([a, b, c, 0]);
            at = match gap {
                FAR => *far.next().expect("an offset kept whole for each far span"),
                g => at.wrapping_add(u64::from(g)),
            };
            (m.data(), at)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets near, far, at the edge of what a gap holds, and going back (a sorted
    /// thread's) come back as they went in, with the spans' data.
    #[test]
    fn spans_keep_their_offsets_near_far_and_backwards() {
        let offsets = [
            7,
            7,
            8,
            8 + u64::from(FAR) - 1,
            8 + 2 * u64::from(FAR) - 1,
            3,
            u64::MAX / 2,
            u64::MAX / 2 + 40,
            0,
        ];
        let span = |i: usize| SpanData {
            start: i as i64 * 10,
            dur: -(i as i64),
            name: StrId(i as u32),
            cat: StrId(2 * i as u32),
            args: ArgsId(3 * i as u32),
            flags: i as u8,
        };
        let mut seg = Segment::default();
        for (i, &o) in offsets.iter().enumerate() {
            assert_eq!(seg.push(&span(i), o), i);
        }
        seg.get_mut(2).dur = 99;
        let back: Vec<(SpanData, u64)> = seg.iter().collect();
        assert_eq!(back.iter().map(|p| p.1).collect::<Vec<_>>(), offsets);
        for (i, (s, _)) in back.iter().enumerate() {
            let want = SpanData {
                dur: if i == 2 { 99 } else { span(i).dur },
                ..span(i)
            };
            assert_eq!(format!("{s:?}"), format!("{want:?}"));
        }
        let again = Segment::of(back.iter().copied());
        assert_eq!(again.iter().map(|p| p.1).collect::<Vec<_>>(), offsets);
    }
}
