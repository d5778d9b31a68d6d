//! `diff` and `check` on sampling profiles: each function's (or stack's) samples, total and
//! self weight in the profile's unit, and its share of the profile's whole weight. The
//! numbers are those of `stats` ([`Trace::sample_stats`]) and `flame` (the sample flame
//! tree), put in the [`Group`]s `diff` compares (and, for `check`, several names counted
//! as one function); a profile has no per-call durations, so
//! no noise test applies and the thresholds alone decide.

use trace_model::{
    FlameOptions, FlameSort, FrameLabel, Group, NameStats, SampleUnit, StrId, Trace,
};

use crate::diff_row::{status_name, Row};
use crate::flame;
use crate::select::Selection;
use crate::stats::csv_field;
use crate::util::Fatal;

/// What a diff of two profiles compares: the counted kind, its unit, and each side's whole
/// weight (the selected threads' and range's), which shares are of.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub kind: String,
    pub unit: SampleUnit,
    pub base_all: i64,
    pub new_all: i64,
    /// Each side's number of samples.
    pub base_n: u64,
    pub new_n: u64,
}

impl Profile {
    /// The number of samples behind `w` of a side: the weight itself where the unit is a
    /// count of events, else in proportion to the side's samples (exact for a fixed
    /// period, as `perf` and Go's CPU profiles have).
    fn events(&self, w: i64, in_new: bool) -> f64 {
        let (all, n) = if in_new {
            (self.new_all, self.new_n)
        } else {
            (self.base_all, self.base_n)
        };
        match self.unit {
            SampleUnit::Count => w as f64,
            _ if all == 0 => 0.0,
            _ => w as f64 * n as f64 / all as f64,
        }
    }

    /// The sampling-noise p-value of a change of the weights `wb` in BASE to `wn` in NEW
    /// (`samples`: they are sample counts): as shares of each side's whole with `shares`,
    /// else as counts.
    pub fn p_value(&self, wb: i64, wn: i64, samples: bool, shares: bool) -> Option<f64> {
        let (kb, kn) = if samples {
            (wb as f64, wn as f64)
        } else {
            (self.events(wb, false), self.events(wn, true))
        };
        let whole = if self.unit == SampleUnit::Count {
            (self.base_all as f64, self.new_all as f64)
        } else {
            (self.base_n as f64, self.new_n as f64)
        };
        trace_model::sampling_p(kb, kn, shares.then_some(whole))
    }
}

/// `w` as parts per million of `all` (0 when `all` is 0): shares compared as integers.
pub fn ppm(w: i64, all: i64) -> i64 {
    if all == 0 {
        0
    } else {
        (w as i128 * 1_000_000 / all as i128) as i64
    }
}

/// Whether the two traces are profiles (`Some`), spans (`None`), or a mix or profiles of
/// different units (an error: their numbers do not compare).
pub fn kind_of(base: &Trace, new: &Trace) -> Result<Option<(String, SampleUnit)>, Fatal> {
    match (base.is_sampled(), new.is_sampled()) {
        (false, false) => return Ok(None),
        (true, false) | (false, true) => {
            let (p, s) = if base.is_sampled() {
                ("BASE", "NEW")
            } else {
                ("NEW", "BASE")
            };
            return Err(Fatal(format!(
                "{p} is a sampling profile and {s} a trace of spans: their numbers do not \
                 compare (diff two profiles, or two traces)"
            )));
        }
        (true, true) => {}
    }
    let kind = |t: &Trace| t.sample_kind().map(|(k, u)| (t.str(k).to_string(), u));
    let (Some((bk, bu)), Some((nk, nu))) = (kind(base), kind(new)) else {
        return Err(Fatal("a profile has no samples".into()));
    };
    if bu != nu {
        return Err(Fatal(format!(
            "the profiles weigh in different units: BASE counts {bk} in {}, NEW {nk} in {} \
             (pick a kind of the same unit with --sample-kind)",
            bu.name(),
            nu.name()
        )));
    }
    if bk != nk {
        eprintln!("spall-cli: warning: BASE counts {bk} samples, NEW {nk} samples");
    }
    Ok(Some((bk, bu)))
}

/// A group of samples: `samples` as the count, weights as times; no per-call values.
fn group(stack: Vec<StrId>, samples: u64, total: i64, self_weight: i64) -> Group {
    let name = *stack.last().expect("a group has a name");
    Group {
        stack,
        stats: NameStats::of_samples(name, samples, total, self_weight),
        durations: Vec::new(),
        self_times: Vec::new(),
    }
}

