//! `spall-cli diff BASE NEW`: per-function (or per-stack) changes between two traces, with a
//! status a CI job can gate on.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};
use trace_model::changes::Status;
use trace_model::{Group, GroupBy, Measure, NoiseRules, Observation, Trace};

use crate::select::{no_such_thread, threads, Selection};
use crate::stats::csv_field;
use crate::util::{human_ns, load, Fatal};
use crate::{diff_flame, flame};

/// Which number of a function is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    #[value(name = "self")]
    SelfTime,
    Total,
    Mean,
    P50,
    P90,
    P99,
    Count,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::SelfTime => "self",
            Metric::Total => "total",
            Metric::Mean => "mean",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::Count => "count",
        }
    }

    fn of(self, g: &Group) -> i64 {
        let s = &g.stats;
        match self {
            Metric::SelfTime => s.self_ns,
            Metric::Total => s.total_ns,
            Metric::Mean => s.mean_ns,
            Metric::P50 => s.p50_ns,
            Metric::P90 => s.p90_ns,
            Metric::P99 => s.p99_ns,
            Metric::Count => s.count as i64,
        }
    }

    /// Values in the metric's unit, for people.
    fn show(self, v: i64) -> String {
        match self {
            Metric::Count => v.to_string(),
            _ => human_ns(v),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    Name,
    Stack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per function, for people.
    Table,
    /// Every number, and a summary per status.
    Json,
    /// One row per function, both sides' numbers.
    Csv,
    /// A pull-request comment: the changes, the unchanged folded away.
    Markdown,
    /// With --by stack: inferno's differential folded stacks, `STACK BASE_NS NEW_NS` (self
    /// time, as `flame` counts it), for inferno-flamegraph or flamegraph.pl.
    Folded,
    /// With --by stack: the differential flame graph (SVG): NEW's frames, red where NEW
    /// spends more self time, blue where less.
    Svg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 when something regressed.
    Regressed,
    /// Exit 1 on any change: regressed, improved, added or removed.
    Any,
    /// Always exit 0 (report only).
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MatchThreads {
    /// A thread of NEW is the one with the same name as BASE's (pids and tids change
    /// between runs).
    Name,
    /// A thread of NEW is the one with the same PID:TID.
    Id,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The trace before the change.
    pub base: PathBuf,
    /// The trace after it.
    pub new: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The number compared per function.
    #[arg(long, value_enum, default_value_t = Metric::SelfTime)]
    pub metric: Metric,
    /// Compare per function name, or per call stack (root;...;leaf).
    #[arg(long, value_enum, default_value_t = By::Name)]
    pub by: By,
    /// A change counts from this many percent of the base value.
    #[arg(long, value_name = "PCT", default_value = "5%", value_parser = crate::util::parse_percent)]
    pub threshold: f64,
    /// ...and from this absolute change over the trace (a per-call metric's change times
    /// its calls); default: 0.1% of BASE's duration.
    #[arg(long, value_name = "DURATION", value_parser = crate::util::parse_duration)]
    pub min_delta: Option<i64>,
    /// With 5 or more calls on each side, a change also needs a Mann-Whitney p-value below this.
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = crate::util::parse_alpha)]
    pub alpha: f64,
    /// When to exit with 1.
    #[arg(long, value_enum, default_value_t = FailOn::Regressed)]
    pub fail_on: FailOn,
    /// Only names matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Only this thread (repeatable): PID:TID, a thread name, a TID, or part of a name.
    #[arg(long, value_name = "THREAD")]
    pub thread: Vec<String>,
    /// How --thread finds BASE's threads in NEW.
    #[arg(long, value_enum, default_value_t = MatchThreads::Name)]
    pub match_threads: MatchThreads,
    /// Only this time range of each trace, relative to its start: START..END.
    #[arg(long, value_name = "START..END")]
    pub range: Option<String>,
    /// svg: the title.
    #[arg(long, default_value = "Differential flame graph")]
    pub title: String,
    /// svg: draw BASE's frames instead of NEW's, so that what NEW no longer runs shows.
    #[arg(long)]
    pub base_widths: bool,
}

/// A status as the reports name it: a change for the worse is a regression.
fn status_name(s: Status) -> &'static str {
    match s {
        Status::Slower => "regressed",
        Status::Faster => "improved",
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Unchanged => "unchanged",
    }
}

