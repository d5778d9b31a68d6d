//! `spall-cli flame`: spans merged by call stack, as folded stacks, an SVG flame graph or a
//! JSON tree.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use trace_model::{label_text, FlameOptions, FlameSort, FlameTree, Trace};

use crate::select::{threads, Selection};
use crate::util::{load, Fatal};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per stack: frames joined by `;`, a space, the self time in ns.
    Folded,
    /// An interactive flame graph (inferno).
    Svg,
    /// A tree of {name, total_ns, self_ns, count, children}.
    Json,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A trace or profile in any format spall reads (listed under `spall-cli --help`),
    /// gzipped or not, told by its content; `-` reads it from standard input.
    trace: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Folded)]
    format: Format,
    /// Only this thread (repeatable): PID:TID as the file writes them, a thread name, a TID,
    /// or part of a name.
    #[arg(long, value_name = "PID:TID")]
    thread: Vec<String>,
    /// Only this time range, clipping spans to it: START..END, relative to the trace start.
    #[arg(long, value_name = "START..END")]
    range: Option<String>,
    /// Keep threads apart: the process and the thread are the first two frames.
    #[arg(long)]
    per_thread: bool,
    /// Only stacks with a frame matching this regular expression (and the frames under it).
    #[arg(long, value_name = "REGEX")]
    filter: Option<String>,
    /// svg: draw the root at the top (an icicle graph).
    #[arg(long)]
    icicle: bool,
    /// svg: the title.
    #[arg(long, default_value = "Flame graph")]
    title: String,
    /// Write to this file instead of stdout. It is replaced only when the whole graph is
    /// written: on any error an existing file is left as it was.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(a: &Args) -> Result<ExitCode, Fatal> {
    let sel = Selection::parse(&a.thread, a.filter.as_deref(), a.range.as_deref())?;
    let (trace, _) = load(&a.trace)?;
    let tree = tree(&trace, &sel, threads(&trace, &sel.threads)?, a.per_thread);
    let write = |out: &mut dyn Write| write(out, &trace, &tree, a.format, &a.title, a.icicle);
    if let Some(path) = &a.output {
        spall_util::write_atomically(path, |f| write(f).map_err(Fatal::from))?;
        return Ok(ExitCode::SUCCESS);
    }
    to_stdout(write)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `write` on buffered stdout.
pub(crate) fn to_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Fatal> {
    let stdout = io::stdout().lock();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout);
    write(&mut out).and_then(|()| out.flush()).or_else(|e| {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        if e.kind() == io::ErrorKind::BrokenPipe {
            Ok(())
        } else {
            Err(Fatal(format!("cannot write the output: {e}")))
        }
    })
}

/// The merged tree of `threads` (`None`: all): spans clipped to the selection's range, then
/// only the stacks through a frame matching its filter. `diff --format folded` compares two
/// of these, so both commands count self time alike.
pub fn tree(
    trace: &Trace,
    sel: &Selection,
    threads: Option<Vec<u32>>,
    per_thread: bool,
) -> FlameTree {
    let filter = sel.filter(trace, threads);
    let opts = FlameOptions {
        threads: filter.threads,
        range: filter.range,
        per_thread,
        sample_kind: None,
    };
    let tree = trace.flame(&opts, FlameSort::Name);
    match &sel.name {
        Some(re) => tree.filtered(
            trace,
            |l| re.is_match(&label_text(trace, l)),
            FlameSort::Name,
        ),
        None => tree,
    }
}

/// Writes `tree` as `format`; `title` and `icicle` are the SVG's (`--title`, `--icicle`).
pub fn write(
    mut out: &mut dyn Write,
    t: &Trace,
    tree: &FlameTree,
    format: Format,
    title: &str,
    icicle: bool,
) -> io::Result<()> {
    match format {
        Format::Folded => write_folded(&mut out, t, tree),
        Format::Json => write_json(&mut out, t, tree),
        Format::Svg => write_svg(&mut out, t, tree, title, icicle),
    }
}

fn write_folded(out: &mut impl Write, t: &Trace, tree: &FlameTree) -> io::Result<()> {
    let mut result = Ok(());
    tree.each_folded(t, |stack, ns| {
        if result.is_ok() {
            result = writeln!(out, "{stack} {ns}");
        }
    });
    result
}

/// The tree as nested objects, children in name order; written in one pass over the
/// preorder, so deep trees need no recursion.
fn write_json(out: &mut impl Write, t: &Trace, tree: &FlameTree) -> io::Result<()> {
    // The index at which each open node's subtree ends.
    let mut open: Vec<usize> = Vec::new();
    for i in 0..tree.len() {
        while open.last().is_some_and(|&end| end <= i) {
            open.pop();
            out.write_all(b"]}")?;
        }
        if open.last().is_some() && tree.parent[i] as usize != i - 1 {
            out.write_all(b",")?;
        }
        let name = serde_json::to_string(&label_text(t, tree.label[i]))?;
        write!(
            out,
            "{{\"name\":{name},\"total_ns\":{},\"self_ns\":{},\"count\":{},\"children\":[",
            tree.total[i], tree.self_ns[i], tree.count[i]
        )?;
        open.push(i + tree.size[i] as usize);
    }
    for _ in open {
        out.write_all(b"]}")?;
    }
    out.write_all(b"\n")
}

fn write_svg(
    out: &mut impl Write,
    t: &Trace,
    tree: &FlameTree,
    title: &str,
    icicle: bool,
) -> io::Result<()> {
    use inferno::flamegraph::{Direction, Options};
    let lines: Vec<String> = tree
        .folded(t)
        .into_iter()
        .map(|(s, n)| format!("{s} {n}"))
        .collect();
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "ns".into();
    opts.name_type = "Span:".into();
    if icicle {
        opts.direction = Direction::Inverted;
    }
    draw(&mut opts, &lines, "(none) 1", out)
}

/// inferno's flame graph of folded `lines`; with none, `empty` (a placeholder line) drawn
/// under a subtitle that says no spans matched, as inferno refuses empty input.
pub(crate) fn draw(
    opts: &mut inferno::flamegraph::Options<'_>,
    lines: &[String],
    empty: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    use inferno::flamegraph::from_lines;
    if lines.is_empty() {
        opts.subtitle = Some("no spans matched".into());
        return from_lines(opts, [empty], out).map_err(io::Error::other);
    }
    from_lines(opts, lines.iter().map(String::as_str), out).map_err(io::Error::other)
}
