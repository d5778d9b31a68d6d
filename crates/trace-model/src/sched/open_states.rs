//! The thread states as the replay makes them ([`States`]), from a stream of changes
//! ([`Op`]) in time order. The replay (`derive`) walks the records, lays out the slices
//! and finds the threads; the states are the other half of its work, and need nothing
//! back from it, so on two cores or more they are built on a thread of their own,
//! batches of changes passed between the two ([`piped`]); one core, or the web page's
//! worker, applies each change as it is made. Either way the states see the same
//! changes in the same order.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use hashbrown::HashMap;

use super::states::{KeptBits, ENDED, RUN_LONG, RUN_OPEN};
use super::{StateTable, TaskState, ThreadState, MAX_STATE_DUR, NO_VALUE};
use crate::strings::StrId;

use super::collect::NO_FLAGS;

/// One change to the thread states, in the order the replay makes them.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    /// A switch from `prev` (leaving in `state` the slice `closed`, where it was the one
    /// that ran there; [`NOT_CLOSED`] where not) to `next`, whose slice is `slice`. Slice
    /// numbers in 32 bits keep a change in 32 bytes.
    Switch {
        ts: i64,
        closed: u32,
        prev: u32,
        state: TaskState,
        next: u32,
        slice: u32,
    },
    /// Thread `t` woken by `waker`, with its record's irq flags.
    Waking {
        ts: i64,
        t: u32,
        waker: u32,
        flags: u8,
    },
    /// A new task `t`, forked by `parent`.
    New { ts: i64, t: u32, parent: u32 },
    /// Why `t` blocked: the kernel function (a string) and whether on I/O.
    Blocked { t: u32, io_wait: bool, func: StrId },
}

/// [`Op::Switch`]'s `closed` where no slice closed.
pub(super) const NOT_CLOSED: u32 = u32::MAX;

/// Where the replay hands its changes: the states themselves, or a thread building them.
pub(super) trait OpSink {
    fn op(&mut self, op: Op);
}

impl OpSink for States {
    #[inline]
    fn op(&mut self, op: Op) {
        self.apply(op);
    }
}

/// Changes a batch: 256 KB, which stays in the cache between the two threads.
const BATCH: usize = 8192;

/// The replay's end of a pipe to the thread building the states: changes are gathered
/// into batches, sent, and the batches come back empty for reuse.
pub(super) struct Pipe {
    batch: Vec<Op>,
    to: Option<SyncSender<Vec<Op>>>,
    back: Receiver<Vec<Op>>,
}

impl Pipe {
    fn send(&mut self) {
        let full = std::mem::replace(
            &mut self.batch,
            self.back
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH)),
        );
        // A send fails only once the states' thread has stopped (it panicked): the
        // replay goes on, and the panic is passed on when the thread is joined.
        if let Some(to) = &self.to {
            let _ = to.send(full);
        }
    }
}

impl<T: OpSink> OpSink for &mut T {
    #[inline]
    fn op(&mut self, op: Op) {
        (**self).op(op);
    }
}

impl OpSink for Pipe {
    #[inline]
    fn op(&mut self, op: Op) {
        self.batch.push(op);
        if self.batch.len() == BATCH {
            self.send();
        }
    }
}

/// Whether the states are worth a thread of their own: more than one thread in rayon's
/// pool, and enough of them (`states`, the most the records can open) to repay starting one.
pub(super) fn worth_a_thread(states: usize) -> bool {
    const MIN_STATES: usize = 1 << 16;
    #[cfg(test)]
    match tests::FORCE.load(std::sync::atomic::Ordering::Relaxed) {
        1 => return false,
        2 => return true,
        _ => {}
    }
    !cfg!(target_arch = "wasm32") && states >= MIN_STATES && rayon::current_num_threads() > 1
}

/// Runs `replay` with a [`Pipe`] to a thread that applies its changes to `states`; gives
/// back what `replay` returned and the states.
pub(super) fn piped<R>(states: States, replay: impl FnOnce(&mut Pipe) -> R) -> (R, States) {
    std::thread::scope(|s| {
        let (to, from) = sync_channel::<Vec<Op>>(4);
        let (give_back, back) = sync_channel::<Vec<Op>>(8);
        let builder = s.spawn(move || {
            let mut states = states;
            for mut batch in from {
                for &op in &batch {
                    states.apply(op);
                }
                batch.clear();
                let _ = give_back.try_send(batch);
            }
            states
        });
        let mut pipe = Pipe {
            batch: Vec::with_capacity(BATCH),
            to: Some(to),
            back,
        };
        let r = replay(&mut pipe);
        pipe.send();
        pipe.to = None;
        drop(pipe);
        let states = builder
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (r, states)
    })
}

/// A thread's last state: a row, or a state kept by its slice (which, when it began and
/// its state).
#[derive(Clone, Copy)]
enum Last {
    Row(u32),
    Run { k: u32, ts: i64, state: TaskState },
}

