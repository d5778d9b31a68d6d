//! Chrome JSON trace-event files (the format Perfetto, chrome://tracing and spall-web read).
//!
//! Both shapes are accepted: a bare array of events, and an object with a `traceEvents`
//! array at any position among its keys. Other top-level keys (`metadata`, `otherData`,
//! `stackFrames`, `samples`, `systemTraceEvents`, ...) are skipped without being misread as
//! events, and their byte ranges are kept in [`JsonInfo`].
//!
//! Leniency (each case counted in [`Diagnostics`] unless noted):
//! - a missing closing `]` or `}`: the writer was still running ([`WarningKind::JsonUnterminated`]);
//! - a partial last event: dropped ([`WarningKind::JsonTruncatedEvent`]);
//! - trailing or doubled commas ([`WarningKind::JsonExtraComma`]) and missing commas between
//!   events ([`WarningKind::JsonMissingComma`]);
//! - elements that are not objects, and objects with syntax errors inside, are skipped and counted;
//! - invalid UTF-8 is repaired per event with U+FFFD ([`WarningKind::InvalidUtf8`]);
//! - a UTF-8 byte-order mark is ignored (not counted).

mod object;
pub(crate) mod scan;
mod stream;
mod text;

use std::borrow::Cow;
use std::ops::Range;

use crate::diag::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorKind};
use crate::event::{EventSink, RawEvent};
use scan::{skip_value, skip_ws, string_end, Scan};
pub use stream::JsonStream;

/// A top-level key of an object-form JSON trace, and where its value lies in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopLevelKey {
    /// The key, unescaped.
    pub name: String,
    /// Byte range of the value in the decoded input.
    pub value: Range<u64>,
}

/// What a JSON trace holds besides its events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonInfo {
    /// Whether the file is the `{"traceEvents": [...]}` form (else a bare array).
    pub object_form: bool,
    /// `displayTimeUnit` (`"ms"` or `"ns"`): affects display only, never timestamps.
    pub display_time_unit: Option<String>,
    /// Every top-level key other than `traceEvents`, in file order.
    pub other_keys: Vec<TopLevelKey>,
}

/// Decodes JSON text: events go to `sink`, problems to `d`.
pub(crate) fn decode<S: EventSink>(
    b: &[u8],
    sink: &mut S,
    d: &mut Diagnostics,
) -> Result<(JsonInfo, u64), Error> {
    decode_hooked(b, simdutf8::basic::from_utf8(b).ok(), sink, d, None)
}

/// [`decode`], with the event array parsed by `hook` when one is given. `text` is `b` as
/// text when it is all UTF-8 (the caller checked), `None` when it is not.
pub(crate) fn decode_hooked<'s, S: EventSink>(
    b: &[u8],
    text: Option<&str>,
    sink: &'s mut S,
    d: &'s mut Diagnostics,
    hook: Option<ArrayHook<'s>>,
) -> Result<(JsonInfo, u64), Error> {
    debug_assert!(text.is_none_or(|t| t.len() == b.len()));
    // Invalid UTF-8 somewhere: "" scans the raw bytes, repairing event by event.
    let text = text.unwrap_or("");
    decode_str(text, b, sink, d, hook)
}

/// Parses array elements of `b` (whose text is `s`, or `""` when `b` is not all UTF-8) from
/// `i` in `state` until `stop` (see [`Stop`]). Returns where it stopped, the state there and
/// the number of events emitted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn parse_run<S: EventSink>(
    s: &str,
    b: &[u8],
    i: usize,
    stop: usize,
    state: LoopState,
    sink: &mut S,
    d: &mut Diagnostics,
) -> (Stop, LoopState, u64) {
    let r = parse_run_at(s, b, 0, i, stop, state, sink, d);
    (r.stop, r.state, r.events)
}

/// What [`parse_run_at`] found.
pub(crate) struct RunEnd {
    pub stop: Stop,
    pub state: LoopState,
    pub events: u64,
    /// Whether the input ended before the array closed (the warning is given).
    pub unterminated: bool,
}

/// [`parse_run`] over `b`, a window of the input that starts at byte `base` of it: offsets
/// in events and warnings are the input's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn parse_run_at<S: EventSink>(
    s: &str,
    b: &[u8],
    base: u64,
    i: usize,
    stop: usize,
    state: LoopState,
    sink: &mut S,
    d: &mut Diagnostics,
) -> RunEnd {
    let mut p = Parser {
        s,
        b,
        base,
        sink,
        d,
        events: 0,
        unterminated: false,
        hook: None,
    };
    let (stop, state) = p.events_loop(i, stop, state);
    RunEnd {
        stop,
        state,
        events: p.events,
        unterminated: p.unterminated,
    }
}

