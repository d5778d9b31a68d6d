//! `spall-cli check TRACE --budget FILE`: performance budgets from a TOML file, kept or
//! broken, for CI.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};
use trace_model::{percentile, weight_text, GroupBy, NameFilter, SampleUnit, Trace};

use crate::select::Selection;
use crate::util::{human_ns, load, parse_range, Fatal};
use crate::{diff_samples, sched};

/// The limits a budget may set, in the order they are reported: `total_share` and
/// `self_share` only of a sampling profile (a function's weights as shares of the
/// profile's), `cpu` only of a system trace (threads' CPU time from the scheduler).
const METRICS: [&str; 11] = [
    "count",
    "total",
    "self",
    "mean",
    "p50",
    "p90",
    "p99",
    "max",
    "total_share",
    "self_share",
    "cpu",
];

/// How a limit was written, which says what it can be checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    /// A duration: nanoseconds.
    Time,
    /// A size (`"10MB"`): bytes, of a bytes profile.
    Bytes,
    /// A plain number: calls or samples for `count`; for `total` and `self`, a weight in a
    /// profile's unit.
    Plain,
    /// A percentage, in parts per million.
    Share,
}

/// Which functions a budget covers.
#[derive(Debug, Clone)]
enum Target {
    Name(String),
    Match(regex::Regex),
    /// A `cpu` budget: the CPU time of `thread` (every thread when none is given).
    Threads,
}

