//! The binary `.spall` format, versions 1 and 3.
//!
//! All integers are little-endian and all structures packed (no padding).
//!
//! # Header (both versions, 32 bytes)
//!
//! | offset | size | field            | meaning                                                  |
//! |-------:|-----:|------------------|----------------------------------------------------------|
//! | 0      | 8    | `magic` u64      | `0x0BADF00D` (`0xABADF00D` is auto-tracing: unsupported) |
//! | 8      | 8    | `version` u64    | 1 or 3                                                   |
//! | 16     | 8    | `timestamp_unit` f64 | v1: microseconds per tick; v3: nanoseconds per tick  |
//! | 24     | 8    | `must_be_0` u64  | 0                                                        |
//!
//! # Version 1: a flat stream of events, each naming its own process and thread
//!
//! | type | layout (bytes)                                                                              |
//! |-----:|---------------------------------------------------------------------------------------------|
//! | 3 Begin | `u8 type, u8 category, u32 pid, u32 tid, f64 time, u8 name_len, u8 args_len` (20), then name, then args |
//! | 4 End   | `u8 type, u32 pid, u32 tid, f64 time` (17)                                              |
//! | 7 Pad_Skip | `u8 type, u32 size` (5), then `size` bytes to skip                                   |
//!
//! # Version 3: buffers, each holding one thread's events
//!
//! Buffer header: `u32 size, u32 tid, u32 pid, u64 first_ts` (20 bytes), then `size` bytes of events:
//!
//! | type | layout (bytes)                                                          |
//! |-----:|-------------------------------------------------------------------------|
//! | 3 Begin        | `u8 type, u64 time, u8 name_len, u8 args_len` (11), then name, then args |
//! | 4 End          | `u8 type, u64 time` (9)                                       |
//! | 7 Pad_Skip     | `u8 type, u32 size` (5), then `size` bytes to skip            |
//! | 8 Name_Process | `u8 type, u8 len` (2), then the buffer's process name         |
//! | 9 Name_Thread  | `u8 type, u8 len` (2), then the buffer's thread name          |
//! | 5 Instant      | the Begin layout: a spall-rs extension (`spall-trace` writes it); upstream reserves the type with no layout |
//!
//! Types 1 (custom data), 2 (stream over), 5 in version 1, and 6 (overwrite timestamp) have no
//! published layout, so nothing after them can be located: the rest of the buffer (v3) or
//! file (v1) is skipped and counted as [`WarningKind::SpallUnsupportedEvent`].
//!
//! A name whose length counts a trailing NUL has the NUL stripped. Text that is not UTF-8 is
//! decoded lossily and counted. Name events become `M` events (`process_name` /
//! `thread_name`, with `{"name": ...}` args), the way Chrome JSON names them.

use std::borrow::Cow;

use crate::diag::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorKind};
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};
use crate::time::TickScale;

use event_type as ty;
pub use spall_layout::{event_type, AUTO_MAGIC, BUFFER_HEADER_LEN, HEADER_LEN, MAGIC};

/// What the header said.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpallHeader {
    /// The format version: 1 or 3.
    pub version: u64,
    /// As written: microseconds per tick (v1) or nanoseconds per tick (v3).
    pub timestamp_unit: f64,
}

/// The bytes as a `str` when they need no repair: ASCII with no trailing NUL.
#[inline(always)]
fn plain_text(bytes: &[u8]) -> Option<&str> {
    match bytes.last() {
        Some(0) => None,
        _ => ascii_str(bytes),
    }
}

/// The bytes as a `str` when they are all ASCII: the common case, checked word by word
/// inline, far cheaper than a general UTF-8 validation call for short names.
#[inline]
fn ascii_str(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        #[allow(unsafe_code)]
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        None
    }
}

#[inline]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}

#[inline]
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
}

