//! What changed between two traces, judged by the [`NoiseRules`] `spall-cli diff` gates on:
//! per frame of a flame graph (NEW's frames matched with BASE's by call stack) and per span
//! name, for the viewer's compare mode (its flame graph and statistics table).
//!
//! A frame's or a name's self time is judged by the thresholds first (a change counts from
//! 5% of BASE's value and from 0.1% of BASE's duration); only a change they count, with
//! [`MIN_SAMPLES`](crate::MIN_SAMPLES) calls or more on each side, goes to the Mann-Whitney test on the
//! per-call self times, which are gathered (one pass over each trace) only then. Stacks only
//! in BASE are listed on the frame they left.

use std::collections::HashMap;

use crate::{
    label_text, FlameOptions, FlameTree, FrameLabel, GroupBy, Judgement, Measure, NameStats,
    NoiseRules, Observation, StatsFilter, StrId, Trace, Verdict,
};

/// How a compared thing (a frame, a name, a call stack) changed from BASE to NEW: the
/// status `spall-cli diff` reports (slower is "regressed", faster "improved") and the
/// viewer's compare mode colours by. Ordered as the diff lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Larger in NEW, past the rules.
    Slower,
    /// Smaller in NEW, past the rules.
    Faster,
    /// Only in NEW.
    Added,
    /// Only in BASE.
    Removed,
    /// Within what counts as noise.
    Unchanged,
}

impl From<Verdict> for Status {
    /// A thing both traces have: the verdict on it.
    fn from(v: Verdict) -> Status {
        match v {
            Verdict::Slower => Status::Slower,
            Verdict::Faster => Status::Faster,
            Verdict::Unchanged => Status::Unchanged,
        }
    }
}

/// A call stack only in BASE, under a frame NEW still has.
#[derive(Clone, Debug, PartialEq)]
pub struct Removed {
    /// The frame's name.
    pub name: String,
    /// Its total time in BASE.
    pub base_total: i64,
    /// Its node in BASE's tree, whose subtree the graph draws in the room it is given.
    pub node: u32,
}

/// One frame of NEW against BASE.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// BASE's self time on the same stack (`None`: BASE has no such stack).
    pub base_self: Option<i64>,
    /// NEW's self time.
    pub new_self: i64,
    /// Spans on the stack in BASE (0 without it), for the change per call.
    pub base_count: u64,
    /// Spans on the stack in NEW.
    pub new_count: u64,
    /// The verdict.
    pub status: Status,
    /// The Mann-Whitney p-value of the per-call self times, when the change was large
    /// enough to test and both sides have enough calls.
    pub p_value: Option<f64>,
    /// The change's size against the largest change in the graph, 0..=1.
    pub intensity: f32,
    /// BASE's children of this frame that NEW no longer has, largest first.
    pub removed: Vec<Removed>,
}

/// Per node of `new` (NEW's tree, built with `new_opts`), its change against `base`
/// (BASE's tree, built with `base_opts`, the same scope). Stacks match by their frames'
/// names from the root.
pub fn changes(
    (nt, new, new_opts): (&Trace, &FlameTree, &FlameOptions),
    (bt, base, base_opts): (&Trace, &FlameTree, &FlameOptions),
) -> Vec<Change> {
    compare_trees((nt, new), (bt, base), Some((new_opts, base_opts)))
}

/// [`changes`] for trees whose paths are no call stacks (a sandwich's callers, inverted;
/// its callees, merged from every stack): judged by the thresholds alone, since the
/// per-call self times are gathered by stack.
pub fn changes_by_totals(
    (nt, new): (&Trace, &FlameTree),
    (bt, base): (&Trace, &FlameTree),
) -> Vec<Change> {
    compare_trees((nt, new), (bt, base), None)
}

