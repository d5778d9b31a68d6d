//! System traces: what ran on each CPU, in what state each thread was, and the CPUs'
//! counters, derived from the scheduler records of [`spall_format::ftrace`] as Perfetto's
//! trace_processor derives them (docs/MODEL.md, "System traces").
//!
//! The records are collected as they are decoded (`collect`), then sorted by time and
//! replayed once (`derive`): each switch closes the CPU's open slice and opens one for
//! the next task; each thread's states follow switches, wakings and new tasks. Threads are
//! the model's own ([`Trace::threads`](crate::Trace::threads)), found by tid.

pub(crate) mod collect;
pub(crate) mod derive;
mod open_states;
mod state;
mod states;

pub use state::TaskState;
pub use states::StateTable;
pub(crate) use states::ENDED;

use std::sync::OnceLock;

use crate::strings::StrId;

/// One scheduling slice: a thread running on a CPU, in 24 bytes. Its CPU is where it
/// lies: slices are stored by CPU ([`SchedData::slice_cpu`], [`SchedData::cpu_slices`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedSlice {
    /// When it started running.
    pub ts: i64,
    /// How long it ran; -1 if it still ran at the end of the trace.
    pub dur: i64,
    /// The thread (index into [`Trace::threads`](crate::Trace::threads)); the idle task is
    /// the thread with tid 0.
    pub thread: u32,
    /// The state it left the CPU in ([`TaskState::UNKNOWN`] while it still runs, or where
    /// the kernel's bits mean nothing).
    pub end_state: TaskState,
    /// Its priority: the kernel's are -1..=139; a record's past 16 bits is clamped (and
    /// counted, `sched_priority_out_of_range`).
    pub priority: i16,
}

/// One interval of a thread's state, in 24 bytes: the duration (48 bits) and the state
/// share a word; the CPU (of a running state), the waker (of a runnable one) and the
/// kernel function (of a blocked one) share another, as no state has two of them, with
/// the one flag each of the last two may have (`irq` of a runnable state, `io_wait` of a
/// blocked one) in its top two bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadState {
    /// When it began.
    pub ts: i64,
    /// The duration (bits 0-47, all ones for -1) and the state (48-63).
    pub(crate) dur_state: u64,
    /// The thread.
    pub thread: u32,
    /// A running state's CPU ([`NONE`] for none); another's waker or function (bits 0-29,
    /// [`NO_VALUE`] for none) and flag (30-31: 0 unknown, 1 false, 2 true).
    pub(crate) other: u32,
}

const NONE: u32 = u32::MAX;
pub(crate) const NO_VALUE: u32 = (1 << 30) - 1;
const DUR_BITS: u32 = 48;
const DUR_MASK: u64 = (1 << DUR_BITS) - 1;
/// The longest duration a state holds (78 hours); longer ones are clamped and counted.
pub const MAX_STATE_DUR: i64 = DUR_MASK as i64 - 1;

fn flag(v: Option<bool>) -> u32 {
    v.map_or(0, |b| 1 + b as u32)
}

