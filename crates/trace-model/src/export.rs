//! Writing a trace's spans as a `.spall` v3 file.

use std::io::{self, Write};

use spall_format::SpallWriter;

use crate::event_kinds::InstantScope;
use crate::span::{flags, ExtId, Thread};
use crate::strings::StrId;
use crate::trace::Trace;

/// What [`Trace::write_spall`] wrote, and what `.spall` could not hold as it was.
///
/// `.spall` holds properly nested Begin/End pairs with `u32` process and thread ids, names
/// and argument text of at most 255 bytes, and no categories; with the spall-rs extension,
/// thread-scoped instants too. Process- and global-scoped instants, counters, flows, async
/// and metadata events are not written at all: the trace's own counts say how many.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpallExport {
    /// Spans written.
    pub spans: u64,
    /// Thread-scoped instants written (as the spall-rs Instant event).
    pub instants: u64,
    /// Spans that outlived their parent, their end moved to the parent's.
    pub clamped: u64,
    /// Spans with a category (categories are dropped).
    pub with_category: u64,
    /// Names or argument texts cut at 255 bytes.
    pub truncated_strings: u64,
    /// Process ids that are not `u32`, renumbered (the name is kept).
    pub remapped_pids: u64,
    /// Thread ids that are not `u32`, renumbered (the name is kept).
    pub remapped_tids: u64,
    /// Nanoseconds added to every time so that none is negative.
    pub shift_ns: i64,
}

impl Trace {
    /// Writes every span as a `.spall` v3 file to `out` (1 ns per tick), process and thread
    /// names included, and returns `out` with what was written.
    pub fn write_spall<W: Write>(&self, out: W) -> io::Result<(W, SpallExport)> {
        let mut w = SpallWriter::new(out, 1.0)?;
        let mut x = SpallExport {
            shift_ns: self.start_ns.saturating_neg().max(0),
            ..SpallExport::default()
        };
        let largest = |f: &dyn Fn(&Thread) -> ExtId| {
            (self.threads.iter())
                .filter_map(|t| match f(t) {
                    ExtId::Num(n) if (0..=u32::MAX as i64).contains(&n) => Some(n as u32),
                    _ => None,
                })
                .max()
                .unwrap_or(0)
        };
        let mut pids = IdMap {
            next: largest(&|t| t.pid).max(1 << 20),
            remapped: 0,
        };
        let mut tids = IdMap {
            next: largest(&|t| t.tid).max(1 << 20),
            remapped: 0,
        };
        let mut pid_of_process: Vec<Option<u32>> = vec![None; self.processes.len()];
        let mut instants_of: Vec<Vec<usize>> = vec![Vec::new(); self.threads.len()];
        for (k, i) in self.instants.iter().enumerate() {
            if i.scope == InstantScope::Thread {
                if let Some(list) = instants_of.get_mut(i.thread as usize) {
                    list.push(k);
                }
            }
        }
        for (ti, t) in self.threads.iter().enumerate() {
            let pid = *pid_of_process[t.process as usize].get_or_insert_with(|| pids.map(t.pid));
            let tid = tids.map(t.tid);
            let process = &self.processes[t.process as usize];
            if process.threads.first() == Some(&(ti as u32)) {
                let name = match process.name {
                    Some(n) => self.str(n).to_string(),
                    None => match process.pid {
                        ExtId::Str(s) => self.str(s).to_string(),
                        ExtId::Num(_) => String::new(),
                    },
                };
                if !name.is_empty() {
                    w.name_process(pid, tid, &name)?;
                }
            }
            let tname = match (t.name, t.tid) {
                (Some(n), _) => self.str(n).to_string(),
                (None, ExtId::Str(s)) => self.str(s).to_string(),
                (None, ExtId::Num(_)) => String::new(),
            };
            if !tname.is_empty() {
                w.name_thread(pid, tid, &tname)?;
            }
            self.write_thread(t, (pid, tid), &mut w, &mut x)?;
            for &k in &instants_of[ti] {
                let i = &self.instants[k];
                let args = self.args.text(i.args).unwrap_or_default();
                w.instant(
                    pid,
                    tid,
                    (i.ts + x.shift_ns) as u64,
                    self.str(i.name),
                    &args,
                )?;
                x.instants += 1;
            }
        }
        x.truncated_strings = w.truncated_strings();
        (x.remapped_pids, x.remapped_tids) = (pids.remapped, tids.remapped);
        Ok((w.finish()?, x))
    }

    /// Writes one thread's spans as properly nested Begin/End pairs, counting into `x`.
    fn write_thread<W: Write>(
        &self,
        t: &Thread,
        (pid, tid): (u32, u32),
        w: &mut SpallWriter<W>,
        x: &mut SpallExport,
    ) -> io::Result<()> {
        // Every span, by start, then depth: parents before children.
        let mut order: Vec<(i64, u32, u32)> = Vec::with_capacity(t.span_count() as usize);
        for (d, lane) in t.lanes.iter().enumerate() {
            for (i, &s) in lane.start.iter().enumerate() {
                order.push((s, d as u32, i as u32));
            }
        }
        order.sort_unstable();
        let shift = x.shift_ns;
        let tick = |ns: i64| (ns + shift) as u64;
        // Open spans: (end, unfinished).
        let mut stack: Vec<(i64, bool)> = Vec::new();
        let close = |stack: &mut Vec<(i64, bool)>,
                     w: &mut SpallWriter<W>,
                     until: Option<i64>|
         -> io::Result<()> {
            while let Some(&(end, unfinished)) = stack.last() {
                if until.is_some_and(|s| end > s) {
                    break;
                }
                stack.pop();
                if !unfinished {
                    w.end(pid, tid, tick(end))?;
                }
            }
            Ok(())
        };
        for &(start, d, i) in &order {
            let lane = &t.lanes[d as usize];
            let i = i as usize;
            close(&mut stack, w, Some(start))?;
            let mut end = lane.end(i);
            if let Some(&(parent_end, _)) = stack.last() {
                if end > parent_end {
                    end = parent_end;
                    x.clamped += 1;
                }
            }
            if lane.cat[i] != StrId::EMPTY {
                x.with_category += 1;
            }
            let args = self.args.text(lane.args[i]).unwrap_or_default();
            w.begin(pid, tid, tick(start), self.str(lane.name[i]), &args)?;
            stack.push((end, lane.flags[i] & flags::UNFINISHED != 0));
        }
        close(&mut stack, w, None)?;
        x.spans += order.len() as u64;
        Ok(())
    }
}

/// Maps the trace's ids to the `u32`s `.spall` needs; other ids get fresh numbers.
struct IdMap {
    next: u32,
    remapped: u64,
}

impl IdMap {
    fn map(&mut self, id: ExtId) -> u32 {
        match id {
            ExtId::Num(n) if (0..=u32::MAX as i64).contains(&n) => n as u32,
            _ => {
                self.remapped += 1;
                self.next = self.next.wrapping_add(1);
                self.next
            }
        }
    }
}
