//! Turning one thread's events into lanes: B/E matching, then nesting by containment.
//!
//! Recursion-free: depth is a `Vec` index, so 100,000 levels cost memory, not stack.

use spall_format::{Diagnostics, Phase};

use crate::diag::ModelWarning;
use crate::strings::StrId;
use crate::trace::{flags, ArgsId, Lane, SpanData};

/// A span-forming event of one thread, waiting for the thread to be complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub ts: i64,
    /// `X`: the duration. `B`/`E`: unused.
    pub dur: i64,
    pub phase: Phase,
    pub name: StrId,
    pub cat: StrId,
    pub args: ArgsId,
    /// Byte offset in the decoded input, for warnings.
    pub offset: u64,
}

/// B/E matching for one thread, fed events in time order (for B and E; X events may come
/// in any order). Spans are kept in the order they open (a B reserves its slot, filled in
/// by its E), so that nesting breaks ties between equal spans by file order.
#[derive(Debug, Default)]
pub(crate) struct Matcher {
    /// Each span with the byte offset of the event that opened it (for warnings).
    spans: Vec<(SpanData, u64)>,
    /// Open B events: (slot in `spans`, the event).
    open: Vec<(usize, Pending)>,
    /// The current run of E events sharing one timestamp.
    run: Vec<Pending>,
    be_flag: u8,
}

impl Matcher {
    pub(crate) fn new(from_spall: bool) -> Matcher {
        Matcher {
            be_flag: if from_spall { 0 } else { flags::FROM_BEGIN_END },
            ..Matcher::default()
        }
    }

    pub(crate) fn push(
        &mut self,
        e: Pending,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) {
        match e.phase {
            Phase::BEGIN => {
                self.flush_run(names, d);
                self.open.push((self.spans.len(), e));
                self.spans.push((
                    SpanData {
                        start: e.ts,
                        dur: 0,
                        name: e.name,
                        cat: e.cat,
                        args: e.args,
                        flags: self.be_flag,
                    },
                    e.offset,
                ));
            }
            Phase::END => {
                if self.run.first().is_some_and(|r| r.ts != e.ts) {
                    self.flush_run(names, d);
                }
                self.run.push(e);
            }
            // X events stand alone and do not interrupt a run of E events.
            _ => self.spans.push((
                SpanData {
                    start: e.ts,
                    dur: e.dur,
                    name: e.name,
                    cat: e.cat,
                    args: e.args,
                    flags: 0,
                },
                e.offset,
            )),
        }
    }

    /// Closes the pending run of E events: they close that many B events, all at one time.
    /// Which E pairs with which B changes no span, so names are compared as a set over the
    /// run (real traces write such runs in any order).
    fn flush_run(&mut self, names: &dyn Fn(StrId) -> String, d: &mut Diagnostics<ModelWarning>) {
        match self.run.len() {
            0 => return,
            // The common case: one E, compared with the one B it closes. No bookkeeping.
            1 => {
                let x = self.run.pop().expect("one E");
                match self.open.pop() {
                    Some((slot, b)) => {
                        if x.name != StrId::EMPTY && x.name != b.name {
                            mismatch(&x, names, d);
                        }
                        self.close(slot, &b, &x);
                    }
                    None => end_without_begin(&x, names, d),
                }
                return;
            }
            _ => {}
        }
        let run = std::mem::take(&mut self.run);
        let mut unmatched: Vec<usize> = (0..run.len())
            .filter(|&i| run[i].name != StrId::EMPTY)
            .collect();
        for (xi, x) in run.iter().enumerate() {
            let Some((slot, b)) = self.open.pop() else {
                end_without_begin(x, names, d);
                unmatched.retain(|&u| u != xi);
                continue;
            };
            if let Some(i) = unmatched.iter().position(|&u| run[u].name == b.name) {
                unmatched.swap_remove(i);
            }
            self.close(slot, &b, x);
        }
        for u in unmatched {
            mismatch(&run[u], names, d);
        }
        // Keep the buffer's capacity for the next run.
        self.run = run;
        self.run.clear();
    }

