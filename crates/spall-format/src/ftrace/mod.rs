//! System traces: the kernel scheduler's events (ftrace) and the atrace markers apps write
//! into it, whichever file carries them (Perfetto's `FtraceEventBundle`s, read in
//! [`proto`](crate::proto); the tracefs text format and systrace pages, in [`text`]).
//!
//! Scheduler events go to [`EventSink::sched`](crate::EventSink::sched) as [`RawSched`]
//! records, in file order (each CPU's in time order, the CPUs interleaved): pairing them
//! into slices and thread states needs them all, sorted, which the model does. Atrace
//! markers (`B|tgid|name`, `E`, `C`, `S`/`F`, `I`, `N`/`G`/`H`) become ordinary
//! [`RawEvent`](crate::RawEvent)s ([`atrace`]): thread spans, process counters and async slices.

use std::borrow::Cow;

pub mod atrace;
pub mod text;
pub mod wrapped;

/// What a scheduler record says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SchedKind {
    /// `sched_switch`: `prev_*` leaves the CPU in `state`, `tid` runs.
    #[default]
    Switch,
    /// A `compact_sched` switch: only the next task; the previous one is the task the
    /// CPU's previous switch put there.
    CompactSwitch,
    /// `sched_waking`: `actor` wakes `tid`.
    Waking,
    /// A `compact_sched` waking: the waker is the task running on the CPU.
    CompactWaking,
    /// `sched_wakeup` or `sched_wakeup_new` (`value` 1 for the latter): names only.
    Wakeup,
    /// `task_newtask`: `actor` made `tid` (`value`: clone flags).
    NewTask,
    /// `task_rename`: `tid` is now called `comm`.
    Rename,
    /// `sched_process_exit` (`value`: the tgid, where given).
    ProcessExit,
    /// `sched_process_free`.
    ProcessFree,
    /// `sched_blocked_reason`: `tid` blocked in `comm` (the caller, as text traces name
    /// it; empty in protobuf, whose caller is an address), `value` 1 if io_wait.
    BlockedReason,
    /// `cpu_frequency`: `value` is the CPU's new frequency (kHz) from `ts`.
    CpuFrequency,
    /// `cpu_idle`: `value` is the CPU's idle state (4294967295: not idle).
    CpuIdle,
    /// The kernel's version (`value` = major * 1000 + minor), from `SystemInfo`: how
    /// `prev_state` bits read.
    KernelVersion,
    /// The process tree (or an atrace marker) says thread `tid` belongs to process
    /// `value`.
    ThreadGroup,
}

/// One scheduler record of a system trace: plain data, text borrowed from the input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawSched<'a> {
    /// What it says.
    pub kind: SchedKind,
    /// When, in trace nanoseconds.
    pub ts: i64,
    /// The CPU that logged it; for CPU counters the CPU they are about.
    pub cpu: u32,
    /// The task that logged it (ftrace's `common_pid`): the waker of a waking, the parent
    /// of a new task. -1 where unknown.
    pub actor: i64,
    /// ftrace's `common_flags` (0x08 hard irq, 0x10 soft irq), where given.
    pub flags: Option<u32>,
    /// The task it is about: the next task of a switch, the woken, new or renamed task.
    pub tid: i64,
    /// Its priority.
    pub prio: i32,
    /// Its name (`next_comm`, `comm`, `newcomm`; a blocked reason's caller).
    pub comm: Cow<'a, str>,
    /// A switch's previous task (-1 for a compact switch: taken from the CPU's last).
    pub prev_tid: i64,
    /// Its priority.
    pub prev_prio: i32,
    /// Its name.
    pub prev_comm: Cow<'a, str>,
    /// A switch's `prev_state`, as the kernel's bits (see `SchedKind::KernelVersion`);
    /// text traces' letters are turned into the bits of a 4.4 kernel, as trace_processor
    /// does.
    pub prev_state: i64,
    /// Kind-specific: a counter's value, clone flags, a tgid, a version.
    pub value: i64,
    /// Byte offset in the decoded input.
    pub offset: u64,
}

