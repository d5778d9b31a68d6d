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
mod state;

pub use state::TaskState;

use crate::strings::StrId;

/// One scheduling slice: a thread running on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedSlice {
    /// When it started running.
    pub ts: i64,
    /// How long it ran; -1 if it still ran at the end of the trace.
    pub dur: i64,
    /// The CPU.
    pub cpu: u32,
    /// The thread (index into [`Trace::threads`](crate::Trace::threads)); the idle task is
    /// the thread with tid 0.
    pub thread: u32,
    /// The state it left the CPU in ([`TaskState::UNKNOWN`] while it still runs, or where
    /// the kernel's bits mean nothing).
    pub end_state: TaskState,
    /// Its priority.
    pub priority: i32,
}

/// One interval of a thread's state, in 32 bytes: the CPU (of a running state), the waker
/// (of a runnable one) and the kernel function (of a blocked one) share a word, as no state
/// has two of them; the optional flags share a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadState {
    /// When it began.
    pub ts: i64,
    /// How long it lasted; -1 if it lasted to the end of the trace (or data was lost).
    pub dur: i64,
    /// The thread.
    pub thread: u32,
    /// Running, runnable (`R`, `R+`) or a blocked state (`S`, `D`...).
    pub state: TaskState,
    /// The CPU, waker or blocked function, by `state`; [`NONE`] for none.
    pub(crate) other: u32,
    /// `irq` (bits 0-1) and `io_wait` (bits 2-3): 0 unknown, 1 false, 2 true.
    pub(crate) flags: u8,
}

const NONE: u32 = u32::MAX;

fn flag(v: Option<bool>) -> u8 {
    v.map_or(0, |b| 1 + b as u8)
}