/// The top level after the event array: `b` is the rest of the input from just after the
/// array (from byte `base`); `unterminated`: the input already ended inside the array.
/// What a whole-input decode finds there (the other keys, the closing brace, trailing
/// text) goes to `info` and `d`; `systemTraceEvents`' records to `sink`. Returns how many.
pub(crate) fn parse_tail<S: EventSink>(
    b: &[u8],
    base: u64,
    unterminated: bool,
    info: &mut JsonInfo,
    d: &mut Diagnostics,
    sink: &mut S,
) -> u64 {
    let mut p = Parser {
        s: "",
        b,
        base,
        sink,
        d,
        events: 0,
        unterminated,
        hook: None,
    };
    let end = if info.object_form {
        p.object_keys(0, info, true)
    } else {
        0
    };
    p.trailing(end);
    p.events
}

struct Parser<'a, 's, S> {
    /// The input as text when it is all valid UTF-8; empty otherwise.
    s: &'a str,
    b: &'a [u8],
    /// The input's offset of `b[0]` (a window of a stream), added to every offset reported.
    base: u64,
    sink: &'s mut S,
    d: &'s mut Diagnostics,
    events: u64,
    unterminated: bool,
    /// Parses the event array in its place (the parallel decoder): given the index after
    /// `[`, returns where the array ends.
    hook: Option<ArrayHook<'s>>,
}

/// See [`Parser::hook`].
/// Returns where the array ends and whether the input ended first (already reported).
pub(crate) type ArrayHook<'h> = &'h mut dyn FnMut(usize, &mut Diagnostics) -> (usize, bool);

/// Where a run of array elements stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// An element starts here, at or after the requested stop.
    At(usize),
    /// The array closed; the index after `]`.
    Closed(usize),
    /// The input ended (or the rest could not be parsed).
    Eof,
}

impl Stop {
    /// Where the run stopped: `None` at the end of the input.
    pub(crate) fn at(&self) -> Option<usize> {
        match *self {
            Stop::At(i) | Stop::Closed(i) => Some(i),
            Stop::Eof => None,
        }
    }
}

/// The comma bookkeeping of the element loop, carried across a stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LoopState {
    pub after_value: bool,
    pub after_comma: bool,
}

fn decode_str<'s, S: EventSink>(
    s: &str,
    b: &[u8],
    sink: &'s mut S,
    d: &'s mut Diagnostics,
    hook: Option<ArrayHook<'s>>,
) -> Result<(JsonInfo, u64), Error> {
    let mut p = Parser {
        s,
        b,
        base: 0,
        sink,
        d,
        events: 0,
        unterminated: false,
        hook,
    };
    let mut info = JsonInfo::default();
    let mut i = if b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    i = skip_ws(b, i);
    let end = match b.get(i) {
        None => return Err(Error::new(ErrorKind::Empty, i as u64)),
        Some(b'[') => p.events_array(i + 1),
        Some(b'{') => {
            info.object_form = true;
            p.object(i + 1, &mut info)
        }
        Some(_) => {
            let shown = String::from_utf8_lossy(&b[i..b.len().min(i + 16)]).into_owned();
            return Err(Error::new(
                ErrorKind::NotATrace {
                    found: format!("{shown:?}"),
                },
                i as u64,
            ));
        }
    };
    p.trailing(end);
    p.sink.progress(b.len() as u64, b.len() as u64);
    Ok((info, p.events))
}

