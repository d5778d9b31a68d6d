//! `perf script` text: records separated by blank lines, each a header line then one frame a
//! line, innermost first.
//!
//! The header is `comm [pid/]tid [cpu] secs.frac: [period] event: [ip sym (dso)]` as perf
//! prints it by default, and any subset the common `-F` field sets leave (`comm` may hold
//! spaces; without `time` there is none). A frame line is `<hex ip> <sym>[+0x<off>]
//! (<dso>)`, also without the dso or the symbol; `[unknown]` symbols are named after their
//! module (`[libc.so.6]`), as inferno and `stackcollapse-perf.pl` name them; an indented
//! `file:line` line (`-F +srcline`) gives the frame above it its source line. Records with no
//! callchain (`perf record` without `-g`) are one line each, their frame after the event.
//!
//! Each sample goes to the thread `pid/tid` (with only a tid, the pid is taken to be the
//! tid) named by its `comm`; its weight is its period where perf printed one (as `perf
//! report` and inferno weigh samples), else 1; its kind is the event's name without
//! modifiers (`cycles:u` is `cycles`), so samples of different events stay apart. The
//! periods of `cpu-clock` and `task-clock` are nanoseconds, of other events counts.

use std::borrow::Cow;

use super::text::utf8;
use super::{warn, RawFrame, RawSample, SampleUnit};
use crate::diag::{Diagnostics, WarningKind};
use crate::error::Error;
use crate::event::{EventSink, RawId};
use crate::hash;

pub(crate) use super::perf_tree::Tree;
use super::perf_tree::{NONE, ROOT};

/// A record's header line, parsed.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Header<'a> {
    comm: &'a str,
    pid: Option<i64>,
    tid: Option<i64>,
    cpu: Option<u32>,
    ts: Option<i64>,
    period: Option<i64>,
    event: &'a str,
    /// What follows the event: a frame, when the record has no callchain.
    rest: &'a str,
}

/// Whether the first line that is not blank or a `#` comment is a header with a time, or a
/// header followed by a frame line.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let text = match std::str::from_utf8(head) {
        Ok(s) => s,
        // The head may cut a character in two.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let mut it = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let Some(first) = it.next() else { return false };
    if first.starts_with([' ', '\t']) {
        return false;
    }
    let Some(h) = header(first) else { return false };
    if h.event.is_empty() {
        return false;
    }
    h.ts.is_some() || it.next().and_then(frame).is_some()
}

/// Parses a header line; `None` if it has no event (`name:` after the thread).
fn header(line: &str) -> Option<Header<'_>> {
    header_at(line).map(|(h, _)| h)
}

/// [`header`], and where its time word starts and its period word (else its time word)
/// ends, where it has a time.
fn header_at(line: &str) -> Option<(Header<'_>, Option<(usize, usize)>)> {
    let line = line.trim_end();
    let mut h = Header::default();
    let mut varies = None;
    // The thread: the last all-digit (or digits/digits) word before the time or event;
    // everything before it is the comm, which may hold spaces and digits.
    let words = Words::new(line);
    let mut thread_end = None;
    let mut after = 0;
    for (s, e) in words {
        let w = &line[s..e];
        if let Some(id) = thread_id(w) {
            if s > 0 {
                h.comm = line[..s].trim_end();
                (h.pid, h.tid) = id;
                thread_end = Some(e);
            }
        } else if w.starts_with('[') && w.ends_with(']') && thread_end.is_some() {
            h.cpu = w[1..w.len() - 1].parse().ok();
        } else if let Some(ts) = w.strip_suffix(':').and_then(time_ns) {
            h.ts = Some(ts);
            if thread_end.is_none() {
                h.comm = line[..s].trim_end();
            }
            varies = Some((s, e));
            after = e;
            break;
        } else if w.ends_with(':') && thread_end.is_some() {
            // No time: this is the event.
            after = s;
            break;
        } else if thread_end.is_some() {
            // A word between the thread and its time: the comm went on (`V8 Worker 12`).
            thread_end = None;
            h.cpu = None;
        }
        after = e;
    }
    if thread_end.is_none() && h.ts.is_none() {
        // `-F` without the thread: the comm alone, up to the time or event.
        return None;
    }
    let rest = Words::new(&line[after..]);
    let base = after;
    for (s, e) in rest {
        let w = &line[base + s..base + e];
        let period = h.period.is_none().then(|| decimal(w.as_bytes())).flatten();
        if period.is_some() {
            h.period = period;
            if let Some(v) = &mut varies {
                v.1 = base + e;
            }
        } else if let Some(ev) = w.strip_suffix(':') {
            h.event = event_name(ev);
            h.rest = line[base + e..].trim();
            return Some((h, varies));
        } else {
            return None;
        }
    }
    None
}

