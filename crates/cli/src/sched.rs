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
    let idle = (0..t.threads().len() as u32).find(|&i| {
        let th = &t.threads()[i as usize];
        th.tid == ExtId::Num(0) && th.pid == ExtId::Num(0)
    });
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
        s.states.len(),
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
        "thread_states": s.states.len(),
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
