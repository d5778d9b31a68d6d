//! The records replayed in time order into slices, thread states and CPU counters, by
//! trace_processor's rules (its `sched_event_tracker` and `thread_state_tracker`):
//!
//! - A switch closes its CPU's open slice (if the previous task is the one that slice ran;
//!   else `mismatched_sched_switch_tids`) with the previous task's end state, and opens
//!   one for the next task. A compact switch takes its previous task from the CPU's last
//!   switch, so each CPU's first compact switch only records its next task.
//! - Thread states: a switch closes the previous task's row (not when it was not running:
//!   data was lost, its row keeps `dur` -1) and opens one in its end state; it closes the
//!   next task's row and opens `Running` on the CPU. A waking of a thread with no row opens
//!   `R`; of a thread whose last row is neither `Running` nor `R` (so `R+` too) closes it
//!   and opens `R` with its waker; otherwise changes nothing. A new task opens `R`, woken
//!   by its parent. The idle task gets no rows.
//! - Names: each record's comms name their threads, the latest winning (the caller keeps a
//!   name a process tree gave).
//!
//! CPUs are looked up in a map, never used as indices: a CPU number of 4 billion costs
//! one entry.

use hashbrown::HashMap;
use spall_format::{Diagnostics, SchedKind};

use super::collect::{Bucket, Chunk, Collected, Compact, Rec, NO_FLAGS};
use super::open_states::{self, Op, OpSink, States, NOT_CLOSED};
use super::states::ENDED;
use super::{CpuCounter, CpuCounterKind, SchedData, SchedSlice, TaskState, MAX_STATE_DUR};
use crate::diag::ModelWarning;
use crate::strings::StrId;

const CLONE_THREAD: u32 = 0x0001_0000;

/// Tids whose threads the replay keeps by index rather than asking for each record
/// (Linux's default `pid_max` is 4M).
const DENSE_TIDS: usize = 1 << 22;

/// `prev_state`s whose meaning the replay keeps in a table (every bit a kernel sets but
/// the top ones).
const STATE_TABLE: usize = 1 << 12;

/// A CPU's last switch: its open slice and the task it put there; where its slices go
/// (`start..next` of the slices written so far).
#[derive(Clone, Copy, Default)]
struct Pending {
    cpu: u32,
    slice: Option<usize>,
    last: Option<(i32, u32, i32)>,
    start: usize,
    next: usize,
}

/// The slices laid out by CPU before the replay (each CPU's room: its switches), so they
/// come out by CPU, then time, with no sort or copy; and the most thread states the
/// records can open (a row and a `Running` state a switch, a row a waking or new task),
/// so that they are allocated once. Both counted as the records came.
fn lay_out(c: &Collected) -> (Vec<SchedSlice>, Vec<Pending>, usize) {
    let states = (c.cpus.iter()).map(|(_, b)| b.switches + b.wakings).sum();
    // Pending by bucket, the rooms by CPU number.
    let mut cpus: Vec<Pending> = (c.cpus.iter())
        .map(|(cpu, _)| Pending {
            cpu: *cpu,
            ..Pending::default()
        })
        .collect();
    let mut n: Vec<(u32, usize)> = (c.cpus.iter().enumerate())
        .map(|(i, (cpu, _))| (*cpu, i))
        .collect();
    n.sort_unstable();
    let mut at = 0;
    for (_, i) in n {
        (cpus[i].start, cpus[i].next) = (at, at);
        at += c.cpus[i].1.switches;
    }
    let blank = SchedSlice {
        ts: 0,
        dur: -1,
        thread: 0,
        end_state: TaskState::UNKNOWN,
        priority: 0,
    };
    (vec![blank; at], cpus, states)
}

