//! Decoding a Chrome JSON trace as its bytes arrive (a browser reading a `File` or a
//! `fetch` body in chunks), so the whole file is never held: only the bytes not decoded
//! yet, about one run of events.
//!
//! Chunks may end anywhere, inside a string or a number. The top level is read up to the
//! event array (held until then: the keys before `traceEvents`); the array's elements are
//! then parsed in the parallel decoder's runs ([`decode_parallel`](crate::decode_parallel):
//! about [`CHUNK_BYTES`](crate::CHUNK_BYTES), each up to the element its start guess
//! finds), each into its own sink, as soon as the bytes of a run, the next guess's 1 MiB
//! and the start of the next element are in. A run that meets the end of the bytes so far
//! is thrown away and parsed again when more have come, so an element cut by a chunk
//! boundary is parsed once, whole. The top level after the array (`displayTimeUnit`,
//! `metadata`, `stackFrames`, `systemTraceEvents`, ...) is held and read at the end.
//!
//! The events, their offsets, the warnings, the [`JsonInfo`] and the sinks are
//! [`decode_parallel`](crate::decode_parallel)'s, in file order: one sink for the top
//! level, one per run. A file under twice the chunk size, or with no event array, is held
//! whole and decoded at the end into one sink, as `decode_parallel` does. So is the rest
//! of an array in which no element starts in the 1 MiB after a run's size (an element
//! longer than that).

use super::scan::skip_ws;
use super::{decode_hooked, parse_run_at, parse_tail, JsonInfo, LoopState, Stop};
use crate::diag::{Diagnostics, WarningKind};
use crate::error::Error;
use crate::event::EventSink;
use crate::parallel::{guess_element, CHUNK_BYTES, GUESS_AHEAD};
use crate::{detect, Detected, Format, Summary};

/// A run is parsed once the window holds this many bytes past where its end was guessed
/// (at first: doubled each time a run meets the end of its bytes), and reads no further.
const SLACK: usize = 64 << 10;

/// How many bytes after a bad one a warning quotes: a run that is not the file's last must
/// hold that many after where it stopped, so its warnings read as a whole-file decode's.
const QUOTED: usize = 24;

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Before the event array: the window holds the file from its start.
    Top,
    /// Inside the event array. The window starts at the current run's guessed start (the
    /// next guess looks `target` bytes past it); the run starts at `window[from]`, in
    /// `state`. `stop`: the next run's guessed start, once guessed (`usize::MAX`: none,
    /// this run is the array's last).
    Array {
        from: usize,
        state: LoopState,
        stop: Option<usize>,
    },
    /// After the array (`unterminated`: the input ended inside it): the window holds the
    /// rest of the top level.
    Tail { unterminated: bool },
}

/// A Chrome JSON decode fed chunk by chunk: [`push`](Self::push) the file's bytes in
/// order, then [`finish`](Self::finish).
///
/// ```
/// use spall_format::{Collect, JsonStream};
///
/// let json = br#"{"traceEvents": [
///     {"name": "main", "ph": "X", "ts": 1, "dur": 10, "pid": 1, "tid": 1},
///     {"name": "tick", "ph": "i", "ts": 2, "pid": 1, "tid": 1}
/// ], "displayTimeUnit": "ns"}"#;
/// assert!(JsonStream::<Collect>::accepts(json));
/// let mut stream = JsonStream::new(Collect::default);
/// for piece in json.chunks(7) {
///     stream.push(piece).unwrap();
/// }
/// let (summary, sinks) = stream.finish().unwrap().expect("all UTF-8");
/// assert_eq!(summary.events, 2);
/// assert_eq!(summary.json.unwrap().display_time_unit.as_deref(), Some("ns"));
/// assert_eq!(sinks.iter().map(|s| s.0.len()).sum::<usize>(), 2);
/// ```
pub struct JsonStream<S> {
    /// From `start`: the bytes not decoded yet (and, in the array, those from the run's
    /// guessed start). Before `start`: bytes let go, dropped at the next push (so they are
    /// moved once a push, not once a run).
    window: Vec<u8>,
    start: usize,
    /// The file's offset of `window[start]`.
    at: u64,
    read: u64,
    phase: Phase,
    /// A run's size.
    target: usize,
    /// How far past `target` the next run's start is looked for.
    ahead: usize,
    /// Bytes past a run's guessed end it may read, and must have before it is parsed.
    slack: usize,
    /// No new look for the event array before the window holds this many bytes: at first
    /// two runs (a smaller file is decoded whole, as `decode_parallel` does), then twice
    /// what the last look had, which keeps the looks linear in what precedes the array.
    wait_for: usize,
    info: JsonInfo,
    diags: Diagnostics,
    sinks: Vec<S>,
    events: u64,
    /// Bytes of runs parsed and thrown away (cut short by the bytes in so far).
    wasted: u64,
    /// A run decoded as text dropped a malformed or cut-off event (a whole-file decode of
    /// a file that is not all UTF-8 reads every event as bytes: it skips such an event
    /// whole, with no warning about the part before the fault, and gives the event's start
    /// as the offset, not the bad byte's); a run or the top level is not UTF-8.
    text_malformed: bool,
    not_utf8: bool,
    new_sink: Box<dyn Fn() -> S>,
}

