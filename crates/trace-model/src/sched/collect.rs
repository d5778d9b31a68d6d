//! Scheduler records as they arrive: packed rows, comms interned, bucketed by CPU (each
//! CPU's records usually come in time order, so the buckets are merged, not sorted).
//! A bucket is a list of chunks: rows of ordinary records, or a `compact_sched` block
//! kept as 12-byte records (most of a system trace's records), which the replay
//! widens into rows a block at a time. The replay frees each chunk once it has passed
//! it, so the records and the slices and states made of them are not all held at once,
//! and a bucket grows without copying. What the replay needs before it starts (switches
//! and states per CPU, whether a CPU's records are in time order) is counted as they come.

use hashbrown::HashMap;
use spall_format::{CompactRec, CompactSched, RawSched, SchedKind};

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

/// A `compact_sched` record as held until the replay, in 12 bytes: its time is its
/// block's `base` plus `dt`; its `seq` its block's first plus its place in the block;
/// `bits` holds its comm's index in the block (bits 0-7), its priority (8-15), a switch's
/// `prev_state` (16-30) or a waking's flags (16-23), and whether it is a waking (31). A
/// block whose values do not fit there (a priority past 255, a comm index past 255, a state
/// past 0x7fff, times more than 4.29 s apart) is added record by record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packed {
    dt: u32,
    tid: i32,
    bits: u32,
}

const WAKING: u32 = 1 << 31;

/// How far ahead of the replay a block's records are fetched: 1 KiB.
const PREFETCH_AHEAD: usize = 1024 / std::mem::size_of::<Packed>();

impl Packed {
    /// `r` packed, its time taken from `base`, if its values fit.
    #[inline]
    fn new(r: &CompactRec, tid: i32, base: i64) -> Option<Packed> {
        let state = r.value as u16;
        let fits = (0..=255).contains(&r.prio) && (r.waking || (r.comm <= 255 && state <= 0x7fff));
        let upper = match r.waking {
            true => WAKING | (r.flags.map_or(NO_FLAGS, |f| (f & 0x18) as u8) as u32) << 16,
            false => (state as u32) << 16 | r.comm,
        };
        let dt = u32::try_from(r.ts.wrapping_sub(base)).ok();
        dt.filter(|_| fits).map(|dt| Packed {
            dt,
            tid,
            bits: upper | (r.prio as u32) << 8,
        })
    }

    fn waking(&self) -> bool {
        self.bits & WAKING != 0
    }
}

/// A `compact_sched` record as the replay reads it (the fields of a [`Rec`] it has).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compact {
    pub ts: i64,
    pub tid: i32,
    pub prio: i32,
    /// A switch's next comm; EMPTY for a waking.
    pub comm: StrId,
    pub prev_state: u16,
    pub flags: u8,
    pub waking: bool,
}

/// One `compact_sched` block of a CPU.
#[derive(Debug)]
pub(crate) struct Block {
    seq: u32,
    /// The time its records' are counted from.
    base: i64,
    /// The comms its switches name, interned; EMPTY where none did.
    comms: Vec<StrId>,
    recs: Vec<Packed>,
}

impl Block {
    /// The block's records as rows of CPU `cpu`, appended to `out`.
    pub(crate) fn widen_into(&self, cpu: u32, out: &mut Vec<Rec>) {
        out.extend((0..self.recs.len()).map(|i| self.rec(i, cpu)));
    }

    /// How many records it holds.
    pub(crate) fn len(&self) -> usize {
        self.recs.len()
    }

    /// Record `i`'s time and place in the file, if there is one.
    #[inline]
    pub(crate) fn key(&self, i: usize) -> Option<(i64, u32)> {
        let p = self.recs.get(i)?;
        Some((self.base + p.dt as i64, self.seq.wrapping_add(i as u32)))
    }

    /// Record `i` (which must be there) as a row of CPU `cpu`.
    pub(crate) fn rec(&self, i: usize, cpu: u32) -> Rec {
        let c = self.compact(i);
        Rec {
            ts: c.ts,
            seq: self.seq.wrapping_add(i as u32),
            cpu,
            tid: c.tid,
            other: -1,
            prio: c.prio,
            comm: c.comm,
            extra: 0,
            prev_state: c.prev_state,
            flags: c.flags,
            kind: match c.waking {
                true => SchedKind::CompactWaking,
                false => SchedKind::CompactSwitch,
            },
        }
    }