/// Closes the gaps skipped switches left in each CPU's room, and moves the `Running`
/// states' slices (`running`) with them; gives back the CPUs with slices and where each
/// one's begin (`SchedData::slice_cpus`, `cpu_at`).
fn close_gaps(
    slices: &mut Vec<SchedSlice>,
    cpus: &[Pending],
    running: &mut [u32],
) -> (Vec<u32>, Vec<u32>) {
    // The rooms lie in CPU order.
    let mut rooms: Vec<(usize, usize, u32)> =
        cpus.iter().map(|p| (p.start, p.next, p.cpu)).collect();
    rooms.sort_unstable();
    let (mut slice_cpus, mut cpu_at) = (Vec::new(), vec![0u32]);
    // Each room's start and how far it moves down.
    let mut moved: Vec<(u32, u32)> = Vec::new();
    let mut w = 0;
    for (a, b, cpu) in rooms {
        if b > a {
            slices.copy_within(a..b, w);
            moved.push((a as u32, (a - w) as u32));
            w += b - a;
            slice_cpus.push(cpu);
            cpu_at.push(w as u32);
        }
    }
    let laid = slices.len() as u32;
    slices.truncate(w);
    if moved.iter().any(|m| m.1 > 0) {
        // How far slice `i` moved; the same for a block of slices that one room holds (or
        // rooms that moved alike: the shift only grows), so most are found by block.
        let shift = |i: u32| moved[moved.partition_point(|m| m.0 <= i).saturating_sub(1)].1;
        const BLOCK: u32 = 12;
        let blocks: Vec<Option<u32>> = (0..=laid >> BLOCK)
            .map(|b| {
                let (a, z) = (b << BLOCK, ((b + 1) << BLOCK) - 1);
                Some(shift(a)).filter(|&s| s == shift(z))
            })
            .collect();
        for x in running.iter_mut() {
            let i = *x & !ENDED;
            *x -= blocks[(i >> BLOCK) as usize].unwrap_or_else(|| shift(i));
        }
    }
    (slice_cpus, cpu_at)
}

/// What [`derive`] gives back: the data (threads in the caller's numbering) and each
/// thread's last comm.
pub(crate) struct Derived {
    pub data: SchedData,
    pub names: Vec<(u32, StrId)>,
}

/// Replays `c`'s records; `thread(tid)` is the thread of a tid, `idle` the idle task's.
pub(crate) fn derive(
    c: Collected,
    thread: &mut impl FnMut(i32) -> u32,
    idle: Option<u32>,
    diags: &mut Diagnostics<ModelWarning>,
) -> Derived {
    if c.dropped > 0 {
        diags.warn_n(
            ModelWarning::Sched("sched_pid_too_large"),
            c.dropped,
            0,
            || "scheduler records with a pid past 32 bits; skipped".into(),
        );
    }
    let (slices, cpus, most_states) = lay_out(&c);
    let switches = slices.len();
    let states = States::new(most_states, switches, idle);
    let rp = Replay {
        version: c.version,
        slices,
        cpus,
        ops: (),
        counters: HashMap::new(),
        names: Vec::new(),
        tids: Vec::new(),
        task_states: (0..STATE_TABLE as i64)
            .map(|raw| TaskState::from_raw(raw, c.version))
            .collect(),
        max_ts: i64::MIN,
        clamped_prio: 0,
    };
    let (rp, st) = if open_states::worth_a_thread(most_states) {
        open_states::piped(states, |pipe| {
            let mut v = Visitor {
                rp: rp.with(pipe).0,
                thread,
                diags,
            };
            in_time_order(c.cpus, &mut v);
            v.rp.with(()).0
        })
    } else {
        let mut v = Visitor {
            rp: rp.with(states).0,
            thread,
            diags,
        };
        in_time_order(c.cpus, &mut v);
        v.rp.with(())
    };
    let clamped = [
        ("thread_state_too_long", st.clamped, "thread states"),
        ("sched_priority_out_of_range", rp.clamped_prio, "priorities"),
    ];
    for (what, n, of) in clamped.into_iter().filter(|c| c.1 > 0) {
        diags.warn_n(ModelWarning::Sched(what), n, 0, || {
            format!("{of} past what the model holds (a state of {MAX_STATE_DUR} ns, a 16-bit priority); clamped")
        });
    }
    rp.finish(st)
}

/// Warns of a scheduler record at `ts` on `cpu` skipped for `what`.
#[cold]
fn warn(diags: &mut Diagnostics<ModelWarning>, what: &'static str, ts: i64, cpu: u32) {
    diags.warn(ModelWarning::Sched(what), 0, || {
        format!("a scheduler record at {ts} ns on CPU {cpu} ({what}); skipped")
    });
}

/// A switch's fields, full or compact.
#[derive(Clone, Copy)]
struct Switch {
    ts: i64,
    tid: i32,
    comm: StrId,
    prio: i32,
    prev_state: u16,
    /// A full switch's previous task and its comm; a compact one takes its CPU's last.
    prev: Option<(i32, StrId)>,
}

/// What the merge hands each record to.
trait Visit {
    /// A row (of CPU bucket `slot`).
    fn row(&mut self, r: &Rec, slot: usize);
    /// A compact record.
    fn compact(&mut self, c: Compact, slot: usize);
}