/// One `[[budget]]` table.
#[derive(Debug, Clone)]
pub struct Budget {
    target: Target,
    thread: Option<String>,
    /// (metric, limit, how it was written): nanoseconds, a plain number for `count`, bytes
    /// or a profile's weight for `total` and `self`, parts per million for shares.
    limits: Vec<(&'static str, i64, Given)>,
    /// 1-based line of its `[[budget]]` header.
    line: usize,
}

impl Budget {
    fn label(&self) -> String {
        let what = match &self.target {
            Target::Name(n) => n.clone(),
            Target::Match(r) => format!("/{}/", r.as_str()),
            Target::Threads => "CPU time".into(),
        };
        match &self.thread {
            Some(t) => format!("{what} on {t}"),
            None => what,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Junit,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    pub trace: PathBuf,
    /// The budget file: `[[budget]]` tables (see docs/CLI.md).
    #[arg(long, value_name = "FILE")]
    pub budget: PathBuf,
    /// Also compare each budgeted number with this trace's...
    #[arg(long, value_name = "BASE")]
    pub baseline: Option<PathBuf>,
    /// ...allowing this much growth over it.
    #[arg(long, value_name = "PCT", value_parser = crate::util::parse_percent)]
    pub max_regression: Option<f64>,
    /// Only this time range, relative to the trace's start: START..END.
    #[arg(long, value_name = "START..END")]
    pub range: Option<String>,
    /// Fail when a budget names a function the trace never calls (default: a warning).
    #[arg(long)]
    pub strict: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// The line of budget `index`'s `key` (of the budget itself when `key` is empty), from the
/// TOML parser's spans.
fn key_line(text: &str, index: usize, key: &str) -> usize {
    let Ok(doc) = toml::de::DeTable::parse(text) else {
        return 1;
    };
    let Some(budget) = doc.get_ref().get("budget") else {
        return 1;
    };
    let Some(table) = budget.get_ref().as_array().and_then(|a| a.get(index)) else {
        return line_of(text, budget.span().start);
    };
    let at = table
        .get_ref()
        .as_table()
        .and_then(|t| t.get_key_value(key))
        .map_or(table.span().start, |(k, _)| k.span().start);
    line_of(text, at)
}

/// Parses a budget file; errors name the file, the line and the key.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Budget>, Fatal> {
    let file = path.display();
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| line_of(text, s.start));
        let msg = e.message().trim().to_string();
        match at {
            Some(line) => Fatal(format!("{file}:{line}: {msg}")),
            None => Fatal(format!("{file}: {msg}")),
        }
    })?;
    let err = |i: usize, key: &str, msg: String| {
        let at = if key.is_empty() {
            String::new()
        } else {
            format!(", key {key:?}")
        };
        Fatal(format!(
            "{file}:{}: budget {}{at}: {msg}",
            key_line(text, i, key),
            i + 1
        ))
    };
    for k in table.keys() {
        if k != "budget" {
            return Err(Fatal(format!(
                "{file}: unknown table or key {k:?}; budgets are [[budget]] tables"
            )));
        }
    }
    let Some(list) = table.get("budget") else {
        return Err(Fatal(format!(
            "{file}: no [[budget]] tables (see docs/CLI.md for an example)"
        )));
    };
    let Some(list) = list.as_array() else {
        return Err(Fatal(format!("{file}: `budget` must be [[budget]] tables")));
    };
    let mut out = Vec::new();
    for (i, b) in list.iter().enumerate() {
        let Some(b) = b.as_table() else {
            return Err(err(i, "", "a budget must be a table".into()));
        };
        let text_of = |key: &str| -> Result<Option<String>, Fatal> {
            match b.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(err(i, key, format!("expected a string, found {v}"))),
            }
        };
        let cpu = b.contains_key("cpu");
        let target = match (text_of("name")?, text_of("match")?) {
            (Some(_), _) | (_, Some(_)) if cpu => {
                return Err(err(
                    i,
                    "cpu",
                    "cpu limits a thread's CPU time from the scheduler: give `thread` (or \
                     nothing, for every thread), not `name` or `match`"
                        .into(),
                ))
            }
            (None, None) if cpu => Target::Threads,
            (Some(n), None) => Target::Name(n),
            (None, Some(m)) => {
                Target::Match(regex::Regex::new(&m).map_err(|e| err(i, "match", e.to_string()))?)
            }
            (Some(_), Some(_)) => {
                return Err(err(i, "match", "give `name` or `match`, not both".into()))
            }
            (None, None) => {
                return Err(err(
                    i,
                    "",
                    "needs `name = \"...\"` (an exact name) or `match = \"regex\"`".into(),
                ))
            }
        };
        let mut limits = Vec::new();
        for (k, v) in b {
            if matches!(k.as_str(), "name" | "match" | "thread") {
                continue;
            }
            let Some(&metric) = METRICS.iter().find(|&&m| m == k) else {
                return Err(err(
                    i,
                    k,
                    format!(
                        "unknown key; budgets take name, match, thread and limits {}",
                        METRICS.join(", ")
                    ),
                ));
            };
            let limit = limit_of(metric, v).map_err(|m| err(i, k, m))?;
            limits.push((metric, limit.0, limit.1));
        }
        if cpu && limits.len() > 1 {
            return Err(err(
                i,
                "cpu",
                "cpu goes in a budget of its own (its other limits are of spans)".into(),
            ));
        }
        if limits.is_empty() {
            return Err(err(
                i,
                "",
                format!("sets no limit; give at least one of {}", METRICS.join(", ")),
            ));
        }
        limits.sort_by_key(|(m, _, _)| METRICS.iter().position(|x| x == m));
        out.push(Budget {
            target,
            thread: text_of("thread")?,
            limits,
            line: key_line(text, i, ""),
        });
    }
    Ok(out)
}

/// A budget's limit `metric = v`, with how it was given; the error says what was expected.
fn limit_of(metric: &str, v: &toml::Value) -> Result<(i64, Given), String> {
    let limit = match (metric, v) {
        ("count", toml::Value::Integer(n)) if *n >= 0 => (*n, Given::Plain),
        ("count", v) => return Err(format!("expected a whole number, found {v}")),
        ("total_share" | "self_share", v) => {
            let pct = v.as_str().filter(|s| s.trim().ends_with('%'));
            let ppm = pct.and_then(|s| crate::util::parse_percent(s).ok());
            let Some(ppm) = ppm.filter(|p| *p <= 100.0) else {
                return Err(format!("expected a percentage such as \"5%\", found {v}"));
            };
            ((ppm * 1e4).round() as i64, Given::Share)
        }
        // A profile's weight in its own unit.
        ("total" | "self", toml::Value::Integer(n)) if *n >= 0 => (*n, Given::Plain),
        ("total" | "self", toml::Value::String(s)) if s.trim().ends_with(['B', 'b']) => {
            let n = spall_util::parse_size(s)?;
            (i64::try_from(n).unwrap_or(i64::MAX), Given::Bytes)
        }
        (_, toml::Value::String(s)) => (spall_util::parse_time_with_unit(s)?, Given::Time),
        (_, v) => {
            return Err(format!(
                "expected a duration with a unit such as \"2ms\", found {v}"
            ))
        }
    };
    Ok(limit)
}