/// One row of the comparison.
struct Row<'a> {
    key: String,
    base: Option<&'a Group>,
    new: Option<&'a Group>,
    status: Status,
    delta: i64,
    ratio: Option<f64>,
    p_value: Option<f64>,
}

/// The rules that turn two numbers into a status: the metric, and the noise rules the
/// viewer's compare mode shares.
struct Rules {
    metric: Metric,
    noise: NoiseRules,
}

impl Rules {
    fn judge(&self, b: &Group, n: &Group) -> (Status, i64, Option<f64>, Option<f64>) {
        let m = self.metric;
        let (bv, nv) = (m.of(b), m.of(n));
        let ratio = (bv != 0).then(|| nv as f64 / bv as f64);
        let measure = match m {
            Metric::Count => Measure::Count,
            Metric::Total | Metric::SelfTime => Measure::Sum,
            _ => Measure::PerCall,
        };
        // Per-occurrence values: is their distribution shifted, or is it noise?
        fn side(m: Metric, g: &Group, value: i64) -> Observation<'_> {
            Observation {
                value,
                count: g.stats.count,
                samples: if m == Metric::SelfTime {
                    &g.self_times
                } else {
                    &g.durations
                },
            }
        }
        let j = self.noise.judge(measure, side(m, b, bv), side(m, n, nv));
        (j.verdict.into(), j.delta, ratio, j.p_value)
    }
}

/// Thread indices to look at; `None` for all.
type Threads = Option<Vec<u32>>;

/// The threads to compare in each trace.
fn pick_threads(
    base: &Trace,
    new: &Trace,
    specs: &[String],
    by: MatchThreads,
) -> Result<(Threads, Threads), Fatal> {
    let Some(in_base) = threads(base, specs)? else {
        return Ok((None, None));
    };
    let mut in_new = Vec::new();
    match by {
        MatchThreads::Id => {
            for spec in specs {
                let found = new.find_threads(spec);
                if found.is_empty() {
                    return Err(no_such_thread(new, spec));
                }
                in_new.extend(found);
            }
        }
        MatchThreads::Name => {
            for &t in &in_base {
                let th = &base.threads()[t as usize];
                let spec = match th.name {
                    Some(n) => base.str(n).to_string(),
                    // Unnamed threads can only be matched by id.
                    None => format!("{}:{}", base.ext_id(th.pid), base.ext_id(th.tid)),
                };
                let found = new.find_threads(&spec);
                if found.is_empty() {
                    return Err(Fatal(format!(
                        "--thread: NEW has no thread {spec:?} (threads are matched by name; \
                         --match-threads id matches PID:TID)"
                    )));
                }
                in_new.extend(found);
            }
        }
    }
    in_new.sort_unstable();
    in_new.dedup();
    Ok((Some(in_base), Some(in_new)))
}

fn key(t: &Trace, g: &Group) -> String {
    let names: Vec<&str> = g.stack.iter().map(|&n| t.str(n)).collect();
    names.join(";")
}

/// The groups of each trace and the rules that judge them.
fn prepare(
    a: &Args,
    sel: &Selection,
    base: &Trace,
    new: &Trace,
) -> Result<(Rules, Vec<Group>, Vec<Group>), Fatal> {
    let (tb, tn) = pick_threads(base, new, &sel.threads, a.match_threads)?;
    let by = match a.by {
        By::Name => GroupBy::Name,
        By::Stack => GroupBy::Stack,
    };
    let gb = base.groups(&sel.filter(base, tb), by);
    let gn = new.groups(&sel.filter(new, tn), by);
    let rules = Rules {
        metric: a.metric,
        noise: NoiseRules {
            threshold_pct: a.threshold,
            min_delta: a
                .min_delta
                .unwrap_or_else(|| NoiseRules::for_base(base).min_delta),
            alpha: a.alpha,
        },
    };
    Ok((rules, gb, gn))
}

/// The comparison `run` reports, as its CSV lines (header first), for traces already
/// loaded: what the fuzz target `diff` feeds hostile traces.
pub fn compare_csv(a: &Args, base: &Trace, new: &Trace) -> Result<Vec<String>, Fatal> {
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    let (rules, gb, gn) = prepare(a, &sel, base, new)?;
    Ok(csv_lines(&compare(base, new, &gb, &gn, &rules)))
}

