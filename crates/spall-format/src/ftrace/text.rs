//! The tracefs `trace` text format, as `cat /sys/kernel/tracing/trace`, `atrace` and
//! `trace-cmd report`-like tools print it, and systrace HTML pages that hold it in
//! `<script class="trace-data">` blocks. Lines are
//!
//! ```text
//!   <comm>-<tid> [(<tgid>)] [<cpu>] [<irq flags>] <seconds>.<micros>: <event>: <fields>
//! ```
//!
//! (`#` lines are comments; the tgid column and the irq flags are optional). The same
//! [`RawSched`] records and atrace events as Perfetto's bundles come out: states as
//! letters are read as a 4.4 kernel's bits, as trace_processor reads them.

use std::borrow::Cow;

use super::atrace::{self, Skip, Tgids};
use super::wrapped;
use super::{state_from_letters, RawSched, SchedKind};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::EventSink;

/// Whether `b` is ftrace text (`# tracer:` first), atrace's output (a `TRACE:` line, then
/// the text or its zlib stream) or a systrace page with trace data.
pub fn looks_like(b: &[u8]) -> bool {
    let head = &b[..b.len().min(64 << 10)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let t = head.trim_ascii_start();
    if t.starts_with(b"# tracer:") {
        return true;
    }
    if let Some((at, _)) = wrapped::after_marker(t) {
        let rest = t[at..].trim_ascii_start();
        return rest.starts_with(b"#") || wrapped::is_zlib(rest);
    }
    let html = t.starts_with(b"<!DOCTYPE html") || t.starts_with(b"<html");
    html && find(head, b"class=\"trace-data\"").is_some()
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, n)
}

/// Decodes ftrace text, atrace output or a systrace page into `sink`; the number of events
/// and records. `limit` bounds what compressed text may inflate to.
pub fn decode<S: EventSink>(b: &[u8], limit: u64, sink: &mut S, d: &mut Diagnostics) -> u64 {
    let mut r = Reader::default();
    let t = b.trim_ascii_start();
    if !t.starts_with(b"<") {
        r.atrace(b, 0, limit, sink, d);
        return r.n;
    }
    // Every trace-data block of the page; JSON ones (Chrome's part) are not ftrace.
    let mut at = 0;
    while let Some(i) = find(&b[at..], b"class=\"trace-data\"") {
        let start = at + i;
        let Some(gt) = b[start..].iter().position(|&c| c == b'>') else {
            break;
        };
        let body = start + gt + 1;
        let end = find(&b[body..], b"</script>").map_or(b.len(), |e| body + e);
        r.block(&b[body..end], body as u64, limit, sink, d);
        at = end;
    }
    r.n += wrapped::thread_names(&r.dump, &r.named, sink);
    r.n
}

/// Decodes plain ftrace text (a Chrome JSON trace's `systemTraceEvents`) into `sink`, its
/// offsets counted from `base`; the number of events and records.
pub fn decode_lines<S: EventSink>(b: &[u8], base: u64, sink: &mut S, d: &mut Diagnostics) -> u64 {
    let mut r = Reader::default();
    r.text(b, base, sink, d);
    r.n
}

#[derive(Default)]
struct Reader {
    tgids: Tgids,
    args: String,
    n: u64,
    /// The threads a page's process dump names, named at the end if the text did not.
    dump: Vec<wrapped::DumpThread>,
    /// The tids the text's records name (a switch's, a waking's, a rename's), once a dump
    /// was read.
    named: std::collections::HashSet<i64>,
}

impl Reader {
    /// Text that may be atrace's output: after its `TRACE:` line, inflated if compressed.
    fn atrace<S: EventSink>(
        &mut self,
        b: &[u8],
        base: u64,
        limit: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        match wrapped::after_marker(b) {
            Some(m) => match wrapped::unwrap_atrace(b, m, limit, d) {
                // Offsets in inflated text count from where the stream starts.
                Cow::Owned(t) => self.text(&t, base + m.0 as u64, sink, d),
                Cow::Borrowed(t) => self.text(t, base + m.0 as u64, sink, d),
            },
            None => self.text(b, base, sink, d),
        }
    }

