//! Writes a large synthetic trace, for benchmarks and for trying the viewer on big files.
//!
//! ```sh
//! cargo run --release -p spall-format --example gen-trace -- bench-data/200mb.json --spans 1700000
//! cargo run --release -p spall-format --example gen-trace -- bench-data/1gb.spall --spans 24000000
//! ```
//!
//! The output format follows the extension (`.spall`, version 3 unless `--v1`, else JSON). The same options always
//! give the same bytes.

use std::path::PathBuf;
use std::time::Instant;

use spall_format::synth::Synth;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out: Option<PathBuf> = None;
    let mut synth = Synth::default();
    let mut mix_be = true;
    let mut v1 = false;
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> u64 {
            let v = args
                .next()
                .unwrap_or_else(|| usage(&format!("{what} needs a value")));
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| usage(&format!("{what}: not a number: {v}")))
        };
        match a.as_str() {
            "--spans" => synth.spans = num("--spans"),
            "--threads" => synth.threads = num("--threads") as u32,
            "--processes" => synth.processes = num("--processes") as u32,
            "--depth" => synth.max_depth = num("--depth") as u32,
            "--names" => synth.names = num("--names") as usize,
            "--seed" => synth.seed = num("--seed"),
            "--x-only" => mix_be = false,
            "--v1" => v1 = true,
            "-h" | "--help" => usage(""),
            _ if out.is_none() && !a.starts_with('-') => out = Some(a.into()),
            _ => usage(&format!("unexpected argument {a}")),
        }
    }
    let Some(out) = out else {
        usage("give an output file")
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).ok();
    }
    let file =
        std::fs::File::create(&out).unwrap_or_else(|e| usage(&format!("{}: {e}", out.display())));
    let t = Instant::now();
    let spall = out.extension().is_some_and(|e| e == "spall");
    let spans = if spall && v1 {
        synth.write_spall_v1(file)
    } else if spall {
        synth.write_spall(file)
    } else {
        synth.write_json(file, mix_be)
    }
    .unwrap_or_else(|e| usage(&format!("{}: {e}", out.display())));
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "{}: {spans} spans, {:.1} MB, {} threads, written in {:.1} s",
        out.display(),
        size as f64 / 1e6,
        synth.processes * synth.threads,
        t.elapsed().as_secs_f64()
    );
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("gen-trace: {msg}");
    }
    eprintln!(
        "usage: gen-trace OUT [--spans N] [--threads N] [--processes N] [--depth N] [--names N] [--seed N] [--x-only] [--v1]"
    );
    std::process::exit(2)
}