/// Each thread's last state and last blocked one: a row, or with [`ENDED`] set, which
/// state kept by its slice.
#[derive(Clone, Copy)]
struct Rel {
    last: Last,
    blocked: Option<u32>,
}

/// The states as they are made: rows, but for the states a switch makes, which are their
/// slices with a duration of their own (docs/MODEL.md, "System traces").
pub(super) struct States {
    rows: Vec<ThreadState>,
    /// Each slice-kept state's slice (as laid out before the gaps close; [`ENDED`] set for
    /// an ended one) and duration.
    running: Vec<u32>,
    run_dur: Vec<u32>,
    /// Slice-kept states too long for `run_dur`: (which, duration).
    long: Vec<(u32, i64)>,
    /// The ended states a `sched_blocked_reason` marked: their function and flag bits.
    ended_other: HashMap<u32, u32>,
    kept: KeptBits,
    /// By thread index (threads are the trace's: as many as the input named).
    rel: Vec<Option<Rel>>,
    idle: Option<u32>,
    /// Durations past [`MAX_STATE_DUR`], clamped.
    pub(super) clamped: u64,
}

fn is_blocked(s: TaskState) -> bool {
    s != TaskState::RUNNING && s != TaskState::RUNNABLE
}

impl States {
    /// Room for `most` rows and the states of `switches` switches; `idle` gets no states.
    pub(super) fn new(most: usize, switches: usize, idle: Option<u32>) -> States {
        States {
            rows: Vec::with_capacity(most),
            running: Vec::with_capacity(2 * switches),
            run_dur: Vec::with_capacity(2 * switches),
            long: Vec::new(),
            ended_other: HashMap::new(),
            kept: KeptBits::default(),
            rel: Vec::new(),
            idle,
            clamped: 0,
        }
    }

    /// Applies one change, as the replay made it.
    #[inline]
    pub(super) fn apply(&mut self, op: Op) {
        match op {
            Op::Switch {
                ts,
                closed,
                prev,
                state,
                next,
                slice,
            } => self.switch(ts, closed, prev, state, next, slice),
            Op::Waking {
                ts,
                t,
                waker,
                flags,
            } => self.waking(ts, t, waker, flags),
            // The task's last state is not closed (as trace_processor does not): a
            // `Running` one stays open.
            Op::New { ts, t, parent } => self.open(ts, t, TaskState::RUNNABLE, Some(parent), 0),
            Op::Blocked { t, io_wait, func } => self.blocked(t, io_wait, func),
        }
    }

    /// Why thread `t` blocked: marks its last blocked state.
    fn blocked(&mut self, t: u32, io_wait: bool, func: StrId) {
        let Some(b) = self.rel(t).and_then(|r| r.blocked) else {
            return;
        };
        let mark = |row: &mut ThreadState| {
            row.set_io_wait(Some(io_wait));
            if func != StrId::EMPTY {
                row.set_other(Some(func.0));
            }
        };
        if b & ENDED == 0 {
            mark(&mut self.rows[b as usize]);
            return;
        }
        // An ended state: its bits kept apart (any blocked state takes them alike).
        let other = self.ended_other.entry(b & !ENDED).or_insert(NO_VALUE);
        let mut row = ThreadState::new(0, 0, 0, TaskState::from_raw(1, None));
        row.other = *other;
        mark(&mut row);
        *other = row.other;
    }

    #[inline]
    fn rel(&self, t: u32) -> Option<Rel> {
        self.rel.get(t as usize).copied().flatten()
    }

    #[inline]
    fn last_state(&self, r: Rel) -> TaskState {
        match r.last {
            Last::Row(j) => self.rows[j as usize].state(),
            Last::Run { state, .. } => state,
        }
    }

    #[inline(always)]
    fn close(&mut self, ts: i64, t: u32, data_loss: bool) {
        let Some(r) = self.rel(t).filter(|_| !data_loss) else {
            return;
        };
        match r.last {
            Last::Row(j) => {
                let row = &mut self.rows[j as usize];
                self.clamped += !row.set_dur(ts - row.ts) as u64;
            }
            Last::Run { k, ts: from, .. } => {
                let dur = ts - from;
                self.clamped += (dur > MAX_STATE_DUR) as u64;
                self.run_dur[k as usize] = match u32::try_from(dur) {
                    Ok(d) if d < RUN_LONG => d,
                    _ if dur < 0 => RUN_OPEN,
                    _ => {
                        self.long.push((k, dur));
                        RUN_LONG
                    }
                };
            }
        }
    }

    /// Opens a state that is not `Running`.
    #[inline]
    fn open(&mut self, ts: i64, t: u32, state: TaskState, waker: Option<u32>, flags: u8) {
        if Some(t) == self.idle {
            return;
        }
        let row = self.rows.len() as u32;
        let mut st = ThreadState::new(ts, -1, t, state);
        st.set_other(waker);
        st.set_irq((flags != NO_FLAGS).then_some(flags != 0));
        self.rows.push(st);
        self.kept.push(true);
        let blocked = is_blocked(state).then_some(row);
        let rel = self.rel_mut(t);
        *rel = Some(Rel {
            last: Last::Row(row),
            blocked: blocked.or(rel.and_then(|r| r.blocked)),
        });
    }