/// The last headers read with a time, of up to [`KEPT`] threads or events: the next one
/// of the same thread and event (most are) is read by its time and period alone, the bytes
/// around them compared with its.
#[derive(Default)]
struct LastHeaders<'a> {
    kept: [LastHeader<'a>; KEPT],
    /// The one a header read anew replaces.
    next: usize,
}

/// Threads sampled in turns: a profile of a few threads alternates between them.
const KEPT: usize = 4;

impl<'a> LastHeaders<'a> {
    /// `line` as [`header`] reads it.
    fn read(&mut self, line: &'a str) -> Option<Header<'a>> {
        if let Some(h) = self.kept.iter().find_map(|k| k.again(line)) {
            return Some(h);
        }
        let (h, at) = header_at(line)?;
        if let Some(at) = at {
            self.kept[self.next] = LastHeader {
                line,
                h: Some(h),
                at,
            };
            self.next = (self.next + 1) % KEPT;
        }
        Some(h)
    }
}

/// A header read with a time.
#[derive(Default)]
struct LastHeader<'a> {
    line: &'a str,
    h: Option<Header<'a>>,
    /// Where its time word starts, and where its period word (else its time word) ends.
    at: (usize, usize),
}

impl<'a> LastHeader<'a> {
    /// `line` read as this header with another time (and period), if it is this
    /// header's text but for them. The words before and after are the same bytes, so
    /// [`header`] would read them as it did.
    #[inline]
    fn again(&self, line: &str) -> Option<Header<'a>> {
        let last = self.h?;
        let (p, b, (s, e)) = (self.line.as_bytes(), line.as_bytes(), self.at);
        let tail = p.len() - e;
        if b.len() <= s + tail
            || !hash::same(&b[..s], &p[..s])
            || !hash::same(&b[b.len() - tail..], &p[e..])
        {
            return None;
        }
        let mid = line.get(s..b.len() - tail)?;
        let (time, period) = match mid.bytes().position(|c| blank(&c)) {
            Some(i) => {
                let w = &mid.as_bytes()[i..];
                let at = w.iter().position(|c| !blank(c))?;
                (&mid[..i], Some(&w[at..]))
            }
            None => (mid, None),
        };
        let ts = time_ns(time.strip_suffix(':')?)?;
        // A word of digits, as `header` reads a period.
        let period = match period {
            None => None,
            Some(w) => Some(decimal(w)?),
        };
        Some(Header {
            ts: Some(ts),
            period,
            ..last
        })
    }
}

/// `w` split at its first `c` (ASCII), by a loop inline: a header's words are a few
/// bytes, where `split_once` calls a searcher set up for any text.
#[inline]
fn split_at_byte(w: &str, c: u8) -> Option<(&str, &str)> {
    let i = w.bytes().position(|b| b == c)?;
    Some((&w[..i], &w[i + 1..]))
}

/// `12` or `12/34` as (pid, tid).
fn thread_id(w: &str) -> Option<(Option<i64>, Option<i64>)> {
    let num = |s: &str| decimal(s.as_bytes());
    match split_at_byte(w, b'/') {
        Some((p, t)) => Some((Some(num(p)?), Some(num(t)?))),
        None => {
            let t = num(w)?;
            Some((None, Some(t)))
        }
    }
}

