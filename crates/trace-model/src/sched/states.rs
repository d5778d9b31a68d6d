//! Thread states as stored: a switch makes two, each told by a scheduling slice, so each
//! is kept as its slice's index and its own duration, 8 bytes where a row takes 24. The
//! next task's `Running` state shares its slice's start, thread and CPU; the previous
//! task's state (`S`, `R+`...) begins where its closed slice ends, in the slice's end state
//! (its duration differs from the slice's where the records lost data: a task switched in
//! on a second CPU while it ran on the first). Only wakings', new tasks' and mismatched
//! switches' states are rows. Ids stay trace_processor's, every state in time order: a bit
//! a state says which kind it is, counted a word at a time to find its place among its
//! kind.

use super::{SchedData, TaskState, ThreadState};

/// The thread states, in time order ([`SchedData::state`] reads them).
#[derive(Clone, Debug, Default)]
pub struct StateTable {
    /// The states that are not `Running`, in time order.
    pub(crate) rows: Vec<ThreadState>,
    /// Each state kept by its slice: the slice (an index into [`SchedData::slices`]), with
    /// [`ENDED`] set for the state its thread left the slice in (else `Running`), in time
    /// order.
    pub(crate) running: Vec<u32>,
    /// Each of `running`'s durations: [`RUN_OPEN`] for -1, [`RUN_LONG`] for one of
    /// 4.29 s or more, found in `long_at` (which of `running`, ascending) and `long_dur`.
    pub(crate) run_dur: Vec<u32>,
    pub(crate) long_at: Vec<u32>,
    pub(crate) long_dur: Vec<i64>,
    /// The few ended states a `sched_blocked_reason` marked: which of `running`
    /// (ascending), and their [`ThreadState`]'s function and flag bits.
    pub(crate) ended_at: Vec<u32>,
    pub(crate) ended_other: Vec<u32>,
    /// Bit `g % 64` of word `g / 64`: whether state `g` is one of `rows` (else `running`).
    pub(crate) kept: Vec<u64>,
    /// `rows` before each word of `kept` (made from it: [`count_kept`](Self::count_kept)).
    pub(crate) rank: Vec<u32>,
}

impl StateTable {
    /// No states (as a `static` may hold them).
    pub const fn empty() -> StateTable {
        StateTable {
            rows: Vec::new(),
            running: Vec::new(),
            run_dur: Vec::new(),
            long_at: Vec::new(),
            long_dur: Vec::new(),
            ended_at: Vec::new(),
            ended_other: Vec::new(),
            kept: Vec::new(),
            rank: Vec::new(),
        }
    }

    /// How many states there are.
    pub fn len(&self) -> usize {
        self.rows.len() + self.running.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes `rank` from `kept`.
    pub(crate) fn count_kept(&mut self) {
        let mut n = 0u32;
        self.rank = (self.kept.iter())
            .map(|w| {
                let before = n;
                n += w.count_ones();
                before
            })
            .collect();
    }

    /// Whether `kept` says which kind each state is: a bit a state, as many set as rows,
    /// and `rank` counts them; a duration each `Running` state, the long ones listed
    /// ascending, each once; the marked ended states ended ones, ascending.
    pub(crate) fn is_consistent(&self) -> bool {
        let n = self.len();
        let words = n.div_ceil(64);
        let tail = (!n.is_multiple_of(64)).then(|| self.kept.last().map_or(0, |w| w >> (n % 64)));
        let ones: usize = self.kept.iter().map(|w| w.count_ones() as usize).sum();
        self.kept.len() == words
            && tail.unwrap_or(0) == 0
            && ones == self.rows.len()
            && self.rank.len() == words
            && self.run_dur.len() == self.running.len()
            && (self.long_at.windows(2)).all(|w| w[0] < w[1])
            && (self.long_at.iter()).all(|&k| self.run_dur.get(k as usize) == Some(&RUN_LONG))
            && self.run_dur.iter().filter(|&&d| d == RUN_LONG).count() == self.long_at.len()
            && self.long_at.len() == self.long_dur.len()
            && (self.ended_at.windows(2)).all(|w| w[0] < w[1])
            && (self.ended_at.iter()).all(|&k| {
                self.running
                    .get(k as usize)
                    .is_some_and(|&i| i & ENDED != 0)
            })
            && self.ended_at.len() == self.ended_other.len()
    }

    /// The memory it holds, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<ThreadState>()
            + (self.running.capacity() + self.run_dur.capacity() + self.rank.capacity()) * 4
            + (self.long_at.capacity() + self.ended_at.capacity()) * 4
            + self.ended_other.capacity() * 4
            + (self.long_dur.capacity() + self.kept.capacity()) * 8
    }
}

