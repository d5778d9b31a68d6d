//! JSON `B`/`E` pairing as trace_processor pairs it, for the threads where the usual
//! pairing (an `E` ends the innermost open `B`) would differ from it.
//!
//! trace_processor keeps one stack per thread of every slice it has not yet passed, `X`
//! spans and closed `B`s included, and:
//!
//! - takes events in file order while their times go forward; from the earliest time of
//!   an event that came after a later one, its sorter orders them by time, and the events
//!   of one time `E`s first, then `X`s of positive duration (longer first), then the
//!   others (`B`, zero-length `X`) in file order: an `X` starting with a `B` encloses it;
//! - ends, with an `E`, the innermost open `B` of the same name and category (an `E` with
//!   no name or no category matches any) and ignores an `E` that matches none; a `B` ended
//!   below the top of the stack stays on it;
//! - ends a `B` still open above a finished slice (an `X`, or a `B` ended out of order) at
//!   that slice's end, once an event comes after that end (its `misplaced_end_event`).
//!
//! The spans then nest by containment as every thread's do. trace_processor's thread
//! instants also pass through its stack; here they do not, so a `B` left open above a
//! finished `X` with only instants after it stays open.
//!
//! ```text
//! X [820, 835]  B "a" 826  E "b" 828 (ignored)  I 837  ->  "a" [826, 835] inside the X
//! ```

use std::cmp::Reverse;

use spall_format::{Diagnostics, Phase};

use super::segment::MSpan;
use super::{Matcher, Pending, Slot};
use crate::diag::ModelWarning;
use crate::span::flags;
use crate::strings::StrId;

/// A slice on trace_processor's stack: its span, the event that opened it, and whether it
/// is a `B` still open.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    slot: Slot,
    opened: Pending,
    open: bool,
}

/// The order trace_processor takes one thread's events in (a stable sort of events in
/// file order), its sorter ordering by phase from `sorted_from` on.
pub(super) fn sort(events: &mut [Pending], sorted_from: i64) {
    events.sort_by_key(|e| {
        let rank = match e.phase {
            _ if e.ts < sorted_from => (2, Reverse(0)),
            Phase::END => (0, Reverse(0)),
            Phase::COMPLETE if e.dur > 0 => (1, Reverse(e.dur)),
            _ => (2, Reverse(0)),
        };
        (e.ts, rank)
    });
}

impl Matcher {
    /// Takes the next event in [`sort`]'s order, as trace_processor would.
    pub(super) fn push_tp(
        &mut self,
        e: Pending,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        match e.phase {
            Phase::BEGIN => {
                self.pass(e.ts, None, names, d);
                let slot = self.add_span(&e, self.be_flag);
                self.stack.push(Entry {
                    slot,
                    opened: e,
                    open: true,
                });
            }
            Phase::END => {
                self.pass(e.ts, None, names, d);
                let found = self.stack.iter().rposition(|en| {
                    let b = &en.opened;
                    en.open
                        && (e.name == StrId::EMPTY || e.name == b.name)
                        && (e.cat == StrId::EMPTY || e.cat == b.cat)
                });
                let Some(i) = found else {
                    return d.warn(ModelWarning::EndWithoutBegin, e.offset, || {
                        format!(
                            "E {:?} at {} ns matches no open B of its name and category on its thread; ignored",
                            names(e.name),
                            e.ts
                        )
                    });
                };
                let en = self.stack[i];
                self.close(en.slot, &en.opened, &e);
                if i + 1 == self.stack.len() {
                    self.stack.pop();
                } else {
                    self.stack[i].open = false;
                    self.stack_closed += 1;
                }
            }
            _ => {
                let on_stack = self.pass(e.ts, Some(e.dur), names, d);
                let slot = self.add_span(&e, 0);
                // An `X` that overlaps a slice partly is dropped by trace_processor, kept
                // (and nested one level deeper) by the model: either way not on the stack.
                if on_stack {
                    self.stack.push(Entry {
                        slot,
                        opened: e,
                        open: false,
                    });
                    self.stack_closed += 1;
                }
            }
        }
    }

    /// The stack before an event at `ts` (`dur`: `None` for `B` and `E`): the slices it
    /// has passed leave it, and the `B`s open above a slice it has passed end there.
    /// Whether an `X` goes on the stack (it does not if it overlaps a slice partly).
    fn pass(
        &mut self,
        ts: i64,
        dur: Option<i64>,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> bool {
        if self.stack_closed == 0 {
            return true;
        }
        let on_stack = self.pass_closed(ts, dur, names, d);
        debug_assert_eq!(
            self.stack_closed,
            self.stack.iter().filter(|en| !en.open).count()
        );
        on_stack
    }

    /// [`pass`](Self::pass) on a stack with slices that are not open `B`s.
    fn pass_closed(
        &mut self,
        ts: i64,
        dur: Option<i64>,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> bool {
        let mut open_above = false;
        let mut i = self.stack.len();
        while i > 0 {
            i -= 1;
            let en = self.stack[i];
            if en.open {
                open_above = true;
                continue;
            }
            let s = self.span(en.slot);
            let (len, end) = (s.dur, s.start.saturating_add(s.dur));
            if open_above {
                if ts <= end {
                    continue;
                }
                for above in self.stack.drain(i + 1..) {
                    if !above.open {
                        self.stack_closed -= 1;
                        continue;
                    }
                    let (seg, k) = above.slot;
                    let s = self.spans[seg as usize].get_mut(k);
                    s.dur = (end - above.opened.ts).max(0);
                    s.flags |= flags::ENDED_WITH_PARENT;
                    d.warn(ModelWarning::MisplacedEnd, above.opened.offset, || {
                        format!(
                            "B {:?} at {} ns is still open when the span it started in ends, at {end} ns; ended there",
                            names(above.opened.name),
                            above.opened.ts
                        )
                    });
                }
                self.stack.pop();
                self.stack_closed -= 1;
                open_above = false;
                continue;
            }
            // Intervals are closed on the left and open on the right, but zero-length
            // slices at one time stack up.
            if end < ts || (end == ts && !(len == 0 && dur == Some(0))) {
                // trace_processor pops the top, which is not this slice when it is a `B`
                // ended out of order below an `X` not passed yet; that `B` would then end
                // the next `B` before it starts. Here it leaves, the `X` stays.
                self.stack.remove(i);
                self.stack_closed -= 1;
                continue;
            }
            if let Some(dur) = dur {
                if ts < end && ts.saturating_add(dur) > end {
                    return false;
                }
            }
        }
        true
    }

    fn span(&self, (seg, i): Slot) -> &MSpan {
        self.spans[seg as usize].get(i)
    }

    /// Hands the `B`s still open to [`finish`](Matcher::finish), innermost last.
    pub(super) fn end_tp(&mut self) {
        self.stack_closed = 0;
        let open = self.stack.drain(..).filter(|en| en.open);
        self.open.extend(open.map(|en| (en.slot, en.opened)));
    }
}