impl<S> std::fmt::Debug for JsonStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonStream")
            .field("read", &self.read)
            .field("held", &(self.window.len() - self.start))
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl<S: EventSink> JsonStream<S> {
    /// Whether a file whose first bytes are `head` is one this decodes: JSON (not
    /// `.spall`, gzip or protobuf) whose first character is `[` or `{`.
    pub fn accepts(head: &[u8]) -> bool {
        let b = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        detect(head) == Detected::Json && matches!(b.get(skip_ws(b, 0)), Some(b'[' | b'{'))
    }

    /// A stream whose runs of elements each go to a new sink from `new_sink`.
    pub fn new(new_sink: impl Fn() -> S + 'static) -> Self {
        JsonStream::with_target(CHUNK_BYTES, new_sink)
    }

    /// [`new`](Self::new) with runs of `target` bytes, guesses looking at most `target`
    /// ahead (tests cut small files in many runs).
    #[doc(hidden)]
    pub fn with_target(target: usize, new_sink: impl Fn() -> S + 'static) -> Self {
        let target = target.max(1);
        JsonStream {
            window: Vec::new(),
            start: 0,
            at: 0,
            read: 0,
            phase: Phase::Top,
            target,
            ahead: GUESS_AHEAD.min(target.max(256)),
            slack: SLACK.min(target.max(16)),
            wait_for: target.saturating_mul(2),
            info: JsonInfo::default(),
            diags: Diagnostics::default(),
            sinks: Vec::new(),
            events: 0,
            wasted: 0,
            text_malformed: false,
            not_utf8: false,
            new_sink: Box::new(new_sink),
        }
    }

    /// `(read, decoded)`: bytes pushed so far, and bytes decoded of them.
    pub fn progress(&self) -> (u64, u64) {
        let from = match self.phase {
            Phase::Array { from, .. } => from as u64,
            _ => 0,
        };
        (self.read, self.at + from)
    }

    /// The bytes held, not decoded yet.
    pub fn held(&self) -> usize {
        self.window.len() - self.start
    }

    /// The next bytes of the file. Decodes every run of elements that is complete.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.read += chunk.len() as u64;
        self.window.drain(..self.start);
        self.start = 0;
        self.window.extend_from_slice(chunk);
        if let Phase::Top = self.phase {
            if self.window.len() < self.wait_for {
                return Ok(());
            }
            self.find_array();
        }
        self.runs(false);
        Ok(())
    }

    /// Decodes what is left. Returns the summary and the sinks, in file order, or `None`
    /// when the file holds bytes that are not UTF-8 and a run read as text dropped a
    /// malformed or cut-off event: a whole-file decode reads every event of such a file as
    /// bytes and warns about such an event otherwise, so the file must be decoded again,
    /// whole.
    #[allow(clippy::type_complexity)]
    pub fn finish(mut self) -> Result<Option<(Summary, Vec<S>)>, Error> {
        if let Phase::Top = self.phase {
            // A small file, or no event array: nothing was let go; decode it whole.
            let mut sink = (self.new_sink)();
            let summary = crate::decode(&self.window[self.start..], &mut sink)?;
            return Ok(Some((summary, vec![sink])));
        }
        self.runs(true);
        if let Phase::Tail { unterminated } = self.phase {
            let (b, at) = (&self.window[self.start..], self.at);
            self.not_utf8 |= simdutf8::basic::from_utf8(b).is_err();
            // The top level's events (`systemTraceEvents`) join its sink, the first.
            let top = &mut self.sinks[0];
            let (info, diags) = (&mut self.info, &mut self.diags);
            self.events += parse_tail(b, at, unterminated, info, diags, top);
        }
        if self.text_malformed && self.not_utf8 {
            return Ok(None);
        }
        let summary = Summary {
            format: Format::Json,
            gzip: false,
            input_bytes: self.read,
            decoded_bytes: self.read,
            parsed_bytes: self.read + self.wasted,
            events: self.events,
            diagnostics: self.diags,
            spall: None,
            json: Some(self.info),
        };
        Ok(Some((summary, self.sinks)))
    }

    /// Reads the top level up to the event array, if the window holds that much: the
    /// keys before it, their warnings, and where the array starts.
    fn find_array(&mut self) {
        let b = &self.window[self.start..];
        let mut found = None;
        let mut hook = |i: usize, d: &mut Diagnostics| {
            // What comes after this is the end of the window, not of the file.
            found = Some((i, d.clone()));
            (b.len(), false)
        };
        let mut d = Diagnostics::default();
        // The top level's own sink, as the parallel decode has: it takes the events of the
        // keys before the array (`systemTraceEvents`), kept only once the array is found.
        let mut top = (self.new_sink)();
        let info = decode_hooked(b, None, &mut top, &mut d, Some(&mut hook));
        match (info, found) {
            (Ok((info, n)), Some((start, d))) => {
                self.events += n;
                self.not_utf8 |= simdutf8::basic::from_utf8(&b[..start]).is_err();
                self.info = info;
                self.diags = d;
                self.let_go(start);
                self.phase = Phase::Array {
                    from: 0,
                    state: LoopState::default(),
                    stop: None,
                };
                self.sinks.push(top);
            }
            _ => self.wait_for = b.len().saturating_mul(2),
        }
    }

    /// Parses the runs whose bytes are in; `last`: the file has ended, so the rest is
    /// parsed whatever it holds.
    fn runs(&mut self, last: bool) {
        while let Phase::Array { from, state, stop } = self.phase {
            let len = self.window.len() - self.start;
            // The next run's start: the parallel decoder's guess, which reads `ahead` bytes
            // past `target`.
            let stop = match stop {
                Some(s) => s,
                None if last || len >= self.target + self.ahead => {
                    let held = &self.window[self.start..];
                    let s = guess_element(held, self.target, self.ahead);
                    let s = s.unwrap_or(usize::MAX);
                    self.phase = Phase::Array {
                        from,
                        state,
                        stop: Some(s),
                    };
                    s
                }
                None => return,
            };
            if !last && len < stop.saturating_add(self.slack) {
                return;
            }
            let limit = if last { len } else { stop + self.slack };
            let whole = limit == len && last;
            let w = &self.window[self.start..self.start + limit];
            // A character cut by the end of the bytes so far is not invalid: leave it for
            // the next run. (simdutf8: a vector check, where std's is a word at a time.)
            let (b, s, text) = match simdutf8::compat::from_utf8(w) {
                Ok(s) => (w, s, true),
                Err(e) if e.error_len().is_none() && !whole => {
                    let b = &w[..e.valid_up_to()];
                    (b, simdutf8::basic::from_utf8(b).unwrap_or(""), true)
                }
                Err(_) => (w, "", false),
            };
            let mut sink = (self.new_sink)();
            let mut d = Diagnostics::default();
            let r = parse_run_at(s, b, self.at, from, stop, state, &mut sink, &mut d);
            let short = match r.stop {
                Stop::At(e) | Stop::Closed(e) => e + QUOTED > b.len(),
                Stop::Eof => true,
            };
            if short && !whole {
                // The run met the end of its bytes (an element longer than the slack, or
                // text that is not JSON, which ends the array at the file's end): more of
                // them, now or once they are in.
                let end = r.stop.at().unwrap_or(b.len()).min(b.len());
                self.wasted += end.saturating_sub(from) as u64;
                self.slack = self.slack.saturating_mul(2);
                continue;
            }
            // An event dropped after part of it was read as text may have warned about
            // that part; read as bytes, it is skipped whole first.
            let dropped =
                d.count(WarningKind::JsonMalformedEvent) + d.count(WarningKind::JsonTruncatedEvent);
            self.text_malformed |= text && dropped > 0;
            self.not_utf8 |= !text;
            self.events += r.events;
            self.diags.merge(d);
            self.sinks.push(sink);
            match r.stop {
                Stop::At(next) => {
                    // The window now starts at the next run's guessed start.
                    self.let_go(stop);
                    self.phase = Phase::Array {
                        from: next - stop,
                        state: r.state,
                        stop: None,
                    };
                }
                Stop::Closed(end) => {
                    self.let_go(end);
                    self.phase = Phase::Tail {
                        unterminated: false,
                    };
                }
                Stop::Eof => {
                    self.let_go(len);
                    self.phase = Phase::Tail {
                        unterminated: r.unterminated,
                    };
                }
            }
        }
    }

    /// Lets the held bytes' first `n` go.
    fn let_go(&mut self, n: usize) {
        self.start += n;
        self.at += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Collect;

    /// What a whole-file decode gives, as text to compare.
    fn whole(b: &[u8]) -> String {
        let mut c = Collect::default();
        match crate::decode(b, &mut c) {
            Ok(s) => format!("{:?} {:?} {:?} {:?}", s.events, s.diagnostics, s.json, c.0),
            Err(e) => format!("error {e}"),
        }
    }

    /// The same, streamed in the pieces `cuts` makes, with runs of `target` bytes.
    fn streamed(b: &[u8], cuts: &[usize], target: usize) -> String {
        let mut s = JsonStream::with_target(target, Collect::default);
        let mut from = 0;
        for &c in cuts.iter().chain([&b.len()]) {
            s.push(&b[from..c.max(from)]).unwrap();
            from = c.max(from);
        }
        match s.finish() {
            Ok(Some((sum, sinks))) => {
                let ev: Vec<_> = sinks.into_iter().flat_map(|s| s.0).collect();
                format!(
                    "{:?} {:?} {:?} {:?}",
                    sum.events, sum.diagnostics, sum.json, ev
                )
            }
            Ok(None) => "decode again".into(),
            Err(e) => format!("error {e}"),
        }
    }

    const OBJECT: &str = r#"{"metadata": {"a": "}]"}, "traceEvents": [
  {"name": "main", "ph": "B", "ts": 1.5, "pid": 1, "tid": 1, "args": {"s": "é ]}, {"}},
  {"name": "wörker", "ph": "X", "ts": 2, "dur": 3, "pid": 1, "tid": 2},
  {"name": "bad", "ph": "X", "ts": "x", "pid": 1, "tid": 2},,
  7,
  {"name": "main", "ph": "E", "ts": 9, "pid": 1, "tid": 1}
  {"name": "c", "ph": "C", "ts": 4, "pid": 1, "args": {"v": 1}},
], "displayTimeUnit": "ns", "stackFrames": {"1": {"name": "f"}}} "#;

    /// Every cut position, with runs of one element, a few, and all of them.
    fn every_cut(b: &[u8]) {
        let want = whole(b);
        for target in [1, 60, 1 << 20] {
            for c in 0..=b.len() {
                assert_eq!(
                    streamed(b, &[c], target),
                    want,
                    "cut at {c}, runs of {target}"
                );
            }
        }
        let each: Vec<usize> = (1..b.len()).collect();
        assert_eq!(streamed(b, &each, 1), want, "every byte its own piece");
        assert_eq!(streamed(b, &each, 50), want, "every byte its own piece");
    }

    #[test]
    fn every_cut_gives_the_whole_decode() {
        let want = whole(OBJECT.as_bytes());
        assert!(
            want.contains("wörker") && want.contains("JsonExtraComma"),
            "{want}"
        );
        assert!(
            want.contains("displayTimeUnit") || want.contains("\"ns\""),
            "{want}"
        );
        every_cut(OBJECT.as_bytes());
        // The bare array form, with a byte-order mark and text after it.
        let start = OBJECT.find('[').unwrap();
        let end = OBJECT.rfind(']').unwrap();
        let array = format!("\u{feff} {} x", &OBJECT[start..=end]);
        every_cut(array.as_bytes());
    }

    #[test]
    fn cut_short_anywhere_gives_the_whole_decode() {
        let b = OBJECT.as_bytes();
        for len in 0..b.len() {
            let b = &b[..len];
            for c in [0, len / 3, len / 2, len.saturating_sub(1)] {
                for target in [1, 1 << 20] {
                    let got = streamed(b, &[c], target);
                    assert_eq!(got, whole(b), "length {len}, cut at {c}");
                }
            }
        }
    }

    #[test]
    fn odd_top_levels() {
        for doc in ODD {
            let b = doc.as_bytes();
            let want = whole(b);
            for target in [1, 7, 1 << 20] {
                for c in 0..=b.len() {
                    let got = streamed(b, &[c], target);
                    assert_eq!(got, want, "{doc:?} cut at {c}, runs of {target}");
                }
            }
        }
    }

    /// Top levels and arrays a whole-file decode warns about.
    const ODD: [&str; 13] = [
        "",
        "  ",
        "{}",
        "[]",
        r#"{"traceEvents": 5, "x": [1]}"#,
        r#"{"a": 1 "traceEvents": [{"ph":"i","ts":1}]}"#,
        r#"{"traceEvents": [{"ph":"i","ts":1}], "traceEvents": [{"ph":"i","ts":2}]}"#,
        r#"{"traceEvents": [{"ph":"i","ts":1}] "x": 1, }"#,
        r#"[{"ph":"i","ts":1}, {"ph":"i","ts":2 x}, {"ph":"i","ts":3}]"#,
        r#"[{"ph":"i","ts":1}, nul, {"ph":"i","ts":3}]"#,
        r#"[{"ph":"i","ts":1}] "#,
        "[{\"ph\":\"i\",\"ts\":1}]\0\0",
        r#"{"traceEvents": [{"ph":"i","ts":1}], "x": [1, }"#,
    ];

    #[test]
    fn invalid_utf8_after_a_malformed_event_read_as_text_asks_for_a_whole_decode() {
        let filler = r#"{"ph":"i","ts":2,"name":"so that the bad byte is read later"}, "#;
        let doc = format!(
            r#"[{{"ph":"i","ts":1 x}}, {} {{"ph":"i","ts":2,"name":"wörker"}}, {{"ph":"i","ts":3}}]"#,
            filler.repeat(10)
        );
        let mut b = doc.as_bytes().to_vec();
        let at = b.windows(7).position(|w| w == "wörker".as_bytes()).unwrap();
        b[at + 1] = 0xff;
        let want = whole(&b);
        assert!(want.contains("InvalidUtf8") && want.contains("JsonMalformedEvent"));
        // The malformed event read as text, before the bad byte: decode again.
        assert_eq!(streamed(&b, &[], 1), "decode again");
        // One run holding both: read as bytes, as the whole decode does.
        assert_eq!(streamed(&b, &[], 1 << 20), want);
        // With no malformed event, runs read as text give the whole decode's result.
        let mut b = OBJECT.as_bytes().to_vec();
        let at = b.windows(7).position(|w| w == "wörker".as_bytes()).unwrap();
        b[at + 1] = 0xff;
        every_cut(&b);
    }

    #[test]
    fn random_cuts_of_random_prefixes() {
        // Several cuts at once, runs of a few sizes, in documents cut short anywhere: a
        // fixed-seed generator over the object form with a byte that is not UTF-8.
        let mut doc = OBJECT.as_bytes().to_vec();
        let at = doc
            .windows(7)
            .position(|w| w == "wörker".as_bytes())
            .unwrap();
        doc[at + 1] = 0xff;
        let mut rng = crate::synth::Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        // The odd documents' insides, in one array.
        let array = format!(
            "[{}]",
            ODD.map(|d| d.trim_matches(['[', ']', '{', '}'])).join(",")
        );
        for round in 0..3_000 {
            let b = match round % 3 {
                0 => OBJECT.as_bytes(),
                1 => &doc[..],
                _ => array.as_bytes(),
            };
            let b = &b[..next(b.len() + 1)];
            let mut cuts: Vec<usize> = (0..1 + next(6)).map(|_| next(b.len() + 1)).collect();
            cuts.sort_unstable();
            let target = [1, 30, 100, 1 << 20][next(4)];
            let got = streamed(b, &cuts, target);
            if got != "decode again" {
                assert_eq!(
                    got,
                    whole(b),
                    "{} bytes, cuts {cuts:?}, runs of {target}",
                    b.len()
                );
            }
        }
    }

    #[test]
    fn holds_about_one_run() {
        let mut json = String::from("[");
        for i in 0..20_000 {
            json.push_str(&format!(
                r#"{{"name":"n{i}","ph":"X","ts":{i},"dur":1,"pid":1,"tid":1}},"#
            ));
        }
        json.push(']');
        let b = json.as_bytes();
        let mut s = JsonStream::with_target(4096, Collect::default);
        let mut most = 0;
        for p in b.chunks(1000) {
            s.push(p).unwrap();
            most = most.max(s.held());
        }
        assert!(most < 2 * 4096 + 1000, "held {most}");
        let (sum, sinks) = s.finish().unwrap().unwrap();
        assert_eq!(sum.events, 20_000);
        assert!(sinks.len() > 100);
    }
}