/// The replay, with the thread lookup and warnings it reports to.
struct Visitor<'a, S, F> {
    rp: Replay<S>,
    thread: &'a mut F,
    diags: &'a mut Diagnostics<ModelWarning>,
}

impl<S: OpSink, F: FnMut(i32) -> u32> Visit for Visitor<'_, S, F> {
    fn row(&mut self, r: &Rec, slot: usize) {
        self.rp.record(r, slot, self.thread, self.diags);
    }

    #[inline]
    fn compact(&mut self, c: Compact, slot: usize) {
        let rp = &mut self.rp;
        match c.waking {
            true => rp.compact_waking(c.ts, c.tid, c.flags, slot, self.thread, self.diags),
            false => {
                let s = Switch {
                    ts: c.ts,
                    tid: c.tid,
                    comm: c.comm,
                    prio: c.prio,
                    prev_state: c.prev_state,
                    prev: None,
                };
                rp.switch(s, slot, self.thread, self.diags)
            }
        }
    }
}

/// Names thread `t` by `s` in `names` unless `s` is empty, the latest name winning.
#[inline]
fn set_name(names: &mut Vec<StrId>, t: u32, s: StrId) {
    if s != StrId::EMPTY {
        if names.len() <= t as usize {
            names.resize(t as usize + 1, StrId::EMPTY);
        }
        names[t as usize] = s;
    }
}

/// Tid `tid`'s thread: from `tids` (by tid), else asked of `thread` once.
#[inline]
fn tid_thread(tids: &mut Vec<u32>, tid: i32, thread: &mut impl FnMut(i32) -> u32) -> u32 {
    match tids.get(tid as u32 as usize) {
        Some(&t) if t != u32::MAX => t,
        _ => new_tid(tids, tid, thread),
    }
}

#[inline(never)]
fn new_tid(tids: &mut Vec<u32>, tid: i32, thread: &mut impl FnMut(i32) -> u32) -> u32 {
    let t = thread(tid);
    if let Some(i) = usize::try_from(tid).ok().filter(|&i| i < DENSE_TIDS) {
        if tids.len() <= i {
            tids.resize(i + 1, u32::MAX);
        }
        tids[i] = t;
    }
    t
}

/// What the replay has built so far, carried from one record to the next; the thread
/// states' changes go to `ops`.
struct Replay<S> {
    version: Option<i64>,
    slices: Vec<SchedSlice>,
    /// By bucket (the CPUs in the order they came).
    cpus: Vec<Pending>,
    ops: S,
    counters: HashMap<(CpuCounterKind, u32), CpuCounter>,
    /// By thread (threads are numbered densely); EMPTY: none.
    names: Vec<StrId>,
    /// Each tid's thread, by tid (below [`DENSE_TIDS`]); [`u32::MAX`]: not asked yet.
    tids: Vec<u32>,
    /// Each `prev_state`'s meaning, below [`STATE_TABLE`].
    task_states: Vec<TaskState>,
    max_ts: i64,
    /// Priorities past 16 bits, clamped.
    clamped_prio: u64,
}

impl<S> Replay<S> {
    /// The same replay, its changes going to `ops`; and where they went so far.
    fn with<T>(self, ops: T) -> (Replay<T>, S) {
        let rp = Replay {
            version: self.version,
            slices: self.slices,
            cpus: self.cpus,
            ops,
            counters: self.counters,
            names: self.names,
            tids: self.tids,
            task_states: self.task_states,
            max_ts: self.max_ts,
            clamped_prio: self.clamped_prio,
        };
        (rp, self.ops)
    }

    /// Closes the replay at the end: slices packed by CPU, the CPUs seen, counters and
    /// names in order.
    fn finish(self, st: States) -> Derived {
        let Replay {
            mut slices,
            cpus,
            counters,
            names,
            ..
        } = self;
        let mut states = st.finish();
        let (slice_cpus, cpu_at) = close_gaps(&mut slices, &cpus, &mut states.running);
        states.count_kept();
        let mut cpu_list: Vec<u32> = (cpus.iter())
            .filter(|p| p.next > p.start)
            .map(|p| p.cpu)
            .collect();
        cpu_list.extend(counters.keys().map(|k| k.1));
        cpu_list.sort_unstable();
        cpu_list.dedup();
        let mut counters: Vec<CpuCounter> = counters.into_values().collect();
        counters.sort_by_key(|c| (c.kind, c.cpu));
        let names: Vec<(u32, StrId)> = (names.into_iter().enumerate())
            .filter(|&(_, s)| s != StrId::EMPTY)
            .map(|(t, s)| (t as u32, s))
            .collect();
        Derived {
            data: SchedData {
                slices,
                slice_cpus,
                cpu_at,
                states,
                by_thread: Default::default(),
                counters,
                cpus: cpu_list,
            },
            names,
        }
    }
}

