//! `spall`: the timeline viewer.
//!
//! `spall [TRACE]` opens a window (a built-in demo trace when no file is given);
//! `spall TRACE --screenshot OUT.png` renders one frame headless and exits.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use spall_viewer::load;
use spall_viewer::screenshot;
use spall_viewer::theme::{Theme, ThemeKind};
use spall_viewer::view::flame::Mode;
use spall_viewer::view::timeline::FlowMode;

#[derive(Parser, Debug)]
#[command(
    name = "spall",
    version,
    about = "A fast timeline viewer for traces (.spall, Chrome JSON, Perfetto protobuf), sampling profiles (perf, pprof, .cpuprofile, Gecko, speedscope, collapsed) and system traces (ftrace, systrace)",
    after_help = "Keys: W/S zoom, A/D pan, F or Home fit, Ctrl+F or / search, Enter/Shift+Enter next/previous match (in compare mode, both panes' in time order), L flows (selected/all/none), G flame graph (in it: click zooms, Backspace zooms out, V sandwich, I icicle/flame, O order), T theme, Ctrl+O open, F5 or Ctrl+R reload (keeping the view), Ctrl+C / Ctrl+Shift+C copy the selection's name / call stack, Ctrl+S save the window as a PNG, [ / ] previous/next slice on the lane, M mark the selection's range, N add a marker at the mouse (its note in the panel; shared with `spall-cli markers --save`; in compare mode, over BASE's pane, one of BASE's own), Q side panel, ? every key, Esc clear.\nMouse: wheel zooms at the cursor (Shift+wheel scrolls), drag pans, Shift+drag or a drag on the ruler selects a range, click selects, double-click zooms.\n\nExamples:\n  spall trace.json\n  spall trace.spall --screenshot out.png --size 1600x900 --view 10ms..20ms --select render --flows all --theme dark --scale 2\n  spall trace.json --screenshot out.png --layout-json tracks.json\n  spall trace.json --screenshot flame.png --mode flame --thread 1:1 --view 0..50ms --select render\n  spall new.json --compare base.json\n  spall new.json --compare base.json --screenshot diff.png --mode flame\n  spall new.json --compare base.json --screenshot both.png --select render"
)]
struct Args {
    /// A trace or profile in any format spall reads (listed in `--help`'s heading), gzipped
    /// or not (a built-in demo when omitted).
    trace: Option<PathBuf>,
    /// Render one frame to this PNG, with no window, and exit.
    #[arg(long, value_name = "OUT.png")]
    screenshot: Option<PathBuf>,
    /// With --screenshot: also write the drawn tracks to this file as JSON, top to bottom,
    /// each with its kind, process, thread, name, y and height (window pixels) and whether
    /// it is on screen; see docs/VIEWER.md.
    #[arg(long, value_name = "FILE", requires = "screenshot")]
    layout_json: Option<PathBuf>,
    /// Screenshot size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1600x900", value_parser = parse_size)]
    size: (u32, u32),
    /// Time range to show, START..END relative to the trace start (units: ns, us, ms, s).
    #[arg(long, value_name = "START..END", value_parser = spall_util::parse_time_range)]
    view: Option<(Option<i64>, Option<i64>)>,
    /// Select the first span with this name (else an async slice, then an instant; an exact
    /// name first, else one containing it).
    #[arg(long, value_name = "NAME")]
    select: Option<String>,
    /// Flow arrows to draw: those of the selected span, all in view, or none.
    #[arg(long, value_enum, default_value = "selected")]
    flows: FlowsArg,
    /// Screenshot HiDPI scale (2 renders as on a 2× display).
    #[arg(long, default_value_t = 1.0)]
    scale: f32,
    /// What a screenshot shows: the timeline, or the flame graph (spans merged by call
    /// stack; --view is then the range merged, --select zooms into that frame).
    #[arg(long, value_enum, default_value = "timeline")]
    mode: ModeArg,
    /// Flame graph: only this thread: PID:TID as the file writes them, a thread name, a TID,
    /// or part of a name (the first match).
    #[arg(long, value_name = "PID:TID")]
    thread: Option<String>,
    /// Flame graph: the sandwich of this function (callers above, callees below).
    #[arg(long, value_name = "NAME")]
    sandwich: Option<String>,
    /// Flame graph: the root at the bottom (a flame), not at the top (an icicle).
    #[arg(long)]
    flame_up: bool,
    /// Compare with this trace (BASE): the window opens on the flame graph, its frames red
    /// where TRACE spends more self time, blue where less, grey within noise, `+` marking
    /// stacks BASE lacks and `−` (outlined, at BASE's width) stacks only BASE has (also
    /// "Compare with…" in the side panel); the timeline shows
    /// BASE's tracks under TRACE's, aligned at their starts (with --select, at the first
    /// span of that name in each).
    #[arg(long, value_name = "BASE")]
    compare: Option<PathBuf>,
    /// Colour theme (the window follows the system by default).
    #[arg(long, value_enum)]
    theme: Option<ThemeArg>,
    /// Reload whenever the file changes, keeping the view: for a trace still being written
    /// (F5 or Ctrl+R reloads by hand).
    #[arg(long)]
    follow: bool,
    /// Refuse a trace estimated to need more memory than this (a size such as 4G, `auto`
    /// for what the system has available, or `off`).
    #[arg(long, value_name = "SIZE", default_value = "auto", value_parser = spall_util::parse_memory_limit)]
    max_memory: spall_format::MemoryLimit,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FlowsArg {
    None,
    Selected,
    All,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ModeArg {
    Timeline,
    Flame,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ThemeArg {
    Light,
    Dark,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?}: use WIDTHxHEIGHT, for example 1600x900"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| (16..=16384).contains(&n))
    };
    match (p(w), p(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(format!(
            "{s:?}: width and height must be 16 to 16384 pixels"
        )),
    }
}

fn main() -> ExitCode {
    spall_util::tune_heap();
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "spall: internal error: {info}. Please report this with the trace that caused it."
        );
        std::process::exit(2);
    }));
    let args = Args::parse();
    let decode = trace_model::DecodeOptions {
        max_memory: args.max_memory,
        ..Default::default()
    };
    if let Some(out) = &args.screenshot {
        let l = match load(args.trace.as_deref(), &decode, |_, _| {}) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("spall: {e}");
                return ExitCode::from(2);
            }
        };
        let base = match args
            .compare
            .as_deref()
            .map(|p| load(Some(p), &decode, |_, _| {}))
        {
            None => None,
            Some(Ok(b)) => Some(std::sync::Arc::new(b)),
            Some(Err(e)) => {
                eprintln!("spall: --compare: {e}");
                return ExitCode::from(2);
            }
        };
        let shot = screenshot::Shot {
            width: args.size.0,
            height: args.size.1,
            view: args.view,
            select: args.select.clone(),
            flows: match args.flows {
                FlowsArg::None => FlowMode::None,
                FlowsArg::Selected => FlowMode::Selected,
                FlowsArg::All => FlowMode::All,
            },
            scale: args.scale,
            mode: match args.mode {
                ModeArg::Timeline => Mode::Timeline,
                ModeArg::Flame => Mode::Flame,
            },
            thread: args.thread.clone(),
            sandwich: args.sandwich.clone(),
            flame_up: args.flame_up,
            theme: Theme::new(match args.theme {
                Some(ThemeArg::Dark) => ThemeKind::Dark,
                _ => ThemeKind::Light,
            }),
        };
        let layout = args.layout_json.as_deref();
        return match screenshot::write_compare(&l, &shot, base, out, layout) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("spall: {e}");
                ExitCode::from(2)
            }
        };
    }
    let theme = args.theme.map(|t| match t {
        ThemeArg::Light => ThemeKind::Light,
        ThemeArg::Dark => ThemeKind::Dark,
    });
    let options = spall_viewer::app::Options {
        trace: args.trace,
        theme,
        decode,
        follow: args.follow,
        start_empty: false,
        compare: args.compare,
    };
    match spall_viewer::app::run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("spall: {e}");
            ExitCode::from(2)
        }
    }
}
