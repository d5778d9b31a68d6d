//! What `info` and `stats` say about a system trace: its CPUs, scheduling slices and
//! thread states, and the CPU time of each thread (its scheduling slices' total; a slice
//! still running at the end counts up to the trace's end).

use serde_json::{json, Value};
use trace_model::{ExtId, Trace};

use crate::util::human_ns;

/// One thread's CPU time.
#[derive(Clone, Debug)]
pub struct CpuTime {
    pub pid: String,
    pub tid: String,
    pub name: String,
    pub slices: u64,
    pub ns: i64,
}

fn id(e: ExtId, t: &Trace) -> String {
    match e {
        ExtId::Num(n) => n.to_string(),
        ExtId::Str(s) => t.str(s).to_string(),
    }
}

/// The threads' CPU time, most first, the idle task (tid 0) left out; empty for traces
/// with no scheduling data.
pub fn cpu_time(t: &Trace) -> Vec<CpuTime> {
    let Some(s) = t.sched() else {
        return Vec::new();
    };
    let idle = idle_thread(t);
    (s.cpu_time(t.end_ns(), idle).into_iter())
        .map(|(thread, slices, ns)| {
            let th = &t.threads()[thread as usize];
            CpuTime {
                pid: id(th.pid, t),
                tid: id(th.tid, t),
                name: th.name.map_or(String::new(), |n| t.str(n).to_string()),
                slices,
                ns,
            }
        })
        .collect()
}

/// `info`'s line: CPUs, slices, thread states and CPU counters; `None` for other traces.
pub fn summary(t: &Trace) -> Option<String> {
    let s = t.sched()?;
    Some(format!(
        "{} CPUs, {} scheduling slices, {} thread states, {} CPU counter series",
        s.cpus.len(),
        s.slices.len(),
        s.state_count(),
        s.counters.len()
    ))
}

/// `info --format json`'s `sched` object (null for other traces): counts and the ten
/// busiest threads.
pub fn json(t: &Trace) -> Value {
    let Some(s) = t.sched() else {
        return Value::Null;
    };
    json!({
        "cpus": s.cpus,
        "slices": s.slices.len(),
        "thread_states": s.state_count(),
        "cpu_counters": s.counters.len(),
        "cpu_time": cpu_time(t).iter().take(10).map(row_json).collect::<Vec<_>>(),
    })
}

pub fn row_json(c: &CpuTime) -> Value {
    json!({"pid": c.pid, "tid": c.tid, "name": c.name, "slices": c.slices, "cpu_ns": c.ns})
}

/// Prints the CPU time table, the first `top` threads.
pub fn print_table(rows: &[CpuTime], top: usize) {
    println!(
        "{:>12} {:>10} {:>8} {:>8}  thread",
        "cpu time", "slices", "pid", "tid"
    );
    for c in rows.iter().take(top) {
        println!(
            "{:>12} {:>10} {:>8} {:>8}  {}",
            human_ns(c.ns),
            c.slices,
            c.pid,
            c.tid,
            c.name.escape_debug()
        );
    }
}

/// The idle task's thread (pid 0, tid 0), which CPU time leaves out.
fn idle_thread(t: &Trace) -> Option<u32> {
    (0..t.threads().len() as u32).find(|&i| {
        let th = &t.threads()[i as usize];
        th.tid == ExtId::Num(0) && th.pid == ExtId::Num(0)
    })
}

/// Each thread's scheduling slices as durations, clipped to `range` (`[start, end)` in
/// trace nanoseconds; a slice still running ends as `SchedData::slice_end` says), for the
/// threads in `threads` (`None`: all but the idle task). Threads with no slice in the range
/// are left out. What `diff --metric cpu` and `check`'s `cpu` limit count.
pub fn slice_durations(
    t: &Trace,
    threads: Option<&[u32]>,
    range: Option<(i64, i64)>,
) -> std::collections::HashMap<u32, Vec<i64>> {
    let mut out: std::collections::HashMap<u32, Vec<i64>> = Default::default();
    let Some(s) = t.sched() else {
        return out;
    };
    let idle = idle_thread(t);
    let (from, to) = range.unwrap_or((i64::MIN, i64::MAX));
    // The slices are by CPU, then time: the index is what `slice_end` needs.
    for (i, sl) in s.slices.iter().enumerate() {
        let keep = match threads {
            Some(list) => list.binary_search(&sl.thread).is_ok(),
            None => Some(sl.thread) != idle,
        };
        let end = s.slice_end(i, t.end_ns());
        let (a, b) = (sl.ts.max(from), end.min(to));
        if keep && (b > a || (a == b && sl.ts >= from && sl.ts < to)) {
            out.entry(sl.thread).or_default().push(b - a);
        }
    }
    out
}