    /// Completes the span opened by `b` (in `slot`) with the E event `x`.
    fn close(&mut self, slot: usize, b: &Pending, x: &Pending) {
        let s = &mut self.spans[slot].0;
        s.dur = x.ts - b.ts;
        if s.args == ArgsId::NONE {
            s.args = x.args;
        }
    }

    /// Ends matching: unclosed B events end at `trace_end`, flagged unfinished. Returns the
    /// spans for [`nest`].
    pub(crate) fn finish(
        mut self,
        trace_end: i64,
        names: &dyn Fn(StrId) -> String,
        d: &mut Diagnostics<ModelWarning>,
    ) -> Vec<(SpanData, u64)> {
        self.flush_run(names, d);
        let unclosed = self.open.len() as u64;
        if unclosed > 0 {
            let first = self.open[0].1;
            d.warn_n(ModelWarning::UnclosedBegin, unclosed, first.offset, || {
                format!(
                    "{unclosed} B event(s) never closed (first: {:?} at {} ns); closed at the trace's end, {trace_end} ns, and flagged unfinished",
                    names(first.name),
                    first.ts
                )
            });
        }
        for (slot, b) in self.open.drain(..) {
            let s = &mut self.spans[slot].0;
            s.dur = (trace_end - b.ts).max(0);
            s.flags |= flags::UNFINISHED;
        }
        self.spans
    }
}

fn mismatch(x: &Pending, names: &dyn Fn(StrId) -> String, d: &mut Diagnostics<ModelWarning>) {
    d.warn(ModelWarning::EndNameMismatch, x.offset, || {
        format!(
            "E {:?} at {} ns closes a B of another name (the most recent open B on its thread)",
            names(x.name),
            x.ts
        )
    });
}

fn end_without_begin(
    x: &Pending,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) {
    d.warn(ModelWarning::EndWithoutBegin, x.offset, || {
        format!(
            "E {:?} at {} ns has no open B on its thread; ignored",
            names(x.name),
            x.ts
        )
    });
}

/// Builds the lanes of one thread from its buffered events (any order): a stable sort by
/// time (file order kept among equal times), matching, nesting. `trace_end` closes
/// unfinished `B`s.
pub(crate) fn build_lanes(
    mut events: Vec<Pending>,
    trace_end: i64,
    from_spall: bool,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> Vec<Lane> {
    if !events.windows(2).all(|w| w[0].ts <= w[1].ts) {
        events.sort_by_key(|e| e.ts);
    }
    let mut m = Matcher::new(from_spall);
    for e in events {
        m.push(e, names, d);
    }
    nest(m.finish(trace_end, names, d), names, d)
}

/// Assigns depths by containment: sort by (start ascending, duration descending), then a
/// stack of open spans. A span that outlives the span it starts in is kept whole one level
/// deeper (counted as a partial overlap), so no lane ever holds overlapping spans.
pub(crate) fn nest(
    mut spans: Vec<(SpanData, u64)>,
    names: &dyn Fn(StrId) -> String,
    d: &mut Diagnostics<ModelWarning>,
) -> Vec<Lane> {
    spans.sort_by(|(a, _), (b, _)| a.start.cmp(&b.start).then(b.dur.cmp(&a.dur)));
    let mut lanes: Vec<Lane> = Vec::new();
    // The end of the open span at each depth.
    let mut stack: Vec<i64> = Vec::new();
    for (mut s, offset) in spans {
        // Close every span that ended at or before this one starts. A zero-length span
        // ends where it starts, so the next span at the same time is its sibling.
        while let Some(&end) = stack.last() {
            if end <= s.start {
                stack.pop();
            } else {
                break;
            }
        }
        let end = s.end();
        if let Some(&parent_end) = stack.last() {
            if end > parent_end {
                s.flags |= flags::PARTIAL_OVERLAP;
                d.warn(ModelWarning::PartialOverlap, offset, || {
                    format!(
                        "span {:?} [{}, {}] ns starts inside its parent but ends {} ns after it; kept whole, one level deeper",
                        names(s.name),
                        s.start,
                        end,
                        end - parent_end
                    )
                });
            }
        }
        let depth = stack.len();
        if lanes.len() <= depth {
            lanes.push(Lane::default());
        }
        lanes[depth].push(&s);
        stack.push(end);
    }
    for lane in &mut lanes {
        lane.shrink();
    }
    lanes
}
