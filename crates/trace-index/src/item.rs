//! What a query returns, [`Item`]s, and the one place kernels append them to the output.

use std::mem::MaybeUninit;

use trace_model::StrId;

/// One thing to draw: spans `first..=last` of a lane, either one span wide enough to show
/// as itself (`merged == false`) or a box covering a run of narrow spans (`merged == true`,
/// possibly a single span narrower than the visibility threshold).
///
/// A plain record, so a frame's items are read without going back to the lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// Start of the first span.
    pub start: i64,
    /// End of the last span (the largest end: lanes do not overlap).
    pub end: i64,
    /// Sum of the spans' durations.
    pub busy: i64,
    /// Index of the first span in its lane.
    pub first: u32,
    /// Index of the last span in its lane.
    pub last: u32,
    /// The name of the first longest span (for a colour or a label).
    pub name: StrId,
    /// A box of narrow spans rather than one visible span.
    pub merged: bool,
}

impl Item {
    /// The item of spans `first..=last` covering `start..end`, whose longest span lasts
    /// `longest` and is named `name`, for a query whose spans of `wide` or more stand alone:
    /// a box unless it is one span of `wide` or more.
    #[inline(always)]
    pub(crate) fn of(
        (first, last): (u32, u32),
        (start, end, busy): (i64, i64, i64),
        (longest, name): (i64, StrId),
        wide: i64,
    ) -> Item {
        Item {
            start,
            end,
            busy,
            first,
            last,
            name,
            merged: (first != last) | (longest < wide),
        }
    }

    /// Number of spans covered.
    pub fn count(&self) -> u32 {
        self.last - self.first + 1
    }

    /// The span's index when this item is one visible span.
    pub fn span(&self) -> Option<u32> {
        (!self.merged).then_some(self.first)
    }
}

/// Free slots at the end of a query's output, filled front to back.
///
/// The kernels' loops do not branch on whether a span (or record) starts a new item: each
/// step writes the open item to the next slot and moves past the slot only when the item
/// has closed. Whether it closes follows the data, so a branch on it would mispredict.
pub(crate) struct Slots<'a> {
    free: &'a mut [MaybeUninit<Item>],
    filled: usize,
}

impl Slots<'_> {
    /// Writes `item` to the next slot, and keeps it (moves past it) when `keep`.
    ///
    /// # Panics
    /// If every slot is kept already: a kernel asks for one slot per step it takes.
    #[inline(always)]
    pub(crate) fn put(&mut self, item: Item, keep: bool) {
        self.free[self.filled].write(item);
        self.filled += keep as usize;
    }
}

/// Appends to `out` the items `fill` keeps in up to `n` free slots, and returns what `fill`
/// returns.
#[inline(always)]
pub(crate) fn append<R>(
    out: &mut Vec<Item>,
    n: usize,
    fill: impl FnOnce(&mut Slots<'_>) -> R,
) -> R {
    out.reserve(n);
    let base = out.len();
    let mut slots = Slots {
        free: &mut out.spare_capacity_mut()[..n],
        filled: 0,
    };
    let r = fill(&mut slots);
    let filled = slots.filled;
    // SAFETY: `put` writes a slot before moving past it, so the slots 0..filled are
    // initialised, and they lie in the `n` reserved after `base`.
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(base + filled);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(first: u32) -> Item {
        Item {
            first,
            last: first,
            ..Item::default()
        }
    }

    #[test]
    fn append_keeps_only_the_slots_moved_past() {
        let mut out = vec![item(9)];
        append(&mut out, 4, |s| {
            s.put(item(0), false); // overwritten by the next put
            s.put(item(1), true);
            s.put(item(2), true);
            s.put(item(3), false); // written, not kept
        });
        let firsts: Vec<u32> = out.iter().map(|i| i.first).collect();
        assert_eq!(firsts, [9, 1, 2]);
    }

    #[test]
    #[should_panic]
    fn a_put_past_the_slots_asked_for_panics() {
        append(&mut Vec::new(), 1, |s| {
            s.put(item(0), true);
            s.put(item(1), true);
        });
    }
}
