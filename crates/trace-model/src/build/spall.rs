//! The `.spall` v3 side of the builder: a buffer's thread stack and B/E times held in a
//! cursor while the buffer's events arrive, and put back into the thread after it.

use spall_format::RawEvent;

use super::TraceBuilder;
use crate::args::ArgsId;
use crate::stack::ChunkStack;
use crate::strings::StrId;

/// The `.spall` v3 buffer being decoded by a streaming builder: its thread's stack and B/E
/// times, taken out of the thread for the buffer's events (each of them then touches this
/// and nothing else) and put back by [`TraceBuilder::spall_flush`].
#[derive(Debug, Default)]
pub(super) struct SpallCursor {
    pub(super) thread: u32,
    pub(super) stack: ChunkStack,
    /// Whether the thread had a stack before (one is kept only where a B/E arrived).
    pub(super) had_stack: bool,
    /// The thread's `first_be_ts` and `last_be_ts`, kept up to date here.
    pub(super) first: i64,
    pub(super) last: i64,
    /// The latest time before the last step back in time (`i64::MIN`: none).
    pub(super) peak: i64,
    /// The stacks cut off by steps back in time in this buffer (see `spall_cut`).
    pub(super) cut: Vec<ChunkStack>,
}

impl SpallCursor {
    /// Records a Begin's or End's time; a step back in time starts a new stack.
    #[inline(always)]
    pub(super) fn at(&mut self, ts: i64) {
        if ts < self.last {
            self.step_back();
        }
        self.first = self.first.min(ts);
        self.last = ts;
    }

    #[cold]
    #[inline(never)]
    fn step_back(&mut self) {
        self.peak = self.peak.max(self.last);
        self.cut.push(std::mem::take(&mut self.stack));
    }
}

impl TraceBuilder {
    /// A `.spall` v3 Begin or End (`name` is `None`) of a streaming builder that was told
    /// no buffer's thread: its time checked and recorded, then onto its thread's stack.
    #[cold]
    pub(super) fn spall_event(&mut self, ev: &RawEvent<'_>, name: Option<StrId>, args: ArgsId) {
        self.time(ev.ts, ev.ts);
        let t = self.thread(ev);
        let th = &mut self.threads[t as usize];
        if ev.ts < th.last_be_ts {
            th.disordered = true;
            th.spall_cut.extend(th.spall.take());
        }
        th.first_be_ts = th.first_be_ts.min(ev.ts);
        th.last_be_ts = ev.ts;
        let stack = th.spall.get_or_insert_with(ChunkStack::default);
        match name {
            Some(name) => stack.begin(ev.ts, name, args, ev.offset),
            None => stack.end(ev.ts, ev.offset),
        }
    }

    /// Puts the current `.spall` buffer's stack and times back into its thread, and its
    /// times into the trace's range: its first and last are its least and greatest, but
    /// for what came before a step back in time (`peak`).
    pub(super) fn spall_flush(&mut self) {
        let Some(c) = self.spall_cur.take() else {
            return;
        };
        let th = &mut self.threads[c.thread as usize];
        th.first_be_ts = c.first;
        th.last_be_ts = c.last;
        if !c.cut.is_empty() {
            th.disordered = true;
            th.spall_cut.extend(c.cut);
        }
        if c.had_stack || !c.stack.is_empty() {
            th.spall = Some(c.stack);
        }
        self.time(c.first, c.last.max(c.peak));
    }
}
