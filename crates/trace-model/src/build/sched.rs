//! A system trace's scheduler records ([`crate::sched`]) resolved onto the builder's
//! threads: each tid is the thread its process tree (or parent, for a new thread) puts in
//! a process, else the thread already seen with that tid, else a thread of process 0.

use hashbrown::HashMap;

use super::TraceBuilder;
use crate::sched::{derive, SchedData};
use crate::span::ExtId;

/// Tids found by index rather than by hash (Linux's default `pid_max` is 4M).
const DENSE_TIDS: usize = 1 << 22;

impl TraceBuilder {
    /// Derives the scheduling data, creating and naming the threads it refers to; `None`
    /// when the trace held no scheduler records.
    pub(super) fn take_sched(&mut self) -> Option<SchedData> {
        if self.sched.is_empty() {
            return None;
        }
        let c = std::mem::take(&mut self.sched);
        if let Some((a, b)) = c.span {
            self.time(a, b);
        }
        let groups = derive::thread_groups(&c);
        let mut by_tid: HashMap<i64, u32> = HashMap::new();
        for (i, t) in self.threads.iter().enumerate() {
            if let ExtId::Num(tid) = t.tid {
                let e = by_tid.entry(tid).or_insert(i as u32);
                if self.threads[*e as usize].pid == ExtId::Num(0) {
                    *e = i as u32;
                }
            }
        }
        let mut groups: Vec<(i32, i32)> = groups.into_iter().collect();
        groups.sort_unstable();
        for (tid, g) in groups {
            let t = self.thread_of((ExtId::Num(g.into()), ExtId::Num(tid.into())));
            by_tid.insert(tid.into(), t);
        }
        let mut diags = std::mem::take(&mut self.diags);
        // The replay asks for a thread a few times a record: tids below DENSE_TIDS are
        // found by index, the map asked once each.
        let mut dense: Vec<u32> = Vec::new();
        let mut thread = |tid: i32| -> u32 {
            let slot = usize::try_from(tid).ok().filter(|&i| i < DENSE_TIDS);
            if let Some(&t) = slot.and_then(|i| dense.get(i)).filter(|&&t| t != u32::MAX) {
                return t;
            }
            let tid = i64::from(tid);
            let t = match by_tid.get(&tid) {
                Some(&t) => t,
                None => {
                    let t = self.thread_of((ExtId::Num(0), ExtId::Num(tid)));
                    by_tid.insert(tid, t);
                    t
                }
            };
            if let Some(i) = slot {
                if dense.len() <= i {
                    dense.resize(i + 1, u32::MAX);
                }
                dense[i] = t;
            }
            t
        };
        let idle = thread(0);
        let d = derive::derive(c, &mut thread, Some(idle), &mut diags);
        self.diags = diags;
        for (t, name) in d.names {
            let th = &mut self.threads[t as usize];
            th.name = th.name.or(Some(name));
        }
        let swapper = self.strings.intern("swapper");
        self.threads[idle as usize].name = Some(swapper);
        Some(d.data)
    }
}
