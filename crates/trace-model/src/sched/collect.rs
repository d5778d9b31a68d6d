//! Scheduler records as they arrive: packed rows, comms interned, bucketed by CPU (each
//! CPU's records usually come in time order, so the buckets are merged, not sorted).
//! A bucket is a list of fixed-size chunks: the replay frees each chunk once it has
//! passed it, so the records and the slices and states made of them are not all held
//! at once, and a bucket grows without copying.

use hashbrown::HashMap;
use spall_format::{RawSched, SchedKind};

use crate::strings::{StrId, Strings};

/// One scheduler record, packed into 40 bytes (see [`RawSched`] for the fields'
/// meaning): pids are the kernel's 32-bit ids, `prev_state` its 16 bits as
/// trace_processor takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec {
    pub ts: i64,
    /// The record's place in the file, for records of one time.
    pub seq: u32,
    pub cpu: u32,
    pub tid: i32,
    /// A switch's previous task, else the task that logged the record.
    pub other: i32,
    pub prio: i32,
    pub comm: StrId,
    /// A switch's previous comm (a [`StrId`]), else the record's value.
    pub extra: u32,
    pub prev_state: u16,
    /// `common_flags`' irq bits, [`NO_FLAGS`] where the record gave none.
    pub flags: u8,
    pub kind: SchedKind,
}

pub(crate) const NO_FLAGS: u8 = u8::MAX;

impl Rec {
    pub(crate) fn prev_comm(&self) -> StrId {
        StrId(self.extra)
    }
}

/// Records per chunk of a bucket (640 KB).
const CHUNK: usize = 1 << 14;

/// One CPU's records, in file order, in chunks.
pub(crate) type Bucket = Vec<Vec<Rec>>;

/// The records of one builder (one chunk of a parallel decode).
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// Each CPU's records, in file order.
    pub cpus: Vec<(u32, Bucket)>,
    index: HashMap<u32, usize>,
    last: Option<(u32, usize)>,
    /// Records so far.
    pub n: u32,
    /// The kernel version the trace states, if any.
    pub version: Option<i64>,
    /// Records whose fields did not fit (a pid past 32 bits): counted.
    pub dropped: u64,
    /// Comms interned lately, by where their bytes are ([`intern_comm`]).
    comms: Vec<(usize, StrId)>,
    /// The first and last time of the records, kept as they come (not a pass over them).
    pub span: Option<(i64, i64)>,
    /// The process trees' and new tasks' records, also kept apart: the few that
    /// [`thread_groups`](super::derive::thread_groups) reads.
    pub groups: Vec<Rec>,
}

/// Slots of the comm cache: a bundle's intern table names a few dozen tasks.
const COMM_SLOTS: usize = 256;

/// `c` interned. A compact bundle's records borrow their comms from its intern table, the
/// same bytes for every record of a task: those are found by their address (and checked
/// against the string, as bytes at one address may change between bundles of a stream)
/// before the string is hashed.
fn intern_comm(cache: &mut Vec<(usize, StrId)>, strings: &mut Strings, c: &str) -> StrId {
    if c.is_empty() {
        return StrId::EMPTY;
    }
    if cache.is_empty() {
        cache.resize(COMM_SLOTS, (0, StrId::EMPTY));
    }
    let at = c.as_ptr() as usize;
    let slot = &mut cache[(at ^ at >> 8) % COMM_SLOTS];
    if slot.0 == at && slot.1 != StrId::EMPTY && strings.get(slot.1) == c {
        return slot.1;
    }
    let id = strings.intern(c);
    *slot = (at, id);
    id
}

impl Collected {
    fn bucket(&mut self, cpu: u32) -> &mut Bucket {
        let i = match self.last {
            Some((c, i)) if c == cpu => i,
            _ => {
                let cpus = &mut self.cpus;
                let i = *self.index.entry(cpu).or_insert_with(|| {
                    cpus.push((cpu, Vec::new()));
                    cpus.len() - 1
                });
                self.last = Some((cpu, i));
                i
            }
        };
        &mut self.cpus[i].1
    }

    pub(crate) fn add(&mut self, s: &RawSched<'_>, strings: &mut Strings) {
        if s.kind == SchedKind::KernelVersion {
            self.version = Some(s.value);
            return;
        }
        let fit = |x: i64| i32::try_from(x).ok();
        let other = if s.kind == SchedKind::Switch {
            s.prev_tid
        } else {
            s.actor
        };
        let (Some(tid), Some(other)) = (fit(s.tid), fit(other)) else {
            self.dropped += 1;
            return;
        };
        let comms = &mut self.comms;
        let mut intern = |strings: &mut Strings, c: &str| intern_comm(comms, strings, c);
        let extra = match s.kind {
            SchedKind::Switch => intern(strings, &s.prev_comm).0,
            _ => s.value.clamp(0, u32::MAX as i64) as u32,
        };
        // The replay names no thread after a compact waking (as trace_processor does not).
        let comm = match s.kind {
            SchedKind::CompactWaking => StrId::EMPTY,
            _ => intern(strings, &s.comm),
        };
        let r = Rec {
            ts: s.ts,
            seq: self.n,
            cpu: s.cpu,
            tid,
            other,
            prio: s.prio,
            comm,
            extra,
            prev_state: s.prev_state as u16,
            flags: s.flags.map_or(NO_FLAGS, |f| (f & 0x18) as u8),
            kind: s.kind,
        };
        self.n = self.n.wrapping_add(1);
        // A process tree's (or a tgid column's, or a ps dump's) thread groups have no time:
        // they must not stretch the trace back to 0.
        if r.kind != SchedKind::ThreadGroup {
            self.span = Some(
                self.span
                    .map_or((r.ts, r.ts), |(a, b)| (a.min(r.ts), b.max(r.ts))),
            );
        }
        if matches!(r.kind, SchedKind::ThreadGroup | SchedKind::NewTask) {
            self.groups.push(r);
        }
        let b = self.bucket(s.cpu);
        match b.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(r),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(r);
                b.push(c);
            }
        }
    }

    /// Appends a later chunk's records, its string ids mapped by `s`.
    pub(crate) fn absorb(&mut self, other: Collected, s: impl Fn(StrId) -> StrId) {
        self.version = other.version.or(self.version);
        self.dropped += other.dropped;
        let base = self.n;
        self.n = self.n.wrapping_add(other.n);
        self.span = match (self.span, other.span) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        };
        for mut r in other.groups {
            r.seq = r.seq.wrapping_add(base);
            r.comm = s(r.comm);
            self.groups.push(r);
        }
        for (cpu, mut recs) in other.cpus {
            for r in recs.iter_mut().flatten() {
                r.seq = r.seq.wrapping_add(base);
                r.comm = s(r.comm);
                if r.kind == SchedKind::Switch {
                    r.extra = s(StrId(r.extra)).0;
                }
            }
            // Chunks move as they are; a partly filled one stays so.
            self.bucket(cpu).append(&mut recs);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.n == 0 && self.dropped == 0
    }
}