fn unflag(bits: u32) -> Option<bool> {
    match bits & 3 {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

impl ThreadState {
    /// A state with no CPU, waker, flags or function; `dur` as [`set_dur`](Self::set_dur)
    /// takes it.
    pub fn new(ts: i64, dur: i64, thread: u32, state: TaskState) -> ThreadState {
        let other = match state {
            TaskState::RUNNING => NONE,
            _ => NO_VALUE,
        };
        let mut s = ThreadState {
            ts,
            dur_state: (state.0 as u64) << DUR_BITS,
            thread,
            other,
        };
        s.set_dur(dur);
        s
    }

    /// How long it lasted; -1 if it lasted to the end of the trace (or data was lost).
    #[inline]
    pub fn dur(&self) -> i64 {
        match self.dur_state & DUR_MASK {
            DUR_MASK => -1,
            d => d as i64,
        }
    }

    /// Running, runnable (`R`, `R+`) or a blocked state (`S`, `D`...).
    #[inline]
    pub fn state(&self) -> TaskState {
        TaskState((self.dur_state >> DUR_BITS) as u16)
    }

    /// Sets the duration: a negative one is -1; one past [`MAX_STATE_DUR`] is clamped to it
    /// (then false).
    #[inline]
    pub fn set_dur(&mut self, dur: i64) -> bool {
        let d = match dur {
            d if d < 0 => DUR_MASK,
            d => d.min(MAX_STATE_DUR) as u64,
        };
        self.dur_state = (self.dur_state & !DUR_MASK) | d;
        dur <= MAX_STATE_DUR
    }

    fn running(&self) -> bool {
        self.state() == TaskState::RUNNING
    }

    /// The value of a state that is not running: its waker or function.
    fn value(&self) -> Option<u32> {
        let v = self.other & NO_VALUE;
        (!self.running() && v != NO_VALUE).then_some(v)
    }

    /// The CPU it ran on, for running states.
    pub fn cpu(&self) -> Option<u32> {
        (self.running() && self.other != NONE).then_some(self.other)
    }

    /// The thread that woke it (runnable states after a waking or a new task).
    pub fn waker(&self) -> Option<u32> {
        self.value().filter(|_| self.state() == TaskState::RUNNABLE)
    }

    /// The kernel function it blocked in, where known.
    pub fn blocked_function(&self) -> Option<StrId> {
        let blocked = self.state() != TaskState::RUNNABLE;
        self.value().filter(|_| blocked).map(StrId)
    }

    fn flag(&self, runnable: bool) -> Option<bool> {
        let ok = !self.running() && (self.state() == TaskState::RUNNABLE) == runnable;
        unflag(self.other >> 30).filter(|_| ok)
    }

    /// Whether the waking came from an interrupt, where the record said (runnable states).
    pub fn irq(&self) -> Option<bool> {
        self.flag(true)
    }

    /// Whether a blocked state was waiting for I/O (`sched_blocked_reason`).
    pub fn io_wait(&self) -> Option<bool> {
        self.flag(false)
    }

    /// Sets the CPU, the waker or the blocked function, whichever the state has (a waker
    /// or function id past 30 bits is none: no trace holds a billion threads or strings).
    pub fn set_other(&mut self, v: Option<u32>) {
        self.other = match self.running() {
            true => v.unwrap_or(NONE),
            false => (self.other & !NO_VALUE) | v.filter(|&v| v < NO_VALUE).unwrap_or(NO_VALUE),
        };
    }

    fn set_flag(&mut self, runnable: bool, v: Option<bool>) {
        if !self.running() && (self.state() == TaskState::RUNNABLE) == runnable {
            self.other = (self.other & NO_VALUE) | flag(v) << 30;
        }
    }

    /// Sets whether the waking came from an interrupt (a runnable state's only).
    pub fn set_irq(&mut self, v: Option<bool>) {
        self.set_flag(true, v);
    }

    /// Sets whether the state waited for I/O (a blocked state's only).
    pub fn set_io_wait(&mut self, v: Option<bool>) {
        self.set_flag(false, v);
    }
}

/// What a CPU counter measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuCounterKind {
    /// `cpu_frequency`, in kHz (trace_processor's `cpufreq`).
    Frequency,
    /// `cpu_idle`: the idle state, 4294967295 when the CPU leaves idle (`cpuidle`).
    Idle,
}

impl CpuCounterKind {
    /// trace_processor's name for the counter track.
    pub fn name(self) -> &'static str {
        match self {
            CpuCounterKind::Frequency => "cpufreq",
            CpuCounterKind::Idle => "cpuidle",
        }
    }
}

/// One counter of one CPU: its values over time.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuCounter {
    /// What it measures.
    pub kind: CpuCounterKind,
    /// The CPU.
    pub cpu: u32,
    /// Times, ascending.
    pub ts: Vec<i64>,
    /// The value from each time on.
    pub values: Vec<f64>,
}