impl<S: OpSink> Replay<S> {
    /// Replays one record, by its kind.
    #[inline]
    fn record(
        &mut self,
        r: &Rec,
        slot: usize,
        thread: &mut impl FnMut(i32) -> u32,
        diags: &mut Diagnostics<ModelWarning>,
    ) {
        match r.kind {
            SchedKind::Switch | SchedKind::CompactSwitch => {
                let s = Switch {
                    ts: r.ts,
                    tid: r.tid,
                    comm: r.comm,
                    prio: r.prio,
                    prev_state: r.prev_state,
                    prev: (r.kind == SchedKind::Switch).then(|| (r.other, r.prev_comm())),
                };
                self.switch(s, slot, thread, diags)
            }
            SchedKind::CompactWaking => {
                self.compact_waking(r.ts, r.tid, r.flags, slot, thread, diags)
            }
            SchedKind::Waking => {
                let t = tid_thread(&mut self.tids, r.tid, thread);
                set_name(&mut self.names, t, r.comm);
                let waker = tid_thread(&mut self.tids, r.other, thread);
                self.ops.op(Op::Waking {
                    ts: r.ts,
                    t,
                    waker,
                    flags: NO_FLAGS,
                });
            }
            SchedKind::Wakeup | SchedKind::Rename => {
                let t = tid_thread(&mut self.tids, r.tid, thread);
                set_name(&mut self.names, t, r.comm);
            }
            SchedKind::NewTask => {
                let t = tid_thread(&mut self.tids, r.tid, thread);
                set_name(&mut self.names, t, r.comm);
                let parent = tid_thread(&mut self.tids, r.other, thread);
                self.ops.op(Op::New {
                    ts: r.ts,
                    t,
                    parent,
                });
            }
            SchedKind::BlockedReason => self.ops.op(Op::Blocked {
                t: tid_thread(&mut self.tids, r.tid, thread),
                io_wait: r.extra != 0,
                func: r.comm,
            }),
            SchedKind::CpuFrequency | SchedKind::CpuIdle => self.counter(r),
            SchedKind::ProcessExit
            | SchedKind::ProcessFree
            | SchedKind::KernelVersion
            | SchedKind::ThreadGroup => {}
        }
    }

    /// A switch (full or compact): closes its CPU's open slice, opens the next task's,
    /// and moves both tasks' thread states on.
    #[inline(always)]
    fn switch(
        &mut self,
        r: Switch,
        slot: usize,
        thread: &mut impl FnMut(i32) -> u32,
        diags: &mut Diagnostics<ModelWarning>,
    ) {
        if r.ts < self.max_ts {
            return warn(
                diags,
                "sched_switch_out_of_order",
                r.ts,
                self.cpus[slot].cpu,
            );
        }
        self.max_ts = r.ts;
        let next = tid_thread(&mut self.tids, r.tid, thread);
        set_name(&mut self.names, next, r.comm);
        // A switch's bucket is its CPU's.
        let p = &mut self.cpus[slot];
        let state = match self.task_states.get(r.prev_state as usize) {
            Some(&s) => s,
            None => TaskState::from_raw(r.prev_state as i64, self.version),
        };
        let (prev, prev_tid) = match r.prev {
            None => {
                let Some((tid, t, _)) = p.last else {
                    p.last = Some((r.tid, next, r.prio));
                    return warn(diags, "compact_sched_switch_skipped", r.ts, p.cpu);
                };
                (t, tid)
            }
            Some((tid, comm)) => {
                let t = tid_thread(&mut self.tids, tid, thread);
                set_name(&mut self.names, t, comm);
                (t, tid)
            }
        };
        if state == TaskState::UNKNOWN {
            warn(diags, "task_state_invalid", r.ts, p.cpu);
        }
        let slices = &mut self.slices;
        // The slice closed, which the previous task ran: its end is that task's state.
        let mut closed = NOT_CLOSED;
        if let Some(i) = p.slice {
            if p.last.map(|l| l.0) == Some(prev_tid) {
                slices[i].dur = r.ts - slices[i].ts;
                slices[i].end_state = state;
                closed = i as u32;
            } else {
                warn(diags, "mismatched_sched_switch_tids", r.ts, p.cpu);
            }
        }
        let slice = p.next;
        p.slice = Some(slice);
        p.last = Some((r.tid, next, r.prio));
        p.next += 1;
        let priority = r.prio.clamp(i16::MIN.into(), i16::MAX.into()) as i16;
        self.clamped_prio += (priority as i32 != r.prio) as u64;
        slices[slice] = SchedSlice {
            ts: r.ts,
            dur: -1,
            thread: next,
            end_state: TaskState::UNKNOWN,
            priority,
        };
        self.ops.op(Op::Switch {
            ts: r.ts,
            closed,
            prev,
            state,
            next,
            slice: slice as u32,
        });
    }

