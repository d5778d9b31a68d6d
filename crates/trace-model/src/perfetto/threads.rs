//! trace_processor's main threads: the thread whose tid is its process's pid. It adds one
//! (no name, no track) to each process that has none, reads a tid of 0 in a process whose
//! pid is not 0 as that main thread (a Bazel profile's "Critical Path", events without a
//! tid), and puts a negative tid's events on it (`nesting`).

use crate::span::{ExtId, Process, Thread};
use crate::trace::Trace;

/// The thread of `p` whose tid is its pid, by the model's thread index
/// ([`Trace::pid_thread`], the one home of that rule).
pub(super) fn main_thread(t: &Trace, p: &Process) -> Option<u32> {
    let first = *p.threads.first()?;
    t.pid_thread(t.threads()[first as usize].process)
}

/// The main threads trace_processor has that the model does not.
pub(super) struct MainThreads {
    /// By process: whether a thread of its own has tid = pid.
    has_main: Vec<bool>,
    /// The processes given a main thread, in order.
    pub(super) added: Vec<u32>,
}

impl MainThreads {
    /// O(threads).
    pub(super) fn new(t: &Trace) -> MainThreads {
        let has_zero = |p: &Process| {
            p.threads
                .iter()
                .any(|&i| t.threads()[i as usize].tid == ExtId::Num(0))
        };
        let has_main: Vec<bool> = (t.processes().iter())
            .map(|p| main_thread(t, p).is_some())
            .collect();
        let added = (0..t.processes().len() as u32)
            .filter(|&i| {
                let p = &t.processes()[i as usize];
                !has_main[i as usize] && (p.pid == ExtId::Num(0) || !has_zero(p))
            })
            .collect();
        MainThreads { has_main, added }
    }

    /// The tid trace_processor gives a thread of the model.
    pub(super) fn tid(&self, th: &Thread) -> ExtId {
        match th.tid {
            ExtId::Num(0) if th.pid != ExtId::Num(0) && !self.has_main[th.process as usize] => {
                th.pid
            }
            tid => tid,
        }
    }
}