/// Why `trace` cannot be checked against `b`'s limits: a limit in a unit the trace does not
/// weigh in, a share of a trace of spans, a per-call time of a profile.
fn unfit(trace: &Trace, b: &Budget) -> Option<String> {
    if matches!(b.target, Target::Threads) {
        let sched = trace.sched().is_some_and(|s| !s.slices.is_empty());
        return (!sched).then(|| {
            "cpu: CPU time comes from the scheduler of a system trace (Perfetto, ftrace, \
             systrace); this trace has no scheduling data"
                .into()
        });
    }
    let unit = trace
        .sample_kind()
        .filter(|_| trace.is_sampled())
        .map(|k| k.1);
    for &(metric, _, given) in &b.limits {
        let why = match (unit, given) {
            (None, Given::Share) => "shares are of sampling profiles; this is a trace of spans",
            (None, Given::Plain) if metric != "count" => {
                "a plain number is a profile's weight; this trace's times need a unit (\"2ms\")"
            }
            (None, Given::Bytes) => "this trace's times need a duration, not a size",
            (Some(_), _) if matches!(metric, "mean" | "p50" | "p90" | "p99" | "max") => {
                "profiles have no per-call times; limit count, total, self or their shares"
            }
            (Some(u), Given::Time) if u != SampleUnit::Nanoseconds => {
                "a duration, but the profile's weights are not times"
            }
            (Some(u), Given::Bytes) if u != SampleUnit::Bytes => {
                "a size, but the profile's weights are not bytes"
            }
            _ => continue,
        };
        return Some(format!("{metric}: {why}"));
    }
    None
}