    /// A compact waking: its waker is the task its CPU's last switch put there.
    #[inline(always)]
    fn compact_waking(
        &mut self,
        ts: i64,
        tid: i32,
        flags: u8,
        slot: usize,
        thread: &mut impl FnMut(i32) -> u32,
        diags: &mut Diagnostics<ModelWarning>,
    ) {
        let p = &self.cpus[slot];
        if ts < self.max_ts {
            return warn(diags, "sched_waking_out_of_order", ts, p.cpu);
        }
        self.max_ts = ts;
        let Some((_, waker, _)) = p.last else {
            return warn(diags, "compact_sched_waking_skipped", ts, p.cpu);
        };
        let t = tid_thread(&mut self.tids, tid, thread);
        self.ops.op(Op::Waking {
            ts,
            t,
            waker,
            flags,
        });
    }

    /// A CPU frequency or idle sample, added to its CPU's counter.
    fn counter(&mut self, r: &Rec) {
        let kind = match r.kind {
            SchedKind::CpuFrequency => CpuCounterKind::Frequency,
            _ => CpuCounterKind::Idle,
        };
        let cpu = r.cpu;
        let e = self
            .counters
            .entry((kind, cpu))
            .or_insert_with(|| CpuCounter {
                kind,
                cpu,
                ts: Vec::new(),
                values: Vec::new(),
            });
        e.ts.push(r.ts);
        e.values.push(r.extra as f64);
    }
}

/// One CPU's records as the replay walks them: chunks still to come (last first) and the
/// one being read (a block's records made one at a time, never stored as rows); each
/// chunk freed as soon as it has been read.
struct Cursor {
    /// The bucket's place among the CPUs'.
    slot: usize,
    rest: Vec<Chunk>,
    /// The chunk being read: empty rows once all are read.
    cur: Chunk,
    at: usize,
    /// `cur`'s records.
    len: usize,
}

/// A chunk's records and its bytes.
fn chunk_size(c: &Chunk) -> (usize, usize) {
    match c {
        Chunk::Rows(r) => (r.len(), r.capacity() * std::mem::size_of::<Rec>()),
        Chunk::Block(b) => (b.len(), b.bytes()),
    }
}

/// Freed records given back to the kernel at a time: the heap keeps what it frees for
/// reuse, but the slices and states grow in mappings of their own, which would not reuse
/// it.
const RELEASE_BYTES: usize = 32 << 20;

fn key(r: &Rec) -> (i64, u32) {
    (r.ts, r.seq)
}

impl Cursor {
    fn new(cpu: u32, slot: usize, b: Bucket) -> Cursor {
        let mut chunks = b.chunks;
        if !b.sorted {
            let mut all: Vec<Rec> = Vec::new();
            for c in chunks {
                match c {
                    Chunk::Rows(rows) => all.extend_from_slice(&rows),
                    Chunk::Block(b) => b.widen_into(cpu, &mut all),
                }
            }
            all.sort_by_key(key);
            chunks = vec![Chunk::Rows(all)];
        }
        chunks.reverse();
        let mut c = Cursor {
            slot,
            rest: chunks,
            cur: Chunk::Rows(Vec::new()),
            at: 0,
            len: 0,
        };
        c.refill(&mut 0);
        c
    }

    /// Moves to the next chunk with records, freeing the one read (counted in `freed`,
    /// bytes).
    fn refill(&mut self, freed: &mut usize) {
        while self.at == self.len {
            let Some(next) = self.rest.pop() else {
                *freed += chunk_size(&self.cur).1;
                self.cur = Chunk::Rows(Vec::new());
                return;
            };
            *freed += chunk_size(&self.cur).1;
            (self.cur, self.at, self.len) = (next, 0, 0);
            self.len = chunk_size(&self.cur).0;
        }
    }

