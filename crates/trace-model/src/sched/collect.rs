//! Scheduler records as they arrive: plain rows, comms interned, in file order.

use spall_format::{RawSched, SchedKind};

use crate::strings::{StrId, Strings};

/// One scheduler record, packed (see [`RawSched`] for the fields' meaning): pids are the
/// kernel's 32-bit ids, `prev_state` its 16 bits as trace_processor takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub ts: i64,
    pub kind: SchedKind,
    /// `common_flags`, [`NO_FLAGS`] where the record gave none.
    pub flags: u16,
    pub prev_state: u16,
    pub cpu: u32,
    pub tid: i32,
    pub actor: i32,
    pub prio: i32,
    pub prev_tid: i32,
    pub comm: StrId,
    pub prev_comm: StrId,
    pub value: u32,
}

pub(crate) const NO_FLAGS: u16 = u16::MAX;

/// The records of one builder (one chunk of a parallel decode).
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub recs: Vec<Rec>,
    /// The kernel version the trace states, if any.
    pub version: Option<i64>,
    /// Records whose fields did not fit (a pid past 32 bits): counted.
    pub dropped: u64,
}

impl Collected {
    pub(crate) fn add(&mut self, s: &RawSched<'_>, strings: &mut Strings) {
        if s.kind == SchedKind::KernelVersion {
            self.version = Some(s.value);
            return;
        }
        let fit = |x: i64| i32::try_from(x).ok();
        let (Some(tid), Some(actor), Some(prev_tid)) = (fit(s.tid), fit(s.actor), fit(s.prev_tid))
        else {
            self.dropped += 1;
            return;
        };
        let intern = |strings: &mut Strings, c: &str| match c {
            "" => StrId::EMPTY,
            c => strings.intern(c),
        };
        self.recs.push(Rec {
            ts: s.ts,
            kind: s.kind,
            flags: s.flags.map_or(NO_FLAGS, |f| (f & 0xff) as u16),
            prev_state: s.prev_state as u16,
            cpu: s.cpu,
            tid,
            actor,
            prio: s.prio,
            prev_tid,
            comm: intern(strings, &s.comm),
            prev_comm: intern(strings, &s.prev_comm),
            value: s.value.clamp(0, u32::MAX as i64) as u32,
        });
    }

    /// Appends a later chunk's records, its string ids mapped by `s`.
    pub(crate) fn absorb(&mut self, other: Collected, s: impl Fn(StrId) -> StrId) {
        self.version = other.version.or(self.version);
        self.dropped += other.dropped;
        self.recs.extend(other.recs.into_iter().map(|mut r| {
            r.comm = s(r.comm);
            r.prev_comm = s(r.prev_comm);
            r
        }));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.recs.is_empty() && self.dropped == 0
    }
}