/// `secs.frac` (perf prints microseconds, or nanoseconds with `--ns`) in nanoseconds.
fn time_ns(w: &str) -> Option<i64> {
    let (s, f) = split_at_byte(w, b'.')?;
    if s.is_empty() || f.is_empty() || f.len() > 9 || s.len() > 10 {
        return None;
    }
    const SCALE: [i64; 10] = [
        0,
        100_000_000,
        10_000_000,
        1_000_000,
        100_000,
        10_000,
        1_000,
        100,
        10,
        1,
    ];
    let (secs, frac) = (decimal(s.as_bytes())?, decimal(f.as_bytes())?);
    Some(secs * 1_000_000_000 + frac * SCALE[f.len()])
}

/// The value of `w`, one to 18 ASCII digits (so it fits), read in one pass: a header's
/// numbers are read for every record, where `str::parse` checks and folds apart.
#[inline]
fn decimal(w: &[u8]) -> Option<i64> {
    if w.is_empty() || w.len() > 18 {
        return None;
    }
    let mut v = 0i64;
    for &c in w {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as i64;
    }
    Some(v)
}

/// An event's name without perf's modifiers (`cycles:uppp` is `cycles`); tracepoints keep
/// their subsystem (`sched:sched_switch`).
fn event_name(ev: &str) -> &str {
    match ev.rsplit_once(':') {
        Some((name, m)) if !m.is_empty() && m.bytes().all(|c| b"ukhIGHpPSDWebr".contains(&c)) => {
            name
        }
        _ => ev,
    }
}

/// Word boundaries (spaces and tabs) of a line, as byte ranges.
struct Words<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Words<'a> {
    fn new(s: &'a str) -> Words<'a> {
        Words {
            b: s.as_bytes(),
            at: 0,
        }
    }
}

impl Iterator for Words<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        let b = self.b;
        while self.at < b.len() && (b[self.at] == b' ' || b[self.at] == b'\t') {
            self.at += 1;
        }
        if self.at >= b.len() {
            return None;
        }
        let s = self.at;
        while self.at < b.len() && b[self.at] != b' ' && b[self.at] != b'\t' {
            self.at += 1;
        }
        Some((s, self.at))
    }
}

/// A frame line (`ip sym+0xoff (dso)`, trimmed or not); `None` if it does not start with a
/// hex address. Byte by byte: this runs once per frame, most of a file's lines.
fn frame(line: &str) -> Option<RawFrame<'_>> {
    let b = line.as_bytes();
    let start = b.iter().position(|c| !blank(c))?;
    let end = b.len() - b.iter().rev().position(|c| !blank(c))?;
    let ip_end = b[start..end]
        .iter()
        .position(blank)
        .map_or(end, |i| start + i);
    if !b[start..ip_end].iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let rest = b[ip_end..end]
        .iter()
        .position(|c| !blank(c))
        .map_or(end, |i| ip_end + i);
    // The module: the last parenthesized group, if the line ends with one.
    let (mut sym_end, dso) = match b[..end].last() {
        Some(b')') if end > rest => match memchr::memrchr(b'(', &b[rest..end]) {
            Some(i) => (rest + i, Some(&line[rest + i + 1..end - 1])),
            None => (end, None),
        },
        _ => (end, None),
    };
    while sym_end > rest && blank(&b[sym_end - 1]) {
        sym_end -= 1;
    }
    // The offset: `+0x<hex>` at the end of the symbol.
    if let Some(plus) = memchr::memrchr(b'+', &b[rest..sym_end]).map(|i| rest + i) {
        let off = &b[plus + 1..sym_end];
        if off.len() > 2 && off.starts_with(b"0x") && off[2..].iter().all(u8::is_ascii_hexdigit) {
            sym_end = plus;
        }
    }
    let sym = &line[rest..sym_end];
    let dso = dso.filter(|d| !d.is_empty() && *d != "inlined");
    let name: Cow<'_, str> = match (sym, dso) {
        ("[unknown]" | "", Some(d)) if d != "[unknown]" => {
            Cow::Owned(format!("[{}]", &d[d.rfind('/').map_or(0, |i| i + 1)..]))
        }
        ("", _) => Cow::Borrowed("[unknown]"),
        _ => Cow::Borrowed(sym),
    };
    Some(RawFrame {
        name,
        file: dso.map(Cow::Borrowed),
        line: None,
    })
}

