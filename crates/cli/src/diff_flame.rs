//! `diff --by stack --format folded | svg`: the two traces' folded stacks side by side, in
//! inferno's differential format (`STACK BASE_NS NEW_NS`, self time as `flame` counts it),
//! or drawn as a differential flame graph: NEW's widths, each frame red where NEW spends
//! more time in it itself, blue where less, the deeper the colour the larger the change.

use std::collections::BTreeMap;
use std::io::{self, Write};

use trace_model::Trace;

use crate::flame;
use crate::select::Selection;

/// A stack and its self time in BASE and in NEW (0 where a trace lacks it).
pub type StackPair = (String, i64, i64);

/// Every stack of either trace, in byte order of the stacks; the threads (`None`: all) and
/// the selection pick the spans as `flame` does.
pub fn stacks(
    base: &Trace,
    new: &Trace,
    sel: &Selection,
    threads: (Option<Vec<u32>>, Option<Vec<u32>>),
) -> Vec<StackPair> {
    let mut both: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    // Two nodes can print as one stack (`a;b` and `a:b` both become `a:b`): summed, as a
    // reader of `flame`'s output would.
    flame::tree(base, sel, threads.0, false).each_folded(base, |s, ns| {
        both.entry(s.to_string()).or_default().0 += ns;
    });
    flame::tree(new, sel, threads.1, false).each_folded(new, |s, ns| {
        both.entry(s.to_string()).or_default().1 += ns;
    });
    both.into_iter().map(|(s, (b, n))| (s, b, n)).collect()
}

pub fn write_folded(out: &mut dyn Write, stacks: &[StackPair]) -> io::Result<()> {
    for (s, b, n) in stacks {
        writeln!(out, "{s} {b} {n}")?;
    }
    Ok(())
}

/// The differential flame graph. With `base_widths` the frames are BASE's, so that what
/// NEW no longer runs shows (in blue); the colours still say NEW − BASE.
pub fn write_svg(
    out: &mut dyn Write,
    stacks: &[StackPair],
    title: &str,
    base_widths: bool,
) -> io::Result<()> {
    use inferno::flamegraph::Options;
    // inferno sizes frames by the second count and colours them by second − first.
    let lines: Vec<String> = stacks
        .iter()
        .map(|(s, b, n)| {
            if base_widths {
                format!("{s} {n} {b}")
            } else {
                format!("{s} {b} {n}")
            }
        })
        .collect();
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "ns".into();
    opts.name_type = "Span:".into();
    opts.negate_differentials = base_widths;
    opts.subtitle = Some(
        if base_widths {
            "widths: BASE; red: more self time in NEW, blue: less"
        } else {
            "widths: NEW; red: more self time in NEW, blue: less"
        }
        .into(),
    );
    flame::draw(&mut opts, &lines, "(none) 1 1", out)
}
