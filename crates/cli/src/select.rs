//! Which spans a command looks at: `--thread`, `--filter` and `--range`, shared by `stats`,
//! `diff` and `check`.

use trace_model::{NameFilter, StatsFilter, Trace};

use crate::util::{parse_range, Fatal};

/// How a thread of one trace is matched to a thread of another (`diff`, `check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchThreads {
    /// A thread of NEW is the one with the same name as BASE's (pids and tids change
    /// between runs).
    Name,
    /// A thread of NEW is the one with the same PID:TID.
    Id,
}

/// The parsed options, checked before any trace is loaded.
#[derive(Debug, Default)]
pub struct Selection {
    pub threads: Vec<String>,
    pub name: Option<regex::Regex>,
    /// Relative to the trace's start.
    pub range: Option<(Option<i64>, Option<i64>)>,
}

impl Selection {
    pub fn parse(
        threads: &[String],
        filter: Option<&str>,
        range: Option<&str>,
    ) -> Result<Selection, Fatal> {
        let name = filter
            .map(|re| regex::Regex::new(re).map_err(|e| Fatal(format!("--filter: {e}"))))
            .transpose()?;
        let range = range
            .map(|r| parse_range(r).map_err(|e| Fatal(format!("--range {e}"))))
            .transpose()?;
        Ok(Selection {
            threads: threads.to_vec(),
            name,
            range,
        })
    }

    /// The stats filter for `trace`, with the thread indices already resolved.
    pub fn filter(&self, trace: &Trace, threads: Option<Vec<u32>>) -> StatsFilter {
        StatsFilter {
            threads,
            name: self.name.clone().map(NameFilter::Regex),
            range: self.range.map(|(s, e)| {
                (
                    s.map_or(i64::MIN, |s| trace.start_ns().saturating_add(s)),
                    e.map_or(i64::MAX, |e| trace.start_ns().saturating_add(e)),
                )
            }),
        }
    }
}

/// Thread indices for every spec ([`Trace::find_threads`]; `None`: no specs, all threads);
/// a spec matching nothing is an error that lists some of the threads there are.
pub fn threads(trace: &Trace, specs: &[String]) -> Result<Option<Vec<u32>>, Fatal> {
    if specs.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for spec in specs {
        let found = trace.find_threads(spec);
        if found.is_empty() {
            return Err(no_such_thread(trace, spec));
        }
        out.extend(found);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}

pub fn no_such_thread(trace: &Trace, spec: &str) -> Fatal {
    let known: Vec<String> = trace
        .threads()
        .iter()
        .take(10)
        .map(|th| {
            let id = format!("{}:{}", trace.ext_id(th.pid), trace.ext_id(th.tid));
            match th.name.map(|n| trace.str(n)).filter(|n| !n.is_empty()) {
                Some(n) => format!("{id} ({n})"),
                None => id,
            }
        })
        .collect();
    Fatal(format!(
        "--thread {spec}: no such thread (use PID:TID, a thread name, a TID or part of a \
         name); the trace has {}{}",
        known.join(", "),
        if trace.threads().len() > 10 {
            ", ..."
        } else {
            ""
        }
    ))
}
