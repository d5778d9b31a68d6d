//! `spall-cli stats`: per name (or stack) of a trace's spans; of a sampling profile, per
//! function, its samples and its total and self weight in the profile's unit (nanoseconds,
//! bytes or a count), with their shares of the whole.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use trace_model::{weight_text, NameStats, SampleStats, SampleUnit, Trace};

use crate::select::{threads, Selection};
use crate::util::{human_ns, load, Fatal};
use crate::{SortBy, StatsFormat};

#[derive(Debug)]
pub struct Args {
    pub trace: PathBuf,
    pub format: StatsFormat,
    pub sort: SortBy,
    pub top: Option<usize>,
    pub filter: Option<String>,
    pub threads: Vec<String>,
    pub range: Option<String>,
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    // Check the arguments before the (possibly long) load.
    let sel = Selection::parse(&a.threads, a.filter.as_deref(), a.range.as_deref())?;
    let (trace, _) = load(&a.trace)?;
    if trace.is_sampled() {
        return run_samples(&trace, &sel, a);
    }
    let rows = rows(&trace, &sel, a.sort, a.top)?;
    match a.format {
        StatsFormat::Json => {
            let functions: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    json!({
                        "name": trace.str(r.name),
                        "count": r.count,
                        "total_ns": r.total_ns,
                        "self_ns": r.self_ns,
                        "min_ns": r.min_ns,
                        "max_ns": r.max_ns,
                        "mean_ns": r.mean_ns,
                        "p50_ns": r.p50_ns,
                        "p90_ns": r.p90_ns,
                        "p99_ns": r.p99_ns,
                    })
                })
                .collect();
            let mut out = json!({ "functions": functions });
            if trace.sched().is_some() {
                let cpu = crate::sched::cpu_time(&trace);
                let top = cpu.iter().take(a.top.unwrap_or(usize::MAX));
                out["cpu_time"] = top.map(crate::sched::row_json).collect();
            }
            println!("{out:#}");
        }
        StatsFormat::Csv => {
            println!("name,count,total_ns,self_ns,min_ns,max_ns,mean_ns,p50_ns,p90_ns,p99_ns");
            for r in &rows {
                println!(
                    "{},{},{},{},{},{},{},{},{},{}",
                    csv_field(trace.str(r.name)),
                    r.count,
                    r.total_ns,
                    r.self_ns,
                    r.min_ns,
                    r.max_ns,
                    r.mean_ns,
                    r.p50_ns,
                    r.p90_ns,
                    r.p99_ns
                );
            }
        }
        StatsFormat::Table => {
            println!(
                "{:>10} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}  name",
                "count", "total", "self", "mean", "min", "max", "p90", "p99"
            );
            for r in &rows {
                println!(
                    "{:>10} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}  {}",
                    r.count,
                    human_ns(r.total_ns),
                    human_ns(r.self_ns),
                    human_ns(r.mean_ns),
                    human_ns(r.min_ns),
                    human_ns(r.max_ns),
                    human_ns(r.p90_ns),
                    human_ns(r.p99_ns),
                    trace.str(r.name).escape_debug()
                );
            }
            if rows.is_empty() {
                println!("(no spans matched)");
            }
            if trace.sched().is_some() {
                println!("\nCPU time per thread (scheduling slices):");
                let cpu = crate::sched::cpu_time(&trace);
                crate::sched::print_table(&cpu, a.top.unwrap_or(30));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The rows `stats` reports: the selected spans' statistics per name, sorted by `sort`
/// (ties by name), the first `top` of them.
pub fn rows(
    trace: &Trace,
    sel: &Selection,
    sort: SortBy,
    top: Option<usize>,
) -> Result<Vec<NameStats>, Fatal> {
    let filter = sel.filter(trace, threads(trace, &sel.threads)?);
    let mut rows = trace.stats(&filter);
    let by_name = |a: &NameStats, b: &NameStats| trace.str(a.name).cmp(trace.str(b.name));
    match sort {
        SortBy::SelfTime => {
            rows.sort_by(|x, y| y.self_ns.cmp(&x.self_ns).then_with(|| by_name(x, y)))
        }
        SortBy::Total => {
            rows.sort_by(|x, y| y.total_ns.cmp(&x.total_ns).then_with(|| by_name(x, y)))
        }
        SortBy::Count => rows.sort_by(|x, y| y.count.cmp(&x.count).then_with(|| by_name(x, y))),
        SortBy::Mean => rows.sort_by(|x, y| y.mean_ns.cmp(&x.mean_ns).then_with(|| by_name(x, y))),
        SortBy::Max => rows.sort_by(|x, y| y.max_ns.cmp(&x.max_ns).then_with(|| by_name(x, y))),
        SortBy::Name => rows.sort_by(by_name),
    }
    if let Some(n) = top {
        rows.truncate(n);
    }
    Ok(rows)
}

/// RFC 4180: quote fields holding commas, quotes or line breaks; double inner quotes.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Prints the statistics of `trace`'s counted samples ([`Trace::sample_kind`]).
fn run_samples(trace: &Trace, sel: &Selection, a: &Args) -> Result<ExitCode, Fatal> {
    let filter = sel.filter(trace, threads(trace, &sel.threads)?);
    let mut rows = trace.sample_stats(filter.threads.as_deref(), filter.range);
    if let Some(re) = &sel.name {
        rows.retain(|r| re.is_match(trace.str(r.name)));
    }
    sort_samples(trace, &mut rows, a.sort);
    if let Some(n) = a.top {
        rows.truncate(n);
    }
    let (kind, unit) = trace
        .sample_kind()
        .map_or(("", SampleUnit::Count), |(k, u)| (trace.str(k), u));
    let all = trace.sample_total(filter.threads.as_deref(), filter.range);
    let share = |w: i64| {
        if all == 0 {
            0.0
        } else {
            w as f64 * 100.0 / all as f64
        }
    };
    match a.format {
        StatsFormat::Json => {
            let functions: Vec<serde_json::Value> = (rows.iter())
                .map(|r| {
                    json!({
                        "name": trace.str(r.name),
                        "samples": r.samples,
                        "total": r.total,
                        "self": r.self_weight,
                    })
                })
                .collect();
            let out =
                json!({"kind": kind, "unit": unit.name(), "weight": all, "functions": functions});
            println!("{out:#}");
        }
        StatsFormat::Csv => {
            println!("name,samples,total,self");
            for r in &rows {
                let name = csv_field(trace.str(r.name));
                println!("{name},{},{},{}", r.samples, r.total, r.self_weight);
            }
        }
        StatsFormat::Table => {
            println!(
                "{kind} samples, weight in {}: {}",
                unit.name(),
                weight_text(unit, all)
            );
            println!(
                "{:>10} {:>14} {:>7} {:>14} {:>7}  name",
                "samples", "total", "%", "self", "%"
            );
            for r in &rows {
                println!(
                    "{:>10} {:>14} {:>6.2}% {:>14} {:>6.2}%  {}",
                    r.samples,
                    weight_text(unit, r.total),
                    share(r.total),
                    weight_text(unit, r.self_weight),
                    share(r.self_weight),
                    trace.str(r.name).escape_debug()
                );
            }
            if rows.is_empty() {
                println!("(no samples matched)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Sorts by `by` (mean and max, which samples do not have, sort by self), ties by name.
fn sort_samples(trace: &Trace, rows: &mut [SampleStats], by: SortBy) {
    let name = |a: &SampleStats, b: &SampleStats| trace.str(a.name).cmp(trace.str(b.name));
    match by {
        SortBy::Total => rows.sort_by(|x, y| y.total.cmp(&x.total).then_with(|| name(x, y))),
        SortBy::Count => rows.sort_by(|x, y| y.samples.cmp(&x.samples).then_with(|| name(x, y))),
        SortBy::Name => rows.sort_by(name),
        SortBy::SelfTime | SortBy::Mean | SortBy::Max => {
            rows.sort_by(|x, y| y.self_weight.cmp(&x.self_weight).then_with(|| name(x, y)))
        }
    }
}
