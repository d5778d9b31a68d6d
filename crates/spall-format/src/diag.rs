//! Counted, non-fatal problems found while decoding.
//!
//! Nothing the decoder skips or repairs goes unrecorded: every such case bumps a counter of
//! its [`WarningKind`], and the first few of each kind keep their byte offset and details.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// A kind of counted warning: ordered, copyable, with a stable snake_case name.
pub trait DiagnosticKind: Copy + Ord + fmt::Debug {
    /// The stable name used in reports and JSON output.
    fn name(self) -> Cow<'static, str>;
}

/// The kinds of decode warnings. Their [`name`](WarningKind::name)s are a stable contract
/// (they appear in `spall-cli` JSON output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WarningKind {
    /// The last JSON event was cut off by the end of the file; it was dropped.
    JsonTruncatedEvent,
    /// The event array (or the enclosing object) has no closing bracket: the writer was still running.
    JsonUnterminated,
    /// Two array elements with no comma between them (accepted).
    JsonMissingComma,
    /// A comma before `]`, or a doubled comma (accepted).
    JsonExtraComma,
    /// An element of the event array that is not an object; it was skipped.
    JsonNotAnObject,
    /// An event object with a syntax error inside; it was skipped.
    JsonMalformedEvent,
    /// A `ts`, `dur`, `tts` or `tdur` that is not a number, or does not fit in 64-bit nanoseconds; the field was ignored.
    BadNumber,
    /// Non-whitespace text after the end of the JSON document; it was ignored.
    TrailingData,
    /// The JSON object has no `traceEvents` array.
    NoTraceEvents,
    /// Text that is not valid UTF-8 (or a lone-surrogate `\u` escape), decoded with U+FFFD replacements.
    InvalidUtf8,
    /// A backslash escape that JSON does not define; kept as written.
    JsonBadEscape,
    /// The gzip stream ends early; what was decompressed is decoded.
    GzipTruncated,
    /// A `.spall` file that ends in the middle of an event; the partial event was dropped.
    SpallTruncatedEvent,
    /// A `.spall` v3 buffer whose size runs past the end of the file; its complete events were kept.
    SpallTruncatedBuffer,
    /// A `.spall` event type with no defined layout (custom data, stream over, instant,
    /// overwrite timestamp, or unknown); the rest of its buffer (v3) or file (v1) was skipped.
    SpallUnsupportedEvent,
    /// A `.spall` v1 timestamp that is NaN or infinite, or a time that does not fit in 64-bit nanoseconds; the event was dropped.
    SpallBadTimestamp,
    /// The `.spall` header's must-be-zero word is not zero.
    SpallHeaderNotZero,
    /// A protobuf trace that ends inside a packet; the complete packets before it were decoded.
    ProtoTruncated,
    /// A packet (or part of one) whose fields do not parse; it was skipped.
    ProtoMalformed,
    /// A known field with a wire type its definition does not allow; it was ignored.
    ProtoWrongWireType,
    /// An interned id (name, category, annotation) its sequence never defined; left empty.
    ProtoUndefinedIid,
    /// A debug annotation nested too deep; cut there.
    ProtoDeepNesting,
    /// A packet (or event type) of a kind not modelled, named after it; counted and skipped.
    ProtoUnmodelled(&'static str),
    /// An event on a sequence whose incremental state was lost (packets dropped); skipped.
    ProtoIncrementalStateLost,
    /// An event on a track no TrackDescriptor defines.
    ProtoUnknownTrack,
    /// An event with no track and no default track on its sequence.
    ProtoNoTrack,
    /// A slice end on an async track with no open slice; skipped.
    ProtoUnmatchedEnd,
    /// A timestamp missing, out of range, or on a clock no snapshot relates to the trace clock.
    ProtoClock,
    /// A line or record of a sampling profile that does not parse; skipped (or cut where
    /// it broke).
    ProfileMalformed,
    /// A system-trace record that does not parse (a cut ftrace bundle, a compact_sched
    /// column cut short, an atrace marker or tracefs text line that breaks its form);
    /// skipped, the rest kept.
    FtraceMalformed,
}

impl DiagnosticKind for WarningKind {
    fn name(self) -> Cow<'static, str> {
        Cow::Borrowed(self.as_str())
    }
}

impl WarningKind {
    /// The kind whose [`as_str`](Self::as_str) is `name`, except `ProtoUnmodelled`'s
    /// (its names are the packets'); `None` for any other name.
    pub fn from_name(name: &str) -> Option<WarningKind> {
        use WarningKind::*;
        const FIXED: [WarningKind; 29] = [
            JsonTruncatedEvent,
            JsonUnterminated,
            JsonMissingComma,
            JsonExtraComma,
            JsonNotAnObject,
            JsonMalformedEvent,
            BadNumber,
            TrailingData,
            NoTraceEvents,
            InvalidUtf8,
            JsonBadEscape,
            GzipTruncated,
            SpallTruncatedEvent,
            SpallTruncatedBuffer,
            SpallUnsupportedEvent,
            SpallBadTimestamp,
            SpallHeaderNotZero,
            ProtoTruncated,
            ProtoMalformed,
            ProtoWrongWireType,
            ProtoUndefinedIid,
            ProtoDeepNesting,
            ProtoIncrementalStateLost,
            ProtoUnknownTrack,
            ProtoNoTrack,
            ProtoUnmatchedEnd,
            ProtoClock,
            ProfileMalformed,
            FtraceMalformed,
        ];
        FIXED.into_iter().find(|k| k.as_str() == name)
    }