/// Reads and checks the 32-byte header.
pub fn read_header(b: &[u8]) -> Result<SpallHeader, Error> {
    if b.len() < 8 {
        return Err(Error::new(
            ErrorKind::TruncatedHeader {
                len: b.len() as u64,
            },
            0,
        ));
    }
    match u64_at(b, 0) {
        MAGIC => {}
        AUTO_MAGIC => return Err(Error::new(ErrorKind::AutoTraceUnsupported, 0)),
        _ => {
            return Err(Error::new(
                ErrorKind::NotATrace {
                    found: "no .spall magic".into(),
                },
                0,
            ))
        }
    }
    if b.len() < HEADER_LEN {
        return Err(Error::new(
            ErrorKind::TruncatedHeader {
                len: b.len() as u64,
            },
            0,
        ));
    }
    let version = u64_at(b, 8);
    if version != 1 && version != 3 {
        return Err(Error::new(ErrorKind::UnsupportedVersion { version }, 8));
    }
    let timestamp_unit = f64::from_le_bytes(b[16..24].try_into().unwrap());
    Ok(SpallHeader {
        version,
        timestamp_unit,
    })
}

/// Per-decode state shared by both versions.
struct Ctx<'s, S: EventSink> {
    sink: &'s mut S,
    diags: &'s mut Diagnostics,
    events: u64,
    /// The input's offset of `b[0]` (a streamed file's window), added to every offset.
    base: u64,
}

impl<S: EventSink> Ctx<'_, S> {
    /// Name or args bytes as text: a trailing NUL stripped, invalid UTF-8 repaired and counted.
    #[inline(always)]
    fn text<'a>(&mut self, bytes: &'a [u8], offset: usize) -> Cow<'a, str> {
        match plain_text(bytes) {
            Some(s) => Cow::Borrowed(s),
            None => self.text_slow(bytes, offset),
        }
    }

    #[cold]
    #[inline(never)]
    fn text_slow<'a>(&mut self, bytes: &'a [u8], offset: usize) -> Cow<'a, str> {
        let bytes = match bytes.iter().rposition(|&c| c != 0) {
            Some(last) => &bytes[..=last],
            None => &bytes[..0],
        };
        match std::str::from_utf8(bytes) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                self.diags
                    .warn(WarningKind::InvalidUtf8, self.base + offset as u64, || {
                        "a .spall name or args string is not valid UTF-8".into()
                    });
                String::from_utf8_lossy(bytes)
            }
        }
    }

    #[inline]
    fn emit(&mut self, ev: &RawEvent<'_>) {
        self.events += 1;
        self.sink.event(ev);
    }

    fn truncated(&mut self, at: usize, what: &str, left: usize) {
        self.diags.warn(WarningKind::SpallTruncatedEvent, self.base + at as u64, || {
            format!("the input ends inside a {what} event ({left} bytes left); the partial event was dropped")
        });
    }

    fn unsupported(&mut self, at: usize, t: u8, skipped: usize, scope: &str) {
        let at = self.base + at as u64;
        unsupported(self.diags, at, t, skipped as u64, scope);
    }
}

/// An event of type `t` at `at` whose layout is unknown: the rest of the `scope`
/// (`skipped` bytes) is not read.
pub(crate) fn unsupported(d: &mut Diagnostics, at: u64, t: u8, skipped: u64, scope: &str) {
    d.warn(WarningKind::SpallUnsupportedEvent, at, || {
        let what = match t {
            ty::CUSTOM_DATA => "custom data (1)".to_string(),
            ty::STREAM_OVER => "stream over (2)".to_string(),
            ty::INSTANT => "instant (5)".to_string(),
            ty::OVERWRITE_TIMESTAMP => "overwrite timestamp (6)".to_string(),
            other => format!("unknown type {other}"),
        };
        format!("event type {what} has no known layout; the rest of the {scope} ({skipped} bytes) was skipped")
    });
}

/// Decodes a whole `.spall` file (header included). Returns the header and the event count.
pub(crate) fn decode<S: EventSink>(
    b: &[u8],
    sink: &mut S,
    diags: &mut Diagnostics,
) -> Result<(SpallHeader, u64), Error> {
    let (header, scale) = prepare(b, diags)?;
    let range = (HEADER_LEN, b.len());
    let events = decode_chunk(b, header.version, range, 0, &scale, sink, diags);
    Ok((header, events))
}

/// Reads and checks the header; returns it with its tick scale.
pub(crate) fn prepare(
    b: &[u8],
    diags: &mut Diagnostics,
) -> Result<(SpallHeader, TickScale), Error> {
    let header = read_header(b)?;
    if u64_at(b, 24) != 0 {
        diags.warn(WarningKind::SpallHeaderNotZero, 24, || {
            "the header's must-be-zero word is not zero".into()
        });
    }
    let unit = header.timestamp_unit;
    let scale = if header.version == 1 {
        TickScale::from_us_per_tick(unit)
    } else {
        TickScale::from_ns_per_tick(unit)
    }
    .ok_or_else(|| Error::new(ErrorKind::BadTimestampUnit { unit }, 16))?;
    Ok((header, scale))
}