/// [`changes`], with the Mann-Whitney test where `test` gives the trees' options.
fn compare_trees(
    (nt, new): (&Trace, &FlameTree),
    (bt, base): (&Trace, &FlameTree),
    test: Option<(&FlameOptions, &FlameOptions)>,
) -> Vec<Change> {
    // BASE's nodes by (parent's key, name); a node's key is its index.
    let mut by_name: HashMap<(u32, String), u32> = HashMap::new();
    for i in 1..base.len() {
        let name = label_text(bt, base.label[i]).into_owned();
        by_name.insert((base.parent[i], name), i as u32);
    }
    let rules = NoiseRules::for_base(bt);
    // Per-call self times, gathered only if some frame needs the test.
    let mut calls: Option<(PerCall, PerCall)> = None;
    // NEW's node -> BASE's node, and back.
    let mut twin: Vec<Option<u32>> = vec![None; new.len()];
    let mut seen = vec![false; base.len()];
    let mut out = Vec::with_capacity(new.len());
    for i in 0..new.len() {
        let b = if i == 0 {
            (!base.is_empty()).then_some(0)
        } else {
            twin[new.parent[i] as usize].and_then(|p| {
                let name = label_text(nt, new.label[i]).into_owned();
                by_name.get(&(p, name)).copied()
            })
        };
        twin[i] = b;
        if let Some(b) = b {
            seen[b as usize] = true;
        }
        let n = new.self_ns[i];
        let (base_count, new_count) = (b.map_or(0, |b| base.count[b as usize]), new.count[i]);
        let side = |value, count, samples| Observation {
            value,
            count,
            samples,
        };
        let (status, p_value) = match b.map(|b| base.self_ns[b as usize]) {
            None => (Status::Added, None),
            Some(v) => {
                // The numbers first: the test only decides changes they call large.
                let mut j = rules.judge(
                    Measure::Sum,
                    side(v, base_count, &[]),
                    side(n, new_count, &[]),
                );
                if let (true, Some((new_opts, base_opts))) =
                    (j.wants_test(base_count, new_count), test)
                {
                    let (pb, pn) = calls
                        .get_or_insert_with(|| (per_call(bt, base_opts), per_call(nt, new_opts)));
                    let sb = stack_key(base, b.unwrap_or(0)).and_then(|k| pb.get(&k));
                    let sn = stack_key(new, i as u32).and_then(|k| pn.get(&k));
                    if let (Some(sb), Some(sn)) = (sb, sn) {
                        j = rules.judge(
                            Measure::Sum,
                            side(v, base_count, sb),
                            side(n, new_count, sn),
                        );
                    }
                }
                (j.verdict.into(), j.p_value)
            }
        };
        out.push(Change {
            base_self: b.map(|b| base.self_ns[b as usize]),
            new_self: n,
            base_count,
            new_count,
            status,
            p_value,
            intensity: 0.0,
            removed: Vec::new(),
        });
    }
    // BASE's frames without a twin whose parent has one: removed under that parent.
    let new_of: HashMap<u32, u32> = twin
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (b, i as u32)))
        .collect();
    for j in 1..base.len() {
        let parent = base.parent[j];
        if seen[j] || !seen[parent as usize] {
            continue;
        }
        if let Some(&n) = new_of.get(&parent) {
            out[n as usize].removed.push(Removed {
                name: label_text(bt, base.label[j]).into_owned(),
                base_total: base.total[j],
                node: j as u32,
            });
        }
    }
    for c in &mut out {
        c.removed
            .sort_by(|a, b| b.base_total.cmp(&a.base_total).then(a.name.cmp(&b.name)));
    }
    let size = |c: &Change| match c.status {
        Status::Unchanged => 0,
        _ => (c.new_self - c.base_self.unwrap_or(0)).unsigned_abs(),
    };
    let max = out.iter().map(size).max().unwrap_or(0).max(1);
    for c in &mut out {
        c.intensity = (size(c) as f64 / max as f64) as f32;
    }
    out
}

/// Per call stack (with the thread when the graph keeps threads apart), the self time of
/// each of its spans, sorted.
type PerCall = HashMap<(u32, Vec<StrId>), Vec<i64>>;

/// The per-call self times of the spans a flame graph built with `o` merges.
fn per_call(t: &Trace, o: &FlameOptions) -> PerCall {
    let filter = |threads| StatsFilter {
        threads,
        name: None,
        range: o.range,
    };
    let mut out = PerCall::new();
    if o.per_thread {
        let all = || (0..t.threads().len() as u32).collect();
        for ti in o.threads.clone().unwrap_or_else(all) {
            for g in t.groups(&filter(Some(vec![ti])), GroupBy::Stack) {
                out.insert((ti, g.stack), g.self_times);
            }
        }
    } else {
        for g in t.groups(&filter(o.threads.clone()), GroupBy::Stack) {
            out.insert((u32::MAX, g.stack), g.self_times);
        }
    }
    out
}