    /// Record `i` (which must be there) as the replay reads it: the fields a compact
    /// record has, without a row's.
    #[inline]
    pub(crate) fn compact(&self, i: usize) -> Compact {
        // The replay walks every CPU's blocks at once, a record of each in turn.
        spall_util::prefetch(&self.recs, i + PREFETCH_AHEAD);
        let p = &self.recs[i];
        let waking = p.waking();
        let comm = (p.bits & 0xff) as usize;
        Compact {
            ts: self.base + p.dt as i64,
            tid: p.tid,
            prio: (p.bits >> 8 & 0xff) as i32,
            comm: match waking {
                true => StrId::EMPTY,
                false => self.comms.get(comm).copied().unwrap_or(StrId::EMPTY),
            },
            prev_state: match waking {
                true => 0,
                false => (p.bits >> 16) as u16,
            },
            flags: match waking {
                true => (p.bits >> 16) as u8,
                false => NO_FLAGS,
            },
            waking,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.recs.capacity() * std::mem::size_of::<Packed>() + self.comms.capacity() * 4
    }
}

/// A piece of a CPU's records, in file order.
#[derive(Debug)]
pub(crate) enum Chunk {
    Rows(Vec<Rec>),
    Block(Block),
}

fn key(r: &Rec) -> (i64, u32) {
    (r.ts, r.seq)
}

/// One CPU's records, in file order, in chunks; and what the replay needs before it
/// starts.
#[derive(Debug)]
pub(crate) struct Bucket {
    pub chunks: Vec<Chunk>,
    /// Switches (full and compact): the CPU's slices at most.
    pub switches: usize,
    /// Wakings and new tasks: each opens one thread state at most.
    pub wakings: usize,
    /// Whether the records are in time order (by time, then file order).
    pub sorted: bool,
    first: Option<(i64, u32)>,
    last: Option<(i64, u32)>,
}

impl Default for Bucket {
    fn default() -> Bucket {
        Bucket {
            chunks: Vec::new(),
            switches: 0,
            wakings: 0,
            sorted: true,
            first: None,
            last: None,
        }
    }
}

impl Bucket {
    /// Notes a record's kind and key as it is added.
    #[inline]
    fn note(&mut self, kind: SchedKind, k: (i64, u32)) {
        match kind {
            SchedKind::Switch | SchedKind::CompactSwitch => self.switches += 1,
            SchedKind::Waking | SchedKind::CompactWaking | SchedKind::NewTask => self.wakings += 1,
            _ => {}
        }
        self.sorted &= self.last.is_none_or(|l| l <= k);
        self.first.get_or_insert(k);
        self.last = Some(k);
    }

    fn push(&mut self, r: Rec) {
        self.note(r.kind, key(&r));
        match self.chunks.last_mut() {
            Some(Chunk::Rows(c)) if c.len() < CHUNK => c.push(r),
            _ => {
                let mut c = Vec::with_capacity(64);
                c.push(r);
                self.chunks.push(Chunk::Rows(c));
            }
        }
    }

    /// Appends a later builder's bucket (its records already renumbered).
    fn append(&mut self, mut other: Bucket) {
        self.switches += other.switches;
        self.wakings += other.wakings;
        let joined = match (self.last, other.first) {
            (Some(a), Some(b)) => a <= b,
            _ => true,
        };
        self.sorted &= other.sorted && joined;
        self.first = self.first.or(other.first);
        self.last = other.last.or(self.last);
        // Chunks move as they are; a partly filled one stays so.
        self.chunks.append(&mut other.chunks);
    }
}

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
                    cpus.push((cpu, Bucket::default()));
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
        self.bucket(s.cpu).push(r);
    }

    /// Adds a `compact_sched` block as it is (see [`Block`]): the records [`add`] would
    /// add, the same comms interned in the same order.
    ///
    /// [`add`]: Self::add
    pub(crate) fn add_compact(&mut self, b: &CompactSched<'_>, strings: &mut Strings) {
        let base = b.min_time().unwrap_or(0);
        let mut comms = vec![None; b.comms.len()];
        let mut recs = Vec::with_capacity(b.len());
        let seq = self.n;
        let (mut switches, mut wakings) = (0, 0);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let (mut in_order, mut dropped) = (true, 0);
        for r in b.recs() {
            let Ok(tid) = i32::try_from(r.tid) else {
                dropped += 1;
                continue;
            };
            // Comms interned as the switches name them (the replay names no thread after
            // a compact waking, as trace_processor does not).
            if !r.waking {
                if let Some(slot) = comms.get_mut(r.comm as usize) {
                    let c: &str = &b.comms[r.comm as usize];
                    slot.get_or_insert_with(|| intern_comm(&mut self.comms, strings, c));
                }
            }
            in_order &= hi <= r.ts;
            (lo, hi) = (lo.min(r.ts), hi.max(r.ts));
            switches += !r.waking as usize;
            wakings += r.waking as usize;
            let Some(p) = Packed::new(&r, tid, base) else {
                // Values that do not fit: record by record (comms interned again alike).
                for r in b.recs() {
                    self.add(&b.raw(&r), strings);
                }
                return;
            };
            recs.push(p);
        }
        self.dropped += dropped;
        if recs.is_empty() {
            return;
        }
        let n = recs.len() as u32;
        self.n = self.n.wrapping_add(n);
        self.span = Some(self.span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        let first = (base + recs[0].dt as i64, seq);
        let last = (
            base + recs[recs.len() - 1].dt as i64,
            seq.wrapping_add(n - 1),
        );
        let block = Block {
            seq,
            base,
            comms: comms
                .into_iter()
                .map(|c| c.unwrap_or(StrId::EMPTY))
                .collect(),
            recs,
        };
        let bucket = self.bucket(b.cpu);
        bucket.switches += switches;
        bucket.wakings += wakings;
        bucket.sorted &= in_order && bucket.last.is_none_or(|l| l <= first);
        bucket.first.get_or_insert(first);
        bucket.last = Some(last);
        bucket.chunks.push(Chunk::Block(block));
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
        for (cpu, mut bucket) in other.cpus {
            for c in &mut bucket.chunks {
                match c {
                    Chunk::Rows(rows) => {
                        for r in rows {
                            r.seq = r.seq.wrapping_add(base);
                            r.comm = s(r.comm);
                            if r.kind == SchedKind::Switch {
                                r.extra = s(StrId(r.extra)).0;
                            }
                        }
                    }
                    Chunk::Block(b) => {
                        b.seq = b.seq.wrapping_add(base);
                        b.comms.iter_mut().for_each(|c| *c = s(*c));
                    }
                }
            }
            let shift = |k: Option<(i64, u32)>| k.map(|(t, q)| (t, q.wrapping_add(base)));
            (bucket.first, bucket.last) = (shift(bucket.first), shift(bucket.last));
            self.bucket(cpu).append(bucket);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.n == 0 && self.dropped == 0
    }
}