/// The profile's groups on `threads` (`None`: all) as `sel` picks them, per function name
/// or per stack, the whole weight they are shares of, and the number of samples.
pub fn groups(
    t: &Trace,
    sel: &Selection,
    threads: Option<Vec<u32>>,
    by_stack: bool,
) -> (Vec<Group>, i64, u64) {
    let filter = sel.filter(t, threads.clone());
    let all = t.sample_total(filter.threads.as_deref(), filter.range);
    let n = t.sample_count(filter.threads.as_deref(), filter.range);
    if !by_stack {
        let mut rows = t.sample_stats(filter.threads.as_deref(), filter.range);
        if let Some(re) = &sel.name {
            rows.retain(|r| re.is_match(t.str(r.name)));
        }
        let groups = (rows.into_iter())
            .map(|r| group(vec![r.name], r.samples, r.total, r.self_weight))
            .collect();
        return (groups, all, n);
    }
    // Per stack: the flame tree's nodes, as `flame` merges the samples.
    let tree = flame::tree(t, sel, threads, false);
    let mut groups = Vec::new();
    for n in 1..tree.len() as u32 {
        let stack: Option<Vec<StrId>> = (tree.path(n).into_iter())
            .map(|p| match tree.label[p as usize] {
                FrameLabel::Name(s) => Some(s),
                _ => None,
            })
            .collect();
        // Without per-thread frames every node below the root is a name.
        let Some(stack) = stack.filter(|s| !s.is_empty()) else {
            continue;
        };
        let i = n as usize;
        groups.push(group(stack, tree.count[i], tree.total[i], tree.self_ns[i]));
    }
    (groups, all, n)
}

/// A profile's rows: samples, weights and shares (percent) of each side.
pub(crate) fn csv_lines(p: &Profile, shares: bool, rows: &[Row<'_>]) -> Vec<String> {
    let mut lines = vec![
        "name,status,base_samples,new_samples,base_total,new_total,base_self,\
         new_self,base_total_share,new_total_share,base_self_share,new_self_share,delta,ratio,\
         p_value"
            .to_string(),
    ];
    let share = |w: i64, all: i64| format!("{:.4}", ppm(w, all) as f64 / 1e4);
    for r in rows {
        let mut f = vec![csv_field(&r.key), status_name(r.status).to_string()];
        let cols = |g: Option<&Group>, all: i64| -> [String; 5] {
            g.map_or(Default::default(), |g| {
                let s = &g.stats;
                [
                    s.count.to_string(),
                    s.total_ns.to_string(),
                    s.self_ns.to_string(),
                    share(s.total_ns, all),
                    share(s.self_ns, all),
                ]
            })
        };
        let (b, n) = (cols(r.base, p.base_all), cols(r.new, p.new_all));
        for (b, n) in b.into_iter().zip(n) {
            f.extend([b, n]);
        }
        // A share's delta in percentage points, as in the JSON.
        f.push(if shares {
            format!("{:.4}", r.delta as f64 / 1e4)
        } else {
            r.delta.to_string()
        });
        f.push(r.ratio.map_or(String::new(), |x| format!("{x:.6}")));
        f.push(r.p_value.map_or(String::new(), |x| format!("{x:.3e}")));
        lines.push(f.join(","));
    }
    lines
}

/// `check`'s numbers for the functions matching `re` on `threads` in `range`, counted as
/// one function: [samples, total, self, 0 (mean, p50, p90, p99, max: none), total share,
/// self share, 0 (cpu)] (shares in parts per million); `None` when no sample holds one of
/// them.
/// A sample counts once however many matching frames its stack holds: at the outermost.
pub fn measure(
    t: &Trace,
    re: &regex::Regex,
    threads: Option<Vec<u32>>,
    range: Option<(i64, i64)>,
) -> Option<[i64; 11]> {
    let all = t.sample_total(threads.as_deref(), range);
    let opts = FlameOptions {
        threads,
        range,
        per_thread: false,
        sample_kind: None,
    };
    let tree = t.flame(&opts, FlameSort::Name);
    let hit: Vec<bool> = (tree.label.iter())
        .map(|&l| matches!(l, FrameLabel::Name(s) if re.is_match(t.str(s))))
        .collect();
    // Per node: whether it or a caller matches (parents come before their children).
    let mut under = hit.clone();
    let (mut samples, mut total, mut self_w) = (0u64, 0i64, 0i64);
    for n in 1..tree.len() {
        let p = tree.parent[n] as usize;
        if hit[n] {
            self_w = self_w.saturating_add(tree.self_ns[n]);
            if !under[p] {
                samples += tree.count[n];
                total = total.saturating_add(tree.total[n]);
            }
        }
        under[n] |= under[p];
    }
    (samples > 0).then(|| {
        let mut v = [0; 11];
        v[..3].copy_from_slice(&[samples as i64, total, self_w]);
        v[8] = ppm(total, all);
        v[9] = ppm(self_w, all);
        v
    })
}
