//! The display order of a trace's processes and threads, and its main threads: the one
//! rule every view (the desktop viewer, the page, the track filter) shows them by.
//!
//! A trace's own indices ([`Trace::processes`], [`Trace::threads`]) follow the file's sort
//! indices and ids and never move: SQL ids, the transfer and saved views refer to them.
//! The display order puts the work first, as chrome://tracing and Perfetto do:
//!
//! - processes by the file's `process_sort_index` where given (lower first), then by the
//!   busy time of their threads (most first), then by pid;
//! - in a process, threads with work (spans or CPU samples) before those without; among
//!   them by `thread_sort_index` where given, then the main thread, then by busy time,
//!   then by tid.
//!
//! A viewer draws a process's own counters and async tracks after its threads.

use std::cmp::Reverse;

use crate::span::{flags, ExtId};
use crate::trace::Trace;

/// Processes and threads in display order (see the module's overview).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisplayOrder {
    /// Indices into [`Trace::processes`].
    pub processes: Vec<u32>,
    /// Per process (by its index in [`Trace::processes`]), its threads (indices into
    /// [`Trace::threads`]).
    pub threads: Vec<Vec<u32>>,
}

impl Trace {
    /// The display order of the processes and threads: O(threads × log threads + spans at
    /// depth 0).
    pub fn display_order(&self) -> DisplayOrder {
        let mut sampled = vec![0i64; self.threads().len()];
        for s in self.samples() {
            if let (Some(a), Some(b)) = (s.ts.first(), s.ts.last()) {
                if let Some(slot) = sampled.get_mut(s.thread as usize) {
                    *slot = slot.saturating_add(b.saturating_sub(*a).max(1));
                }
            }
        }
        let busy: Vec<i64> = (0..self.threads().len())
            .map(|t| self.busy_ns(t as u32).saturating_add(sampled[t]))
            .collect();
        let threads: Vec<Vec<u32>> = (0..self.processes().len() as u32)
            .map(|p| {
                let main = self.main_thread(p);
                let mut v = self.processes()[p as usize].threads.clone();
                // Stable: ties keep the trace's order (sort index, then tid).
                v.sort_by_cached_key(|&t| {
                    let th = &self.threads()[t as usize];
                    let work = !th.lanes.is_empty() || sampled[t as usize] > 0;
                    let sort = th.sort_index;
                    (
                        !work,
                        sort.is_none(),
                        sort,
                        main != Some(t),
                        Reverse(busy[t as usize]),
                    )
                });
                v
            })
            .collect();
        let process_busy = |p: u32| -> i64 {
            (self.processes()[p as usize].threads.iter())
                .fold(0i64, |a, &t| a.saturating_add(busy[t as usize]))
        };
        let mut processes: Vec<u32> = (0..self.processes().len() as u32).collect();
        // Stable: ties keep the trace's order, by pid.
        processes.sort_by_cached_key(|&p| {
            let sort = self.processes()[p as usize].sort_index;
            (sort.is_none(), sort, Reverse(process_busy(p)))
        });
        DisplayOrder { processes, threads }
    }

    /// The time a thread's finished outermost spans cover, in nanoseconds (they never
    /// overlap). A span never closed runs to the trace's end and says when the thread
    /// began to wait as often as when it began to work, so it does not count.
    pub fn busy_ns(&self, thread: u32) -> i64 {
        let Some(l) = self
            .threads()
            .get(thread as usize)
            .and_then(|t| t.lanes.first())
        else {
            return 0;
        };
        (l.dur.iter().zip(&l.flags))
            .filter(|(_, &f)| f & flags::UNFINISHED == 0)
            .fold(0i64, |a, (&d, _)| a.saturating_add(d.max(0)))
    }

