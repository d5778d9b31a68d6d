//! Text a user hands the CLI: a budget file for `check`, and each line as a time range, a
//! duration, a size, a memory limit, a thread selection. Errors are fine; panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spall_cli::{check, select::Selection, util};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = check::parse("budget.toml".as_ref(), text) {
        assert!(!e.0.is_empty(), "an error says what is wrong");
    }
    for line in text.lines().take(64) {
        let _ = util::parse_range(line);
        let _ = util::parse_duration(line);
        let _ = util::parse_size(line);
        let _ = util::parse_memory_limit(line);
        let _ = util::parse_percent(line);
        let _ = Selection::parse(&[line.to_string()], Some(line), Some(line));
    }
});
