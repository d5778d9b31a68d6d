//! System-trace packets: `FtraceEventBundle` (`ftrace_events`, field 1), `ProcessTree`
//! (2) and `SystemInfo` (45), read into [`RawSched`] records and, for atrace `print`
//! markers and names, ordinary events (see [`ftrace`](crate::ftrace)).
//!
//! A bundle holds one CPU's events: `event`s, each a `FtraceEvent` (timestamp, the
//! logging task's pid, `common_flags`, one event message), and `compact_sched`, the
//! switches and wakings as packed columns with delta-encoded timestamps (each kind its own
//! chain, the first absolute) and comms as indices into the bundle's intern table.
//! Timestamps are in the ftrace clock, BOOTTIME, converted to the trace clock as packet
//! times are.

use std::borrow::Cow;

use super::base::text;
use super::clock::{self, BOOTTIME};
use super::compact::read_columns;
use super::scan::Found;
use super::wire::{Field, Reader, Value};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};
use crate::ftrace::atrace::{self, Skip, Tgids};
use crate::ftrace::{CompactSched, RawSched, SchedKind};

const UNMODELLED_EVENT: &str = "proto_unmodelled_ftrace_event";

/// What the system-trace packets of one decoder share: each thread's process (for atrace
/// ends that name none) and scratch space.
#[derive(Default)]
pub(super) struct Ftrace {
    tgids: Tgids,
    args: String,
    cols: [Vec<u64>; 12],
    /// A compact_sched block's switch and waking times in the trace clock, where it is
    /// not ftrace's.
    times: [Vec<i64>; 2],
    /// The compact_sched blocks read ahead by another thread, where one does.
    pub(super) ahead: Option<super::ahead::Ahead>,
}

fn warn(d: &mut Diagnostics, at: u64, what: impl FnOnce() -> String) {
    d.warn(WarningKind::FtraceMalformed, at, what);
}