    /// One `trace-data` block of a page: ftrace text (maybe atrace's output), a process
    /// dump, or either of them base64 gzip; JSON (Chrome's part) is skipped.
    fn block<S: EventSink>(
        &mut self,
        block: &[u8],
        at: u64,
        limit: u64,
        sink: &mut S,
        d: &mut Diagnostics,
    ) {
        let inflated = wrapped::base64_block(block, at, limit, d);
        let block = inflated.as_deref().unwrap_or(block);
        let first = block.trim_ascii_start().first().copied();
        if matches!(first, Some(b'{' | b'[')) {
            return;
        }
        if wrapped::is_process_dump(block) {
            self.n += wrapped::process_dump(block, at, sink, d, &mut self.dump);
        } else {
            self.atrace(block, at, limit, sink, d);
        }
    }

    fn text<S: EventSink>(&mut self, b: &[u8], base: u64, sink: &mut S, d: &mut Diagnostics) {
        let mut off = 0usize;
        for raw in b.split(|&c| c == b'\n') {
            let at = base + off as u64;
            off += raw.len() + 1;
            let line = String::from_utf8_lossy(raw);
            let line = line.trim_end_matches('\r');
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if self.line(trimmed, at, sink).is_none() {
                d.warn(WarningKind::FtraceMalformed, at, || {
                    format!("an ftrace text line that does not parse ({trimmed:?}); skipped")
                });
            }
        }
    }

    /// One event line; `None` when it does not parse.
    fn line<S: EventSink>(&mut self, l: &str, at: u64, sink: &mut S) -> Option<()> {
        let (cpu, comm, tid, tgid, close) = task_columns(l)?;
        if let Some(g) = tgid.filter(|&g| g > 0 && self.tgids.get(tid) != g) {
            // The tgid column says which process the thread is in: once per change.
            self.tgids.set(tid, g);
            sink.sched(&RawSched {
                kind: SchedKind::ThreadGroup,
                tid,
                value: g,
                prev_tid: -1,
                offset: at,
                ..RawSched::default()
            });
            self.n += 1;
        }
        let rest = &l[close + 1..];
        let colon = rest.find(": ")?;
        let ts_text = rest[..colon].split_whitespace().last()?;
        let ts = seconds_to_ns(ts_text)?;
        let rest = &rest[colon + 2..];
        let (event, fields) = match rest.find(": ") {
            Some(c) => (&rest[..c], &rest[c + 2..]),
            None => (rest.trim_end_matches(':'), ""),
        };
        let mut s = RawSched {
            ts,
            cpu,
            actor: tid,
            prev_tid: -1,
            offset: at,
            ..RawSched::default()
        };
        let _ = comm;
        match event {
            "sched_switch" => {
                s.kind = SchedKind::Switch;
                let (prev, next) = fields.split_once(" ==> ")?;
                s.prev_comm = Cow::Borrowed(field(prev, "prev_comm", Some(" prev_pid="))?);
                s.prev_tid = field(prev, "prev_pid", None)?.parse().ok()?;
                s.prev_prio = field(prev, "prev_prio", None)?.parse().ok()?;
                let st = field(prev, "prev_state", None)?;
                s.prev_state = state_from_letters(st).unwrap_or(0xffff);
                s.comm = Cow::Borrowed(field(next, "next_comm", Some(" next_pid="))?);
                s.tid = field(next, "next_pid", None)?.parse().ok()?;
                s.prio = field(next, "next_prio", None)?.parse().ok()?;
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                s.kind = match event {
                    "sched_waking" => SchedKind::Waking,
                    _ => SchedKind::Wakeup,
                };
                s.value = (event == "sched_wakeup_new") as i64;
                s.comm = Cow::Borrowed(field(fields, "comm", Some(" pid="))?);
                s.tid = field(fields, "pid", None)?.parse().ok()?;
                s.prio = field(fields, "prio", None)
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
            }
            // trace_processor's text reader skips new tasks (no runnable state, no
            // process): so does this one; the tgid column places the thread.
            "task_newtask" => return Some(()),
            "task_rename" => {
                s.kind = SchedKind::Rename;
                s.tid = field(fields, "pid", None)?.parse().ok()?;
                s.comm = Cow::Borrowed(field(fields, "newcomm", Some(" oom_score_adj="))?);
            }
            "sched_process_exit" | "sched_process_free" => {
                s.kind = match event {
                    "sched_process_exit" => SchedKind::ProcessExit,
                    _ => SchedKind::ProcessFree,
                };
                s.tid = field(fields, "pid", None)?.parse().ok()?;
                s.comm = Cow::Borrowed(field(fields, "comm", Some(" pid=")).unwrap_or(""));
            }
            "sched_blocked_reason" => {
                s.kind = SchedKind::BlockedReason;
                s.tid = field(fields, "pid", None)?.parse().ok()?;
                s.value = field(fields, "iowait", None)?.parse().ok()?;
                s.comm = Cow::Borrowed(field(fields, "caller", None).unwrap_or(""));
            }
            "cpu_frequency" | "cpu_idle" => {
                s.kind = match event {
                    "cpu_frequency" => SchedKind::CpuFrequency,
                    _ => SchedKind::CpuIdle,
                };
                s.value = field(fields, "state", None)?.parse::<u32>().ok()? as i64;
                s.cpu = field(fields, "cpu_id", None)?.parse().ok()?;
            }
            "tracing_mark_write" | "print" | "0" => {
                let text = fields
                    .strip_prefix("tracing_mark_write: ")
                    .unwrap_or(fields);
                let (n, r) =
                    atrace::marker_to(text, (ts, tid, at), &mut self.tgids, &mut self.args, sink);
                self.n += n;
                return (r != Err(Skip::Malformed)).then_some(());
            }
            // Other ftrace events (irqs, workqueues, binder...) are not modelled.
            _ => return Some(()),
        }
        if !self.dump.is_empty() && !s.comm.is_empty() {
            self.named.insert(s.tid);
            self.named.insert(s.prev_tid);
        }
        sink.sched(&s);
        self.n += 1;
        Some(())
    }
}

