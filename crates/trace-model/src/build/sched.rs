//! A system trace's scheduler records ([`crate::sched`]) resolved onto the builder's
//! threads: each tid is the thread its process tree (or parent, for a new thread) puts in
//! a process, else the thread already seen with that tid, else a thread of process 0.

use hashbrown::HashMap;

use super::TraceBuilder;
use crate::sched::{derive, SchedData};
use crate::span::ExtId;

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
        // The replay keeps the threads of most tids by index: the map is asked once each.
        let mut thread = |tid: i32| -> u32 {
            let tid = i64::from(tid);
            *by_tid
                .entry(tid)
                .or_insert_with(|| self.thread_of((ExtId::Num(0), ExtId::Num(tid))))
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