impl Ftrace {
    /// One `FtraceEventBundle` at byte `at`; returns the events handed out.
    pub(super) fn bundle<S: EventSink>(
        &mut self,
        f: &Found<'_>,
        b: &[u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> u64 {
        let mut cpu = 0u32;
        for fl in Reader::new(b, at).map_while(Result::ok) {
            if fl.num == 1 {
                cpu = fl.value.uint().unwrap_or(0).min(u32::MAX as u64) as u32;
            }
        }
        let mut n = 0;
        let mut r = Reader::new(b, at);
        while let Some(fl) = r.next_field() {
            let fl = match fl {
                Ok(fl) => fl,
                Err(e) => {
                    warn(d, e.offset, || {
                        format!("an ftrace bundle that breaks ({e}); the rest of it was skipped")
                    });
                    break;
                }
            };
            match (fl.num, fl.value) {
                (2, Value::Bytes(ev)) => n += self.event(f, cpu, ev, r.offset_of(ev), sink, d),
                (4, Value::Bytes(cs)) => n += self.compact(f, cpu, cs, r.offset_of(cs), sink, d),
                (3, v) if v.uint().unwrap_or(0) > 0 => {
                    d.warn(
                        WarningKind::ProtoUnmodelled("ftrace_lost_events"),
                        fl.offset,
                        || format!("CPU {cpu}'s ftrace buffer overran: events were lost there"),
                    );
                }
                _ => {}
            }
        }
        n
    }

    /// One `FtraceEvent`.
    fn event<S: EventSink>(
        &mut self,
        f: &Found<'_>,
        cpu: u32,
        b: &[u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> u64 {
        let (mut ts, mut pid, mut flags, mut body) = (None, -1i64, None, None);
        let mut r = Reader::new(b, at);
        while let Some(fl) = r.next_field() {
            let Ok(fl) = fl else {
                warn(d, at, || "an ftrace event that breaks; skipped".into());
                return 0;
            };
            match (fl.num, fl.value) {
                (1, v) => ts = v.uint(),
                (2, v) => pid = v.uint().unwrap_or(0) as u32 as i64,
                (5, v) => flags = v.uint().map(|x| x as u32),
                (n, Value::Bytes(m)) => body = Some((n, m, r.offset_of(m))),
                _ => {}
            }
        }
        let (Some(ts), Some((kind, m, mat))) = (ts, body) else {
            warn(d, at, || {
                "an ftrace event with no timestamp or no event; skipped".into()
            });
            return 0;
        };
        let ts = time(f, ts, at, d);
        if kind == 3 {
            return self.print(ts, pid, m, mat, sink, d);
        }
        let mut s = RawSched {
            ts,
            cpu,
            actor: pid,
            flags,
            prev_tid: -1,
            offset: at,
            ..RawSched::default()
        };
        if !sched_message(&mut s, kind, m, mat, d) {
            d.warn(WarningKind::ProtoUnmodelled(UNMODELLED_EVENT), at, || {
                format!(
                    "an ftrace event of kind {kind}, which is not modelled; counted and skipped"
                )
            });
            return 0;
        }
        sink.sched(&s);
        1
    }

    /// A `print` event: an atrace marker, read into an ordinary event.
    fn print<S: EventSink>(
        &mut self,
        ts: i64,
        tid: i64,
        m: &[u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> u64 {
        let buf = Reader::new(m, at)
            .map_while(Result::ok)
            .find(|g| g.num == 2)
            .and_then(|g| g.value.bytes())
            .unwrap_or(b"");
        let buf = text(buf, at, d);
        let (n, r) = atrace::marker_to(&buf, (ts, tid, at), &mut self.tgids, &mut self.args, sink);
        if r == Err(Skip::Malformed) {
            warn(d, at, || {
                format!("an atrace marker that does not parse ({buf:?}); skipped")
            });
        }
        n
    }

    /// A `CompactSched`: its columns read (ahead on another thread, where one does:
    /// [`ahead`](super::ahead)), then handed out whole.
    fn compact<S: EventSink>(
        &mut self,
        f: &Found<'_>,
        cpu: u32,
        b: &[u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> u64 {
        // Its columns, as the reader left them, or read here.
        let mut block = self.ahead.as_mut().and_then(|a| a.take(at));
        let mut interned: Vec<Cow<'_, str>> = Vec::new();
        let (counts, cols, comms) = match &mut block {
            Some(k) => {
                d.merge(std::mem::take(&mut k.diags));
                (k.counts, &k.cols, &k.comms[..])
            }
            None => {
                let n = read_columns(b, at, &mut self.cols, &mut interned, d);
                (n, &self.cols, &interned[..])
            }
        };
        let mut n = 0;
        if let Some((switches, wakings)) = counts {
            let c = cols;
            let switches = [0, 1, 2, 3, 5].map(|k| &c[k][..switches]);
            let wakings = [6, 7, 8, 9, 10].map(|k| &c[k][..wakings]);
            // The usual trace clock is ftrace's own: the times as they are.
            let times = (f.clocks.trace_clock != BOOTTIME).then(|| {
                for (k, t) in [switches[0], wakings[0]].into_iter().zip(&mut self.times) {
                    t.clear();
                    t.extend(k.iter().map(|&x| time(f, x, at, d)));
                }
                [&self.times[0][..], &self.times[1][..]]
            });
            let b = CompactSched {
                cpu,
                offset: at,
                comms,
                switches,
                wakings,
                waking_flags: &c[11][..c[11].len().min(wakings[0].len())],
                times,
            };
            sink.sched_compact(&b);
            n = b.len() as u64;
        }
        if let (Some(a), Some(k)) = (self.ahead.as_mut(), block) {
            a.give_back(k.cols);
        }
        n
    }

    /// A `ProcessTree`: process names (the command line's first word) and each thread's
    /// process and name.
    pub(super) fn process_tree<S: EventSink>(
        &mut self,
        b: &[u8],
        at: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) -> u64 {
        let mut n = 0;
        let mut r = Reader::new(b, at);
        while let Some(fl) = r.next_field() {
            let Ok(fl) = fl else {
                warn(d, at, || {
                    "a process tree that breaks; the rest was skipped".into()
                });
                break;
            };
            let Value::Bytes(m) = fl.value else { continue };
            let (mut id, mut tgid, mut name) = (None, None, None);
            for g in Reader::new(m, fl.offset).map_while(Result::ok) {
                match (fl.num, g.num) {
                    (1, 1) | (2, 1) => id = g.value.int(),
                    (1, 2) | (2, 3) => tgid = g.value.int(),
                    (1, 3) if name.is_none() => name = g.value.bytes(),
                    (2, 2) => name = g.value.bytes(),
                    _ => {}
                }
            }
            let Some(id) = id else { continue };
            let name = name.map(|x| text(x, fl.offset, d));
            // A thread's process; a process's main thread, and its parent's (`tgid` holds
            // the ppid there), as trace_processor makes both.
            let groups = match fl.num {
                2 => [(id, tgid.unwrap_or(0)), (0, 0)],
                _ => [(id, id), (tgid.unwrap_or(0), tgid.unwrap_or(0))],
            };
            for (tid, group) in groups.into_iter().filter(|g| g.0 > 0) {
                self.tgids.set(tid, group);
                sink.sched(&RawSched {
                    kind: SchedKind::ThreadGroup,
                    tid,
                    value: group,
                    prev_tid: -1,
                    offset: fl.offset,
                    ..RawSched::default()
                });
                n += 1;
            }
            let Some(name) = name else { continue };
            self.args.clear();
            self.args.push_str("{\"name\":");
            crate::proto::annot::escape_into(&mut self.args, &name);
            self.args.push('}');
            let (pid, tid, what) = match fl.num {
                1 => (id, 0, "process_name"),
                _ => (tgid.unwrap_or(0), id, "thread_name"),
            };
            sink.event(&RawEvent {
                ph: Phase::METADATA,
                name: Cow::Borrowed(what),
                pid: RawId::Num(pid),
                tid: RawId::Num(tid),
                args: Args::Json(Cow::Borrowed(&self.args)),
                offset: fl.offset,
                ..RawEvent::default()
            });
            n += 1;
        }
        n
    }

    /// A `SystemInfo`: the kernel's version, from `utsname.release` (`"5.10.43-android"`).
    pub(super) fn system_info<S: EventSink>(&mut self, b: &[u8], at: u64, sink: &mut S) -> u64 {
        let release = Reader::new(b, at)
            .map_while(Result::ok)
            .filter(|g| g.num == 1)
            .filter_map(|g| g.value.bytes())
            .flat_map(|u| Reader::new(u, 0).map_while(Result::ok))
            .find(|g| g.num == 3)
            .and_then(|g| g.value.bytes());
        let Some(v) = release.and_then(kernel_version) else {
            return 0;
        };
        sink.sched(&RawSched {
            kind: SchedKind::KernelVersion,
            value: v,
            prev_tid: -1,
            offset: at,
            ..RawSched::default()
        });
        1
    }
}

/// `"5.10.43-android"` as 5 * 1000 + 10.
pub(crate) fn kernel_version(release: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(release).ok()?;
    let mut it = s.split(|c: char| !c.is_ascii_digit());
    let major: i64 = it.next()?.parse().ok()?;
    let minor: i64 = it.next()?.parse().ok()?;
    (major < 1000 && minor < 1000).then_some(major * 1000 + minor)
}

/// The fields of the event message `m` at byte `at`, up to the first that breaks.
#[inline]
fn fields(m: &[u8], at: u64) -> impl Iterator<Item = Field<'_>> {
    Reader::new(m, at).map_while(Result::ok)
}

/// Reads event message `m` (field `kind` of an `FtraceEvent`) into `s`; false for a kind
/// not modelled.
#[inline]
fn sched_message<'b>(
    s: &mut RawSched<'b>,
    kind: u32,
    m: &'b [u8],
    at: u64,
    d: &mut Diagnostics,
) -> bool {
    match kind {
        4 => sched_switch(s, m, at, d),
        11 | 13 => cpu_state(s, kind, m, at),
        17 | 20 | 114 => sched_wakeup(s, kind, m, at, d),
        18 => blocked_reason(s, m, at),
        235 | 236 | 238 | 240 => task_life(s, kind, m, at, d),
        _ => return false,
    }
    true
}

/// A `sched_switch` message.
#[inline]
fn sched_switch<'b>(s: &mut RawSched<'b>, m: &'b [u8], at: u64, d: &mut Diagnostics) {
    s.kind = SchedKind::Switch;
    for g in fields(m, at) {
        match g.num {
            1 => s.prev_comm = str_of(g.value, at, d),
            2 => s.prev_tid = int32(g.value),
            3 => s.prev_prio = int32(g.value) as i32,
            4 => s.prev_state = g.value.int().unwrap_or(0),
            5 => s.comm = str_of(g.value, at, d),
            6 => s.tid = int32(g.value),
            7 => s.prio = int32(g.value) as i32,
            _ => {}
        }
    }
}

/// A `cpu_frequency` (11) or `cpu_idle` (13) message.
#[inline]
fn cpu_state(s: &mut RawSched<'_>, kind: u32, m: &[u8], at: u64) {
    s.kind = if kind == 11 {
        SchedKind::CpuFrequency
    } else {
        SchedKind::CpuIdle
    };
    for g in fields(m, at) {
        match g.num {
            1 => s.value = g.value.uint().unwrap_or(0) as u32 as i64,
            2 => s.cpu = g.value.uint().unwrap_or(0).min(u32::MAX as u64) as u32,
            _ => {}
        }
    }
}

/// A `sched_wakeup` (17), `sched_waking` (20) or `sched_wakeup_new` (114) message.
#[inline]
fn sched_wakeup<'b>(s: &mut RawSched<'b>, kind: u32, m: &'b [u8], at: u64, d: &mut Diagnostics) {
    s.kind = match kind {
        20 => SchedKind::Waking,
        _ => SchedKind::Wakeup,
    };
    s.value = (kind == 114) as i64;
    for g in fields(m, at) {
        match g.num {
            1 => s.comm = str_of(g.value, at, d),
            2 => s.tid = int32(g.value),
            3 => s.prio = int32(g.value) as i32,
            _ => {}
        }
    }
}

/// A `sched_blocked_reason` message.
#[inline]
fn blocked_reason(s: &mut RawSched<'_>, m: &[u8], at: u64) {
    s.kind = SchedKind::BlockedReason;
    for g in fields(m, at) {
        match g.num {
            1 => s.tid = int32(g.value),
            // `caller` (2) is a kernel address: trace_processor keeps no
            // function for it without symbols, nor does this.
            3 => s.value = g.value.uint().unwrap_or(0) as i64,
            _ => {}
        }
    }
}

/// A `task_newtask` (235), `task_rename` (236), `sched_process_exit` (238) or
/// `sched_process_free` (240) message.
#[inline]
fn task_life<'b>(s: &mut RawSched<'b>, kind: u32, m: &'b [u8], at: u64, d: &mut Diagnostics) {
    s.kind = match kind {
        235 => SchedKind::NewTask,
        236 => SchedKind::Rename,
        238 => SchedKind::ProcessExit,
        _ => SchedKind::ProcessFree,
    };
    for g in fields(m, at) {
        match (kind, g.num) {
            (235 | 236, 1) | (238 | 240, 2) => s.tid = int32(g.value),
            (235, 2) | (236, 3) | (238 | 240, 1) => s.comm = str_of(g.value, at, d),
            (235, 3) => s.value = g.value.uint().unwrap_or(0) as i64,
            (236, 2) => s.prev_comm = str_of(g.value, at, d),
            (238, 3) => s.value = int32(g.value),
            _ => {}
        }
    }
}

fn str_of<'b>(v: Value<'b>, at: u64, d: &mut Diagnostics) -> Cow<'b, str> {
    text(v.bytes().unwrap_or(b""), at, d)
}

/// An `int32` field (pids, priorities), written as a sign-extended varint.
fn int32(v: Value<'_>) -> i64 {
    v.int().unwrap_or(0) as i32 as i64
}

/// A ftrace timestamp (BOOTTIME ns) in the trace clock.
fn time(f: &Found<'_>, ts: u64, at: u64, d: &mut Diagnostics) -> i64 {
    let ns = ts.min(i64::MAX as u64) as i64;
    match f.clocks.to_trace(clock::key(BOOTTIME, 0), ns) {
        Some(t) => t,
        None => {
            d.warn(WarningKind::ProtoClock, at, || {
                "an ftrace time that no clock snapshot relates to the trace clock; taken as it is"
                    .into()
            });
            ns
        }
    }
}
