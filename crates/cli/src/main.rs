//! `spall-cli`: answers questions about trace files from the command line and in CI.
//!
//! Exit codes: 0 success; 1 a check failed (`validate --strict`); 2 bad usage or unreadable
//! input, with a message on stderr. JSON output is a contract, documented in `docs/CLI.md`.

use spall_cli::{
    check, convert, diff, export, flame, info, markers, query, stats, util, validate, SortBy,
    StatsFormat,
};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "spall-cli",
    version,
    about = "Query traces (.spall, Chrome JSON, Perfetto protobuf), sampling profiles and system traces: summaries, per-function statistics, validation, conversion, and regression checks for CI.",
    after_help = "Reads traces: .spall (v1, v3), Chrome JSON, Perfetto protobuf (.pftrace, .perfetto-trace; with ftrace system data); sampling profiles: `perf script` text, pprof, V8/Node .cpuprofile, Firefox (Gecko) profiles, speedscope files, collapsed stacks; system traces: ftrace and atrace text, systrace HTML; or gzip of any of them. The format is detected from the content.\n\nExit codes: 0 success, 1 a check failed, 2 bad usage or unreadable input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Stop decompressing gzip input past this size (a gzip bomb guard): bytes, or K, M, G, T.
    #[arg(long, global = true, value_name = "SIZE", default_value = "16G", value_parser = util::parse_size)]
    max_decompressed: u64,
    /// Refuse a load estimated to need more memory than this (with a message, instead of
    /// being killed by the OOM killer half way): a size (4G), `auto` (what the system has
    /// available, and the container's limit) or `off`.
    #[arg(long, global = true, value_name = "SIZE", default_value = "auto", value_parser = util::parse_memory_limit)]
    max_memory: spall_format::MemoryLimit,
    /// Of a sampling profile with several kinds of samples (pprof's sample types, perf's
    /// events), count this one in flame graphs, statistics and diffs: `cpu`,
    /// `alloc_space`, or `kind/unit`. Default: the kind the profile names (pprof's default
    /// sample type), else the one with the most samples.
    #[arg(long, global = true, value_name = "KIND")]
    sample_kind: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a trace: format, spans, threads, time span, depth, warnings.
    #[command(
        after_help = "Examples:\n  spall-cli info trace.json\n  spall-cli info trace.spall --format json | jq .spans\n  curl -s https://example.com/trace.json.gz | spall-cli info -"
    )]
    Info {
        /// A trace or profile in any format spall reads (listed under `spall-cli --help`),
        /// gzipped or not, told by its content; `-` reads it from standard input.
        trace: PathBuf,
        #[arg(long, value_enum, default_value_t = Table)]
        format: TableOrJson,
    },
    /// Per-function statistics: count, total, self, min, max, mean, p50, p90, p99.
    #[command(
        after_help = "Times in --range accept units (150ns, 200us, 1.5ms, 3s) and are relative to the trace's start; either end may be left open.\n\nExamples:\n  spall-cli stats trace.json --top 20\n  spall-cli stats trace.spall --sort total --filter '^render' --format csv\n  spall-cli stats trace.json --thread 1:1 --range 10ms..250ms --format json"
    )]
    Stats {
        trace: PathBuf,
        #[arg(long, value_enum, default_value_t = StatsFormat::Table)]
        format: StatsFormat,
        #[arg(long, value_enum, default_value_t = SortBy::SelfTime)]
        sort: SortBy,
        /// Show only the first N rows.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// Only names matching this regular expression.
        #[arg(long, value_name = "REGEX")]
        filter: Option<String>,
        /// Only this thread (repeatable): PID:TID as the file writes them, a thread name, a
        /// TID, or part of a name.
        #[arg(long, value_name = "PID:TID")]
        thread: Vec<String>,
        /// Only this time range, clipping spans to it: START..END, relative to the trace start.
        #[arg(long, value_name = "START..END")]
        range: Option<String>,
    },
    /// Merge spans by call stack: folded stacks (for inferno, flamegraph.pl, speedscope),
    /// an SVG flame graph, or a JSON tree.
    #[command(after_help = FLAME_HELP)]
    Flame(flame::Args),
    /// Print every warning found while loading. Exit 0 when clean.
    #[command(
        after_help = "Examples:\n  spall-cli validate trace.json\n  spall-cli validate --strict trace.json && echo clean"
    )]
    Validate {
        trace: PathBuf,
        /// Exit with 1 if there is any warning.
        #[arg(long)]
        strict: bool,
        #[arg(long, value_enum, default_value_t = Table)]
        format: TableOrJson,
    },
    /// The markers and marked range added to the trace in the viewer (from the viewer's
    /// settings, else the trace's shared TRACE.markers.json); --save writes that file.
    #[command(
        after_help = "Markers are added in the viewer (N at the mouse; M marks the selection's range) and kept in its settings, per file. To share them, save them beside the trace: whoever opens the trace in the viewer then sees them.\n\nExamples:\n  spall-cli markers trace.json\n  spall-cli markers trace.json --save && git add trace.json.markers.json\n  spall-cli markers trace.spall --format json | jq '.markers[].note'"
    )]
    Markers {
        trace: PathBuf,
        #[arg(long, value_enum, default_value_t = Table)]
        format: TableOrJson,
        /// Also write them to TRACE.markers.json, beside the trace.
        #[arg(long)]
        save: bool,
    },
    /// Convert a trace (any format read: see `spall-cli --help`) to .json / .json.gz or
    /// .spall, chosen by the output's extension.
    #[command(
        after_help = "What the target format cannot hold (for .spall: process- and global-scoped instants, counters, flows, async events, categories, names over 255 bytes; thread instants are kept as spall-rs Instant events, which spall-web does not read) is listed on stderr, as are a profile's samples and a system trace's scheduling, which neither holds (`flame --format folded` writes a profile's stacks).\n\nExamples:\n  spall-cli convert trace.spall trace.json\n  spall-cli convert trace.json.gz trace.spall\n  spall-cli convert trace.pftrace trace.json"
    )]
    Convert { input: PathBuf, output: PathBuf },
    /// Compare two traces per function (or call stack): what regressed, improved, appeared
    /// or disappeared. Exit 1 when something regressed.
    #[command(after_help = DIFF_HELP)]
    Diff(diff::Args),
    /// Check performance budgets from a TOML file. Exit 1 when any is broken.
    #[command(after_help = CHECK_HELP)]
    Check(check::Args),
    /// SQL over the trace with Perfetto's table names (slice, thread, process, counter,
    /// args, ...); with no SQL, an interactive shell.
    #[command(after_help = QUERY_HELP)]
    Query(query::Args),
    /// Write the SQL tables of many traces as Parquet datasets: OUTDIR/slice/,
    /// OUTDIR/thread/, ..., one file per trace in each, every row tagged with the trace's
    /// path and hash. Exporting a trace again replaces its files; a trace that fails to
    /// load is skipped (exit 1 at the end).
    #[command(
        after_help = "Examples:\n  spall-cli export run1.json out\n  spall-cli export --jobs 2 runs/*.json out\n  duckdb -c \"SELECT trace, name, SUM(dur) FROM 'out/slice/*.parquet' GROUP BY ALL\"\n\nThe tables and their columns: docs/FLEET.md."
    )]
    Export(export::Args),
}

