//! `spall-cli validate`.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use spall_format::DiagnosticKind;

use crate::util::{load, Fatal};

pub fn run(path: &Path, strict: bool, as_json: bool) -> Result<ExitCode, Fatal> {
    let (trace, _) = load(path)?;
    let counts = trace.warning_counts();
    let total: u64 = counts.iter().map(|c| c.1).sum();
    // Examples: decode warnings carry byte offsets; model warnings carry event offsets too.
    let mut examples: Vec<(String, u64, String)> = trace
        .decode_summary()
        .diagnostics
        .examples()
        .iter()
        .map(|w| (w.kind.as_str().to_string(), w.offset, w.message.clone()))
        .collect();
    examples.extend(
        trace
            .diagnostics()
            .examples()
            .iter()
            .map(|w| (w.kind.name().into_owned(), w.offset, w.message.clone())),
    );
    if as_json {
        let v = json!({
            "file": path.display().to_string(),
            "clean": total == 0,
            "warnings": total,
            "diagnostics": counts.iter().map(|(k, n)| (k.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "examples": examples.iter().map(|(k, o, m)| json!({"kind": k, "offset": o, "message": m})).collect::<Vec<_>>(),
        });
        println!("{v:#}");
    } else if total == 0 {
        println!("{}: clean, no warnings", path.display());
    } else {
        println!("{}: {total} warning(s)", path.display());
        for (k, n) in &counts {
            println!("  {k:<28} {n}");
        }
        println!("first examples of each kind:");
        for (k, o, m) in &examples {
            println!("  {k} (byte {o}): {m}");
        }
    }
    Ok(if strict && total > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