/// Refuses a `--format` that the other options do not allow (before any load).
pub fn check_format(a: &Args) -> Result<(), Fatal> {
    let stacked = matches!(a.format, Format::Folded | Format::Svg);
    if stacked && (a.by != By::Stack || a.metric != Metric::SelfTime) {
        return Err(Fatal(
            "--format folded and svg compare self time per call stack: use them with \
             --by stack (and the default --metric self)"
                .into(),
        ));
    }
    Ok(())
}

/// The comparison `run --format json` prints, for traces already loaded.
pub fn report(a: &Args, base: &Trace, new: &Trace) -> Result<Value, Fatal> {
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    let (rules, gb, gn) = prepare(a, &sel, base, new)?;
    Ok(json_report(
        a,
        &rules,
        &compare(base, new, &gb, &gn, &rules),
    ))
}

/// What `--by stack --format folded` (or `svg`) writes, for traces already loaded.
pub fn write_stacked(
    a: &Args,
    base: &Trace,
    new: &Trace,
    out: &mut dyn std::io::Write,
) -> Result<(), Fatal> {
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    let stacks = stacks(a, &sel, base, new)?;
    Ok(write_stacks(a, &stacks, out)?)
}

fn stacks(
    a: &Args,
    sel: &Selection,
    base: &Trace,
    new: &Trace,
) -> Result<Vec<diff_flame::StackPair>, Fatal> {
    let threads = pick_threads(base, new, &sel.threads, a.match_threads)?;
    Ok(diff_flame::stacks(base, new, sel, threads))
}

fn write_stacks(
    a: &Args,
    stacks: &[diff_flame::StackPair],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match a.format {
        Format::Svg => diff_flame::write_svg(out, stacks, &a.title, a.base_widths),
        _ => diff_flame::write_folded(out, stacks),
    }
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    // Check the arguments before the (possibly long) loads.
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    check_format(a)?;
    // Both traces load at once: a diff takes as long as the larger load.
    let (base, new) = std::thread::scope(|s| {
        let b = s.spawn(|| load(&a.base));
        let n = load(&a.new);
        let b = b
            .join()
            .unwrap_or_else(|_| Err(Fatal("loading BASE failed".into())));
        (b, n)
    });
    let ((base, _), (new, _)) = (
        base.map_err(|e| Fatal(format!("BASE: {}", e.0)))?,
        new.map_err(|e| Fatal(format!("NEW: {}", e.0)))?,
    );
    let (rules, gb, gn) = prepare(a, &sel, &base, &new)?;
    let rows = compare(&base, &new, &gb, &gn, &rules);
    let counts = |s: Status| rows.iter().filter(|r| r.status == s).count();
    match a.format {
        Format::Json => println!("{:#}", json_report(a, &rules, &rows)),
        Format::Csv => print_csv(&rows),
        Format::Table => print_table(a.metric, &rows),
        Format::Markdown => print_markdown(a, &rules, &rows),
        Format::Folded | Format::Svg => {
            let stacks = stacks(a, &sel, &base, &new)?;
            flame::to_stdout(|out| write_stacks(a, &stacks, out))?;
        }
    }
    let failed = match a.fail_on {
        FailOn::Regressed => counts(Status::Slower) > 0,
        FailOn::Any => counts(Status::Unchanged) < rows.len(),
        FailOn::Never => false,
    };
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Rows matched by key, in report order: regressions and improvements by the size of the
/// change, then added, removed, and unchanged by their base value.
fn compare<'a>(
    base: &Trace,
    new: &Trace,
    gb: &'a [Group],
    gn: &'a [Group],
    rules: &Rules,
) -> Vec<Row<'a>> {
    let m = rules.metric;
    let mut in_new: HashMap<String, &Group> = gn.iter().map(|g| (key(new, g), g)).collect();
    let mut rows = Vec::new();
    for b in gb {
        let k = key(base, b);
        let row = match in_new.remove(&k) {
            Some(n) => {
                let (status, delta, ratio, p_value) = rules.judge(b, n);
                Row {
                    key: k,
                    base: Some(b),
                    new: Some(n),
                    status,
                    delta,
                    ratio,
                    p_value,
                }
            }
            None => Row {
                key: k,
                base: Some(b),
                new: None,
                status: Status::Removed,
                delta: -m.of(b),
                ratio: None,
                p_value: None,
            },
        };
        rows.push(row);
    }
    for n in gn {
        let k = key(new, n);
        if in_new.remove(&k).is_some() {
            rows.push(Row {
                key: k,
                base: None,
                new: Some(n),
                status: Status::Added,
                delta: m.of(n),
                ratio: None,
                p_value: None,
            });
        }
    }
    let size = |r: &Row<'_>| match r.status {
        Status::Unchanged => r.base.map_or(0, |g| m.of(g)).unsigned_abs(),
        _ => r.delta.unsigned_abs(),
    };
    rows.sort_by(|x, y| {
        x.status
            .cmp(&y.status)
            .then_with(|| size(y).cmp(&size(x)))
            .then_with(|| x.key.cmp(&y.key))
    });
    rows
}