/// The measured values of one budget's spans (or samples): `None` when the trace has none
/// of them.
fn measure(
    trace: &Trace,
    b: &Budget,
    range: &Option<(Option<i64>, Option<i64>)>,
) -> Result<Option<[i64; 11]>, String> {
    let threads = match &b.thread {
        Some(spec) => {
            let found = trace.find_threads(spec);
            if found.is_empty() {
                return Err(format!(
                    "no thread {spec:?} (use PID:TID, a thread name, a TID or part of a name)"
                ));
            }
            Some(found)
        }
        None => None,
    };
    let sel = Selection {
        range: *range,
        ..Selection::default()
    };
    let re = match &b.target {
        Target::Name(n) => {
            regex::Regex::new(&format!("^{}$", regex::escape(n))).expect("an escaped name")
        }
        Target::Match(r) => r.clone(),
        Target::Threads => {
            let filter = sel.filter(trace, threads);
            let mut threads = filter.threads;
            if let Some(t) = threads.as_mut() {
                t.sort_unstable();
            }
            let per = sched::slice_durations(trace, threads.as_deref(), filter.range);
            let mut v = [0; 11];
            v[10] = per.values().flatten().sum();
            return Ok(Some(v));
        }
    };
    if trace.is_sampled() {
        let filter = sel.filter(trace, threads);
        return Ok(diff_samples::measure(
            trace,
            &re,
            filter.threads,
            filter.range,
        ));
    }
    let mut filter = sel.filter(trace, threads);
    filter.name = Some(NameFilter::Regex(re));
    // All matching names count together, as one function.
    let groups = trace.groups(&filter, GroupBy::Name);
    if groups.is_empty() {
        return Ok(None);
    }
    let mut durs: Vec<i64> = groups
        .iter()
        .flat_map(|g| g.durations.iter().copied())
        .collect();
    durs.sort_unstable();
    let count = durs.len() as i64;
    let total: i64 = groups.iter().map(|g| g.stats.total_ns).sum();
    let self_ns: i64 = groups.iter().map(|g| g.stats.self_ns).sum();
    Ok(Some([
        count,
        total,
        self_ns,
        (total + count / 2).div_euclid(count),
        percentile(&durs, 50),
        percentile(&durs, 90),
        percentile(&durs, 99),
        durs[durs.len() - 1],
        0,
        0,
        0,
    ]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Kept,
    Broken,
    /// The trace never calls the function.
    Missing,
}

/// One line of the report: a budget's limit on one metric.
#[derive(Debug)]
struct Line {
    budget: String,
    budget_line: usize,
    metric: &'static str,
    /// What the limit was checked against: `budget` or `baseline`.
    source: &'static str,
    limit: i64,
    measured: Option<i64>,
    verdict: Verdict,
    /// Of a profile: the unit of its weights.
    unit: Option<SampleUnit>,
}

impl Line {
    fn new(
        b: &Budget,
        metric: &'static str,
        source: &'static str,
        limit: i64,
        measured: Option<i64>,
    ) -> Line {
        Line {
            budget: b.label(),
            budget_line: b.line,
            metric,
            source,
            limit,
            measured,
            verdict: match measured {
                None => Verdict::Missing,
                Some(v) if v <= limit => Verdict::Kept,
                Some(_) => Verdict::Broken,
            },
            unit: None,
        }
    }
}

/// A value of `l`'s metric, for people.
fn show(l: &Line, v: i64) -> String {
    match (l.metric, l.unit) {
        ("count", _) => v.to_string(),
        ("total_share" | "self_share", _) => format!("{:.2}%", v as f64 / 1e4),
        (_, Some(u)) => weight_text(u, v),
        (_, None) => human_ns(v),
    }
}

/// A value of `l`'s metric for the JSON: shares in percent.
fn json_value(l: &Line, v: Option<i64>) -> Value {
    match (l.metric, v) {
        ("total_share" | "self_share", Some(v)) => json!(v as f64 / 1e4),
        _ => json!(v),
    }
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    let text = std::fs::read_to_string(&a.budget).map_err(|e| {
        Fatal(format!(
            "{}: cannot read the budget file: {e}",
            a.budget.display()
        ))
    })?;
    let budgets = parse(&a.budget, &text)?;
    let range = a
        .range
        .as_deref()
        .map(|r| parse_range(r).map_err(|e| Fatal(format!("--range {e}"))))
        .transpose()?;
    if a.baseline.is_some() != a.max_regression.is_some() {
        return Err(Fatal(
            "--baseline and --max-regression go together (for example --baseline main.json \
             --max-regression 10%)"
                .into(),
        ));
    }
    let (trace, base) = std::thread::scope(|s| {
        let b = a.baseline.as_ref().map(|p| s.spawn(move || load(p)));
        let t = load(&a.trace);
        let b = b.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Fatal("loading the baseline failed".into())))
        });
        (t, b)
    });
    let (trace, _) = trace?;
    let base = base
        .transpose()
        .map_err(|e| Fatal(format!("--baseline: {}", e.0)))?
        .map(|b| b.0);
    if let Some(base) = &base {
        diff_samples::kind_of(base, &trace).map_err(|e| Fatal(format!("--baseline: {}", e.0)))?;
    }
    let unit = (trace.sample_kind())
        .filter(|_| trace.is_sampled())
        .map(|k| k.1);
    let mut lines = Vec::new();
    let idx = |m: &str| METRICS.iter().position(|x| *x == m).unwrap();
    for b in &budgets {
        for (t, what) in [(Some(&trace), "TRACE"), (base.as_ref(), "BASE")] {
            if let Some(why) = t.and_then(|t| unfit(t, b)) {
                return Err(Fatal(format!(
                    "{}:{}: budget {}: {why} ({what})",
                    a.budget.display(),
                    b.line,
                    b.label()
                )));
            }
        }
        let measured = measure(&trace, b, &range)
            .map_err(|e| Fatal(format!("{} line {}: {e}", a.budget.display(), b.line)))?;
        let before = match (&base, a.max_regression) {
            (Some(base), Some(pct)) => measure(base, b, &range)
                .map_err(|e| Fatal(format!("--baseline: {e}")))?
                .map(|v| (v, pct)),
            _ => None,
        };
        for &(metric, limit, _) in &b.limits {
            let now = measured.map(|v| v[idx(metric)]);
            lines.push(Line::new(b, metric, "budget", limit, now));
            lines.last_mut().expect("a line").unit = unit;
            if let (Some((v, pct)), Some(_)) = (before, now) {
                let was = v[idx(metric)];
                let limit = was + (was as f64 * pct / 100.0).round() as i64;
                lines.push(Line::new(b, metric, "baseline", limit, now));
                lines.last_mut().expect("a line").unit = unit;
            }
        }
    }
    let broken = lines
        .iter()
        .filter(|l| l.verdict == Verdict::Broken)
        .count();
    let missing = lines
        .iter()
        .filter(|l| l.verdict == Verdict::Missing)
        .count();
    match a.format {
        Format::Table => print_table(&lines),
        Format::Json => print_json(a, &lines),
        Format::Junit => print_junit(a, &lines),
    }
    if missing > 0 && a.format == Format::Table {
        eprintln!(
            "spall-cli: warning: {missing} budget limit(s) name functions the trace never calls{}",
            if a.strict {
                " (failing: --strict)"
            } else {
                "; --strict makes this a failure"
            }
        );
    }
    let failed = broken > 0 || (a.strict && missing > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Kept => "kept",
        Verdict::Broken => "broken",
        Verdict::Missing => "missing",
    }
}

