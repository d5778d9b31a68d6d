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

/// One CPU's `compact_sched` block, its columns decoded: the switches and wakings, which
/// [`recs`](Self::recs) merges by time (a switch first at one time) as [`RawSched`]
/// records would come, so that a sink can store them as they are rather than one record at
/// a time, and without a record written between.
#[derive(Clone, Copy, Debug)]
pub struct CompactSched<'a> {
    /// The CPU whose bundle it is.
    pub cpu: u32,
    /// Byte offset of the block in the decoded input.
    pub offset: u64,
    /// The block's intern table: the comms its records name.
    pub comms: &'a [Cow<'a, str>],
    // The columns, which only the decoder makes (each kind's of one length, which
    // `CompactRecs` relies on):
    /// The switches': time (ftrace's clock, ns), `prev_state`, `next_pid`, `next_prio`,
    /// `next_comm_index`.
    pub(crate) switches: [&'a [u64]; 5],
    /// The wakings': time, `pid`, `target_cpu`, `prio`, `comm_index`.
    pub(crate) wakings: [&'a [u64]; 5],
    /// The wakings' `common_flags`, where given: none past its end.
    pub(crate) waking_flags: &'a [u64],
    /// The switches' and wakings' times in the trace clock, where it is not ftrace's own
    /// (else the columns' times are the trace's).
    pub(crate) times: Option<[&'a [i64]; 2]>,
}

impl<'a> CompactSched<'a> {
    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.switches[0].len() + self.wakings[0].len()
    }

    /// Whether it holds no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records, switches and wakings merged by time.
    pub fn recs(&self) -> CompactRecs<'a> {
        CompactRecs {
            b: *self,
            i: 0,
            j: 0,
        }
    }

    /// The earliest record's time in the trace clock.
    pub fn min_time(&self) -> Option<i64> {
        // Each column's least apart: a loop over one slice, which the compiler vectorizes.
        let least = |a: Option<i64>, b: Option<i64>| a.into_iter().chain(b).min();
        match self.times {
            Some([s, w]) => least(s.iter().copied().min(), w.iter().copied().min()),
            None => {
                let raw = |c: &[u64]| {
                    c.iter()
                        .copied()
                        .min()
                        .map(|t| t.min(i64::MAX as u64) as i64)
                };
                least(raw(self.switches[0]), raw(self.wakings[0]))
            }
        }
    }

    /// Record `r` (one of [`recs`](Self::recs)) as a [`RawSched`] (a compact waking's comm
    /// is named, though the model names no thread after one).
    pub fn raw(&self, r: &CompactRec) -> RawSched<'a> {
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

/// A [`CompactSched`]'s records in time order ([`CompactSched::recs`]).
#[derive(Clone, Debug)]
pub struct CompactRecs<'a> {
    b: CompactSched<'a>,
    /// The next switch and waking.
    i: usize,
    j: usize,
}

impl Iterator for CompactRecs<'_> {
    type Item = CompactRec;

    // Inlined into the loop that stores the records, which then reads the columns as they
    // are (a call returns each record through memory).
    #[inline(always)]
    fn next(&mut self) -> Option<CompactRec> {
        let (b, i, j) = (&self.b, self.i, self.j);
        let (s, w) = (&b.switches, &b.wakings);
        // Compared as read, before any change of clock.
        let switch = match (s[0].get(i), w[0].get(j)) {
            (Some(s), Some(w)) => s <= w,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let time = |k: usize, at: usize, raw: u64| match b.times {
            None => raw.min(i64::MAX as u64) as i64,
            Some(t) => t[k][at],
        };
        let r = match switch {
            true => CompactRec {
                ts: time(0, i, s[0][i]),
                value: s[1][i],
                tid: s[2][i] as u32,
                prio: s[3][i] as u32 as i32,
                comm: s[4][i].min(u32::MAX as u64) as u32,
                flags: None,
                waking: false,
            },
            false => CompactRec {
                ts: time(1, j, w[0][j]),
                value: w[2][j],
                tid: w[1][j] as u32,
                prio: w[3][j] as u32 as i32,
                comm: w[4][j].min(u32::MAX as u64) as u32,
                flags: b.waking_flags.get(j).map(|&x| x as u32),
                waking: true,
            },
        };
        self.i += switch as usize;
        self.j += !switch as usize;
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.b.len() - self.i - self.j;
        (n, Some(n))
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