fn side(g: Option<&Group>) -> Value {
    match g {
        None => Value::Null,
        Some(g) => {
            let s = &g.stats;
            json!({
                "count": s.count,
                "total_ns": s.total_ns,
                "self_ns": s.self_ns,
                "mean_ns": s.mean_ns,
                "p50_ns": s.p50_ns,
                "p90_ns": s.p90_ns,
                "p99_ns": s.p99_ns,
                "max_ns": s.max_ns,
            })
        }
    }
}

fn json_report(a: &Args, rules: &Rules, rows: &[Row<'_>]) -> Value {
    let functions: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "name": r.key,
                "status": status_name(r.status),
                "base": side(r.base),
                "new": side(r.new),
                "delta_ns": r.delta,
                "ratio": r.ratio,
                "p_value": r.p_value,
            })
        })
        .collect();
    let mut summary = serde_json::Map::new();
    for s in [
        Status::Slower,
        Status::Faster,
        Status::Added,
        Status::Removed,
        Status::Unchanged,
    ] {
        summary.insert(
            status_name(s).into(),
            json!(rows.iter().filter(|r| r.status == s).count()),
        );
    }
    json!({
        "base": a.base.display().to_string(),
        "new": a.new.display().to_string(),
        "metric": a.metric.name(),
        "by": if a.by == By::Stack { "stack" } else { "name" },
        "threshold_pct": rules.noise.threshold_pct,
        "min_delta_ns": rules.noise.min_delta,
        "alpha": rules.noise.alpha,
        "summary": summary,
        "functions": functions,
    })
}

