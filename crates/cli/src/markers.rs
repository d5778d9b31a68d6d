//! `spall-cli markers`: the markers and marked range added to a trace in the viewer.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use spall_util::settings_path;
use trace_model::annotations::Annotations;

use crate::util::Fatal;

/// Where the annotations were found.
enum Source {
    Settings(std::path::PathBuf),
    Sidecar(std::path::PathBuf),
    None,
}

pub fn run(trace: &Path, as_json: bool, save: bool) -> Result<ExitCode, Fatal> {
    if !trace.exists() {
        return Err(Fatal(format!("{}: no such file", trace.display())));
    }
    let (notes, source) = find(trace)?;
    if save {
        if notes.is_empty() {
            return Err(Fatal(format!(
                "{}: no markers to save (add some in the viewer with N, or mark a range with M)",
                trace.display()
            )));
        }
        let path = notes
            .save_sidecar(trace)
            .map_err(|e| Fatal(e.to_string()))?;
        eprintln!(
            "wrote {}: share it beside the trace; the viewer shows its markers to whoever opens the trace",
            path.display()
        );
    }
    if as_json {
        let mut v = serde_json::Map::new();
        v.insert("file".into(), json!(trace.display().to_string()));
        v.insert(
            "source".into(),
            match &source {
                Source::Settings(p) | Source::Sidecar(p) => json!(p.display().to_string()),
                Source::None => Value::Null,
            },
        );
        notes.write_into(&mut v);
        // Always both keys, for scripts.
        v.entry("markers").or_insert(json!([]));
        v.entry("range").or_insert(Value::Null);
        println!("{:#}", Value::Object(v));
    } else {
        match &source {
            Source::Settings(p) => println!("{}: markers from {}", trace.display(), p.display()),
            Source::Sidecar(p) => println!("{}: markers from {}", trace.display(), p.display()),
            Source::None => println!("{}: no markers", trace.display()),
        }
        if let Some((a, b)) = notes.range {
            println!(
                "range   {} .. {} ({})",
                time(a),
                time(b),
                spall_util::format_duration(b - a)
            );
        }
        for m in &notes.markers {
            println!("{:>14}  {}", time(m.at_ns), m.note);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The viewer's settings first (what this user sees), then the trace's sidecar.
fn find(trace: &Path) -> Result<(Annotations, Source), Fatal> {
    if let Some(path) = settings_path() {
        if let Ok(bytes) = std::fs::read(&path) {
            let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
                Fatal(format!(
                    "{}: the viewer's settings are not JSON ({e})",
                    path.display()
                ))
            })?;
            let notes = Annotations::from_settings(&v, trace);
            if !notes.is_empty() {
                return Ok((notes, Source::Settings(path)));
            }
        }
    }
    match Annotations::load_sidecar(trace).map_err(Fatal)? {
        Some(notes) => Ok((notes, Source::Sidecar(Annotations::sidecar_path(trace)))),
        None => Ok((Annotations::default(), Source::None)),
    }
}

/// Time from the trace's start, in milliseconds with nanosecond digits (`1.250000 ms`).
fn time(ns: i64) -> String {
    format!("{}.{:06} ms", ns / 1_000_000, (ns % 1_000_000).abs())
}