    /// A process's main thread, as a viewer shows it first: the one Chrome names `Cr…Main`
    /// (`CrBrowserMain`, `CrRendererMain`, `CrGpuMain`), whatever its tid (not the pid on
    /// macOS), else [`pid_thread`](Self::pid_thread).
    pub fn main_thread(&self, process: u32) -> Option<u32> {
        let p = self.processes().get(process as usize)?;
        let chrome = p.threads.iter().copied().find(|&t| {
            self.threads()[t as usize].name.is_some_and(|n| {
                let n = self.str(n);
                n.starts_with("Cr") && n.ends_with("Main")
            })
        });
        chrome.or_else(|| self.pid_thread(process))
    }

    /// The thread whose tid is its process's pid: the main thread as trace_processor
    /// knows it (its `thread` table adds one where a process has none).
    pub fn pid_thread(&self, process: u32) -> Option<u32> {
        let p = self.processes().get(process as usize)?;
        let pid: ExtId = p.pid;
        (p.threads.iter().copied()).find(|&t| self.threads()[t as usize].tid == pid)
    }
}

#[cfg(test)]
mod tests {
    use crate::{load_bytes, Trace};

    use spall_test_support::{json_array, json_meta as meta, json_spans as spans};

    fn load(events: &[String]) -> Trace {
        load_bytes(json_array(&events.concat()).as_bytes()).unwrap()
    }

    fn tids(t: &Trace, threads: &[u32]) -> Vec<String> {
        (threads.iter())
            .map(|&i| t.ext_id(t.threads()[i as usize].tid).to_string())
            .collect()
    }

    #[test]
    fn threads_with_work_first_by_sort_index_then_main_then_busy_time() {
        let instant = r#"{"ph":"i","s":"t","name":"i","ts":0,"pid":10,"tid":3},"#;
        let t = load(&[
            instant.to_string(),
            spans(10, 4, 1),
            spans(10, 5, 3),
            spans(10, 7, 1),
            spans(10, 9, 1),
            spans(10, 10, 1),
            meta("thread_name", 10, 7, r#""name":"CrRendererMain""#),
            meta("thread_sort_index", 10, 9, r#""sort_index":-1"#),
            meta("thread_sort_index", 10, 3, r#""sort_index":-5"#),
        ]);
        let p = t.threads()[0].process;
        assert_eq!(
            t.main_thread(p).map(|m| tids(&t, &[m])),
            Some(vec!["7".into()])
        );
        assert_eq!(
            t.pid_thread(p).map(|m| tids(&t, &[m])),
            Some(vec!["10".into()])
        );
        let order = t.display_order();
        // 9 by its sort index; 7 by its Chrome name; then the busier 5 before 10 and 4
        // (a tie: the trace's order); 3, with a lower sort index but no spans, last.
        assert_eq!(
            tids(&t, &order.threads[p as usize]),
            ["9", "7", "5", "4", "10", "3"]
        );
    }

    #[test]
    fn a_span_never_closed_is_no_busy_time() {
        let t = load(&[
            spans(1, 1, 2),
            r#"{"ph":"B","name":"wait","ts":0,"pid":1,"tid":2},"#.to_string(),
            r#"{"ph":"X","name":"late","ts":1000,"dur":1,"pid":1,"tid":3},"#.to_string(),
        ]);
        let busy: Vec<i64> = (0..3).map(|i| t.busy_ns(i)).collect();
        assert_eq!(busy, [2_000, 0, 1_000]);
        assert_eq!(tids(&t, &t.display_order().threads[0]), ["1", "3", "2"]);
    }

    #[test]
    fn processes_by_sort_index_then_busy_time_then_pid() {
        let t = load(&[
            spans(10, 1, 6),
            spans(20, 1, 1),
            spans(30, 1, 1),
            spans(40, 1, 1),
            spans(50, 1, 10),
            spans(60, 1, 1),
            meta("process_sort_index", 30, 0, r#""sort_index":5"#),
            meta("process_sort_index", 40, 0, r#""sort_index":-2"#),
        ]);
        let pids: Vec<String> = (t.display_order().processes.iter())
            .map(|&p| t.ext_id(t.processes()[p as usize].pid).to_string())
            .collect();
        assert_eq!(pids, ["40", "30", "50", "10", "20", "60"]);
    }
}