/// Cuts a version 3 file into runs of whole buffers of at least `target` bytes (the last
/// may be shorter), in file order: `[from, to)` byte ranges that
/// [`decode_chunk`] decodes exactly as a whole-file decode would.
pub(crate) fn v3_chunks(b: &[u8], target: usize) -> Vec<(usize, usize)> {
    let mut chunks = Vec::new();
    let (mut p, mut start) = (HEADER_LEN, HEADER_LEN);
    while b.len().saturating_sub(p) >= BUFFER_HEADER_LEN {
        let size = u32_at(b, p) as usize;
        p = (p + BUFFER_HEADER_LEN).saturating_add(size).min(b.len());
        if p - start >= target {
            chunks.push((start, p));
            start = p;
        }
    }
    if start < b.len() {
        chunks.push((start, b.len()));
    }
    chunks
}

/// Decodes the buffers in `b[from..to]` (version 3: a range from [`v3_chunks`]) or the
/// events from `b[from]` to its end (version 1: whole events from a streamed file's
/// window, and at the end what is left of it). `base` is the file's offset of `b[0]`,
/// added to every offset: 0 for a whole file, a window's start for a streamed one
/// ([`SpallStream`](crate::SpallStream)). Returns the event count.
pub(crate) fn decode_chunk<S: EventSink>(
    b: &[u8],
    version: u64,
    (from, to): (usize, usize),
    base: u64,
    scale: &TickScale,
    sink: &mut S,
    diags: &mut Diagnostics,
) -> u64 {
    let mut ctx = Ctx {
        sink,
        diags,
        events: 0,
        base,
    };
    match version {
        1 => decode_v1(b, from, scale, &mut ctx),
        _ => decode_v3_range(b, from, to, scale, &mut ctx),
    }
    ctx.events
}

/// The length of the version 1 event at the start of `b`: `Ok(None)` when `b` ends before
/// its length is known, `Err(type)` for a type with no known layout. A Pad_Skip's length
/// counts the bytes it skips.
pub(crate) fn v1_event_len(b: &[u8]) -> Result<Option<u64>, u8> {
    let left = b.len();
    match b.first() {
        None => Ok(None),
        Some(&ty::BEGIN) if left >= 20 => Ok(Some(20 + b[18] as u64 + b[19] as u64)),
        Some(&ty::END) => Ok(Some(17)),
        Some(&ty::PAD_SKIP) if left >= 5 => Ok(Some(5 + u32_at(b, 1) as u64)),
        Some(&(ty::BEGIN | ty::PAD_SKIP)) => Ok(None),
        Some(&t) => Err(t),
    }
}

