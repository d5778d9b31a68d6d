//! What system-trace text comes wrapped in, besides plain text: `atrace`'s stdout (a
//! `TRACE:` line, then the trace, zlib-deflated with `-z`, its newlines doubled into `\r\n`
//! where `adb shell` went through a terminal), base64 gzip or zlib in a systrace page's
//! `trace-data` block, and a page's `PROCESS DUMP` block, the `ps` listing that names
//! processes and threads.

use std::borrow::Cow;
use std::io::Read;

use super::{RawSched, SchedKind};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// How far into a file the `TRACE:` line is looked for (after `capturing trace... done`).
const MARKER_WITHIN: usize = 4096;

/// Where the trace starts after atrace's `TRACE:` line, and how many `\r` ended that line
/// (`adb shell` through a terminal turns each `\n` into `\r\n`, or `\r\r\n` on Windows);
/// `None` when the text has no such line before its first `#` line.
pub fn after_marker(b: &[u8]) -> Option<(usize, usize)> {
    let head = &b[..b.len().min(MARKER_WITHIN)];
    let mut at = 0;
    while at < head.len() {
        let end = head[at..].iter().position(|&c| c == b'\n')? + at;
        let line = &head[at..end];
        let text = line.trim_ascii_end();
        if text.ends_with(b"TRACE:") {
            let crs = line.len() - line.trim_ascii_end().len();
            return Some((end + 1, crs));
        }
        if text.trim_ascii_start().starts_with(b"#") {
            return None;
        }
        at = end + 1;
    }
    None
}

/// Whether `b` starts a zlib stream (its header's check bits hold, deflate method).
pub fn is_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] & 0x0f == 8 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

/// The trace after atrace's `TRACE:` line at `at` (see [`after_marker`]): inflated when it is
/// zlib, its doubled line ends undone first.
pub fn unwrap_atrace<'a>(
    b: &'a [u8],
    (start, crs): (usize, usize),
    limit: u64,
    d: &mut Diagnostics,
) -> Cow<'a, [u8]> {
    let rest = &b[start..];
    let body = rest.trim_ascii_start();
    if !is_zlib(body) {
        return Cow::Borrowed(rest);
    }
    let at = (b.len() - body.len()) as u64;
    if crs == 0 {
        return Cow::Owned(inflate(body, false, at, limit, d));
    }
    // The terminal added `crs` carriage returns before each line feed of the compressed
    // bytes: take them out, or the stream breaks.
    let mut fixed = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        let doubled = body
            .get(i..=i + crs)
            .is_some_and(|w| w[crs] == b'\n' && w[..crs].iter().all(|&x| x == b'\r'));
        if doubled {
            i += crs;
            continue;
        }
        fixed.push(c);
        i += 1;
    }
    Cow::Owned(inflate(&fixed, false, at, limit, d))
}

/// Inflates zlib (or gzip, `gzip` true) data up to `limit` bytes (`--max-decompressed`,
/// lowered to the memory available); a broken or cut stream keeps what came out before
/// the break, counted.
pub fn inflate(z: &[u8], gzip: bool, at: u64, limit: u64, d: &mut Diagnostics) -> Vec<u8> {
    let limit = match spall_util::MemoryLimit::Available.resolve() {
        Some((m, _)) => limit.min(m),
        None => limit,
    };
    let mut out = Vec::new();
    let cap = limit.saturating_add(1);
    let r = if gzip {
        flate2::read::MultiGzDecoder::new(z)
            .take(cap)
            .read_to_end(&mut out)
    } else {
        flate2::read::ZlibDecoder::new(z)
            .take(cap)
            .read_to_end(&mut out)
    };
    match r {
        Ok(n) if n as u64 > limit => {
            out.truncate(limit as usize);
            d.warn(WarningKind::FtraceMalformed, at, || {
                format!("compressed trace text that inflates past {limit} bytes; the rest was skipped")
            });
        }
        Ok(_) => {}
        Err(e) => d.warn(WarningKind::FtraceMalformed, at, || {
            format!(
                "compressed trace text whose stream breaks after {} bytes ({e}); the rest was skipped",
                out.len()
            )
        }),
    }
    out
}

/// A `trace-data` block that is base64 (as catapult's `trace2html` writes them), decoded and
/// inflated when it holds gzip or zlib; `None` when the block is not base64 of either.
pub fn base64_block(block: &[u8], at: u64, limit: u64, d: &mut Diagnostics) -> Option<Vec<u8>> {
    let t = block.trim_ascii();
    // Base64 of gzip starts `H4sI`, of zlib `eJ` (or `eN`, `eF`, `eA` by compression level).
    if !(t.starts_with(b"H4sI") || (t.len() > 1 && t[0] == b'e' && b"JNFA".contains(&t[1]))) {
        return None;
    }
    let raw = base64(t)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        return Some(inflate(&raw, true, at, limit, d));
    }
    is_zlib(&raw).then(|| inflate(&raw, false, at, limit, d))
}