/// State ids ([`SchedData::state`]), by thread, then time: thread `t`'s are
/// `order[at[t]..at[t + 1]]`.
#[derive(Clone, Debug, Default)]
pub struct ByThread {
    /// State ids, by thread, then time.
    pub order: Vec<u32>,
    /// Where each thread's states begin in `order`, one more than the threads.
    pub at: Vec<u32>,
}

/// Everything a system trace says about scheduling.
#[derive(Clone, Debug, Default)]
pub struct SchedData {
    /// Scheduling slices, by CPU, then time.
    pub slices: Vec<SchedSlice>,
    /// The CPUs with slices, ascending.
    pub slice_cpus: Vec<u32>,
    /// Where each of `slice_cpus`' slices begin in `slices`, one more than those CPUs.
    pub cpu_at: Vec<u32>,
    /// Thread states, in time order (as trace_processor numbers them), `Running` ones
    /// kept as their slices: read through [`state`](Self::state).
    pub states: StateTable,
    /// The states by thread ([`by_thread`](Self::by_thread)), made when first asked for:
    /// only the viewer walks a thread's states, and it costs a pass and 4 bytes a state.
    pub(crate) by_thread: OnceLock<ByThread>,
    /// CPU counters, by kind, then CPU.
    pub counters: Vec<CpuCounter>,
    /// The CPUs seen, ascending.
    pub cpus: Vec<u32>,
}

/// Where slice `s` ends ([`SchedData::slice_end`]): with its duration, or where the next
/// slice of its CPU begins (`next`, asked only for a slice still running), or at `end`.
#[inline]
fn ends_at(s: &SchedSlice, next: impl FnOnce() -> Option<i64>, end: i64) -> i64 {
    if s.dur >= 0 {
        return s.ts.saturating_add(s.dur);
    }
    next().unwrap_or(end).max(s.ts)
}

impl SchedData {
    /// No scheduling data (as a `static` may hold it).
    pub const fn empty() -> SchedData {
        SchedData {
            slices: Vec::new(),
            slice_cpus: Vec::new(),
            cpu_at: Vec::new(),
            states: StateTable::empty(),
            by_thread: OnceLock::new(),
            counters: Vec::new(),
            cpus: Vec::new(),
        }
    }

    /// The states indexed by thread, made on the first call (a counting sort of the
    /// states by thread); `at` covers the threads up to the last with a state.
    pub fn by_thread(&self) -> &ByThread {
        self.by_thread.get_or_init(|| {
            let mut start = vec![0u32];
            self.state_threads(|_, t| {
                let t = t as usize + 1;
                if start.len() <= t {
                    start.resize(t + 1, 0);
                }
                start[t] += 1;
            });
            // A counting sort: each thread's states begin after the threads' before it.
            for k in 0..start.len() - 1 {
                start[k + 1] += start[k];
            }
            let at = start.clone();
            let mut order = vec![0u32; self.state_count()];
            self.state_threads(|g, t| {
                order[start[t as usize] as usize] = g as u32;
                start[t as usize] += 1;
            });
            ByThread { order, at }
        })
    }