/// A `Running` state's duration in [`StateTable::run_dur`]: -1 (it never ended).
pub(crate) const RUN_OPEN: u32 = u32::MAX;
/// A `Running` state's duration in [`StateTable::run_dur`]: too long for 32 bits.
pub(crate) const RUN_LONG: u32 = u32::MAX - 1;
/// In [`StateTable::running`]: the state its slice's thread left it in, not `Running`.
pub(crate) const ENDED: u32 = 1 << 31;

/// Builds the bits of [`StateTable::kept`] as states come, in time order.
#[derive(Default)]
pub(crate) struct KeptBits {
    pub words: Vec<u64>,
    pub len: usize,
}

impl KeptBits {
    #[inline]
    pub fn push(&mut self, kept: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        if let Some(w) = self.words.last_mut() {
            *w |= (kept as u64) << (self.len % 64);
        }
        self.len += 1;
    }
}

impl SchedData {
    /// How many thread states there are.
    pub fn state_count(&self) -> usize {
        self.states.len()
    }

    /// Thread state `g` (its id, as trace_processor numbers them: in time order), if there
    /// is one.
    pub fn get_state(&self, g: usize) -> Option<ThreadState> {
        let t = &self.states;
        let (w, bit) = (g / 64, 1u64 << (g % 64));
        let word = *t.kept.get(w)?;
        let before = *t.rank.get(w)? as usize + (word & (bit - 1)).count_ones() as usize;
        if word & bit != 0 {
            return t.rows.get(before).copied();
        }
        self.running_state(g.checked_sub(before)?)
    }

    /// Thread state `g` ([`get_state`](Self::get_state)); panics past the states.
    pub fn state(&self, g: usize) -> ThreadState {
        match self.get_state(g) {
            Some(s) => s,
            None => panic!("thread state {g} of {}", self.state_count()),
        }
    }

    /// The `k`th state kept by its slice: a `Running` one has its slice's start, thread
    /// and CPU; an ended one its slice's end, thread and end state; each its own duration.
    fn running_state(&self, k: usize) -> Option<ThreadState> {
        let t = &self.states;
        let raw = *t.running.get(k)?;
        let s = self.slices.get((raw & !ENDED) as usize)?;
        let dur = match *t.run_dur.get(k)? {
            RUN_OPEN => -1,
            RUN_LONG => t.long_dur[t.long_at.binary_search(&(k as u32)).ok()?],
            d => d as i64,
        };
        if raw & ENDED != 0 {
            let ts = s.ts.saturating_add(s.dur.max(0));
            let mut st = ThreadState::new(ts, dur, s.thread, s.end_state);
            if let Ok(j) = t.ended_at.binary_search(&(k as u32)) {
                st.other = t.ended_other[j];
            }
            return Some(st);
        }
        let mut st = ThreadState::new(s.ts, dur, s.thread, TaskState::RUNNING);
        st.set_other(Some(self.slice_cpu(raw as usize)));
        Some(st)
    }

    /// Calls `f` with each state's id and thread, in time order: a walk of the kinds' bits,
    /// with no state made.
    pub(crate) fn state_threads(&self, mut f: impl FnMut(usize, u32)) {
        let t = &self.states;
        let (mut rows, mut running) = (t.rows.iter(), t.running.iter());
        for g in 0..t.len() {
            let thread = match t.kept[g / 64] >> (g % 64) & 1 {
                1 => rows.next().map(|x| x.thread),
                _ => (running.next())
                    .and_then(|&i| self.slices.get((i & !ENDED) as usize).map(|s| s.thread)),
            };
            f(g, thread.unwrap_or(0));
        }
    }

    /// Every thread state, in time order.
    pub fn states(&self) -> impl Iterator<Item = ThreadState> + '_ {
        (0..self.state_count()).map(|g| self.state(g))
    }
}