/// Standard base64 (whitespace between groups allowed, padding optional); `None` on any
/// other byte.
fn base64(t: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(t.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in t {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Whether a page block is a `PROCESS DUMP`.
pub fn is_process_dump(block: &[u8]) -> bool {
    block.trim_ascii_start().starts_with(b"PROCESS DUMP")
}

/// A thread a `PROCESS DUMP` names: process, thread, name, offset. Its name is the weakest
/// (trace_processor's): the scheduler's comm wins, so it is given only to threads the
/// trace text never names ([`thread_names`]).
pub type DumpThread = (i64, i64, String, u64);

/// The `ps` listing of a `PROCESS DUMP` block, as trace_processor reads it: after a
/// `USER PID PPID VSZ ...` header, a process a line (its name the `NAME` column); after a
/// `USER PID TID CMD` header, a thread a line (process, thread, name). Each places the
/// thread in its process; a process is named at once (a metadata event), a thread's name
/// is added to `threads`. Returns the number of records; lines that do not parse are
/// counted.
pub fn process_dump<S: EventSink>(
    block: &[u8],
    base: u64,
    sink: &mut S,
    d: &mut Diagnostics,
    threads: &mut Vec<DumpThread>,
) -> u64 {
    #[derive(PartialEq)]
    enum Form {
        None,
        Long,
        Short,
    }
    let (mut form, mut n, mut off) = (Form::None, 0, 0usize);
    let mut args = String::new();
    for raw in block.split(|&c| c == b'\n') {
        let at = base + off as u64;
        off += raw.len() + 1;
        let line = String::from_utf8_lossy(raw);
        let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
        match tokens[..] {
            [] | ["PROCESS", "DUMP", ..] => continue,
            ["USER", "PID", "PPID", "VSZ", ..] => form = Form::Long,
            ["USER", "PID", "TID", "CMD", ..] => form = Form::Short,
            _ => {
                let rec = match form {
                    // user pid ppid vsz rss wchan pc s name cmdline...
                    Form::Long if tokens.len() >= 10 => (tokens[1].parse().ok())
                        .zip(tokens[2].parse::<i64>().ok())
                        .map(|(pid, _ppid)| (pid, pid, tokens[8], "process_name")),
                    // user pid tid cmd...
                    Form::Short if tokens.len() >= 4 => (tokens[1].parse().ok())
                        .zip(tokens[2].parse().ok())
                        .map(|(pid, tid)| (pid, tid, rest_from(&line, tokens[3]), "thread_name")),
                    _ => None,
                };
                let Some((pid, tid, name, what)) = rec.filter(|r| r.0 > 0 && r.1 > 0) else {
                    d.warn(WarningKind::FtraceMalformed, at, || {
                        format!("a PROCESS DUMP line that does not parse ({line:?}); skipped")
                    });
                    continue;
                };
                sink.sched(&RawSched {
                    kind: SchedKind::ThreadGroup,
                    tid,
                    value: pid,
                    prev_tid: -1,
                    offset: at,
                    ..RawSched::default()
                });
                n += 1;
                if what == "process_name" {
                    n += name_event(sink, &mut args, what, (pid, 0, name, at));
                } else {
                    threads.push((pid, tid, name.to_string(), at));
                }
            }
        }
    }
    n
}

/// A `process_name` or `thread_name` metadata event; 1.
fn name_event<S: EventSink>(
    sink: &mut S,
    args: &mut String,
    what: &'static str,
    (pid, tid, name, at): (i64, i64, &str, u64),
) -> u64 {
    args.clear();
    args.push_str("{\"name\":");
    args.push_str(&serde_json::Value::from(name).to_string());
    args.push('}');
    sink.event(&RawEvent {
        ph: Phase::METADATA,
        name: Cow::Borrowed(what),
        pid: RawId::Num(pid),
        tid: RawId::Num(tid),
        args: Args::Json(Cow::Borrowed(args)),
        offset: at,
        ..RawEvent::default()
    });
    1
}

/// Names the dump's `threads` that `named` (the tids the trace's own records name) does
/// not hold; the number of events.
pub fn thread_names<S: EventSink>(
    threads: &[DumpThread],
    named: &std::collections::HashSet<i64>,
    sink: &mut S,
) -> u64 {
    let mut args = String::new();
    (threads.iter())
        .filter(|t| !named.contains(&t.1))
        .map(|t| name_event(sink, &mut args, "thread_name", (t.0, t.1, &t.2, t.3)))
        .sum()
}

/// `line` from where its token `tok` (a slice of it) starts: a command line with spaces.
fn rest_from<'a>(line: &'a str, tok: &'a str) -> &'a str {
    let start = tok.as_ptr() as usize - line.as_ptr() as usize;
    line[start..].trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Collect;

    #[test]
    fn markers_zlib_and_base64() {
        assert_eq!(
            after_marker(b"capturing trace... done\nTRACE:\n# tracer"),
            Some((31, 0))
        );
        assert_eq!(after_marker(b"TRACE:\r\r\nx"), Some((9, 2)));
        assert_eq!(after_marker(b"# tracer: nop\nTRACE:\n"), None);
        assert!(is_zlib(&[0x78, 0x9c]) && is_zlib(&[0x78, 0x01]) && !is_zlib(b"# "));
        assert_eq!(base64(b"aGVs\nbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64(b"a<b"), None);
    }

    #[test]
    fn short_process_dump_lines_are_counted_not_read() {
        // Lines cut short under either header (a fuzzer found the thread form's panic).
        let dump = b"PROCESS DUMP\nUSER PID TID CMD\nsystem 200\nroot 1 1\nroot 1 1 init\n\
            USER PID PPID VSZ RSS WCHAN PC S NAME COMMAND\nroot 1 0 2 3\n";
        let (mut sink, mut d, mut threads) =
            (Collect::default(), Diagnostics::default(), Vec::new());
        let n = process_dump(dump, 0, &mut sink, &mut d, &mut threads);
        assert_eq!(n, 1, "only the whole thread line is a record");
        assert_eq!(threads, vec![(1, 1, "init".to_string(), 50)]);
        assert_eq!(d.total(), 3, "{d:?}");
        assert_eq!(
            sink.0.len(),
            0,
            "a thread is named only after the trace text"
        );
    }
}
