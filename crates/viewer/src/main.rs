//! `spall`: the timeline viewer.
//!
//! The window, timeline and panels are being built (see the "viewer" issue). Until then this
//! binary decodes the trace (or the built-in demo) and prints what it holds, so the README's
//! command already does something useful.

use std::process::ExitCode;

use spall_format::{decode, decode_file, RawEvent, Summary};

/// A real `clang -ftime-trace` trace, shown when no file is given.
const DEMO: &[u8] = include_bytes!(
    "../../../tests/fixtures/real/clang/blender-mac-clang14_obj_export_file_writer.json"
);

fn main() -> ExitCode {
    let arg = std::env::args_os().nth(1);
    if matches!(
        arg.as_deref().and_then(|a| a.to_str()),
        Some("-h" | "--help")
    ) {
        println!("usage: spall [TRACE]\n\nOpens a .spall, .json or .json.gz trace (a built-in demo when none is given).");
        return ExitCode::SUCCESS;
    }
    let mut events = 0u64;
    let mut count = |_: &RawEvent<'_>| events += 1;
    let (name, result): (String, Result<Summary, _>) = match &arg {
        Some(path) => (
            path.to_string_lossy().into_owned(),
            decode_file(path, &mut count),
        ),
        None => (
            "built-in demo (clang -ftime-trace)".into(),
            decode(DEMO, &mut count),
        ),
    };
    match result {
        Ok(s) => {
            println!(
                "{name}: {} trace, {events} events, {} warnings",
                s.format,
                s.diagnostics.total()
            );
            println!("The timeline window is not built yet; `spall-cli` answers questions about the trace.");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("spall: {e}");
            ExitCode::from(2)
        }
    }
}