fn unflag(bits: u8) -> Option<bool> {
    match bits & 3 {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

impl ThreadState {
    /// A state with no CPU, waker, flags or function.
    pub fn new(ts: i64, dur: i64, thread: u32, state: TaskState) -> ThreadState {
        ThreadState {
            ts,
            dur,
            thread,
            state,
            other: NONE,
            flags: 0,
        }
    }

    /// The CPU it ran on, for running states.
    pub fn cpu(&self) -> Option<u32> {
        (self.state == TaskState::RUNNING && self.other != NONE).then_some(self.other)
    }

    /// The thread that woke it (runnable states after a waking or a new task).
    pub fn waker(&self) -> Option<u32> {
        (self.state == TaskState::RUNNABLE && self.other != NONE).then_some(self.other)
    }

    /// The kernel function it blocked in, where known.
    pub fn blocked_function(&self) -> Option<StrId> {
        let blocked = self.state != TaskState::RUNNING && self.state != TaskState::RUNNABLE;
        (blocked && self.other != NONE).then_some(StrId(self.other))
    }

    /// Whether the waking came from an interrupt, where the record said.
    pub fn irq(&self) -> Option<bool> {
        unflag(self.flags)
    }

    /// Whether a blocked state was waiting for I/O (`sched_blocked_reason`).
    pub fn io_wait(&self) -> Option<bool> {
        unflag(self.flags >> 2)
    }

    /// Sets the CPU, the waker or the blocked function, whichever `state` has.
    pub fn set_other(&mut self, v: Option<u32>) {
        self.other = v.unwrap_or(NONE);
    }

    /// Sets whether the waking came from an interrupt.
    pub fn set_irq(&mut self, v: Option<bool>) {
        self.flags = (self.flags & !3) | flag(v);
    }

    /// Sets whether the state waited for I/O.
    pub fn set_io_wait(&mut self, v: Option<bool>) {
        self.flags = (self.flags & 3) | flag(v) << 2;
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

/// Everything a system trace says about scheduling.
#[derive(Clone, Debug, Default)]
pub struct SchedData {
    /// Scheduling slices, by CPU, then time.
    pub slices: Vec<SchedSlice>,
    /// Thread states, in time order (as trace_processor numbers them).
    pub states: Vec<ThreadState>,
    /// Indices into `states`, by thread, then time: thread `t`'s are
    /// `by_thread[thread_at[t]..thread_at[t + 1]]`.
    pub by_thread: Vec<u32>,
    /// Where each thread's states begin in `by_thread`, one more than the threads.
    pub thread_at: Vec<u32>,
    /// CPU counters, by kind, then CPU.
    pub counters: Vec<CpuCounter>,
    /// The CPUs seen, ascending.
    pub cpus: Vec<u32>,
}

impl SchedData {
    /// Whether the trace held no scheduling data.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty() && self.states.is_empty() && self.counters.is_empty()
    }

    /// The slices of one CPU, by time.
    pub fn cpu_slices(&self, cpu: u32) -> &[SchedSlice] {
        let a = self.slices.partition_point(|s| s.cpu < cpu);
        let b = self.slices.partition_point(|s| s.cpu <= cpu);
        &self.slices[a..b]
    }

    /// The states of one thread, by time.
    pub fn thread_states(&self, thread: u32) -> impl Iterator<Item = &ThreadState> {
        let t = thread as usize;
        let (a, b) = match (self.thread_at.get(t), self.thread_at.get(t + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        self.by_thread[a..b]
            .iter()
            .map(|&i| &self.states[i as usize])
    }

    /// The memory it holds, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.slices.capacity() * std::mem::size_of::<SchedSlice>()
            + self.states.capacity() * std::mem::size_of::<ThreadState>()
            + (self.by_thread.capacity() + self.thread_at.capacity()) * 4
            + (self.counters.iter())
                .map(|c| c.ts.capacity() * 8 + c.values.capacity() * 8)
                .sum::<usize>()
    }

    /// Where slice `i` ends for drawing and CPU time. A slice still running (`dur` -1,
    /// as trace_processor keeps it) ends where the next slice of its CPU begins: a switch
    /// whose previous task is not this one (counted as mismatched) still means the CPU
    /// ran another. The last slice of a CPU ends at `end`, the trace's end.
    pub fn slice_end(&self, i: usize, end: i64) -> i64 {
        let s = &self.slices[i];
        if s.dur >= 0 {
            return s.ts.saturating_add(s.dur);
        }
        match self.slices.get(i + 1) {
            Some(n) if n.cpu == s.cpu => n.ts.max(s.ts),
            _ => end.max(s.ts),
        }
    }

    /// CPU time per thread (a slice still running ends as [`slice_end`](Self::slice_end)
    /// says), largest first: (thread, slices, nanoseconds). The idle task (`idle`) is
    /// left out.
    pub fn cpu_time(&self, end: i64, idle: Option<u32>) -> Vec<(u32, u64, i64)> {
        let mut per: hashbrown::HashMap<u32, (u64, i64)> = hashbrown::HashMap::new();
        for (i, s) in self.slices.iter().enumerate() {
            if Some(s.thread) == idle {
                continue;
            }
            let dur = self.slice_end(i, end) - s.ts;
            let e = per.entry(s.thread).or_default();
            e.0 += 1;
            e.1 += dur;
        }
        let mut v: Vec<_> = per.into_iter().map(|(t, (n, d))| (t, n, d)).collect();
        v.sort_by_key(|&(t, _, d)| (std::cmp::Reverse(d), t));
        v
    }
}

/// `s` with its threads renumbered (`new[old]`) and its states indexed by thread; its
/// `thread_at` holds, as [`derive`] leaves it, each (old) thread's states counted.
pub(crate) fn renumber(mut s: SchedData, new: &[u32]) -> SchedData {
    // Threads often keep their numbers: then the slices and states stay as they are.
    if (new.iter().enumerate()).any(|(i, &n)| n != i as u32) {
        renumber_threads(&mut s, new);
    }
    // The counts, by new number, unless they do not add up (then counted again).
    let mut start = vec![0u32; new.len() + 1];
    for (t, &c) in s.thread_at.iter().enumerate() {
        if let Some(&n) = new.get(t) {
            start[n as usize + 1] += c;
        }
    }
    let total: u64 = start.iter().map(|&c| c as u64).sum();
    if total != s.states.len() as u64 {
        start.fill(0);
        for x in &s.states {
            start[x.thread as usize + 1] += 1;
        }
    }
    // The slices are already by CPU, then time (derive lays them out so); the states stay
    // in time order, indexed by thread.
    (s.by_thread, s.thread_at) = counting_order(&s.states, start, |x| x.thread);
    s
}

fn renumber_threads(s: &mut SchedData, new: &[u32]) {
    for x in &mut s.slices {
        x.thread = new[x.thread as usize];
    }
    for x in &mut s.states {
        x.thread = new[x.thread as usize];
        if let Some(w) = x.waker() {
            x.other = new[w as usize];
        }
    }
}

/// The indices of `v` stably sorted by `key`, given each key's count at `start[key + 1]`,
/// and where each key's begin.
fn counting_order<T>(
    v: &[T],
    mut start: Vec<u32>,
    key: impl Fn(&T) -> u32,
) -> (Vec<u32>, Vec<u32>) {
    for k in 0..start.len() - 1 {
        start[k + 1] += start[k];
    }
    let at = start.clone();
    let mut order = vec![0u32; v.len()];
    for (i, x) in v.iter().enumerate() {
        let k = key(x) as usize;
        order[start[k] as usize] = i as u32;
        start[k] += 1;
    }
    (order, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system trace holds two states a switch: their size is most of its memory.
    #[test]
    fn a_thread_state_keeps_each_field_apart_in_32_bytes() {
        assert_eq!(std::mem::size_of::<ThreadState>(), 32);
        let mut run = ThreadState::new(5, 10, 1, TaskState::RUNNING);
        run.set_other(Some(3));
        run.set_irq(Some(true));
        run.set_io_wait(Some(false));
        assert_eq!(
            (run.cpu(), run.waker(), run.blocked_function()),
            (Some(3), None, None)
        );
        assert_eq!((run.irq(), run.io_wait()), (Some(true), Some(false)));
        run.set_irq(None);
        assert_eq!((run.irq(), run.io_wait()), (None, Some(false)));
        let mut r = ThreadState::new(5, 10, 1, TaskState::RUNNABLE);
        r.set_other(Some(7));
        assert_eq!(
            (r.cpu(), r.waker(), r.blocked_function()),
            (None, Some(7), None)
        );
        let mut d = ThreadState::new(5, 10, 1, TaskState::from_raw(2, None));
        assert_eq!(d.blocked_function(), None);
        d.set_other(Some(9));
        assert_eq!(
            (d.cpu(), d.waker(), d.blocked_function()),
            (None, None, Some(StrId(9)))
        );
        assert_eq!((d.irq(), d.io_wait()), (None, None));
    }
}