fn print_csv(rows: &[Row<'_>]) {
    for line in csv_lines(rows) {
        println!("{line}");
    }
}

fn csv_lines(rows: &[Row<'_>]) -> Vec<String> {
    let mut lines = vec![
        "name,status,base_count,new_count,base_total_ns,new_total_ns,base_self_ns,new_self_ns,\
         base_mean_ns,new_mean_ns,base_p50_ns,new_p50_ns,base_p90_ns,new_p90_ns,base_p99_ns,\
         new_p99_ns,base_max_ns,new_max_ns,delta_ns,ratio,p_value"
            .to_string(),
    ];
    for r in rows {
        let mut f = vec![csv_field(&r.key), status_name(r.status).to_string()];
        let cols = |g: Option<&Group>| -> [String; 8] {
            match g {
                None => Default::default(),
                Some(g) => {
                    let s = &g.stats;
                    [
                        s.count.to_string(),
                        s.total_ns.to_string(),
                        s.self_ns.to_string(),
                        s.mean_ns.to_string(),
                        s.p50_ns.to_string(),
                        s.p90_ns.to_string(),
                        s.p99_ns.to_string(),
                        s.max_ns.to_string(),
                    ]
                }
            }
        };
        let (b, n) = (cols(r.base), cols(r.new));
        for i in 0..8 {
            f.push(b[i].clone());
            f.push(n[i].clone());
        }
        f.push(r.delta.to_string());
        f.push(r.ratio.map_or(String::new(), |x| format!("{x:.6}")));
        f.push(r.p_value.map_or(String::new(), |x| format!("{x:.3e}")));
        lines.push(f.join(","));
    }
    lines
}

fn change(r: &Row<'_>) -> String {
    match r.ratio {
        Some(x) => format!("{:+.1}%", (x - 1.0) * 100.0),
        None => "–".into(),
    }
}

fn p_text(r: &Row<'_>) -> String {
    r.p_value.map_or("–".into(), |p| {
        if p < 1e-4 {
            "<0.0001".into()
        } else {
            format!("{p:.4}")
        }
    })
}

fn print_table(m: Metric, rows: &[Row<'_>]) {
    let val = |g: Option<&Group>| g.map_or("–".into(), |g| m.show(m.of(g)));
    println!(
        "{:<10} {:>12} {:>12} {:>12} {:>8} {:>8}  name   ({} per function)",
        "status",
        "base",
        "new",
        "delta",
        "change",
        "p",
        m.name()
    );
    for r in rows {
        println!(
            "{:<10} {:>12} {:>12} {:>12} {:>8} {:>8}  {}",
            status_name(r.status),
            val(r.base),
            val(r.new),
            format!("{}{}", if r.delta > 0 { "+" } else { "" }, m.show(r.delta)),
            change(r),
            p_text(r),
            r.key.escape_debug()
        );
    }
    if rows.is_empty() {
        println!("(no spans matched in either trace)");
    }
}

/// Markdown for a pull-request comment: a headline, changed rows by kind, and the unchanged
/// ones folded away.
fn print_markdown(a: &Args, rules: &Rules, rows: &[Row<'_>]) {
    let m = a.metric;
    let n = |s: Status| rows.iter().filter(|r| r.status == s).count();
    let icon = if n(Status::Slower) > 0 {
        "🔴"
    } else {
        "🟢"
    };
    println!(
        "### {icon} spall diff: {} regressed, {} improved, {} added, {} removed, {} unchanged\n",
        n(Status::Slower),
        n(Status::Faster),
        n(Status::Added),
        n(Status::Removed),
        n(Status::Unchanged)
    );
    println!(
        "Metric: **{}** per {}; a change counts at ±{}% and at least {}{}.\n",
        m.name(),
        if a.by == By::Stack {
            "call stack"
        } else {
            "function"
        },
        rules.noise.threshold_pct,
        m.show(if m == Metric::Count {
            0
        } else {
            rules.noise.min_delta
        }),
        if m == Metric::Count {
            String::new()
        } else {
            format!(", beyond noise (Mann-Whitney p < {})", rules.noise.alpha)
        }
    );
    let md = |s: &str| s.replace('|', "\\|").replace('`', "'");
    let val = |g: Option<&Group>| g.map_or("–".into(), |g| m.show(m.of(g)));
    let table = |title: &str, which: &[Status]| {
        let sel: Vec<&Row<'_>> = rows.iter().filter(|r| which.contains(&r.status)).collect();
        if sel.is_empty() {
            return;
        }
        println!("#### {title}\n");
        println!("| function | base | new | delta | change | p | calls (base → new) |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for r in sel {
            let calls = |g: Option<&Group>| g.map_or("–".into(), |g| g.stats.count.to_string());
            println!(
                "| `{}` | {} | {} | {}{} | {} | {} | {} → {} |",
                md(&r.key),
                val(r.base),
                val(r.new),
                if r.delta > 0 { "+" } else { "" },
                m.show(r.delta),
                change(r),
                p_text(r),
                calls(r.base),
                calls(r.new)
            );
        }
        println!();
    };
    table("Regressions", &[Status::Slower]);
    table("Improvements", &[Status::Faster]);
    table("Added and removed", &[Status::Added, Status::Removed]);
    let same: Vec<&Row<'_>> = rows
        .iter()
        .filter(|r| r.status == Status::Unchanged)
        .collect();
    if !same.is_empty() {
        println!(
            "<details><summary>{} unchanged (largest first)</summary>\n",
            same.len()
        );
        println!("| function | base | new | change |");
        println!("|---|---:|---:|---:|");
        for r in same.iter().take(50) {
            println!(
                "| `{}` | {} | {} | {} |",
                md(&r.key),
                val(r.base),
                val(r.new),
                change(r)
            );
        }
        if same.len() > 50 {
            println!("| … {} more | | | |", same.len() - 50);
        }
        println!("\n</details>");
    }
}