    /// Opens a state kept by slice `slice`: `Running`, or with `ENDED` set, the one its
    /// thread left it in (`state`).
    #[inline(always)]
    fn open_sliced(&mut self, ts: i64, t: u32, slice: u32, state: TaskState) {
        if Some(t) == self.idle {
            return;
        }
        let k = self.running.len() as u32;
        self.running.push(slice);
        self.run_dur.push(RUN_OPEN);
        self.kept.push(false);
        let blocked = is_blocked(state).then_some(k | ENDED);
        let rel = self.rel_mut(t);
        *rel = Some(Rel {
            last: Last::Run { k, ts, state },
            blocked: blocked.or(rel
                .and_then(|r| r.blocked)
                .filter(|_| state != TaskState::RUNNING)),
        });
    }

    #[inline]
    fn rel_mut(&mut self, t: u32) -> &mut Option<Rel> {
        if self.rel.len() <= t as usize {
            self.rel.resize(t as usize + 1, None);
        }
        &mut self.rel[t as usize]
    }

    /// A switch from `prev` (leaving in `state` the slice `closed`, where it was the one
    /// that ran there) to `next`, whose slice is `slice`.
    #[inline]
    fn switch(&mut self, ts: i64, closed: u32, prev: u32, state: TaskState, next: u32, slice: u32) {
        let loss = (self.rel(prev)).is_some_and(|r| self.last_state(r) != TaskState::RUNNING);
        self.close(ts, prev, loss);
        // NOT_CLOSED has ENDED set too.
        match closed < ENDED && slice < ENDED {
            true => self.open_sliced(ts, prev, closed | ENDED, state),
            false => self.open(ts, prev, state, None, NO_FLAGS),
        }
        self.close(ts, next, false);
        self.open_sliced(ts, next, slice, TaskState::RUNNING);
    }

    #[inline]
    fn waking(&mut self, ts: i64, t: u32, waker: u32, flags: u8) {
        if let Some(r) = self.rel(t) {
            if !is_blocked(self.last_state(r)) {
                return;
            }
            self.close(ts, t, false);
        }
        self.open(ts, t, TaskState::RUNNABLE, Some(waker), flags);
    }

    /// The table (its slices as laid out, before the gaps close).
    pub(super) fn finish(mut self) -> StateTable {
        self.long.sort_unstable();
        self.rows.shrink_to_fit();
        let mut marked: Vec<(u32, u32)> = self.ended_other.into_iter().collect();
        marked.sort_unstable();
        StateTable {
            rows: self.rows,
            running: self.running,
            run_dur: self.run_dur,
            long_at: self.long.iter().map(|x| x.0).collect(),
            long_dur: self.long.iter().map(|x| x.1).collect(),
            ended_at: marked.iter().map(|x| x.0).collect(),
            ended_other: marked.iter().map(|x| x.1).collect(),
            kept: self.kept.words,
            rank: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU8, Ordering};

    use spall_test_support::{compact_sched_cpus, fixture_bytes};

    /// The path every load takes while set: 0 by its records, 1 inline, 2 on a thread.
    /// Loads of other tests that run meanwhile take it too, which changes none of them.
    pub(super) static FORCE: AtomicU8 = AtomicU8::new(0);

    /// The states built on a thread of their own are the states built inline: on a large
    /// generated trace, and on every system-trace fixture (blocked reasons, new tasks,
    /// hostile records).
    #[test]
    fn states_built_on_a_thread_equal_states_built_inline() {
        let mut inputs = vec![("four_cpus".to_string(), compact_sched_cpus(4, 20_000))];
        for f in [
            "events.pftrace.gz",
            "compact.pftrace.gz",
            "hostile.pftrace.gz",
        ] {
            let bytes = fixture_bytes(&format!("systrace/{f}"));
            inputs.push((f.to_string(), bytes));
        }
        for f in ["events.trace", "linux.trace.gz", "dump.html"] {
            inputs.push((f.to_string(), fixture_bytes(&format!("systrace/{f}"))));
        }
        for (name, bytes) in inputs {
            let load = |mode: u8| {
                FORCE.store(mode, Ordering::Relaxed);
                let t = crate::load_bytes(&bytes).unwrap();
                FORCE.store(0, Ordering::Relaxed);
                let sched = t.sched().expect("scheduling data");
                (format!("{sched:?}"), t.warning_counts(), sched.slices.len())
            };
            let (inline, threaded) = (load(1), load(2));
            assert!(inline.2 > 0, "{name}: no slices");
            assert!(inline == threaded, "{name}: the two paths differ");
        }
    }
}