    #[inline]
    fn head(&self) -> Option<(i64, u32)> {
        match &self.cur {
            Chunk::Rows(r) => r.get(self.at).map(key),
            Chunk::Block(b) => b.key(self.at),
        }
    }

    /// Hands `v` the next record and gives back the key of the one after; when the chunks
    /// freed pass [`RELEASE_BYTES`], gives them back to the kernel. The cursor must not be
    /// at its end.
    #[inline]
    fn take_one(&mut self, freed: &mut usize, v: &mut impl Visit) -> u128 {
        let at = self.at;
        self.at += 1;
        let next = match &self.cur {
            Chunk::Block(b) => {
                v.compact(b.compact(at), self.slot);
                b.key(at + 1)
            }
            Chunk::Rows(r) => {
                v.row(&r[at], self.slot);
                r.get(at + 1).map(key)
            }
        };
        if let Some(k) = next {
            return pack(Some(k));
        }
        self.refill(freed);
        if *freed >= RELEASE_BYTES {
            *freed = 0;
            spall_util::release_free();
        }
        pack(self.head())
    }
}

/// A record's key as one number, in the same order (time, then file order); a list's end
/// is `u128::MAX`.
#[inline]
fn pack(h: Option<(i64, u32)>) -> u128 {
    h.map_or(u128::MAX, |(t, s)| {
        ((t as u64 ^ 1 << 63) as u128) << 32 | s as u128
    })
}

/// Hands `v` every record in time order, records of one time in file order (as a
/// stable sort by time would). Each CPU's records are usually in time order already: the
/// CPUs are merged, and only a CPU whose records go back in time is sorted first.
///
/// The merge is a tournament (a loser tree): the CPUs interleave finely (a record each
/// in turn), so each record is one step, the winner's path replayed with its next key:
/// log2 of the CPUs comparisons (3 for 8 CPUs, where a scan of the heads takes 8).
fn in_time_order(cpus: Vec<(u32, Bucket)>, v: &mut impl Visit) {
    let mut lists: Vec<Cursor> = (cpus.into_iter().enumerate())
        .map(|(slot, (cpu, b))| Cursor::new(cpu, slot, b))
        .collect();
    lists.retain(|l| l.head().is_some());
    if lists.is_empty() {
        return;
    }
    let size = lists.len().next_power_of_two();
    // Nodes 1..size hold the key and list that lost there (the key kept in the node, so
    // that a step reads one place); the winner climbs on. Leaves past the lists are ended
    // lists.
    let mut win: Vec<(u128, usize)> = (0..2 * size)
        .map(|i| {
            let l = i.wrapping_sub(size);
            (lists.get(l).map_or(u128::MAX, |c| pack(c.head())), l)
        })
        .collect();
    let mut losers = vec![(u128::MAX, 0usize); size];
    for n in (1..size).rev() {
        let (a, b) = (win[2 * n], win[2 * n + 1]);
        (win[n], losers[n]) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    }
    let (mut key, mut w) = win[1];
    let mut freed = 0;
    while key != u128::MAX {
        key = lists[w].take_one(&mut freed, v);
        // Keys are distinct (file order tells every two records apart), but for ended lists.
        let mut n = (size + w) / 2;
        while n >= 1 {
            let node = &mut losers[n];
            if node.0 < key {
                (*node, key, w) = ((key, w), node.0, node.1);
            }
            n /= 2;
        }
    }
}

/// Each tid's process, as process trees and new tasks say, in time order: `tgid[tid]`.
pub(crate) fn thread_groups(c: &Collected) -> HashMap<i32, i32> {
    let mut tgid: HashMap<i32, i32> = HashMap::new();
    let mut recs: Vec<&Rec> = c.groups.iter().collect();
    recs.sort_by_key(|r| (r.kind != SchedKind::ThreadGroup, r.ts, r.seq));
    for r in recs {
        match r.kind {
            SchedKind::ThreadGroup if r.extra > 0 && r.extra <= i32::MAX as u32 => {
                tgid.insert(r.tid, r.extra as i32);
            }
            SchedKind::NewTask if r.extra & CLONE_THREAD != 0 => {
                if let Some(&g) = tgid.get(&r.other) {
                    tgid.entry(r.tid).or_insert(g);
                }
            }
            SchedKind::NewTask => {
                tgid.entry(r.tid).or_insert(r.tid);
            }
            _ => {}
        }
    }
    tgid
}
