//! `spall-cli stats` of a sampling profile: per function, its samples and its total and
//! self weight in the profile's unit (nanoseconds, bytes or a count), with their shares of
//! the whole.

use std::process::ExitCode;

use serde_json::json;
use trace_model::{weight_text, SampleStats, SampleUnit, Trace};

use crate::select::{threads, Selection};
use crate::stats::{csv_field, Args};
use crate::util::Fatal;
use crate::{SortBy, StatsFormat};

/// Prints the statistics of `trace`'s counted samples ([`Trace::sample_kind`]).
pub fn run(trace: &Trace, sel: &Selection, a: &Args) -> Result<ExitCode, Fatal> {
    let filter = sel.filter(trace, threads(trace, &sel.threads)?);
    let mut rows = trace.sample_stats(filter.threads.as_deref(), filter.range);
    if let Some(re) = &sel.name {
        rows.retain(|r| re.is_match(trace.str(r.name)));
    }
    sort(trace, &mut rows, a.sort);
    if let Some(n) = a.top {
        rows.truncate(n);
    }
    let (kind, unit) = trace
        .sample_kind()
        .map_or(("", SampleUnit::Count), |(k, u)| (trace.str(k), u));
    let all: i64 = (trace.samples().iter())
        .filter(|s| trace.str(s.kind) == kind && s.unit == unit)
        .filter(|s| {
            filter
                .threads
                .as_ref()
                .is_none_or(|t| t.contains(&s.thread))
        })
        .map(|s| s.total_weight())
        .fold(0, i64::saturating_add);
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
fn sort(trace: &Trace, rows: &mut [SampleStats], by: SortBy) {
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