const QUERY_HELP: &str = "Tables (trace_processor's names and columns): slice, thread, process, track, thread_track, process_track, counter_track, counter, flow, args, the samples' cpu_profile_stack_sample, perf_sample, stack_profile_callsite, stack_profile_frame, stack_profile_mapping, and ancestor_slice(id), descendant_slice(id), directly_connected_flow(id), following_flow(id), preceding_flow(id); ours: instant, the views spall_slice (slice with utid, self_dur, unfinished, kind) and thread_slice. As trace_processor's, slice holds every span, instant (dur = 0) and async slice on its track; stats counts spans only. Times are integer nanoseconds. Ids are numbered our own way. A JSON string pid or tid (\"Spans\") stays a string, where trace_processor gives a number of its own (an offset into its string pool). Columns and differences: docs/SQL.md.

Exit codes: 0 success, 2 a SQL error (the message shows the query and where) or an unreadable trace.

Examples:
  spall-cli query trace.json 'SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name ORDER BY 3 DESC LIMIT 10'
  spall-cli query trace.spall -f report.sql --format csv > report.csv
  spall-cli query trace.json \"SELECT key, string_value FROM slice JOIN args USING (arg_set_id) WHERE slice.name = 'load'\" --format json
  spall-cli query trace.json          # an interactive shell";

const CHECK_HELP: &str = "A budget file holds [[budget]] tables: `name = \"render\"` (or `match = \"^gc::\"`, every matching name counted together), an optional `thread` (a name or PID:TID), and limits: count (a whole number) and total, self, mean, p50, p90, p99, max (durations with a unit: \"2ms\"). Of a system trace, `cpu = \"120ms\"` with an optional `thread` (and no name) limits CPU time from the scheduler.

