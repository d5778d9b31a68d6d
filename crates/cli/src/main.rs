//! `spall-cli`: answers questions about trace files from the command line and in CI.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use spall_format::{DecodeOptions, Input, RawEvent};

#[derive(Parser, Debug)]
#[command(
    name = "spall-cli",
    version,
    about = "Query .spall and Chrome JSON trace files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Summarise a trace: format, event counts by phase, warnings.
    #[command(
        after_help = "Examples:\n  spall-cli info trace.json\n  spall-cli info trace.spall --format json"
    )]
    Info {
        /// A .spall, .json or .json.gz trace (detected by content).
        trace: PathBuf,
        #[arg(long, value_enum, default_value_t = OutFormat::Table)]
        format: OutFormat,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OutFormat {
    Table,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Info { trace, format } => info(&trace, format),
    }
}

fn info(path: &PathBuf, format: OutFormat) -> ExitCode {
    let start = std::time::Instant::now();
    let mut phases: BTreeMap<char, u64> = BTreeMap::new();
    let result = Input::open(path, &DecodeOptions::default()).and_then(|input| {
        input
            .decode(&mut |ev: &RawEvent<'_>| *phases.entry(ev.ph.as_char()).or_insert(0) += 1)
            .map_err(|e| e.with_path(path))
    });
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("spall-cli: {e}");
            return ExitCode::from(2);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    match format {
        OutFormat::Json => {
            let v = serde_json::json!({
                "format": summary.format.name(),
                "gzip": summary.gzip,
                "events": summary.events,
                "phases": phases.iter().map(|(k, v)| (k.to_string(), v)).collect::<BTreeMap<_, _>>(),
                "diagnostics": summary.diagnostics.counts().map(|(k, v)| (k.as_str(), v)).collect::<BTreeMap<_, _>>(),
                "load_ms": (secs * 1000.0) as u64,
            });
            println!("{v:#}");
        }
        OutFormat::Table => {
            println!(
                "format       {}{}",
                summary.format,
                if summary.gzip { " (gzip)" } else { "" }
            );
            println!("events       {}", summary.events);
            for (ph, n) in &phases {
                println!("  ph {ph}       {n}");
            }
            println!("warnings     {}", summary.diagnostics.total());
            for (k, n) in summary.diagnostics.counts() {
                println!("  {k:<28} {n}");
            }
            for w in summary.diagnostics.examples() {
                println!("  - {w}");
            }
            println!("load time    {:.3} s", secs);
        }
    }
    ExitCode::SUCCESS
}
