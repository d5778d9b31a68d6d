//! `spall-cli convert`: between `.json` / `.json.gz` and `.spall`, by the output's extension.
//!
//! JSON output streams every decoded event straight through (nothing is modelled away), and
//! keeps a JSON input's other top-level keys verbatim. `.spall` output goes through the
//! model, because `.spall` holds only properly nested Begin/End pairs; everything it cannot
//! hold is counted and reported.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use spall_format::{Args, EventSink, Id2, Input, RawEvent, RawId};

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
    if input == output {
        return Err(Fatal("the output would overwrite the input".into()));
    }
    match target {
        Target::Json { gzip } => to_json(input, output, gzip),
        Target::Spall => to_spall(input, output),
    }
}

fn create(path: &Path) -> Result<BufWriter<File>, Fatal> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|e| Fatal(format!("{}: cannot create: {e}", path.display())))
}

/// Streams events as Chrome JSON.
struct JsonSink<W: Write> {
    out: W,
    first: bool,
    err: Option<io::Error>,
    bad_args: u64,
}

impl<W: Write> EventSink for JsonSink<W> {
    fn event(&mut self, ev: &RawEvent<'_>) {
        if self.err.is_some() {
            return;
        }
        let sep = if self.first { "\n" } else { ",\n" };
        self.first = false;
        let mut line = String::with_capacity(160);
        line.push_str(sep);
        event_json(ev, &mut line, &mut self.bad_args);
        if let Err(e) = self.out.write_all(line.as_bytes()) {
            self.err = Some(e);
        }
    }
}

/// Microseconds with up to three decimals, exactly: `1500` ns is `1.5`.
pub fn us_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (whole, frac) = (a / 1000, a % 1000);
    if frac == 0 {
        format!("{sign}{whole}")
    } else {
        let f = format!("{frac:03}");
        format!("{sign}{whole}.{}", f.trim_end_matches('0'))
    }
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

fn id_json(id: &RawId<'_>) -> String {
    match id {
        RawId::Num(n) => n.to_string(),
        RawId::Str(s) => js(s),
    }
}

fn event_json(ev: &RawEvent<'_>, o: &mut String, bad_args: &mut u64) {
    use std::fmt::Write as _;
    let _ = write!(
        o,
        "{{\"name\":{},\"ph\":{}",
        js(&ev.name),
        js(&ev.ph.as_char().to_string())
    );
    if !ev.cat.is_empty() {
        let _ = write!(o, ",\"cat\":{}", js(&ev.cat));
    }
    let _ = write!(o, ",\"ts\":{}", us_text(ev.ts));
    for (k, v) in [("dur", ev.dur), ("tts", ev.tts), ("tdur", ev.tdur)] {
        if let Some(v) = v {
            let _ = write!(o, ",\"{k}\":{}", us_text(v));
        }
    }
    let _ = write!(
        o,
        ",\"pid\":{},\"tid\":{}",
        id_json(&ev.pid),
        id_json(&ev.tid)
    );
    if let Some(id) = &ev.id {
        let _ = write!(o, ",\"id\":{}", js(id));
    }
    match &ev.id2 {
        Some(Id2::Local(s)) => {
            let _ = write!(o, ",\"id2\":{{\"local\":{}}}", js(s));
        }
        Some(Id2::Global(s)) => {
            let _ = write!(o, ",\"id2\":{{\"global\":{}}}", js(s));
        }
        None => {}
    }
    if let Some(b) = &ev.bind_id {
        let _ = write!(o, ",\"bind_id\":{}", js(b));
    }
    for (k, v) in [("s", ev.scope), ("bp", ev.bp)] {
        if let Some(c) = v {
            let _ = write!(o, ",\"{k}\":{}", js(&char::from(c).to_string()));
        }
    }
    if let Some(c) = &ev.cname {
        let _ = write!(o, ",\"cname\":{}", js(c));
    }
    match &ev.args {
        Args::None => {}
        Args::Json(raw) => {
            if serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok() {
                let _ = write!(o, ",\"args\":{raw}");
            } else {
                *bad_args += 1;
                let _ = write!(o, ",\"args\":{{\"unparsed\":{}}}", js(raw));
            }
        }
        Args::Text(t) => {
            let _ = write!(o, ",\"args\":{{\"text\":{}}}", js(t));
        }
    }
    o.push('}');
}

fn to_json(input: &Path, output: &Path, gzip: bool) -> Result<ExitCode, Fatal> {
    let src = Input::open(input, &crate::util::decode_options())?;
    let file = create(output)?;
    let out: Box<dyn Write> = if gzip {
        Box::new(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        ))
    } else {
        Box::new(file)
    };
    let mut sink = JsonSink {
        out,
        first: true,
        err: None,
        bad_args: 0,
    };
    sink.out.write_all(b"{\"traceEvents\":[")?;
    let summary = src.decode(&mut sink).map_err(|e| e.with_path(input))?;
    if let Some(e) = sink.err.take() {
        return Err(Fatal(format!("{}: {e}", output.display())));
    }
    let mut tail = String::from("\n]");
    let mut has_unit = false;
    if let Some(info) = &summary.json {
        for k in &info.other_keys {
            let raw = &src.bytes()[k.value.start as usize..k.value.end as usize];
            if k.name == "traceEvents"
                || serde_json::from_slice::<serde::de::IgnoredAny>(raw).is_err()
            {
                continue;
            }
            has_unit |= k.name == "displayTimeUnit";
            tail.push_str(&format!(
                ",\n{}:{}",
                js(&k.name),
                String::from_utf8_lossy(raw)
            ));
        }
    }
    if !has_unit {
        tail.push_str(",\n\"displayTimeUnit\":\"ns\"");
    }
    tail.push_str("}\n");
    sink.out.write_all(tail.as_bytes())?;
    sink.out.flush()?;
    drop(sink.out);
    eprintln!(
        "spall-cli: wrote {}: {} events from {} ({} warnings while reading)",
        output.display(),
        summary.events,
        summary.format,
        summary.diagnostics.total()
    );
    if sink.bad_args > 0 {
        eprintln!(
            "  {} events had args that are not valid JSON; written as {{\"unparsed\": \"...\"}}",
            sink.bad_args
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn to_spall(input: &Path, output: &Path) -> Result<ExitCode, Fatal> {
    let (trace, _) = load(input)?;
    let file = create(output)?;
    let (file, x) = trace.write_spall(file)?;
    file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let spans = x.spans;
    eprintln!("spall-cli: wrote {}: {spans} spans", output.display());
    let mut lost: Vec<String> = Vec::new();
    let mut note = |n: u64, what: &str| {
        if n > 0 {
            lost.push(format!("{n} {what}"));
        }
    };
    note(trace.instants().len() as u64, "instant events (dropped)");
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
    if !lost.is_empty() {
        eprintln!("  not representable in .spall:");
        for l in lost {
            eprintln!("    {l}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::us_text;

    #[test]
    fn microsecond_text_is_exact() {
        assert_eq!(us_text(1500), "1.5");
        assert_eq!(us_text(1000), "1");
        assert_eq!(us_text(1712195495519689047), "1712195495519689.047");
        assert_eq!(us_text(-2), "-0.002");
        assert_eq!(us_text(0), "0");
    }
}
