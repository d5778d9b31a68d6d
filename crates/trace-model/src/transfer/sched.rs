//! A system trace's scheduling data ([`SchedData`]) in a transfer: a presence byte, then
//! its slices, CPUs with slices, states, CPU counters and CPUs (the index by thread is made
//! again when asked for); checked on arrival so that every index a viewer follows points
//! inside its table.

use super::bytes::{TransferReader as R, TransferWriter as W};
use super::codec::{Codec, List, Nested, Plain, Record, Wire};
use super::TransferError;
use crate::sched::{
    CpuCounter, CpuCounterKind, SchedData, SchedSlice, StateTable, TaskState, ThreadState,
};
use crate::sched::{ENDED, NO_VALUE};
use crate::strings::StrId;
use crate::trace::Trace;

record!(SchedSlice {
    ts,
    dur,
    thread,
    end_state,
    priority
});
record!(ThreadState {
    ts,
    dur_state,
    thread,
    other
});
record!(StateTable {
    rows as List,
    running,
    run_dur,
    long_at,
    long_dur,
    ended_at,
    ended_other,
    kept
} default rank check states_arrive);
record!(CpuCounter {
    kind,
    cpu,
    ts,
    values
});
record!(SchedData {
    slices as List,
    slice_cpus,
    cpu_at,
    states as Nested,
    counters as List,
    cpus
} default by_thread);

/// `Trace::sched`: absent, or present and its data.
pub(super) struct Sched;

impl Codec<Option<Box<SchedData>>> for Sched {
    fn put(v: &Option<Box<SchedData>>, w: &mut W<'_>) {
        match v {
            None => w.u8(0),
            Some(s) => {
                w.u8(1);
                s.put(w);
            }
        }
    }

    fn get(r: &mut R<'_>) -> Result<Option<Box<SchedData>>, TransferError> {
        match r.u8()? {
            0 => Ok(None),
            1 => Ok(Some(Box::new(SchedData::get(r)?))),
            _ => Err(r.fail("a scheduling presence byte")),
        }
    }
}

impl Wire for TaskState {
    fn put(&self, w: &mut W<'_>) {
        w.u32(self.0 as u32);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        let v = r.u32()?;
        u16::try_from(v)
            .map(TaskState)
            .map_err(|_| r.fail("a 16-bit task state"))
    }
}

/// A priority, as 32 bits.
impl Wire for i16 {
    fn put(&self, w: &mut W<'_>) {
        w.u32(*self as i32 as u32);
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        i16::try_from(r.u32()? as i32).map_err(|_| r.fail("a 16-bit priority"))
    }
}

impl Wire for CpuCounterKind {
    fn put(&self, w: &mut W<'_>) {
        w.u8(match self {
            CpuCounterKind::Frequency => 0,
            CpuCounterKind::Idle => 1,
        });
    }

    fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
        match r.u8()? {
            0 => Ok(CpuCounterKind::Frequency),
            1 => Ok(CpuCounterKind::Idle),
            _ => Err(r.fail("a CPU counter kind")),
        }
    }
}

/// The states' count of rows made again, then checked: a bit a state, as many rows as set.
fn states_arrive(r: &mut R<'_>, mut s: StateTable) -> Result<StateTable, TransferError> {
    s.count_kept();
    match s.is_consistent() {
        true => Ok(s),
        false => Err(r.fail("thread states, each running or a row")),
    }
}

/// What is wrong with `t`'s scheduling data, if anything: a thread, state or string index
/// out of its table, indices by thread that do not cover the states in order, or a
/// counter's columns of two lengths.
pub(super) fn check(t: &Trace) -> Result<(), &'static str> {
    let Some(s) = t.sched.as_deref() else {
        return Ok(());
    };
    let threads = t.threads.len() as u32;
    let thread = |th: u32| th < threads;
    let string = |id: Option<StrId>| id.is_none_or(|id| (id.0 as usize) < t.strings.len());
    if !s.slices.iter().all(|x| thread(x.thread)) {
        return Err("scheduling slices of known threads");
    }
    let cpus_ok = s.cpu_at.len() == s.slice_cpus.len() + 1
        && s.cpu_at.first() == Some(&0)
        && s.cpu_at.last() == Some(&(s.slices.len() as u32))
        && s.cpu_at.windows(2).all(|w| w[0] < w[1])
        && s.slice_cpus.windows(2).all(|w| w[0] < w[1]);
    if !cpus_ok {
        return Err("scheduling slices by CPU");
    }
    let states_ok = (s.states.rows.iter())
        .all(|x| thread(x.thread) && x.waker().is_none_or(thread) && string(x.blocked_function()));
    let running_ok = (s.states.running.iter()).all(|&i| ((i & !ENDED) as usize) < s.slices.len());
    // A marked ended state's function (its flag bits above).
    let marks_ok = (s.states.ended_other.iter())
        .all(|&o| o & NO_VALUE == NO_VALUE || string(Some(StrId(o & NO_VALUE))));
    if !states_ok || !running_ok || !marks_ok {
        return Err("thread states of known threads and strings");
    }
    if !(s.counters.iter()).all(|c| c.ts.len() == c.values.len()) {
        return Err("CPU counters with a value per time");
    }
    Ok(())
}