/// `file:line` (`-F +srcline`), for the frame above it; perf writes `:0` or `??:0` where
/// it knows none (line 0).
fn srcline(line: &str) -> Option<(&str, u32)> {
    let (file, n) = line.trim().rsplit_once(':')?;
    Some((file, n.parse().ok()?))
}

/// The record being read: its header and its offset in the file; its lines are kept
/// apart (see [`Body`]).
type Record<'a> = (Header<'a>, u64);

/// What a record's line below its header is, on its own (what it does depends on the lines
/// before it: a source line names the frame above it).
enum Line<'a> {
    Frame(RawFrame<'a>),
    /// Not a frame: a `file:line`, if it parses as one, and whether it ends with `]`.
    Other(Option<(&'a str, u32)>, bool),
}

impl<'a> Line<'a> {
    fn read(line: &'a str) -> Line<'a> {
        match frame(line) {
            Some(f) => Line::Frame(f),
            None => Line::Other(srcline(line), line.trim().ends_with(']')),
        }
    }
}

/// The lines of the record being read and of the one before it, used again for every
/// record. Consecutive samples share their outer frames, the record's last lines: those
/// equal to the last record's are not read again, and where they are all frame lines their
/// frames stay where the last record left them (the stack's outer end).
#[derive(Default)]
struct Body<'a> {
    /// The record's lines below its header, with their offsets in the run's text.
    lines: Vec<(usize, &'a str)>,
    /// The last record's lines, each with its node in the [`Tree`].
    prev: Vec<(&'a str, u32)>,
    cur: Vec<(&'a str, u32)>,
    /// How many of the last record's lines, from its end, are frame lines: its first
    /// `tail` frames are theirs.
    tail: usize,
    /// The record's lines read, as places in `seen`.
    idx: Vec<u32>,
    /// Outermost first: the last record's until the record is read.
    frames: Vec<RawFrame<'a>>,
    /// Per frame, its node.
    nodes: Vec<u32>,
    /// Each distinct line read so far, by its text (a place in `seen`): a profile's frame
    /// lines are a few thousand return addresses, printed again in most records.
    read: hashbrown::HashTable<u32>,
    /// Lines read: their text, reading and id in the [`Tree`]; those past
    /// [`READ_MAX`] only until the record is handed over.
    seen: Vec<(&'a str, Line<'a>, u32)>,
}

/// The most lines [`Body::read`] keeps, so text of lines that never repeat costs a
/// lookup each, not a table that grows with the run.
const READ_MAX: usize = 1 << 14;

impl<'a> Body<'a> {
    /// The place in `seen` of `line` read, or of its reading from an earlier line of the
    /// same text.
    fn read_line(
        read: &mut hashbrown::HashTable<u32>,
        seen: &mut Vec<(&'a str, Line<'a>, u32)>,
        tree: &mut Tree,
        line: &'a str,
    ) -> u32 {
        let h = |s: &str| hash::hash(s.as_bytes(), 0);
        let hl = h(line);
        let found = read.find(hl, |&i| {
            hash::same(seen[i as usize].0.as_bytes(), line.as_bytes())
        });
        if let Some(&i) = found {
            return i;
        }
        let i = seen.len() as u32;
        seen.push((line, Line::read(line), tree.line(line, hl)));
        if seen.len() <= READ_MAX {
            read.insert_unique(hl, i, |&i| h(seen[i as usize].0));
        }
        i
    }
}

/// Decodes every record into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    let total = b.len() as u64;
    Ok(decode_run(
        b,
        0,
        total,
        sink,
        diags,
        &mut false,
        &mut Tree::default(),
    ))
}

/// Where a run of whole records may end in `b` (a stream's bytes so far): the start of the
/// last line that begins a record (a header: not indented, blank or a `#` comment, which a
/// record in progress would read otherwise), if one starts after byte 0.
pub(crate) fn run_end(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while let Some(nl) = memchr::memrchr(b'\n', &b[..end]) {
        let p = nl + 1;
        if !matches!(b.get(p), None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'#')) {
            return Some(p);
        }
        end = nl;
    }
    None
}

/// The warning that the file's text is not UTF-8 (once a file, at its start).
pub(crate) fn warn_not_utf8(diags: &mut Diagnostics) {
    diags.warn(WarningKind::InvalidUtf8, 0, || {
        "perf script text that is not valid UTF-8: decoded with U+FFFD replacements".into()
    });
}

/// Decodes `b`, whole records that start at the file's offset `base` (of `total` bytes),
/// into `sink`; the number of samples. Text that is not UTF-8 is warned about once per
/// file (`warned`: whether an earlier run did). Every run into one sink takes the same
/// `tree` (the samples' nodes name the same frames for the sink's whole life).
pub(crate) fn decode_run<S: EventSink>(
    b: &[u8],
    base: u64,
    total: u64,
    sink: &mut S,
    diags: &mut Diagnostics,
    warned: &mut bool,
    tree: &mut Tree,
) -> u64 {
    let text = utf8(b);
    if let (Cow::Owned(_), false) = (&text, *warned) {
        *warned = true;
        warn_not_utf8(diags);
    }
    let text: &str = &text;
    let mut rec: Option<Record<'_>> = None;
    let mut body = Body::default();
    let mut last_header = LastHeaders::default();
    let mut n = 0u64;
    let mut at = 0usize;
    let mut next_progress = 1 << 24;
    let off = |start: usize| base + start as u64;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
        let line = text[at..end].strip_suffix('\r').unwrap_or(&text[at..end]);
        let start = at;
        at = end + 1;
        let first = line.as_bytes().first().copied();
        match first {
            // A frame line ends in a symbol or module, so only a line that ends blank is
            // read whole (its indent is a dozen blanks: most of a frame line's cost).
            Some(b' ' | b'\t') if blank_line(line) => {
                n += flush(&mut rec, &mut body, tree, sink, diags, base)
            }
            None => n += flush(&mut rec, &mut body, tree, sink, diags, base),
            Some(b' ' | b'\t') => match rec {
                Some(_) => body.lines.push((start, line)),
                None => warn(diags, off(start), || {
                    format!(
                        "a perf script frame with no sample header: {:?}; skipped",
                        clip(line)
                    )
                }),
            },
            Some(b'#') if rec.is_none() => {}
            Some(_) => {
                n += flush(&mut rec, &mut body, tree, sink, diags, base);
                match last_header.read(line) {
                    Some(h) => rec = Some((h, off(start))),
                    None => warn(diags, off(start), || {
                        format!(
                            "a perf script line that is not a sample header: {:?}; skipped",
                            clip(line)
                        )
                    }),
                }
            }
        }
        if start >= next_progress {
            next_progress = start + (1 << 24);
            sink.progress(off(start), total);
        }
    }
    n += flush(&mut rec, &mut body, tree, sink, diags, base);
    n
}

/// Whether `c` is a space or a tab, what separates a line's words.
#[inline(always)]
fn blank(c: &u8) -> bool {
    *c == b' ' || *c == b'\t'
}

/// Whether `line` is spaces and tabs only.
#[inline(always)]
fn blank_line(line: &str) -> bool {
    line.as_bytes().last().is_none_or(blank) && line.as_bytes().iter().all(blank)
}

/// The first 80 bytes of a line, for a warning.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(80);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The unit of an event's periods: the software clocks count nanoseconds.
fn unit(event: &str) -> SampleUnit {
    match event {
        "cpu-clock" | "task-clock" => SampleUnit::Nanoseconds,
        _ => SampleUnit::Count,
    }
}

/// Hands the open record, if any, to the sink: 1 if there was one. Its lines are read,
/// but for those at its end equal to the last record's, whose nodes are taken as they
/// were (and their frames, where they are all frame lines); then each line does what it
/// does after the ones before it (`base`: the run's offset in the file, for warnings).
fn flush<'a, S: EventSink>(
    rec: &mut Option<Record<'a>>,
    body: &mut Body<'a>,
    tree: &mut Tree,
    sink: &mut S,
    diags: &mut Diagnostics,
    base: u64,
) -> u64 {
    let Some((h, offset)) = rec.take() else {
        return 0;
    };
    let Body {
        lines,
        prev,
        cur,
        tail,
        idx,
        frames,
        nodes,
        read,
        seen,
    } = body;
    let (n, m) = (lines.len(), prev.len());
    let same = (lines.iter().rev().zip(prev.iter().rev()))
        .take_while(|((_, a), (b, _))| hash::same(a.as_bytes(), b.as_bytes()))
        .count();
    let new = n - same;
    // The shared lines' frames are the last record's first ones where they are all
    // frame lines; else every line is read again (a source line among them names the
    // frame above it, which may be new; a line that is neither warns again).
    let reuse = same <= *tail;
    let fresh = if reuse { new } else { n };
    idx.clear();
    idx.extend((lines[..fresh].iter()).map(|&(_, l)| Body::read_line(read, seen, tree, l)));
    cur.clear();
    cur.extend(lines[..new].iter().map(|&(_, l)| (l, NONE)));
    cur.extend_from_slice(&prev[m - same..]);
    // The new lines' ids become their nodes, from the shared lines' innermost inwards.
    let mut parent = cur.get(new).map_or(ROOT, |c| c.1);
    for (c, &i) in cur[..new].iter_mut().zip(idx.iter()).rev() {
        parent = tree.child(parent, seen[i as usize].2);
        c.1 = parent;
    }
    tree.record(cur.first().map_or(ROOT, |c| c.1));
    let keep = if reuse { same } else { 0 };
    frames.truncate(keep);
    nodes.truncate(keep);
    // A frame on the header line is not one of the tree's.
    let header_frame = frame(h.rest);
    let tree_ok = header_frame.is_none();
    frames.extend(header_frame);
    let mut frame_lines = 0;
    for (k, (&(start, text), &i)) in lines.iter().zip(idx.iter()).enumerate() {
        match (&seen[i as usize].1, frames[keep..].last_mut()) {
            (Line::Frame(f), _) => {
                frames.push(f.clone());
                nodes.push(cur[k].1);
                frame_lines += 1;
                continue;
            }
            (Line::Other(Some((file, l)), _), Some(f)) => {
                if *l > 0 && !file.is_empty() && *file != "??" {
                    f.file = Some(Cow::Borrowed(file));
                    f.line = Some(*l);
                }
            }
            // A srcline with no source: `[kernel.kallsyms][ffffffff8226f122]`.
            (Line::Other(None, true), Some(_)) => {}
            _ => warn(diags, base + start as u64, || {
                format!(
                    "a perf script line that is not a frame: {:?}; skipped",
                    clip(text)
                )
            }),
        }
        frame_lines = 0;
    }
    *tail = frame_lines + keep;
    frames[keep..].reverse();
    nodes[keep..].reverse();
    std::mem::swap(prev, cur);
    lines.clear();
    seen.truncate(READ_MAX);
    let tree_ok = tree_ok && nodes.iter().all(|&n| n != NONE);
    let tid = h.tid.unwrap_or(0);
    sink.sample(&RawSample {
        pid: RawId::Num(h.pid.unwrap_or(tid)),
        tid: RawId::Num(tid),
        thread_name: (!h.comm.is_empty()).then_some(Cow::Borrowed(h.comm)),
        kind: Cow::Borrowed(h.event),
        unit: unit(h.event),
        ts: h.ts,
        weight: h.period.unwrap_or(1),
        stack: frames,
        args: crate::event::Args::None,
        same_stack: false,
        same_outer: keep,
        nodes: if tree_ok { nodes } else { &[] },
        offset,
        cpu: h.cpu,
    });
    1
}

#[cfg(test)]
#[path = "perf_tests.rs"]
mod tests;
