//! `diff --metric cpu`: CPU time per thread, from two system traces' schedulers. A thread
//! is its scheduling slices ([`sched::slice_durations`]): their count, total (the CPU
//! time) and per-slice times, put in the [`Group`]s `diff` compares, so the thresholds and
//! the noise test (on the slices' durations) judge them as they judge a function's.
//!
//! Threads are matched across the traces by their process's and their own names (pids
//! and tids change between runs), or by PID:TID with `--match-threads id`; threads with
//! the same names count together, as spans with the same name do.

use std::collections::BTreeMap;

use trace_model::{percentile, Group, NameStats, StrId, Trace};

use crate::sched;
use crate::select::{MatchThreads, Selection};
use crate::util::Fatal;

/// An error unless both traces hold scheduling data: a trace without it has no CPU time
/// to compare, which is not the same as none used.
pub fn require(base: &Trace, new: &Trace) -> Result<(), Fatal> {
    let has = |t: &Trace| t.sched().is_some_and(|s| !s.slices.is_empty());
    let why = match (has(base), has(new)) {
        (true, true) => return Ok(()),
        (false, false) => "neither BASE nor NEW has scheduling data".to_string(),
        (b, _) => {
            let (with, without) = if b { ("BASE", "NEW") } else { ("NEW", "BASE") };
            format!("{with} is a system trace and {without} has no scheduling data")
        }
    };
    Err(Fatal(format!(
        "--metric cpu compares CPU time per thread from the scheduler (sched_switch in \
         Perfetto, ftrace or systrace files): {why}"
    )))
}

/// Each process's name for the comparison: its own, else its main thread's (text system
/// traces name threads only), else its pid.
fn process_names(t: &Trace) -> Vec<String> {
    let named = |n: Option<trace_model::StrId>| n.map(|n| t.str(n)).filter(|n| !n.is_empty());
    let mut out: Vec<Option<String>> = (t.processes().iter())
        .map(|p| named(p.name).map(str::to_string))
        .collect();
    for th in t.threads() {
        let slot = &mut out[th.process as usize];
        if slot.is_none() && th.tid == th.pid {
            *slot = named(th.name).map(str::to_string);
        }
    }
    (out.into_iter().zip(t.processes()))
        .map(|(n, p)| n.unwrap_or_else(|| t.ext_id(p.pid).to_string()))
        .collect()
}

/// How a thread is named in the comparison: `process/thread` by name (a missing name is
/// its id), or `PID:TID name` by id.
fn thread_key(t: &Trace, processes: &[String], thread: u32, by: MatchThreads) -> String {
    let th = &t.threads()[thread as usize];
    let name = th.name.map(|n| t.str(n)).filter(|n| !n.is_empty());
    match by {
        MatchThreads::Id => {
            let id = format!("{}:{}", t.ext_id(th.pid), t.ext_id(th.tid));
            match name {
                Some(n) => format!("{id} {n}"),
                None => id,
            }
        }
        MatchThreads::Name => {
            let thread = name.map_or_else(|| t.ext_id(th.tid).to_string(), str::to_string);
            format!("{}/{thread}", processes[th.process as usize])
        }
    }
}

/// The threads' groups of `t` (`threads`: `--thread`'s pick, sorted; `None`: all), as
/// `sel` clips and filters them (`--filter` matches the key), each with its key.
pub fn groups(
    t: &Trace,
    sel: &Selection,
    threads: Option<Vec<u32>>,
    by: MatchThreads,
) -> Vec<(String, Group)> {
    let range = sel.filter(t, None).range;
    let per = sched::slice_durations(t, threads.as_deref(), range);
    let processes = process_names(t);
    let mut by_key: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (thread, durs) in per {
        let key = thread_key(t, &processes, thread, by);
        if sel.name.as_ref().is_none_or(|re| re.is_match(&key)) {
            by_key.entry(key).or_default().extend(durs);
        }
    }
    (by_key.into_iter())
        .map(|(key, mut durs)| {
            durs.sort_unstable();
            (key, group(durs))
        })
        .collect()
}

/// A thread's group: its slices as the occurrences, their sum as total and self time.
fn group(durs: Vec<i64>) -> Group {
    let count = durs.len() as i64;
    let total: i64 = durs.iter().sum();
    Group {
        stack: Vec::new(),
        stats: NameStats {
            name: StrId::EMPTY,
            count: count as u64,
            total_ns: total,
            self_ns: total,
            min_ns: durs.first().copied().unwrap_or(0),
            max_ns: durs.last().copied().unwrap_or(0),
            mean_ns: if count == 0 {
                0
            } else {
                (total + count / 2).div_euclid(count)
            },
            p50_ns: percentile(&durs, 50),
            p90_ns: percentile(&durs, 90),
            p99_ns: percentile(&durs, 99),
        },
        self_times: durs.clone(),
        durations: durs,
    }
}