Exit codes: 0 every budget kept, 1 one broken (or, with --strict, a function never called), 2 a malformed budget file (the message names the line and key) or an unreadable trace.

Examples:
  spall-cli check trace.json --budget perf-budget.toml
  spall-cli check trace.spall --budget perf-budget.toml --format junit > budgets.xml
  spall-cli check new.json --budget perf-budget.toml --baseline main.json --max-regression 10%";

const FLAME_HELP: &str = "folded: one line per distinct stack, frames from the outermost joined by ';', a space, then the stack's self time in integer nanoseconds (stacks with none are left out). Threads are merged unless --per-thread, which makes the process and the thread the first two frames. In names, ';' becomes ':' and line breaks spaces.

Examples:
  spall-cli flame trace.json > trace.folded
  spall-cli flame trace.spall --format svg --thread main > flame.svg
  spall-cli flame trace.json --range 10ms..250ms --filter '^render' --format json | jq .total_ns";

const DIFF_HELP: &str = "A function regressed when its metric grew by at least --threshold and --min-delta and, when both traces call it 5 or more times, its durations shifted beyond noise (Mann-Whitney U test, p < --alpha). Functions only in NEW are 'added', only in BASE 'removed'.

--metric cpu compares system traces (Perfetto, ftrace, systrace) per thread: each thread's CPU time from the scheduler (its scheduling slices' total, clipped to --range), threads matched by process and thread name (or PID:TID with --match-threads id); the noise test runs on the slices' durations. Both traces must hold scheduling data.

--by stack --format folded writes the differential folded stacks (STACK BASE_NS NEW_NS, self time as `flame` counts it); --format svg draws them: NEW's frames, red where self time grew, blue where it shrank.

Exit codes: 0 nothing regressed (see --fail-on), 1 something did, 2 bad usage or unreadable input.

Examples:
  spall-cli diff main.json pr.json
  spall-cli diff base.spall new.spall --metric p90 --threshold 10% --format markdown > comment.md
  spall-cli diff base.json new.json --by stack --thread main --format json | jq '.functions[0]'
  spall-cli diff base.json new.json --by stack --format svg > diff.svg
  spall-cli diff base.json new.json --by stack --format folded | inferno-flamegraph > diff.svg
  spall-cli diff base.pftrace new.pftrace --metric cpu --format markdown";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TableOrJson {
    Table,
    Json,
}
use TableOrJson::Table;

fn main() -> ExitCode {
    spall_util::tune_heap();
    // A bug must still end with a message and exit code 2, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        spall_util::remove_partial_files();
        // `spall-cli stats t.json | head`: the reader left, which is not an error (as in
        // ripgrep). `println!` reports it by panicking.
        if info.to_string().contains("Broken pipe") {
            std::process::exit(0);
        }
        eprintln!(
            "spall-cli: internal error: {info}. Please report this with the trace that caused it."
        );
        std::process::exit(2);
    }));
    // Ctrl+C, or a CI job's timeout (SIGTERM): outputs being written are abandoned, and
    // their targets stay as they were.
    let _ = ctrlc::set_handler(|| {
        spall_util::remove_partial_files();
        eprintln!("spall-cli: interrupted; no output file was changed");
        std::process::exit(130);
    });
    let cli = Cli::parse();
    spall_util::timing::stage("started");
    util::set_decode_options(spall_format::DecodeOptions {
        max_decompressed: cli.max_decompressed,
        max_memory: cli.max_memory,
    });
    util::set_sample_kind(cli.sample_kind.clone());
    let result = match cli.command {
        Command::Info { trace, format } => info::run(&trace, format == TableOrJson::Json),
        Command::Stats {
            trace,
            format,
            sort,
            top,
            filter,
            thread,
            range,
        } => stats::run(&stats::Args {
            trace,
            format,
            sort,
            top,
            filter,
            threads: thread,
            range,
        }),
        Command::Validate {
            trace,
            strict,
            format,
        } => validate::run(&trace, strict, format == TableOrJson::Json),
        Command::Markers {
            trace,
            format,
            save,
        } => markers::run(&trace, format == TableOrJson::Json, save),
        Command::Convert { input, output } => convert::run(&input, &output),
        Command::Check(a) => check::run(&a),
        Command::Query(a) => query::run(&a),
        Command::Export(a) => export::run(&a),
        Command::Diff(a) => diff::run(&a),
        Command::Flame(a) => flame::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(util::Fatal(msg)) => {
            eprintln!("spall-cli: {msg}");
            ExitCode::from(2)
        }
    }
}