fn decode_v1<S: EventSink>(b: &[u8], from: usize, scale: &TickScale, ctx: &mut Ctx<'_, S>) {
    let mut ev = RawEvent::default();
    let mut p = from;
    let mut since_progress = 0usize;
    while p < b.len() {
        let left = b.len() - p;
        match b[p] {
            ty::BEGIN => {
                if left < 20 || left < 20 + b[p + 18] as usize + b[p + 19] as usize {
                    return ctx.truncated(p, "Begin", left);
                }
                let (nl, al) = (b[p + 18] as usize, b[p + 19] as usize);
                let time = f64::from_le_bytes(b[p + 10..p + 18].try_into().unwrap());
                if let Some(ts) = v1_time(ctx, scale, time, p) {
                    ev.ph = Phase::BEGIN;
                    ev.ts = ts;
                    ev.offset = ctx.base + p as u64;
                    ev.pid = RawId::Num(u32_at(b, p + 2) as i64);
                    ev.tid = RawId::Num(u32_at(b, p + 6) as i64);
                    ev.name = ctx.text(&b[p + 20..p + 20 + nl], p);
                    ev.args = if al == 0 {
                        Args::None
                    } else {
                        Args::Text(ctx.text(&b[p + 20 + nl..p + 20 + nl + al], p))
                    };
                    ctx.events += 1;
                    ctx.sink.spall_begin(&ev);
                }
                p += 20 + nl + al;
            }
            ty::END => {
                if left < 17 {
                    return ctx.truncated(p, "End", left);
                }
                let time = f64::from_le_bytes(b[p + 9..p + 17].try_into().unwrap());
                if let Some(ts) = v1_time(ctx, scale, time, p) {
                    ev.ph = Phase::END;
                    ev.ts = ts;
                    ev.offset = ctx.base + p as u64;
                    ev.pid = RawId::Num(u32_at(b, p + 1) as i64);
                    ev.tid = RawId::Num(u32_at(b, p + 5) as i64);
                    ev.name = Cow::Borrowed("");
                    ev.args = Args::None;
                    ctx.events += 1;
                    ctx.sink.spall_end(&ev);
                }
                p += 17;
            }
            ty::PAD_SKIP => {
                if left < 5 {
                    return ctx.truncated(p, "Pad_Skip", left);
                }
                p = p.saturating_add(5 + u32_at(b, p + 1) as usize);
            }
            t => return ctx.unsupported(p, t, left, "file"),
        }
        since_progress += 1;
        if since_progress == 1 << 16 {
            since_progress = 0;
            ctx.sink.progress(p as u64, b.len() as u64);
        }
    }
}

#[inline]
fn v1_time<S: EventSink>(
    ctx: &mut Ctx<'_, S>,
    scale: &TickScale,
    time: f64,
    p: usize,
) -> Option<i64> {
    let ts = scale.float_ticks_to_ns(time);
    if ts.is_none() {
        ctx.diags.warn(WarningKind::SpallBadTimestamp, ctx.base + p as u64, || {
            format!("timestamp {time} ticks is not a finite time within ±292 years; the event was dropped")
        });
    }
    ts
}

/// Decodes the buffers that start in `[from, to)`.
fn decode_v3_range<S: EventSink>(
    b: &[u8],
    from: usize,
    to: usize,
    scale: &TickScale,
    ctx: &mut Ctx<'_, S>,
) {
    let mut p = from;
    while p < to {
        if b.len() - p < BUFFER_HEADER_LEN {
            ctx.diags.warn(
                WarningKind::SpallTruncatedBuffer,
                ctx.base + p as u64,
                || {
                    format!(
                        "the input ends inside a buffer header ({} of {BUFFER_HEADER_LEN} bytes)",
                        b.len() - p
                    )
                },
            );
            return;
        }
        let size = u32_at(b, p) as usize;
        let tid = u32_at(b, p + 4) as i64;
        let pid = u32_at(b, p + 8) as i64;
        let start = p + BUFFER_HEADER_LEN;
        let mut end = start.saturating_add(size);
        if end > b.len() {
            ctx.diags.warn(WarningKind::SpallTruncatedBuffer, ctx.base + p as u64, || {
                format!(
                    "a buffer claims {size} bytes but only {} remain; its complete events were kept",
                    b.len() - start
                )
            });
            end = b.len();
        }
        ctx.sink.spall_buffer(pid as u32, tid as u32);
        decode_v3_buffer(&b[..end], start, scale, pid, tid, ctx);
        ctx.sink.progress(end as u64, b.len() as u64);
        p = end;
    }
}