/// The value of `key=` in `fields`: up to `until` (for comms, which may hold spaces), else
/// to the next space.
fn field<'a>(fields: &'a str, key: &str, until: Option<&str>) -> Option<&'a str> {
    let mut from = 0;
    let start = loop {
        let i = from + fields[from..].find(key)?;
        let before_ok = i == 0 || fields.as_bytes()[i - 1] == b' ';
        if before_ok && fields[i + key.len()..].starts_with('=') {
            break i + key.len() + 1;
        }
        from = i + key.len();
    };
    let v = &fields[start..];
    let end = match until.and_then(|u| v.find(u)) {
        Some(e) => e,
        None => v.find(' ').unwrap_or(v.len()),
    };
    Some(&v[..end])
}

/// `"1234.567890"` seconds as nanoseconds, exactly.
fn seconds_to_ns(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = int.parse().ok()?;
    let mut ns: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// A line's task and CPU columns (`comm-tid`, then `(tgid)` where the trace has that
/// column, then `[cpu]`): the CPU, command, tid, tgid and where the CPU column ends.
fn task_columns(l: &str) -> Option<(u32, &str, i64, Option<i64>, usize)> {
    // The CPU column `[ddd]` splits the task from the rest.
    let open = l.find(" [")?;
    let close = open + l[open..].find(']')?;
    let cpu: u32 = l[open + 2..close].trim().parse().ok()?;
    let mut task = l[..open].trim_end();
    let mut tgid = None;
    if task.ends_with(')') {
        let p = task.rfind('(')?;
        tgid = task[p + 1..task.len() - 1].trim().parse::<i64>().ok();
        task = task[..p].trim_end();
    }
    let dash = task.rfind('-')?;
    let (comm, tid) = (&task[..dash], task[dash + 1..].parse::<i64>().ok()?);
    Some((cpu, comm, tid, tgid, close))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_times() {
        let f = "prev_comm=Binder thread prev_pid=12 prev_prio=120 prev_state=S";
        assert_eq!(
            field(f, "prev_comm", Some(" prev_pid=")),
            Some("Binder thread")
        );
        assert_eq!(field(f, "prev_pid", None), Some("12"));
        assert_eq!(field(f, "prev_state", None), Some("S"));
        assert_eq!(field("comm=a pid=3", "pid", None), Some("3"));
        assert_eq!(seconds_to_ns("1234.567890"), Some(1_234_567_890_000));
        assert_eq!(seconds_to_ns("0.000001"), Some(1000));
        assert_eq!(seconds_to_ns("x.5"), None);
    }

    #[test]
    fn detects_text_and_pages() {
        assert!(looks_like(b"# tracer: nop\n#\n"));
        assert!(looks_like(
            b"<!DOCTYPE html>\n<script class=\"trace-data\" type=\"application/text\">"
        ));
        assert!(!looks_like(b"{\"traceEvents\": []}"));
        assert!(!looks_like(b"<!DOCTYPE html><p>hi</p>"));
    }
}
