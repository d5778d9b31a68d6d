//! `spall-cli convert`: between `.json` / `.json.gz` and `.spall`, by the output's extension.
//!
//! JSON output streams every decoded event straight through (nothing is modelled away), and
//! keeps a JSON input's other top-level keys verbatim. `.spall` output goes through the
//! model, because `.spall` holds only properly nested Begin/End pairs; everything it cannot
//! hold is counted and reported.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use flate2::write::GzEncoder;
use spall_format::{Input, JsonWriter};
use spall_util::AtomicFile;

use crate::util::{load, Fatal};

enum Target {
    Json { gzip: bool },
    Spall,
}

fn target(out: &Path) -> Result<Target, Fatal> {
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if name.ends_with(".spall") {
        Ok(Target::Spall)
    } else if name.ends_with(".json.gz") {
        Ok(Target::Json { gzip: true })
    } else if name.ends_with(".json") {
        Ok(Target::Json { gzip: false })
    } else {
        Err(Fatal(format!(
            "{}: the output's extension chooses the format: use .spall, .json or .json.gz",
            out.display()
        )))
    }
}

pub fn run(input: &Path, output: &Path) -> Result<ExitCode, Fatal> {
    let target = target(output)?;
    if same_file(input, output) {
        return Err(Fatal(format!(
            "{}: the output would overwrite the input",
            output.display()
        )));
    }
    match target {
        Target::Json { gzip } => to_json(input, output, gzip),
        Target::Spall => to_spall(input, output),
    }
}

/// Whether two paths name one file (through links, `./`, or different spellings).
fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The output file, gzip-compressed or not. Nothing reaches the target until `finish`
/// returns the file and it is committed.
enum Out {
    Plain(AtomicFile),
    Gz(Box<GzEncoder<AtomicFile>>),
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Out::Plain(f) => f.write(buf),
            Out::Gz(g) => g.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Plain(f) => f.flush(),
            Out::Gz(g) => g.flush(),
        }
    }
}

impl Out {
    fn finish(self) -> io::Result<AtomicFile> {
        match self {
            Out::Plain(f) => Ok(f),
            Out::Gz(g) => (*g).finish(),
        }
    }
}

fn to_json(input: &Path, output: &Path, gzip: bool) -> Result<ExitCode, Fatal> {
    let src = Input::open(input, &crate::util::decode_options())?;
    let file = AtomicFile::create(output)?;
    let out = if gzip {
        Out::Gz(Box::new(GzEncoder::new(
            file,
            flate2::Compression::default(),
        )))
    } else {
        Out::Plain(file)
    };
    let mut sink = JsonWriter::new(out)?;
    let summary = src.decode(&mut sink).map_err(|e| e.with_path(input))?;
    // The input's other top-level keys, verbatim where they are valid JSON.
    let mut extra: Vec<(String, String)> = Vec::new();
    if let Some(info) = &summary.json {
        for k in &info.other_keys {
            let raw = &src.bytes()[k.value.start as usize..k.value.end as usize];
            if k.name == "traceEvents"
                || serde_json::from_slice::<serde::de::IgnoredAny>(raw).is_err()
            {
                continue;
            }
            extra.push((
                k.name.to_string(),
                String::from_utf8_lossy(raw).into_owned(),
            ));
        }
    }
    let extra: Vec<(&str, &str)> = extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let written = |e: io::Error| Fatal(format!("{}: cannot write: {e}", output.display()));
    let counts = sink.counts();
    let (out, bad_args) = sink.finish(&extra).map_err(written)?;
    out.finish().map_err(written)?.commit()?;
    eprintln!(
        "spall-cli: wrote {}: {} events of the {} read from {} ({} warnings while reading)",
        output.display(),
        counts.events,
        summary.events,
        summary.format,
        summary.diagnostics.total()
    );
    if bad_args > 0 {
        eprintln!(
            "  {bad_args} events had args that are not valid JSON; written as {{\"unparsed\": \"...\"}}"
        );
    }
    let mut lost: Vec<String> = samples_dropped(counts.samples_left_out)
        .into_iter()
        .collect();
    // A JSON input's system trace text goes out verbatim with its other keys.
    let sched_kept = extra.iter().any(|(k, _)| *k == "systemTraceEvents");
    if counts.sched_left_out > 0 && !sched_kept {
        lost.push(format!(
            "{} scheduler records: CPU slices, thread states, CPU counters (dropped)",
            counts.sched_left_out
        ));
    }
    not_representable("Chrome JSON", &lost);
    Ok(ExitCode::SUCCESS)
}

/// A sampling profile's samples, which no output format here holds; `None` for none.
fn samples_dropped(n: u64) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} samples of a sampling profile (dropped; `spall-cli flame` writes their \
             stacks and weights as folded stacks)"
        )
    })
}

/// Lists, on stderr, what a conversion to `format` left out.
fn not_representable(format: &str, lost: &[String]) {
    if !lost.is_empty() {
        eprintln!("  not representable in {format}:");
        for l in lost {
            eprintln!("    {l}");
        }
    }
}

fn to_spall(input: &Path, output: &Path) -> Result<ExitCode, Fatal> {
    let (trace, _) = load(input)?;
    let (file, x) = trace.write_spall(AtomicFile::create(output)?)?;
    file.commit()?;
    let spans = x.spans;
    eprintln!(
        "spall-cli: wrote {}: {spans} spans, {} instants",
        output.display(),
        x.instants
    );
    let mut lost: Vec<String> = Vec::new();
    let mut note = |n: u64, what: &str| {
        if n > 0 {
            lost.push(format!("{n} {what}"));
        }
    };
    note(
        trace.instants().len() as u64 - x.instants,
        "process- or global-scoped instant events (dropped)",
    );
    note(trace.counter_samples(), "counter samples (dropped)");
    note(trace.flows().len() as u64, "flows (dropped)");
    note(trace.async_events().len() as u64, "async events (dropped)");
    note(
        trace.metadata().len() as u64,
        "other metadata events (dropped)",
    );
    let unmodelled: u64 = trace
        .diagnostics()
        .counts()
        .filter(|(k, _)| matches!(k, trace_model::ModelWarning::UnmodelledPhase(_)))
        .map(|(_, n)| n)
        .sum();
    note(
        unmodelled,
        "events of phases the model does not hold (dropped; see validate)",
    );
    note(
        x.with_category,
        "spans with a category (categories dropped)",
    );
    note(
        x.truncated_strings,
        "names or args longer than 255 bytes (cut)",
    );
    note(
        x.clamped,
        "partially overlapping spans (end moved to their parent's end)",
    );
    note(
        x.remapped_pids,
        "process ids that are not u32 (renumbered, name kept)",
    );
    note(
        x.remapped_tids,
        "thread ids that are not u32 (renumbered, name kept)",
    );
    if x.shift_ns > 0 {
        lost.push(format!(
            "negative timestamps: every time shifted by +{} ns",
            x.shift_ns
        ));
    }
    let samples = trace.samples().iter().map(|t| t.ts.len() as u64).sum();
    lost.splice(0..0, samples_dropped(samples));
    if let Some(s) = trace.sched().filter(|s| !s.is_empty()) {
        let values: usize = s.counters.iter().map(|c| c.ts.len()).sum();
        lost.push(format!(
            "{} CPU slices, {} thread states and {values} CPU counter values (dropped)",
            s.slices.len(),
            s.state_count()
        ));
    }
    not_representable(".spall", &lost);
    Ok(ExitCode::SUCCESS)
}