/// The key of node `n` in a [`PerCall`]: its thread (`u32::MAX` when threads merge) and
/// its names from the root; `None` for synthetic frames.
fn stack_key(t: &FlameTree, n: u32) -> Option<(u32, Vec<StrId>)> {
    let mut thread = u32::MAX;
    let mut names = Vec::new();
    for k in t.path(n) {
        match t.label[k as usize] {
            FrameLabel::Name(s) => names.push(s),
            FrameLabel::Thread(ti) => thread = ti,
            _ => {}
        }
    }
    (!names.is_empty()).then_some((thread, names))
}

/// The verdict on a self time of `new` against BASE's `base` (`None`: BASE has none) by
/// the numbers alone: a change counts from 5% of BASE's value and from `min_delta`.
pub fn judge(base: Option<i64>, new: i64, min_delta: i64) -> Status {
    let Some(v) = base else {
        return Status::Added;
    };
    let rules = NoiseRules::new(min_delta);
    let none = |value| Observation {
        value,
        count: 0,
        samples: &[],
    };
    rules.judge(Measure::Sum, none(v), none(new)).verdict.into()
}

/// One name's self time in NEW against BASE, over the whole traces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NameVerdict {
    /// The verdict.
    pub status: Status,
    /// The Mann-Whitney p-value of the per-call self times, when the thresholds counted
    /// the change and both sides have enough calls.
    pub p_value: Option<f64>,
}

/// Per name of NEW's statistics `rows` (of the whole trace `nt`), its self time judged
/// against BASE's (`base`: self time and calls per name, of the whole trace `bt`) as
/// the flame graph judges a frame: the thresholds, then, where they count the change and
/// each side has [`MIN_SAMPLES`](crate::MIN_SAMPLES) calls, the Mann-Whitney test on the per-call self times.
/// Those are gathered (one pass over each trace) only when some name needs the test.
pub fn judge_names(
    (nt, rows): (&Trace, &[NameStats]),
    (bt, base): (&Trace, &HashMap<String, (i64, u64)>),
) -> HashMap<String, NameVerdict> {
    let rules = NoiseRules::for_base(bt);
    let side = |value, count, samples| Observation {
        value,
        count,
        samples,
    };
    let mut out = HashMap::with_capacity(rows.len());
    let mut tested = Vec::new();
    for r in rows {
        let name = nt.str(r.name);
        let Some(&(v, bc)) = base.get(name) else {
            let verdict = NameVerdict {
                status: Status::Added,
                p_value: None,
            };
            out.insert(name.to_string(), verdict);
            continue;
        };
        let j = rules.judge(
            Measure::Sum,
            side(v, bc, &[]),
            side(r.self_ns, r.count, &[]),
        );
        if j.wants_test(bc, r.count) {
            tested.push((name, v, bc, r.self_ns, r.count));
        }
        out.insert(name.to_string(), verdict_of(j));
    }
    if tested.is_empty() {
        return out;
    }
    let per_call = |t: &Trace| -> HashMap<String, Vec<i64>> {
        let wanted: std::collections::HashSet<&str> = tested.iter().map(|x| x.0).collect();
        (t.groups(&StatsFilter::default(), GroupBy::Name).into_iter())
            .filter(|g| wanted.contains(t.str(g.stats.name)))
            .map(|g| (t.str(g.stats.name).to_string(), g.self_times))
            .collect()
    };
    let (pb, pn) = (per_call(bt), per_call(nt));
    for (name, v, bc, n, nc) in tested {
        if let (Some(sb), Some(sn)) = (pb.get(name), pn.get(name)) {
            let j = rules.judge(Measure::Sum, side(v, bc, sb), side(n, nc, sn));
            out.insert(name.to_string(), verdict_of(j));
        }
    }
    out
}

fn verdict_of(j: Judgement) -> NameVerdict {
    NameVerdict {
        status: j.verdict.into(),
        p_value: j.p_value,
    }
}

/// The smallest change that counts in a comparison with `base`: 0.1% of its duration
/// (`diff --min-delta`'s default).
pub fn min_delta(base: &Trace) -> i64 {
    NoiseRules::for_base(base).min_delta
}