    /// Whether the trace held no scheduling data.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty() && self.state_count() == 0 && self.counters.is_empty()
    }

    /// The slices of one CPU, by time.
    pub fn cpu_slices(&self, cpu: u32) -> &[SchedSlice] {
        match self.slice_cpus.binary_search(&cpu) {
            Ok(k) => &self.slices[self.cpu_range(k)],
            Err(_) => &[],
        }
    }

    /// The slices of the `k`th of `slice_cpus`, as indices into `slices`.
    pub fn cpu_range(&self, k: usize) -> std::ops::Range<usize> {
        match (self.cpu_at.get(k), self.cpu_at.get(k + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Which of `slice_cpus` slice `i` ran on (0 past the slices).
    fn cpu_index(&self, i: usize) -> usize {
        let k = self.cpu_at.partition_point(|&a| a as usize <= i);
        k.saturating_sub(1)
            .min(self.slice_cpus.len().saturating_sub(1))
    }

    /// The CPU slice `i` ran on.
    pub fn slice_cpu(&self, i: usize) -> u32 {
        self.slice_cpus.get(self.cpu_index(i)).copied().unwrap_or(0)
    }

    /// The states of one thread, by time (the index by thread made if not yet:
    /// [`by_thread`](Self::by_thread)).
    pub fn thread_states(&self, thread: u32) -> impl Iterator<Item = ThreadState> + '_ {
        let ix = self.by_thread();
        let t = thread as usize;
        let (a, b) = match (ix.at.get(t), ix.at.get(t + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        ix.order[a..b].iter().map(|&i| self.state(i as usize))
    }

    /// The memory it holds, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.slices.capacity() * std::mem::size_of::<SchedSlice>()
            + self.states.heap_bytes()
            + (self.by_thread.get()).map_or(0, |b| (b.order.capacity() + b.at.capacity()) * 4)
            + (self.slice_cpus.capacity() + self.cpu_at.capacity()) * 4
            + (self.counters.iter())
                .map(|c| c.ts.capacity() * 8 + c.values.capacity() * 8)
                .sum::<usize>()
    }

    /// Where slice `i` ends for drawing and CPU time. A slice still running (`dur` -1,
    /// as trace_processor keeps it) ends where the next slice of its CPU begins: a switch
    /// whose previous task is not this one (counted as mismatched) still means the CPU
    /// ran another. The last slice of a CPU ends at `end`, the trace's end.
    pub fn slice_end(&self, i: usize, end: i64) -> i64 {
        let next = || {
            let of_cpu = self.cpu_range(self.cpu_index(i));
            (i + 1 < of_cpu.end).then(|| self.slices[i + 1].ts)
        };
        ends_at(&self.slices[i], next, end)
    }

    /// The slice a running state ran as: the one on its CPU that began with it.
    pub fn slice_of(&self, st: &ThreadState) -> Option<usize> {
        let k = self.slice_cpus.binary_search(&st.cpu()?).ok()?;
        let r = self.cpu_range(k);
        let of_cpu = &self.slices[r.clone()];
        let i = of_cpu.partition_point(|x| x.ts < st.ts);
        let at = of_cpu[i..].iter().take_while(|x| x.ts == st.ts);
        let found = at.clone().position(|x| x.thread == st.thread);
        found.map(|j| r.start + i + j)
    }

    /// Where state `st` ends for drawing and CPU time; `next` is its thread's next state.
    /// A running state whose thread was not switched out of it ends with its slice
    /// ([`slice_end`](Self::slice_end)), though its row, as trace_processor keeps it, lasts
    /// to the end (`dur` -1) or to the thread's next running state (switched in elsewhere).
    pub fn state_end(&self, st: &ThreadState, next: Option<&ThreadState>, end: i64) -> i64 {
        let own = match st.dur() {
            d if d < 0 => end.max(st.ts),
            d => st.ts.saturating_add(d),
        };
        let running = |x: &ThreadState| x.state() == TaskState::RUNNING;
        // Only such a state looks up its slice: most states end by their own `dur`.
        let unswitched = running(st) && (st.dur() < 0 || next.is_some_and(running));
        match unswitched.then(|| self.slice_of(st)).flatten() {
            Some(i) => self.slice_end(i, end).min(own),
            None => own,
        }
    }

    /// CPU time per thread (a slice still running ends as [`slice_end`](Self::slice_end)
    /// says), largest first: (thread, slices, nanoseconds). The idle task (`idle`) is
    /// left out.
    pub fn cpu_time(&self, end: i64, idle: Option<u32>) -> Vec<(u32, u64, i64)> {
        use rayon::prelude::*;
        // Each CPU's slices apart (so the next of its CPU is the next one), the CPUs in
        // parallel; by thread index, threads being the
        // trace's, numbered densely.
        let of_cpu = |k: usize| {
            let s = &self.slices[self.cpu_range(k)];
            let mut per: Vec<(u64, i64)> = Vec::new();
            for (i, x) in s.iter().enumerate() {
                if Some(x.thread) == idle {
                    continue;
                }
                let stop = ends_at(x, || s.get(i + 1).map(|n| n.ts), end);
                let t = x.thread as usize;
                if per.len() <= t {
                    per.resize(t + 1, (0, 0));
                }
                per[t].0 += 1;
                per[t].1 += stop - x.ts;
            }
            per
        };
        let per = (0..self.slice_cpus.len())
            .into_par_iter()
            .map(of_cpu)
            .reduce(Vec::new, |mut a, b| {
                if a.len() < b.len() {
                    a.resize(b.len(), (0, 0));
                }
                for (x, y) in a.iter_mut().zip(b) {
                    (x.0, x.1) = (x.0 + y.0, x.1 + y.1);
                }
                a
            });
        let mut v: Vec<_> = (per.into_iter().enumerate())
            .filter(|x| x.1 .0 > 0)
            .map(|(t, (n, d))| (t as u32, n, d))
            .collect();
        v.sort_by_key(|&(t, _, d)| (std::cmp::Reverse(d), t));
        v
    }
}

/// `s` with its threads renumbered (`new[old]`).
pub(crate) fn renumber(mut s: SchedData, new: &[u32]) -> SchedData {
    // Threads often keep their numbers: then the slices and states stay as they are.
    if (new.iter().enumerate()).any(|(i, &n)| n != i as u32) {
        renumber_threads(&mut s, new);
    }
    s.by_thread = OnceLock::new();
    s
}

fn renumber_threads(s: &mut SchedData, new: &[u32]) {
    for x in &mut s.slices {
        x.thread = new[x.thread as usize];
    }
    for x in &mut s.states.rows {
        x.thread = new[x.thread as usize];
        if let Some(w) = x.waker() {
            x.set_other(Some(new[w as usize]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system trace holds a slice and two states a switch: their size is most of its
    /// memory.
    #[test]
    fn a_thread_state_keeps_each_field_apart_in_24_bytes() {
        assert_eq!(std::mem::size_of::<ThreadState>(), 24);
        assert_eq!(std::mem::size_of::<SchedSlice>(), 24);
        let mut run = ThreadState::new(5, 10, 1, TaskState::RUNNING);
        run.set_other(Some(u32::MAX - 1));
        run.set_irq(Some(true));
        assert_eq!(
            (run.cpu(), run.waker(), run.blocked_function()),
            (Some(u32::MAX - 1), None, None)
        );
        assert_eq!((run.irq(), run.io_wait(), run.dur()), (None, None, 10));
        let mut r = ThreadState::new(5, -1, 1, TaskState::RUNNABLE);
        r.set_other(Some(7));
        r.set_irq(Some(true));
        assert_eq!(
            (r.cpu(), r.waker(), r.blocked_function()),
            (None, Some(7), None)
        );
        assert_eq!((r.irq(), r.io_wait(), r.dur()), (Some(true), None, -1));
        r.set_irq(Some(false));
        assert_eq!((r.irq(), r.waker()), (Some(false), Some(7)));
        let d_state = TaskState::from_raw(2, None);
        let mut d = ThreadState::new(5, 10, 1, d_state);
        assert_eq!(d.blocked_function(), None);
        d.set_io_wait(Some(true));
        d.set_other(Some(9));
        assert_eq!(
            (d.cpu(), d.waker(), d.blocked_function()),
            (None, None, Some(StrId(9)))
        );
        assert_eq!(
            (d.irq(), d.io_wait(), d.state()),
            (None, Some(true), d_state)
        );
        assert!(d.set_dur(MAX_STATE_DUR));
        assert!(!d.set_dur(MAX_STATE_DUR + 1));
        assert_eq!((d.dur(), d.state()), (MAX_STATE_DUR, d_state));
    }
}