/// How much room is left under the limit (negative: over it), in the metric's unit.
fn margin(l: &Line) -> Option<i64> {
    l.measured.map(|m| l.limit - m)
}

fn print_table(lines: &[Line]) {
    println!(
        "{:<8} {:<11} {:>12} {:>12} {:>12}  budget",
        "status", "metric", "limit", "measured", "margin"
    );
    for l in lines {
        let measured = l.measured.map_or("–".into(), |v| show(l, v));
        let margin = margin(l).map_or("–".into(), |v| show(l, v));
        let from = if l.source == "baseline" {
            " (vs baseline)"
        } else {
            ""
        };
        println!(
            "{:<8} {:<11} {:>12} {:>12} {:>12}  {}{from}",
            verdict_name(l.verdict),
            l.metric,
            show(l, l.limit),
            measured,
            margin,
            l.budget
        );
    }
    let n = |v: Verdict| lines.iter().filter(|l| l.verdict == v).count();
    println!(
        "{} kept, {} broken, {} missing",
        n(Verdict::Kept),
        n(Verdict::Broken),
        n(Verdict::Missing)
    );
}

fn print_json(a: &Args, lines: &[Line]) {
    let items: Vec<Value> = lines
        .iter()
        .map(|l| {
            json!({
                "budget": l.budget,
                "line": l.budget_line,
                "metric": l.metric,
                "against": l.source,
                "limit": json_value(l, Some(l.limit)),
                "measured": json_value(l, l.measured),
                "margin": json_value(l, margin(l)),
                "status": verdict_name(l.verdict),
            })
        })
        .collect();
    let n = |v: Verdict| lines.iter().filter(|l| l.verdict == v).count();
    let v = json!({
        "trace": a.trace.display().to_string(),
        "budget_file": a.budget.display().to_string(),
        "baseline": a.baseline.as_ref().map(|p| p.display().to_string()),
        "kept": n(Verdict::Kept),
        "broken": n(Verdict::Broken),
        "missing": n(Verdict::Missing),
        "checks": items,
    });
    println!("{v:#}");
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// JUnit XML: one test case per limit, a failure for each broken one (and for missing
/// functions under `--strict`, else a skip).
fn print_junit(a: &Args, lines: &[Line]) {
    let failures = lines
        .iter()
        .filter(|l| l.verdict == Verdict::Broken || (a.strict && l.verdict == Verdict::Missing))
        .count();
    let skipped = if a.strict {
        0
    } else {
        lines
            .iter()
            .filter(|l| l.verdict == Verdict::Missing)
            .count()
    };
    println!(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    println!(
        r#"<testsuites name="spall budgets" tests="{}" failures="{failures}" skipped="{skipped}">"#,
        lines.len()
    );
    println!(
        r#"  <testsuite name="{}" tests="{}" failures="{failures}" skipped="{skipped}" errors="0">"#,
        xml(&a.budget.display().to_string()),
        lines.len()
    );
    for l in lines {
        let from = if l.source == "baseline" {
            " vs baseline"
        } else {
            ""
        };
        let name = format!("{} {}{from}", l.budget, l.metric);
        print!(
            r#"    <testcase classname="spall.budget" name="{}""#,
            xml(&name)
        );
        let limit = show(l, l.limit);
        match (l.verdict, l.measured) {
            (Verdict::Kept, _) => println!("/>"),
            (Verdict::Broken, Some(m)) => {
                let msg = format!("{} {} is over its limit {limit}", l.metric, show(l, m));
                println!(">");
                println!(
                    r#"      <failure message="{}" type="budget">{}</failure>"#,
                    xml(&msg),
                    xml(&format!("{} (line {})", msg, l.budget_line))
                );
                println!("    </testcase>");
            }
            _ => {
                let msg = "the trace never calls this function";
                println!(">");
                if a.strict {
                    println!(r#"      <failure message="{msg}" type="missing"/>"#);
                } else {
                    println!(r#"      <skipped message="{msg}"/>"#);
                }
                println!("    </testcase>");
            }
        }
    }
    println!("  </testsuite>");
    println!("</testsuites>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> String {
        parse(Path::new("b.toml"), text).unwrap_err().0
    }

    #[test]
    fn budget_files_parse_with_units() {
        let b = parse(
            Path::new("b.toml"),
            r#"
[[budget]]
name = "render"
p90 = "2ms"
total = "1.5s"
count = 10

[[budget]]
match = "^gc::"
thread = "main"
max = "250us"
"#,
        )
        .unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(
            b[0].limits,
            vec![
                ("count", 10, Given::Plain),
                ("total", 1_500_000_000, Given::Time),
                ("p90", 2_000_000, Given::Time)
            ]
        );
        assert_eq!(b[0].line, 2);
        assert_eq!(b[1].line, 8);
        assert_eq!(b[1].label(), "/^gc::/ on main");
        // A profile's limits: shares, sizes and weights in its own unit.
        let b = parse(
            Path::new("b.toml"),
            "[[budget]]\nname = \"f\"\nself_share = \"2.5%\"\ntotal = \"1MB\"\nself = 7\n",
        )
        .unwrap();
        assert_eq!(
            b[0].limits,
            vec![
                ("total", 1 << 20, Given::Bytes),
                ("self", 7, Given::Plain),
                ("self_share", 25_000, Given::Share)
            ]
        );
        for bad in [
            "self_share = 5",
            "self_share = \"150%\"",
            "total_share = \"x%\"",
        ] {
            let e = errors(&format!("[[budget]]\nname = \"a\"\n{bad}\n"));
            assert!(
                e.starts_with("b.toml:3:") && e.contains("percentage"),
                "{e}"
            );
        }
    }

    #[test]
    fn malformed_budgets_name_the_line_and_key() {
        let e = errors("[[budget]]\nname = \"a\"\np90 = 2\n");
        assert!(e.starts_with("b.toml:3:") && e.contains("\"p90\""), "{e}");
        assert!(e.contains("unit"), "{e}");
        let e = errors("[[budget]]\nname = \"a\"\nmax = \"1s\"\n\n[[budget]]\nname = \"b\"\np99 = \"3 parsecs\"\n");
        assert!(e.starts_with("b.toml:7:") && e.contains("budget 2"), "{e}");
        let e = errors("[[budget]]\nname = \"a\"\nlatency = \"1ms\"\n");
        assert!(
            e.starts_with("b.toml:3:") && e.contains("unknown key"),
            "{e}"
        );
        let e = errors("[[budget]]\np90 = \"1ms\"\n");
        assert!(e.contains("`name"), "{e}");
        let e = errors("[[budget]]\nname = \"a\"\ncount = \"many\"\n");
        assert!(
            e.starts_with("b.toml:3:") && e.contains("whole number"),
            "{e}"
        );
        let e = errors("[[budget]]\nname = \"a\"\n");
        assert!(e.contains("sets no limit"), "{e}");
        let e = errors("[[budget]]\nname = \"a\"\np90 = \"2ms\np99 = \"1ms\"\n");
        assert!(e.starts_with("b.toml:3:"), "{e}");
        // Lines come from the parser, so other spellings of the same tables work too.
        let e = errors("\nbudget = [\n  { name = \"a\", p90 = 3 },\n]\n");
        assert!(e.starts_with("b.toml:3:") && e.contains("\"p90\""), "{e}");
        let e = errors("[[budget]]\nmatch = \"(\"\np50 = \"1ms\"\n");
        assert!(e.starts_with("b.toml:2:") && e.contains("\"match\""), "{e}");
    }
}
