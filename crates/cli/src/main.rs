//! `spall-cli`: answers questions about trace files from the command line and in CI.
//!
//! Exit codes: 0 success; 1 a check failed (`validate --strict`); 2 bad usage or unreadable
//! input, with a message on stderr. JSON output is a contract, documented in `docs/CLI.md`.

mod convert;
mod info;
mod stats;
mod util;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "spall-cli",
    version,
    about = "Query .spall and Chrome JSON trace files: summaries, per-function statistics, validation and conversion.",
    after_help = "Traces may be .spall (v1, v3), Chrome JSON, or gzip of either; the format is detected from the content.\n\nExit codes: 0 success, 1 a check failed, 2 bad usage or unreadable input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Stop decompressing gzip input past this size (a gzip bomb guard): bytes, or K, M, G, T.
    #[arg(long, global = true, value_name = "SIZE", default_value = "16G", value_parser = util::parse_size)]
    max_decompressed: u64,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a trace: format, spans, threads, time span, depth, warnings.
    #[command(
        after_help = "Examples:\n  spall-cli info trace.json\n  spall-cli info trace.spall --format json | jq .spans"
    )]
    Info {
        /// A .spall, .json or .json.gz trace.
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
        /// Only this thread (repeatable). Ids as the file writes them: numbers or names.
        #[arg(long, value_name = "PID:TID")]
        thread: Vec<String>,
        /// Only this time range, clipping spans to it: START..END, relative to the trace start.
        #[arg(long, value_name = "START..END")]
        range: Option<String>,
    },
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
    /// Convert between .json / .json.gz and .spall, chosen by the output's extension.
    #[command(
        after_help = "What the target format cannot hold (for .spall: instants, counters, flows, async events, categories, names over 255 bytes) is listed on stderr.\n\nExamples:\n  spall-cli convert trace.spall trace.json\n  spall-cli convert trace.json.gz trace.spall"
    )]
    Convert { input: PathBuf, output: PathBuf },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TableOrJson {
    Table,
    Json,
}
use TableOrJson::Table;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    #[value(name = "self")]
    SelfTime,
    Total,
    Count,
    Mean,
    Max,
    Name,
}

fn main() -> ExitCode {
    // A bug must still end with a message and exit code 2, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "spall-cli: internal error: {info}. Please report this with the trace that caused it."
        );
        std::process::exit(2);
    }));
    let cli = Cli::parse();
    util::set_decode_options(spall_format::DecodeOptions {
        max_decompressed: cli.max_decompressed,
    });
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
        Command::Convert { input, output } => convert::run(&input, &output),
    };
    match result {
        Ok(code) => code,
        Err(util::Fatal(msg)) => {
            eprintln!("spall-cli: {msg}");
            ExitCode::from(2)
        }
    }
}