impl RawSched<'_> {
    /// Copies the borrowed names, so the record outlives the input.
    pub fn into_owned(self) -> RawSched<'static> {
        RawSched {
            comm: Cow::Owned(self.comm.into_owned()),
            prev_comm: Cow::Owned(self.prev_comm.into_owned()),
            ..self
        }
    }
}

/// One record of a `compact_sched` block ([`CompactSched`]): a switch (only its next task;
/// the previous is the task the CPU's previous switch put there) or a waking (whose waker
/// is the task running on the CPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactRec {
    /// When, in trace nanoseconds.
    pub ts: i64,
    /// A switch's `prev_state` (the kernel's bits); a waking's target CPU.
    pub value: u64,
    /// The next task of a switch; the woken task.
    pub tid: u32,
    /// Its priority.
    pub prio: i32,
    /// Its name: an index into the block's intern table.
    pub comm: u32,
    /// A waking's `common_flags`, where given.
    pub flags: Option<u32>,
    /// A waking, not a switch.
    pub waking: bool,
}

/// One CPU's `compact_sched` block, its columns decoded: the switches and wakings merged
/// by time (a switch first at one time), as [`RawSched`] records would come, so that a
/// sink can store them as they are rather than one record at a time.
#[derive(Clone, Copy, Debug)]
pub struct CompactSched<'a> {
    /// The CPU whose bundle it is.
    pub cpu: u32,
    /// Byte offset of the block in the decoded input.
    pub offset: u64,
    /// The block's intern table: the comms its records name.
    pub comms: &'a [Cow<'a, str>],
    /// The records, in order.
    pub recs: &'a [CompactRec],
}

impl CompactSched<'_> {
    /// Record `i` as a [`RawSched`] (a compact waking's comm is named, though the model
    /// names no thread after one).
    pub fn raw(&self, i: usize) -> RawSched<'_> {
        let r = &self.recs[i];
        let comm =
            (self.comms.get(r.comm as usize)).map_or(Cow::Borrowed(""), |c| Cow::Borrowed(&**c));
        let mut s = RawSched {
            kind: SchedKind::CompactSwitch,
            ts: r.ts,
            cpu: self.cpu,
            actor: -1,
            tid: r.tid as i64,
            prio: r.prio,
            comm,
            prev_tid: -1,
            offset: self.offset,
            ..RawSched::default()
        };
        if r.waking {
            s.kind = SchedKind::CompactWaking;
            s.flags = r.flags;
            s.value = r.value as u32 as i64;
        } else {
            s.prev_state = r.value as i64;
        }
        s
    }
}

/// A text `prev_state` (`S`, `D|K`, `R+`...) as a 4.4 kernel's bits, trace_processor's
/// reading of text traces; `None` for letters it does not know.
pub fn state_from_letters(s: &str) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    if let Some(rest) = s.strip_prefix('R') {
        return match rest {
            "" => Some(0),
            "+" => Some(0x800),
            _ => None,
        };
    }
    let mut bits = 0i64;
    for c in s.chars() {
        bits |= match c {
            '|' => 0,
            'S' => 0x1,
            'D' => 0x2,
            'T' => 0x4,
            't' => 0x8,
            'X' => 0x10,
            'Z' => 0x20,
            'x' => 0x40,
            'K' => 0x80,
            'W' => 0x100,
            'P' => 0x200,
            'N' => 0x400,
            'I' => 0x402,
            _ => return None,
        };
    }
    Some(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_read_as_trace_processor_reads_them() {
        assert_eq!(state_from_letters("R"), Some(0));
        assert_eq!(state_from_letters("R+"), Some(0x800));
        assert_eq!(state_from_letters("S"), Some(1));
        assert_eq!(state_from_letters("D|K"), Some(0x82));
        assert_eq!(state_from_letters("I"), Some(0x402));
        assert_eq!(state_from_letters("SR"), None);
        assert_eq!(state_from_letters("?"), None);
        assert_eq!(state_from_letters(""), None);
    }
}