    /// The stable snake_case name of the kind.
    pub fn as_str(self) -> &'static str {
        use WarningKind::*;
        match self {
            JsonTruncatedEvent => "json_truncated_event",
            JsonUnterminated => "json_unterminated",
            JsonMissingComma => "json_missing_comma",
            JsonExtraComma => "json_extra_comma",
            JsonNotAnObject => "json_not_an_object",
            JsonMalformedEvent => "json_malformed_event",
            BadNumber => "bad_number",
            TrailingData => "trailing_data",
            NoTraceEvents => "no_trace_events",
            InvalidUtf8 => "invalid_utf8",
            JsonBadEscape => "json_bad_escape",
            GzipTruncated => "gzip_truncated",
            SpallTruncatedEvent => "spall_truncated_event",
            SpallTruncatedBuffer => "spall_truncated_buffer",
            SpallUnsupportedEvent => "spall_unsupported_event",
            SpallBadTimestamp => "spall_bad_timestamp",
            SpallHeaderNotZero => "spall_header_not_zero",
            ProtoTruncated => "proto_truncated",
            ProtoMalformed => "proto_malformed",
            ProtoWrongWireType => "proto_wrong_wire_type",
            ProtoUndefinedIid => "proto_undefined_iid",
            ProtoDeepNesting => "proto_deep_nesting",
            ProtoUnmodelled(name) => name,
            ProtoIncrementalStateLost => "proto_incremental_state_lost",
            ProtoUnknownTrack => "proto_unknown_track",
            ProtoNoTrack => "proto_no_track",
            ProtoUnmatchedEnd => "proto_unmatched_end",
            ProtoClock => "proto_clock",
            ProfileMalformed => "profile_malformed",
            FtraceMalformed => "ftrace_malformed",
        }
    }
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// One recorded warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning<K = WarningKind> {
    /// What sort of problem it is (warnings are counted per kind).
    pub kind: K,
    /// Byte offset in the decoded input of the event (or record) the warning is about.
    pub offset: u64,
    /// What was wrong and what was done about it, for a person.
    pub message: String,
}

impl fmt::Display for Warning<WarningKind> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at byte {}: {}: {}",
            self.offset, self.kind, self.message
        )
    }
}

/// How many examples of each kind keep their full details.
pub const EXAMPLES_PER_KIND: u64 = 5;

/// Warning counts by kind, with the first few of each kind in detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics<K = WarningKind> {
    counts: BTreeMap<K, u64>,
    examples: Vec<Warning<K>>,
}

impl<K> Default for Diagnostics<K> {
    fn default() -> Self {
        Diagnostics {
            counts: BTreeMap::new(),
            examples: Vec::new(),
        }
    }
}

impl<K: DiagnosticKind> Diagnostics<K> {
    /// Records one warning. `message` is only called for the first few of each kind.
    pub fn warn(&mut self, kind: K, offset: u64, message: impl FnOnce() -> String) {
        self.warn_n(kind, 1, offset, message);
    }

    /// Records `n` warnings of one kind at once (for example, `n` events skipped together).
    pub fn warn_n(&mut self, kind: K, n: u64, offset: u64, message: impl FnOnce() -> String) {
        let c = self.counts.entry(kind).or_insert(0);
        if *c < EXAMPLES_PER_KIND {
            self.examples.push(Warning {
                kind,
                offset,
                message: message(),
            });
        }
        *c += n;
    }

    /// The number of warnings of `kind`.
    pub fn count(&self, kind: K) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// All non-zero counts, ordered by kind.
    pub fn counts(&self) -> impl Iterator<Item = (K, u64)> + '_ {
        self.counts.iter().map(|(k, v)| (*k, *v))
    }

    /// The total number of warnings.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Whether no warning was recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The detailed examples, in the order they were found.
    pub fn examples(&self) -> &[Warning<K>] {
        &self.examples
    }

    /// Diagnostics as [`counts`](Self::counts) and [`examples`](Self::examples) gave them
    /// (a trace handed from one memory to another).
    pub fn from_parts(counts: BTreeMap<K, u64>, examples: Vec<Warning<K>>) -> Self {
        Diagnostics { counts, examples }
    }

    /// Adds another set of diagnostics (for example, from a parallel chunk).
    pub fn merge(&mut self, other: Diagnostics<K>) {
        for w in other.examples {
            let have = self.examples.iter().filter(|e| e.kind == w.kind).count() as u64;
            if have < EXAMPLES_PER_KIND {
                self.examples.push(w);
            }
        }
        for (k, v) in other.counts {
            *self.counts.entry(k).or_insert(0) += v;
        }
    }
}
