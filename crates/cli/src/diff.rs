//! `spall-cli diff BASE NEW`: per-function (or per-stack) changes between two traces, with a
//! status a CI job can gate on.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};
use trace_model::changes::Status;
use trace_model::{weight_text, Group, GroupBy, Measure, NoiseRules, Observation, Trace, Verdict};

use crate::diff_row::{status_name, Row};
use crate::diff_samples::{ppm, Profile};
pub use crate::min_delta::MinDelta;
pub use crate::select::MatchThreads;
use crate::select::{no_such_thread, threads, Selection};
use crate::stats::csv_field;
use crate::util::{human_ns, load, Fatal};
use crate::{diff_cpu, diff_flame, diff_samples, flame};

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
    /// Of a profile: self weight as a share of the profile's whole weight.
    SelfShare,
    /// Of a profile: total weight as a share of the profile's whole weight.
    TotalShare,
    /// Of two system traces: each thread's CPU time (its scheduling slices' total).
    Cpu,
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
            Metric::SelfShare => "self-share",
            Metric::TotalShare => "total-share",
            Metric::Cpu => "cpu",
        }
    }

    fn is_share(self) -> bool {
        matches!(self, Metric::SelfShare | Metric::TotalShare)
    }

    /// What one row of the comparison is.
    fn per(self, by: By) -> &'static str {
        match (self, by) {
            (Metric::Cpu, _) => "thread",
            (_, By::Stack) => "call stack",
            _ => "function",
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
    /// its calls): a duration ("2ms"), or for a profile of bytes a size ("4KB") and of
    /// counts a number; default: 0.1% of BASE's duration (or weight).
    #[arg(long, value_name = "DELTA", value_parser = MinDelta::parse)]
    pub min_delta: Option<MinDelta>,
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

/// The rules that turn two numbers into a status: the metric, and the noise rules the
/// viewer's compare mode shares.
struct Rules {
    metric: Metric,
    noise: NoiseRules,
    /// Of two profiles: their kind, unit and whole weights.
    profile: Option<Profile>,
}

impl Rules {
    /// The metric of a group of BASE (`in_new` false) or NEW: shares in parts per million.
    fn of(&self, g: &Group, in_new: bool) -> i64 {
        let s = &g.stats;
        let all = self
            .profile
            .as_ref()
            .map_or(0, |p| if in_new { p.new_all } else { p.base_all });
        match self.metric {
            Metric::SelfTime => s.self_ns,
            Metric::Total | Metric::Cpu => s.total_ns,
            Metric::Mean => s.mean_ns,
            Metric::P50 => s.p50_ns,
            Metric::P90 => s.p90_ns,
            Metric::P99 => s.p99_ns,
            Metric::Count => s.count as i64,
            Metric::SelfShare => ppm(s.self_ns, all),
            Metric::TotalShare => ppm(s.total_ns, all),
        }
    }

    /// A value of the metric (or a weight, with `weight`), in its unit, for people.
    fn show_as(&self, v: i64, weight: bool) -> String {
        match (self.metric, &self.profile) {
            (Metric::Count, _) if !weight => v.to_string(),
            (m, Some(_)) if m.is_share() && !weight => format!("{:.2}%", v as f64 / 1e4),
            (_, Some(p)) => weight_text(p.unit, v),
            (_, None) => human_ns(v),
        }
    }

    fn show(&self, v: i64) -> String {
        self.show_as(v, false)
    }

    fn judge(&self, b: &Group, n: &Group) -> (Status, i64, Option<f64>, Option<f64>) {
        let m = self.metric;
        let (bv, nv) = (self.of(b, false), self.of(n, true));
        let ratio = (bv != 0).then(|| nv as f64 / bv as f64);
        let measure = match m {
            Metric::Count => Measure::Count,
            Metric::Total
            | Metric::SelfTime
            | Metric::SelfShare
            | Metric::TotalShare
            | Metric::Cpu => Measure::Sum,
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
        let mut j = self.noise.judge(measure, side(m, b, bv), side(m, n, nv));
        // A profile's change must also be beyond sampling noise.
        if let Some(p) = &self.profile {
            let (wb, wn) = match m {
                Metric::Count => (b.stats.count as i64, n.stats.count as i64),
                Metric::Total | Metric::TotalShare => (b.stats.total_ns, n.stats.total_ns),
                _ => (b.stats.self_ns, n.stats.self_ns),
            };
            j.p_value = p.p_value(wb, wn, m == Metric::Count, m.is_share());
            if j.p_value.is_none_or(|p| p >= self.noise.alpha) {
                j.verdict = Verdict::Unchanged;
            }
        }
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

/// A group with the key it is matched by across the traces.
type Keyed = (String, Group);

fn keyed(t: &Trace, groups: Vec<Group>) -> Vec<Keyed> {
    groups.into_iter().map(|g| (key(t, &g), g)).collect()
}

/// `--min-delta` for a trace of spans or of scheduling (nanoseconds), or the base's default.
fn trace_min_delta(a: &Args, base: &Trace) -> Result<i64, Fatal> {
    match a.min_delta {
        Some(d) => d.in_unit(None),
        None => Ok(NoiseRules::for_base(base).min_delta),
    }
}

/// The groups of each trace and the rules that judge them.
fn prepare(
    a: &Args,
    sel: &Selection,
    base: &Trace,
    new: &Trace,
) -> Result<(Rules, Vec<Keyed>, Vec<Keyed>), Fatal> {
    let (tb, tn) = pick_threads(base, new, &sel.threads, a.match_threads)?;
    if a.metric == Metric::Cpu {
        diff_cpu::require(base, new)?;
        let min_delta = trace_min_delta(a, base)?;
        let gb = diff_cpu::groups(base, sel, tb, a.match_threads);
        let gn = diff_cpu::groups(new, sel, tn, a.match_threads);
        return Ok((rules(a, min_delta, None), gb, gn));
    }
    let profile = diff_samples::kind_of(base, new)?;
    let shares = a.metric.is_share();
    if profile.is_some()
        && matches!(
            a.metric,
            Metric::Mean | Metric::P50 | Metric::P90 | Metric::P99
        )
    {
        return Err(Fatal(format!(
            "--metric {}: profiles have no per-call times; compare self, total, count, \
             self-share or total-share",
            a.metric.name()
        )));
    }
    if profile.is_none() && shares {
        return Err(Fatal(format!(
            "--metric {} is of sampling profiles; these are traces of spans",
            a.metric.name()
        )));
    }
    let Some((kind, unit)) = profile else {
        let by = match a.by {
            By::Name => GroupBy::Name,
            By::Stack => GroupBy::Stack,
        };
        let gb = base.groups(&sel.filter(base, tb), by);
        let gn = new.groups(&sel.filter(new, tn), by);
        let min_delta = trace_min_delta(a, base)?;
        let (gb, gn) = (keyed(base, gb), keyed(new, gn));
        return Ok((rules(a, min_delta, None), gb, gn));
    };
    let stack = a.by == By::Stack;
    let (gb, base_all, base_n) = diff_samples::groups(base, sel, tb, stack);
    let (gn, new_all, new_n) = diff_samples::groups(new, sel, tn, stack);
    // Default: 0.1% of BASE's weight, as for traces 0.1% of BASE's duration; for shares,
    // that weight's share.
    let min_delta = match a.min_delta.map(|d| d.in_unit(Some(unit))).transpose()? {
        Some(d) if shares => ppm(d, base_all),
        Some(d) => d,
        None if shares => 1000,
        None => (base_all / 1000).max(1),
    };
    let profile = Profile {
        kind,
        unit,
        base_all,
        new_all,
        base_n,
        new_n,
    };
    let rules = rules(a, min_delta, Some(profile));
    Ok((rules, keyed(base, gb), keyed(new, gn)))
}

fn rules(a: &Args, min_delta: i64, profile: Option<Profile>) -> Rules {
    Rules {
        metric: a.metric,
        noise: NoiseRules {
            threshold_pct: a.threshold,
            min_delta,
            alpha: a.alpha,
        },
        profile,
    }
}

/// The comparison `run` reports, as its CSV lines (header first), for traces already
/// loaded: what the fuzz target `diff` feeds hostile traces.
pub fn compare_csv(a: &Args, base: &Trace, new: &Trace) -> Result<Vec<String>, Fatal> {
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    let (rules, gb, gn) = prepare(a, &sel, base, new)?;
    Ok(csv_lines(&rules, &compare(&gb, &gn, &rules)))
}

/// Refuses a `--format` that the other options do not allow (before any load).
pub fn check_format(a: &Args) -> Result<(), Fatal> {
    if a.metric == Metric::Cpu && a.by == By::Stack {
        return Err(Fatal(
            "--metric cpu compares threads' CPU time; --by stack is of spans".into(),
        ));
    }
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
    Ok(json_report(a, &rules, &compare(&gb, &gn, &rules)))
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
    let rows = compare(&gb, &gn, &rules);
    let counts = |s: Status| rows.iter().filter(|r| r.status == s).count();
    match a.format {
        Format::Json => println!("{:#}", json_report(a, &rules, &rows)),
        Format::Csv => print_csv(&rules, &rows),
        Format::Table => print_table(&rules, &rows, a.metric.per(a.by)),
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
fn compare<'a>(gb: &'a [Keyed], gn: &'a [Keyed], rules: &Rules) -> Vec<Row<'a>> {
    let mut in_new: HashMap<&str, &Group> = gn.iter().map(|(k, g)| (k.as_str(), g)).collect();
    let mut rows = Vec::new();
    for (k, b) in gb {
        let k = k.clone();
        let row = match in_new.remove(k.as_str()) {
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
                delta: -rules.of(b, false),
                ratio: None,
                p_value: None,
            },
        };
        rows.push(row);
    }
    for (k, n) in gn {
        let k = k.clone();
        if in_new.remove(k.as_str()).is_some() {
            rows.push(Row {
                key: k,
                base: None,
                new: Some(n),
                status: Status::Added,
                delta: rules.of(n, true),
                ratio: None,
                p_value: None,
            });
        }
    }
    let size = |r: &Row<'_>| match r.status {
        Status::Unchanged => r.base.map_or(0, |g| rules.of(g, false)).unsigned_abs(),
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

/// A side's numbers: a profile's samples, weights and shares (in percent of `all`), or a
/// trace's counts and times.
fn side(g: Option<&Group>, profile: Option<i64>) -> Value {
    match (g, profile) {
        (None, _) => Value::Null,
        (Some(g), Some(all)) => {
            let s = &g.stats;
            json!({
                "samples": s.count,
                "total": s.total_ns,
                "self": s.self_ns,
                "total_share": ppm(s.total_ns, all) as f64 / 1e4,
                "self_share": ppm(s.self_ns, all) as f64 / 1e4,
            })
        }
        (Some(g), None) => {
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
    let p = rules.profile.as_ref();
    // A profile's delta is in the metric's unit; a share's in percentage points.
    let delta = |d: i64| match p {
        Some(_) if a.metric.is_share() => json!(d as f64 / 1e4),
        _ => json!(d),
    };
    let functions: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "name": r.key,
                "status": status_name(r.status),
                "base": side(r.base, p.map(|p| p.base_all)),
                "new": side(r.new, p.map(|p| p.new_all)),
                (if p.is_some() { "delta" } else { "delta_ns" }): delta(r.delta),
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
    let mut out = json!({
        "base": a.base.display().to_string(),
        "new": a.new.display().to_string(),
        "metric": a.metric.name(),
        "by": if a.by == By::Stack { "stack" } else { "name" },
        "threshold_pct": rules.noise.threshold_pct,
        "min_delta_ns": rules.noise.min_delta,
        "alpha": rules.noise.alpha,
        "summary": summary,
        (if a.metric == Metric::Cpu { "threads" } else { "functions" }): functions,
    });
    if let Some(p) = p {
        let o = out.as_object_mut().expect("an object");
        o.remove("min_delta_ns");
        o.insert("min_delta".into(), delta(rules.noise.min_delta));
        o.insert("kind".into(), json!(p.kind));
        o.insert("unit".into(), json!(p.unit.name()));
        o.insert("base_weight".into(), json!(p.base_all));
        o.insert("new_weight".into(), json!(p.new_all));
    }
    out
}

fn print_csv(rules: &Rules, rows: &[Row<'_>]) {
    for line in csv_lines(rules, rows) {
        println!("{line}");
    }
}

fn csv_lines(rules: &Rules, rows: &[Row<'_>]) -> Vec<String> {
    if let Some(p) = &rules.profile {
        return diff_samples::csv_lines(p, rules.metric.is_share(), rows);
    }
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

fn print_table(rules: &Rules, rows: &[Row<'_>], per: &str) {
    let m = rules.metric;
    let val =
        |g: Option<&Group>, in_new| g.map_or("–".into(), |g| rules.show(rules.of(g, in_new)));
    if let Some(p) = &rules.profile {
        println!(
            "{} samples, weight in {}: {} in BASE, {} in NEW",
            p.kind,
            p.unit.name(),
            rules.show_as(p.base_all, true),
            rules.show_as(p.new_all, true)
        );
    }
    println!(
        "{:<10} {:>12} {:>12} {:>12} {:>8} {:>8}  name   ({} per {})",
        "status",
        "base",
        "new",
        "delta",
        "change",
        "p",
        m.name(),
        per
    );
    for r in rows {
        println!(
            "{:<10} {:>12} {:>12} {:>12} {:>8} {:>8}  {}",
            status_name(r.status),
            val(r.base, false),
            val(r.new, true),
            format!(
                "{}{}",
                if r.delta > 0 { "+" } else { "" },
                rules.show(r.delta)
            ),
            change(r),
            p_text(r),
            r.key.escape_debug()
        );
    }
    if rows.is_empty() {
        let what = match (&rules.profile, m) {
            (Some(_), _) => "samples",
            (None, Metric::Cpu) => "scheduling slices",
            (None, _) => "spans",
        };
        println!("(no {what} matched in either trace)");
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
        m.per(a.by),
        rules.noise.threshold_pct,
        rules.show(if m == Metric::Count {
            0
        } else {
            rules.noise.min_delta
        }),
        if rules.profile.is_some() {
            format!(", beyond sampling noise (p < {})", rules.noise.alpha)
        } else if m == Metric::Count {
            String::new()
        } else {
            format!(", beyond noise (Mann-Whitney p < {})", rules.noise.alpha)
        }
    );
    let md = |s: &str| s.replace('|', "\\|").replace('`', "'");
    let val =
        |g: Option<&Group>, in_new| g.map_or("–".into(), |g| rules.show(rules.of(g, in_new)));
    let table = |title: &str, which: &[Status]| {
        let sel: Vec<&Row<'_>> = rows.iter().filter(|r| which.contains(&r.status)).collect();
        if sel.is_empty() {
            return;
        }
        println!("#### {title}\n");
        let calls = match (&rules.profile, m) {
            (Some(_), _) => "samples",
            (None, Metric::Cpu) => "slices",
            (None, _) => "calls",
        };
        let per = m.per(a.by);
        println!("| {per} | base | new | delta | change | p | {calls} (base → new) |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for r in sel {
            let calls = |g: Option<&Group>| g.map_or("–".into(), |g| g.stats.count.to_string());
            println!(
                "| `{}` | {} | {} | {}{} | {} | {} | {} → {} |",
                md(&r.key),
                val(r.base, false),
                val(r.new, true),
                if r.delta > 0 { "+" } else { "" },
                rules.show(r.delta),
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
        println!("| {} | base | new | change |", m.per(a.by));
        println!("|---|---:|---:|---:|");
        for r in same.iter().take(50) {
            println!(
                "| `{}` | {} | {} | {} |",
                md(&r.key),
                val(r.base, false),
                val(r.new, true),
                change(r)
            );
        }
        if same.len() > 50 {
            println!("| … {} more | | | |", same.len() - 50);
        }
        println!("\n</details>");
    }
}