/// Decodes the events in `b[start..]` (the slice ends where the buffer ends).
///
/// One `RawEvent` is reused for the whole buffer: only the fields that change are written,
/// which keeps the per-event cost to a few stores.
fn decode_v3_buffer<S: EventSink>(
    b: &[u8],
    start: usize,
    scale: &TickScale,
    pid: i64,
    tid: i64,
    ctx: &mut Ctx<'_, S>,
) {
    let mut ev = RawEvent {
        pid: RawId::Num(pid),
        tid: RawId::Num(tid),
        ..RawEvent::default()
    };
    let mut p = start;
    // Counted here and added once: `ctx` is behind a reference, so a count there is a
    // load and a store per event.
    let mut events = 0;
    // Whether `ev.args` holds text (a Begin with none then skips replacing it).
    let mut has_args = false;
    while p < b.len() {
        let left = b.len() - p;
        match b[p] {
            t @ (ty::BEGIN | ty::INSTANT) => {
                let what = || if t == ty::BEGIN { "Begin" } else { "Instant" };
                let Some(h) = b.get(p..p + 11) else {
                    ctx.truncated(p, what(), left);
                    break;
                };
                let h: &[u8; 11] = h.try_into().unwrap();
                let (nl, al) = (h[9] as usize, h[10] as usize);
                let Some(text) = b.get(p + 11..p + 11 + nl + al) else {
                    ctx.truncated(p, what(), left);
                    break;
                };
                let ticks = u64::from_le_bytes(h[1..9].try_into().unwrap());
                if let Some(ts) = v3_time(ctx, scale, ticks, p) {
                    ev.ph = if t == ty::BEGIN {
                        Phase::BEGIN
                    } else {
                        Phase::INSTANT
                    };
                    ev.ts = ts;
                    ev.offset = ctx.base + p as u64;
                    match plain_text(&text[..nl]) {
                        Some(s) => ev.name = Cow::Borrowed(s),
                        None => ev.name = ctx.text_slow(&text[..nl], p),
                    }
                    if al != 0 {
                        ev.args = Args::Text(ctx.text(&text[nl..], p));
                        has_args = true;
                    } else if has_args {
                        ev.args = Args::None;
                        has_args = false;
                    }
                    events += 1;
                    if t == ty::BEGIN {
                        ctx.sink.spall_begin(&ev);
                    } else {
                        ctx.sink.event(&ev);
                    }
                }
                p += 11 + nl + al;
            }
            ty::END => {
                let Some(h) = b.get(p..p + 9) else {
                    ctx.truncated(p, "End", left);
                    break;
                };
                let ticks = u64::from_le_bytes(h[1..9].try_into().unwrap());
                if let Some(ts) = v3_time(ctx, scale, ticks, p) {
                    ev.ph = Phase::END;
                    ev.ts = ts;
                    ev.offset = ctx.base + p as u64;
                    ev.name = Cow::Borrowed("");
                    if has_args {
                        ev.args = Args::None;
                        has_args = false;
                    }
                    events += 1;
                    ctx.sink.spall_end(&ev);
                }
                p += 9;
            }
            ty::PAD_SKIP => {
                if left < 5 {
                    ctx.truncated(p, "Pad_Skip", left);
                    break;
                }
                p = p.saturating_add(5 + u32_at(b, p + 1) as usize);
            }
            t @ (ty::NAME_PROCESS | ty::NAME_THREAD) => {
                if left < 2 || left < 2 + b[p + 1] as usize {
                    ctx.truncated(p, "Name", left);
                    break;
                }
                let len = b[p + 1] as usize;
                let name = ctx.text(&b[p + 2..p + 2 + len], p);
                ev.ph = Phase::METADATA;
                ev.ts = 0;
                ev.offset = ctx.base + p as u64;
                ev.name = Cow::Borrowed(if t == ty::NAME_PROCESS {
                    "process_name"
                } else {
                    "thread_name"
                });
                ev.args = Args::Json(Cow::Owned(name_args(&name)));
                has_args = true;
                ctx.emit(&ev);
                p += 2 + len;
            }
            t => {
                ctx.unsupported(p, t, left, "buffer");
                break;
            }
        }
    }
    ctx.events += events;
}

/// `{"name": "..."}`, as Chrome's metadata events carry names.
fn name_args(name: &str) -> String {
    format!(
        "{{\"name\":{}}}",
        serde_json::to_string(name).expect("strings serialize")
    )
}

/// Inline always: twice per span, and a call costs more than the scaling.
#[inline(always)]
fn v3_time<S: EventSink>(
    ctx: &mut Ctx<'_, S>,
    scale: &TickScale,
    ticks: u64,
    p: usize,
) -> Option<i64> {
    let ts = scale.ticks_to_ns(ticks);
    if ts.is_none() {
        bad_v3_time(ctx, ticks, p);
    }
    ts
}

#[cold]
#[inline(never)]
fn bad_v3_time<S: EventSink>(ctx: &mut Ctx<'_, S>, ticks: u64, p: usize) {
    ctx.diags
        .warn(WarningKind::SpallBadTimestamp, ctx.base + p as u64, || {
            format!(
                "timestamp {ticks} ticks does not fit in 64-bit nanoseconds; the event was dropped"
            )
        });
}