impl<S: EventSink> Parser<'_, '_, S> {
    /// The input's offset of `b[i]`.
    fn at(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    /// Warns about text after the document, which ended at `end`.
    fn trailing(&mut self, end: usize) {
        let b = self.b;
        let rest = skip_ws(b, end);
        if rest < b.len() && !b[rest..].iter().all(|&c| c == 0) {
            self.d.warn(WarningKind::TrailingData, self.at(rest), || {
                format!(
                    "{} bytes of text after the end of the JSON document were ignored",
                    b.len() - rest
                )
            });
        }
    }

    fn unterminated(&mut self, at: usize) -> usize {
        if !self.unterminated {
            self.unterminated = true;
            self.d.warn(WarningKind::JsonUnterminated, self.at(at), || {
                "the input ends before the closing bracket (was the trace still being written?)"
                    .into()
            });
        }
        self.b.len()
    }

    /// The members of the top-level object; `i` is just after `{`. Returns where it ends.
    fn object(&mut self, i: usize, info: &mut JsonInfo) -> usize {
        self.object_keys(i, info, false)
    }

    /// [`object`](Self::object) from `i`, between two members; `found`: the event array
    /// was among the members before.
    fn object_keys(&mut self, mut i: usize, info: &mut JsonInfo, mut found: bool) -> usize {
        let b = self.b;
        loop {
            i = skip_ws(b, i);
            match b.get(i) {
                None => return self.unterminated(i),
                Some(b'}') => break,
                Some(b',') => {
                    i += 1;
                    continue;
                }
                Some(b'"') => {}
                Some(_) => {
                    self.d.warn(WarningKind::TrailingData, self.at(i), || {
                        "unexpected text among the top-level keys; the rest of the file was ignored"
                            .into()
                    });
                    return b.len();
                }
            }
            let Ok((kend, _)) = string_end(b, i + 1) else {
                return self.unterminated(i);
            };
            let key = String::from_utf8_lossy(&b[i + 1..kend]).into_owned();
            i = skip_ws(b, kend + 1);
            if b.get(i) == Some(&b':') {
                i = skip_ws(b, i + 1);
            }
            if i >= b.len() {
                return self.unterminated(i);
            }
            if key == "traceEvents" && b[i] == b'[' && !found {
                found = true;
                i = self.events_array(i + 1);
                continue;
            }
            let start = i;
            match skip_value(b, i) {
                Ok(e) => i = e,
                Err(Scan::Eof) => return self.unterminated(i),
                Err(Scan::Bad(at)) => {
                    self.d.warn(WarningKind::TrailingData, self.at(at), || {
                        format!("the value of top-level key {key:?} is not valid JSON; the rest of the file was ignored")
                    });
                    return b.len();
                }
            }
            if key == "systemTraceEvents" {
                self.system_trace(start, i);
            }
            if key == "displayTimeUnit" && b[start] == b'"' {
                info.display_time_unit =
                    Some(String::from_utf8_lossy(&b[start + 1..i - 1]).into_owned());
            }
            info.other_keys.push(TopLevelKey {
                name: key,
                value: self.at(start)..self.at(i),
            });
        }
        if !found {
            self.d.warn(WarningKind::NoTraceEvents, 0, || {
                "the JSON object has no \"traceEvents\" array".into()
            });
        }
        i + 1
    }

    /// `systemTraceEvents`, the value at `b[start..end]`: ftrace text (Chrome's system
    /// tracing on Android and ChromeOS), decoded into the same sink as the events, so its
    /// scheduling and atrace slices join them. Offsets in it count from the string's start
    /// as if it had no escapes.
    fn system_trace(&mut self, start: usize, end: usize) {
        let b = self.b;
        if b[start] != b'"' {
            self.d
                .warn(WarningKind::FtraceMalformed, self.at(start), || {
                    "\"systemTraceEvents\" that is not a string of ftrace text; skipped".into()
                });
            return;
        }
        let raw = String::from_utf8_lossy(&b[start + 1..end - 1]);
        let (t, _) = text::unescape(&raw, raw.contains('\\'));
        let at = self.at(start + 1);
        self.events += crate::ftrace::text::decode_lines(t.as_bytes(), at, self.sink, self.d);
    }

    /// The elements of the event array; `i` is just after `[`. Returns where it ends.
    fn events_array(&mut self, i: usize) -> usize {
        if let Some(hook) = self.hook.as_mut() {
            // The hook has already reported an unterminated array.
            let (end, unterminated) = hook(i, self.d);
            self.unterminated |= unterminated;
            return end;
        }
        match self.events_loop(i, usize::MAX, LoopState::default()).0 {
            Stop::Closed(end) | Stop::At(end) => end,
            Stop::Eof => self.b.len(),
        }
    }

    /// Parses array elements from `i` (inside the event array, in `state`) until the array
    /// closes, the input ends, or an element starts at or after `stop`.
    fn events_loop(&mut self, mut i: usize, stop: usize, state: LoopState) -> (Stop, LoopState) {
        let b = self.b;
        let LoopState {
            mut after_value,
            mut after_comma,
        } = state;
        let mut since_progress = 0u32;
        loop {
            i = skip_ws(b, i);
            let Some(&c) = b.get(i) else {
                self.unterminated(i);
                return (Stop::Eof, LoopState::default());
            };
            match c {
                b']' => {
                    if after_comma {
                        self.extra_comma(i);
                    }
                    return (Stop::Closed(i + 1), LoopState::default());
                }
                b',' => {
                    if !after_value {
                        self.extra_comma(i);
                    }
                    after_value = false;
                    after_comma = true;
                    i += 1;
                    continue;
                }
                _ => {}
            }
            if i >= stop {
                let state = LoopState {
                    after_value,
                    after_comma,
                };
                return (Stop::At(i), state);
            }
            if after_value {
                self.d.warn(WarningKind::JsonMissingComma, self.at(i), || {
                    "no comma between two events (accepted)".into()
                });
            }
            after_value = true;
            after_comma = false;
            let next = if c == b'{' {
                self.event(i)
            } else {
                self.not_an_object(i)
            };
            match next {
                Some(n) => i = n,
                None => return (Stop::Eof, LoopState::default()),
            }
            since_progress += 1;
            if since_progress == 1 << 14 {
                since_progress = 0;
                self.sink.progress(i as u64, b.len() as u64);
            }
        }
    }

    fn extra_comma(&mut self, i: usize) {
        self.d.warn(WarningKind::JsonExtraComma, self.at(i), || {
            "a comma with no event before it (accepted)".into()
        });
    }

    /// Parses and emits the event at `b[i] == '{'`; `None` when the input ends inside it.
    fn event(&mut self, i: usize) -> Option<usize> {
        if !self.s.is_empty() {
            let mut ev = RawEvent::default();
            // Offsets are `base + i`: parse_event adds its base to the text's indices.
            return match object::parse_event(self.s, i, self.base, self.d, &mut ev) {
                Ok(end) => {
                    self.events += 1;
                    self.sink.event(&ev);
                    Some(end)
                }
                Err(e) => self.bad_event(i, e),
            };
        }
        // Invalid UTF-8 somewhere in the input: find this object's extent, then parse a
        // repaired copy if its own bytes are invalid.
        let end = match skip_value(self.b, i) {
            Ok(end) => end,
            Err(e) => return self.bad_event(i, e),
        };
        let text = match std::str::from_utf8(&self.b[i..end]) {
            Ok(t) => Cow::Borrowed(t),
            Err(_) => {
                self.d.warn(WarningKind::InvalidUtf8, self.at(i), || {
                    "an event holds bytes that are not valid UTF-8; they were replaced with U+FFFD"
                        .into()
                });
                String::from_utf8_lossy(&self.b[i..end])
            }
        };
        let mut ev = RawEvent::default();
        match object::parse_event(&text, 0, self.at(i), self.d, &mut ev) {
            Ok(_) => {
                self.events += 1;
                self.sink.event(&ev);
                Some(end)
            }
            // Positions inside the repaired copy do not map back to the input (U+FFFD is
            // longer than the bytes it replaces): report the event's own start. The copy is a
            // whole, balanced object, so running off its end is a syntax error too.
            Err(_) => self.bad_event(i, Scan::Bad(i)),
        }
    }

    /// Records an event that could not be parsed; resumes after it when its extent is known.
    fn bad_event(&mut self, i: usize, e: Scan) -> Option<usize> {
        let whole = match e {
            Scan::Eof => Err(Scan::Eof),
            Scan::Bad(_) => skip_value(self.b, i),
        };
        match whole {
            Ok(end) => {
                let at = match e {
                    Scan::Bad(at) => at,
                    Scan::Eof => i,
                };
                self.d
                    .warn(WarningKind::JsonMalformedEvent, self.at(at), || {
                        let b = self.b;
                        let shown =
                            String::from_utf8_lossy(&b[at.min(b.len())..b.len().min(at + 24)])
                                .into_owned();
                        format!("unexpected {shown:?} inside an event; the event was skipped")
                    });
                Some(end)
            }
            Err(_) => {
                self.d
                    .warn(WarningKind::JsonTruncatedEvent, self.at(i), || {
                        format!(
                            "the input ends inside an event ({} bytes); it was dropped",
                            self.b.len() - i
                        )
                    });
                self.unterminated(i);
                None
            }
        }
    }

    fn not_an_object(&mut self, i: usize) -> Option<usize> {
        match skip_value(self.b, i) {
            Ok(end) => {
                self.d.warn(WarningKind::JsonNotAnObject, self.at(i), || {
                    let shown = String::from_utf8_lossy(&self.b[i..end.min(i + 24)]).into_owned();
                    format!("an element of the event array is not an object ({shown:?}); it was skipped")
                });
                Some(end)
            }
            Err(Scan::Eof) => {
                self.d
                    .warn(WarningKind::JsonTruncatedEvent, self.at(i), || {
                        "the input ends inside an array element; it was dropped".into()
                    });
                self.unterminated(i);
                None
            }
            Err(Scan::Bad(at)) => {
                self.d.warn(WarningKind::TrailingData, self.at(at), || {
                    format!(
                        "text that is not JSON inside the event array; the remaining {} bytes were skipped",
                        self.b.len() - at
                    )
                });
                None
            }
        }
    }
}
